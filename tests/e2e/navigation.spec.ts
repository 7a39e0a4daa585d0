// Navigation in the specification's words, per-page titles, the 404 page, the favicon, focus and
// form errors, and the dashboard at phone width (menu button, current page, stacked tables, the main
// actions reachable without scrolling sideways).
import { createServer, type Server } from "node:http";
import { expect, test } from "@playwright/test";
import { fixtures, shot, signIn } from "./fixtures";
import { collectConsoleErrors, expectNoHorizontalScroll, expectWithinWidth, LAPTOP, PHONE } from "./page-checks";

const PAGES: { link: string; path: string; title: string; crumb: string[] | null }[] = [
  { link: "Analytics", path: "/dashboard/analytics", title: "Analytics · Tenant data platform", crumb: null },
  { link: "Assistant", path: "/dashboard/assistant", title: "Assistant · Tenant data platform", crumb: null },
  { link: "API keys", path: "/dashboard/api-keys", title: "API keys · Integrations · Tenant data platform", crumb: ["Settings", "Integrations", "API keys"] },
  { link: "Webhooks", path: "/dashboard/webhooks", title: "Webhooks · Integrations · Tenant data platform", crumb: ["Settings", "Integrations", "Webhooks"] },
  { link: "Channels", path: "/dashboard/channels", title: "Channels · Integrations · Tenant data platform", crumb: ["Settings", "Integrations", "Channels"] },
  { link: "CRM", path: "/dashboard/crm", title: "CRM · Integrations · Tenant data platform", crumb: ["Settings", "Integrations", "CRM"] },
  { link: "Members", path: "/dashboard/members", title: "Members · Settings · Tenant data platform", crumb: ["Settings", "Members"] },
  { link: "Audit log", path: "/dashboard/audit-log", title: "Audit log · Settings · Tenant data platform", crumb: ["Settings", "Audit log"] },
  { link: "Privacy", path: "/dashboard/privacy", title: "Privacy · Settings · Tenant data platform", crumb: ["Settings", "Privacy"] },
  { link: "Data retention", path: "/dashboard/retention", title: "Data retention · Settings · Tenant data platform", crumb: ["Settings", "Data retention"] },
];

test("the sidebar groups pages under Settings › Integrations and Settings, each page has its own title and breadcrumb", async ({ page }) => {
  const errors = collectConsoleErrors(page);
  await page.setViewportSize(LAPTOP);
  await signIn(page, fixtures().logins.ownerA);
  const nav = page.getByRole("navigation", { name: "Dashboard" });
  await expect(nav.getByText("Settings › Integrations", { exact: true })).toBeVisible();
  await expect(nav.getByText("Settings", { exact: true })).toBeVisible();
  for (const p of PAGES) {
    await nav.getByRole("link", { name: p.link, exact: true }).click();
    await expect(page).toHaveURL(new RegExp(`${p.path}$`));
    await expect(page).toHaveTitle(p.title);
    await expect(nav.getByRole("link", { name: p.link, exact: true })).toHaveAttribute("aria-current", "page");
    const crumb = page.getByRole("navigation", { name: "Breadcrumb" });
    if (p.crumb) await expect(crumb.getByRole("listitem")).toHaveText(p.crumb);
    else await expect(crumb).toHaveCount(0);
  }
  await shot(page, "navigation-laptop");
  expect(errors).toEqual([]);
});

test("the 404 page offers ways back and the favicon is served", async ({ page }) => {
  const errors = collectConsoleErrors(page);
  const res = await page.goto("/dashboard/no-such-page");
  expect(res?.status()).toBe(404);
  await expect(page).toHaveTitle("Page not found · Tenant data platform");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("This page does not exist");
  await shot(page, "not-found");
  const icon = await page.locator("link[rel=icon]").first().getAttribute("href");
  const served = await page.request.get(icon!);
  expect(served.status()).toBe(200);
  expect(served.headers()["content-type"]).toContain("image/svg+xml");
  await page.getByRole("link", { name: "Go to the dashboard" }).click();
  await expect(page).toHaveURL(/\/sign-in$/);
  // Chrome logs the page's own 404 status; nothing else may be logged (no favicon miss, no failed call).
  expect(errors).toEqual([
    `${new URL("/dashboard/no-such-page", page.url()).href}: Failed to load resource: the server responded with a status of 404 (Not Found)`,
  ]);
});

test("closing a dialog returns focus to its opener and form errors focus the first invalid field", async ({ page }) => {
  const errors = collectConsoleErrors(page);
  await signIn(page, fixtures().logins.ownerA);
  const opener = page.getByRole("button", { name: "Create key" }).first();
  await opener.click();
  const dialog = page.getByRole("dialog");
  await dialog.getByRole("button", { name: "Create key" }).click();
  await expect(dialog.getByLabel("Name")).toBeFocused();
  await expect(dialog.getByLabel("Name")).toHaveAttribute("aria-invalid", "true");
  await expect(dialog.locator("[data-field-error]")).toHaveText("Give the key a name");
  await page.keyboard.press("Escape");
  await expect(dialog).toHaveCount(0);
  await expect(opener).toBeFocused();

  await opener.click();
  await page.getByRole("dialog").getByRole("button", { name: "Close" }).click();
  await expect(opener).toBeFocused();
  expect(errors).toEqual([]);
});

test("sign-in errors sit beside their fields, and the page names no command line", async ({ page }) => {
  await page.goto("/sign-in");
  await expect(page).toHaveTitle("Sign in · Tenant data platform");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByLabel("Email")).toBeFocused();
  await expect(page.locator("[data-field-error]").first()).toHaveText("Enter your email address");
  await expect(page.locator("[data-field-error]").nth(1)).toHaveText("Enter your password");
  await expect(page.locator("body")).not.toContainText("npm run");
  await expect(page.locator("body")).toContainText("Settings › Members");
});

test.describe("at phone width (390 x 844)", () => {
  // Signed in at laptop width (the sign-in helper checks the sidebar), then the phone's viewport.
  test.beforeEach(async ({ page }) => {
    await signIn(page, fixtures().logins.ownerA);
    await page.setViewportSize(PHONE);
    await page.reload();
  });

  test("a menu button opens the navigation, the current page shows in the bar, and no page scrolls sideways", async ({ page }) => {
    const errors = collectConsoleErrors(page);
    await expect(page.getByTestId("current-page")).toHaveText("API keys");
    await expect(page.getByRole("navigation", { name: "Dashboard" })).toHaveCount(0);
    for (const p of PAGES) {
      const menu = page.getByRole("button", { name: "Open navigation" });
      await menu.click();
      const drawer = page.getByRole("dialog", { name: "Navigation" });
      await expect(drawer.getByRole("link", { name: "API keys" })).toBeVisible();
      await drawer.getByRole("link", { name: p.link, exact: true }).click();
      await expect(page).toHaveURL(new RegExp(`${p.path}$`));
      await expect(drawer).toHaveCount(0);
      await expect(page.getByTestId("current-page")).toHaveText(p.link);
      await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
      await expectNoHorizontalScroll(page);
    }
    // The drawer marks the current page, and Escape gives focus back to the menu button.
    await page.getByRole("button", { name: "Open navigation" }).click();
    // The last page visited (Data retention) is the current one.
    await expect(page.getByRole("dialog", { name: "Navigation" }).getByRole("link", { name: "Data retention" })).toHaveAttribute("aria-current", "page");
    await shot(page, "navigation-phone-drawer");
    await page.keyboard.press("Escape");
    await expect(page.getByRole("button", { name: "Open navigation" })).toBeFocused();
    expect(errors).toEqual([]);
  });

  test("issuing and revoking a key work without scrolling sideways: the key table stacks its rows", async ({ page }) => {
    const errors = collectConsoleErrors(page);
    const create = page.getByRole("button", { name: "Create key" }).first();
    await expectWithinWidth(page, create);
    await create.click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Name").fill("Phone key");
    await expectWithinWidth(page, dialog.getByRole("button", { name: "Create key" }));
    await dialog.getByRole("button", { name: "Create key" }).click();
    await expect(dialog.getByTestId("secret-value")).toBeVisible();
    await dialog.getByRole("button", { name: "Done" }).click();
    const row = page.getByTestId("api-key-row").filter({ hasText: "Phone key" });
    await expect(row).toContainText("Active");
    // Stacked: every cell carries its column's name, Status and Revoke are on screen.
    await expect(row.locator("td[data-label=Status]")).toBeVisible();
    await expectWithinWidth(page, row.locator("td[data-label=Status]"));
    await expectWithinWidth(page, row.getByRole("button", { name: "Revoke" }));
    await expectNoHorizontalScroll(page);
    await shot(page, "api-keys-phone");
    await row.getByRole("button", { name: "Revoke" }).click();
    await expectWithinWidth(page, page.getByRole("alertdialog").getByRole("button", { name: "Revoke key" }));
    await page.getByRole("alertdialog").getByRole("button", { name: "Revoke key" }).click();
    await expect(row).toContainText("Revoked");
    await expectNoHorizontalScroll(page);
    expect(errors).toEqual([]);
  });

  test("adding a webhook endpoint, sending a test event and resending it work without scrolling sideways", async ({ page }) => {
    const errors = collectConsoleErrors(page);
    const port = Number(process.env.E2E_CONSUMER_PORT);
    let received = 0;
    const consumer: Server = createServer((req, res) =>
      req.resume().on("end", () => {
        received += 1;
        res.writeHead(200).end("{}");
      }),
    );
    await new Promise<void>((resolve) => consumer.listen(port, "127.0.0.1", resolve));
    try {
      await page.goto("/dashboard/webhooks");
      const add = page.getByRole("button", { name: "Add endpoint" }).first();
      await expectWithinWidth(page, add);
      await add.click();
      const dialog = page.getByRole("dialog");
      await dialog.getByLabel("Endpoint URL").fill(`http://127.0.0.1:${port}/phone`);
      await dialog.getByRole("checkbox", { name: /^lead\.created/ }).click();
      await expectWithinWidth(page, dialog.getByRole("button", { name: "Add endpoint" }));
      await dialog.getByRole("button", { name: "Add endpoint" }).click();
      await expect(dialog.getByTestId("secret-value")).toBeVisible();
      await dialog.getByRole("button", { name: "Open endpoint" }).click();
      await expect(page).toHaveURL(/\/dashboard\/webhooks\/[0-9a-f-]{36}$/);
      const send = page.getByRole("button", { name: "Send test event" });
      await expectWithinWidth(page, send);
      await send.click();
      const delivery = page.getByTestId("delivery-row").first();
      await expect(delivery).toHaveAttribute("data-status", "delivered");
      const resend = delivery.getByRole("button", { name: "Resend" });
      await expectWithinWidth(page, resend);
      await expectNoHorizontalScroll(page);
      await shot(page, "webhook-endpoint-phone");
      expect(received).toBe(1);
      await resend.click();
      // A resend is a new delivery cycle of the same event: the consumer receives it a second time.
      await expect.poll(() => received).toBe(2);
      await expect(page.getByTestId("delivery-row").first()).toHaveAttribute("data-status", "delivered");
      await expectNoHorizontalScroll(page);
    } finally {
      await new Promise<void>((resolve) => consumer.close(() => resolve()));
    }
    expect(errors).toEqual([]);
  });
});
