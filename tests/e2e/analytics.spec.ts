// Analytics that explain themselves: every card defines its metric and compares with the previous
// period, daily counts are bars (no smoothed lines), conversations are broken down by channel.
// Data comes in through /api/v1 with a key the owner issues (tenant B, which no other test writes).
import { expect, test, type Page } from "@playwright/test";
import { fixtures, shot, signIn } from "./fixtures";
import { axeViolations, collectConsoleErrors, expectNoHorizontalScroll, PHONE } from "./page-checks";

async function post(page: Page, path: string, body: unknown, key?: string) {
  return page.evaluate(
    async ([p, b, k]) => {
      const res = await fetch(p, {
        method: "POST",
        headers: { "content-type": "application/json", ...(k ? { authorization: `Bearer ${k}` } : {}) },
        body: JSON.stringify(b),
      });
      return { status: res.status, body: await res.json() };
    },
    [path, body, key] as const,
  );
}

test("cards define their metric and compare with the previous period; bars per day; conversations per channel", async ({ page }) => {
  const errors = collectConsoleErrors(page);
  await signIn(page, fixtures().logins.ownerB);
  const issued = await post(page, "/api/trpc/dashboard.apiKeys.issue", { name: "Analytics data", scopes: ["read", "conversations:write", "leads:write"] });
  expect(issued.status).toBe(200);
  const key = issued.body.result.data.plaintext as string;
  const sms = await post(page, "/api/v1/conversations", { channel: "sms", customer_identifier: "+971501234567" }, key);
  expect(sms.status).toBe(201);
  expect((await post(page, "/api/v1/conversations", { channel: "webchat", customer_identifier: "web-visitor-1" }, key)).status).toBe(201);
  expect((await post(page, "/api/v1/leads", { conversation_id: sms.body.id }, key)).status).toBe(201);

  await page.getByRole("link", { name: "Analytics" }).click();
  const conversations = page.getByTestId("stat-conversations");
  await expect(conversations.getByTestId("value")).toHaveText("2");
  await expect(conversations.getByTestId("change")).toHaveText("▲ +2 vs the previous 7 days (0)");
  await expect(conversations.getByTestId("definition")).toHaveText("Conversations started in the period, on every channel (by the day they started).");
  await expect(page.getByTestId("stat-leads").getByTestId("value")).toHaveText("1");
  const conversion = page.getByTestId("stat-conversion");
  await expect(conversion.getByTestId("value")).toHaveText("0.0%");
  await expect(conversion.getByTestId("definition")).toHaveText(
    "Of the 1 lead created in the period, the share whose status is now “converted” (0 of 1). Bookings are counted separately.",
  );
  await expect(page.getByTestId("stat-csat").getByTestId("value")).toHaveText("—");
  await expect(page.getByTestId("stat-csat").getByTestId("definition")).toContainText("from 0 answers");

  // Daily counts are bars; no line series (smoothed or not) anywhere.
  await expect(page.locator(".recharts-bar-rectangle").first()).toBeVisible();
  await expect(page.locator(".recharts-line")).toHaveCount(0);

  const channels = page.getByTestId("channel-row");
  await expect(channels).toHaveCount(5);
  await expect(channels.filter({ hasText: "SMS" })).toContainText("150%0");
  await expect(channels.filter({ hasText: "Web chat" })).toContainText("150%0");
  await expect(channels.filter({ hasText: "Email" })).toContainText("00%0");
  await shot(page, "analytics-laptop");

  await page.getByRole("button", { name: "30 days" }).click();
  await expect(conversations.getByTestId("change")).toHaveText("▲ +2 vs the previous 30 days (0)");
  expect(await axeViolations(page)).toEqual([]);

  await page.setViewportSize(PHONE);
  await expectNoHorizontalScroll(page);
  await shot(page, "analytics-phone");
  expect(errors).toEqual([]);
});
