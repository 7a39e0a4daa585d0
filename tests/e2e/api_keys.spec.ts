import { expect, test } from "@playwright/test";
import { apiFetch, fixtures, shot, signIn } from "./fixtures";

test("sign-in page", async ({ page }) => {
  await page.goto("/dashboard/api-keys");
  await expect(page).toHaveURL(/\/sign-in$/);
  await page.getByLabel("Email").fill(fixtures().logins.ownerA);
  await page.getByLabel("Password").fill("not the password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.locator("main").getByRole("alert")).toContainText(/invalid email or password/i);
  await shot(page, "sign-in-error");
});

test("an owner issues a key, uses it against /api/v1, revokes it and the key gets 401", async ({ page }) => {
  const { logins, tenantA } = fixtures();
  await signIn(page, logins.ownerA);
  await expect(page.getByTestId("tenant-name")).toHaveText(tenantA.name);
  await shot(page, "api-keys-empty");

  await page.getByRole("button", { name: "Create key" }).click();
  const dialog = page.getByRole("dialog");
  // The server's zod schema, run in the form: the message sits next to the field.
  await dialog.getByRole("button", { name: "Create key" }).click();
  await expect(dialog.locator("[data-field-error]").first()).toHaveText("Give the key a name");
  await dialog.getByLabel("Name").fill("Website sync");
  await dialog.getByRole("checkbox", { name: /assistant:read/ }).click();
  await shot(page, "api-keys-issue-form");
  await dialog.getByRole("button", { name: "Create key" }).click();

  const plaintext = (await dialog.getByTestId("secret-value").textContent())!.trim();
  expect(plaintext).toMatch(/^xapk_live_[0-9a-f]{48}$/);
  await expect(dialog.getByRole("note")).toContainText("shown only once");
  await shot(page, "api-keys-plaintext-once");
  await dialog.getByRole("button", { name: "Done" }).click();

  const row = page.getByTestId("api-key-row").filter({ hasText: "Website sync" });
  await expect(row).toContainText(`${plaintext.slice(0, 22)}…${plaintext.slice(-4)}`);
  await expect(row).toContainText("assistant:read");
  await expect(row).toContainText("Active");
  await expect(page.locator("body")).not.toContainText(plaintext);

  const ok = await apiFetch(page, "/api/v1/offerings", plaintext);
  expect(ok.status).toBe(200);
  expect(ok.body).toMatchObject({ data: [], has_more: false });

  await row.getByRole("button", { name: "Revoke" }).click();
  const confirm = page.getByRole("alertdialog");
  await expect(confirm).toContainText("401");
  await shot(page, "api-keys-revoke-confirm");
  await confirm.getByRole("button", { name: "Revoke key" }).click();
  await expect(row).toContainText("Revoked");
  await shot(page, "api-keys-list");

  const denied = await apiFetch(page, "/api/v1/offerings", plaintext);
  expect(denied).toEqual({ status: 401, body: { error: { code: "unauthorized", message: "unknown or revoked api key" } } });

  await page.getByRole("link", { name: "Audit log" }).click();
  await expect(page.getByTestId("audit-row").first()).toContainText("Revoked API key");
  await expect(page.getByTestId("audit-row").nth(1)).toContainText("Issued API key");
  await expect(page.getByTestId("audit-row").nth(1)).toContainText(logins.ownerA);
  // At laptop width the page never scrolls sideways either (wide tables scroll in their card).
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1280);
  await shot(page, "audit-log");
});

test("a member sees the pages but cannot issue or revoke", async ({ page }) => {
  const { logins } = fixtures();
  await signIn(page, logins.memberA);
  await expect(page.getByTestId("role")).toHaveText("member");
  await expect(page.getByTestId("read-only")).toBeVisible();
  await expect(page.getByTestId("api-key-row").first()).toBeVisible();
  await expect(page.getByRole("button", { name: "Create key" })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Revoke" })).toHaveCount(0);
  await shot(page, "api-keys-member");

  // The server refuses too, not just the UI: a member's mutation through /api/trpc is a 403.
  const status = await page.evaluate(async () => {
    const res = await fetch("/api/trpc/dashboard.apiKeys.issue", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "x", scopes: ["read"] }),
    });
    return { status: res.status, body: await res.json() };
  });
  expect(status.status).toBe(403);
  expect(status.body.error.message).toBe("role 'member' cannot make changes; an owner or admin can");

  for (const [link, heading] of [
    ["Audit log", "Audit log"],
    ["Members", "Members"],
    ["Analytics", "Analytics"],
    ["Webhooks", "Webhooks"],
    ["CRM", "CRM"],
  ]) {
    await page.getByRole("link", { name: link, exact: true }).click();
    await expect(page.getByRole("heading", { level: 1, name: heading })).toBeVisible();
  }
});

test("a user of tenant B never sees tenant A's keys or audit entries", async ({ page }) => {
  const { logins, tenantB } = fixtures();
  await signIn(page, logins.ownerB);
  await expect(page.getByTestId("tenant-name")).toHaveText(tenantB.name);
  // B's keys page, loaded (B's own keys or the empty state; analytics.spec issues one for B), lists none of A's.
  await expect(page.getByTestId("api-key-row").or(page.getByText("No API keys yet")).first()).toBeVisible();
  await expect(page.getByText("Website sync")).toHaveCount(0);
  await page.getByRole("link", { name: "Audit log" }).click();
  // B's log holds B's own entries (its owner being added, and whatever other tests did in B), none of A's.
  const added = page.getByTestId("audit-row").filter({ hasText: "Added member" });
  await expect(added).toHaveCount(1);
  await expect(added).toContainText(logins.ownerB);
  await expect(page.getByText(logins.ownerA)).toHaveCount(0);
  await expect(page.getByText(logins.memberA)).toHaveCount(0);
  await expect(page.getByText("Website sync")).toHaveCount(0);
  await page.getByRole("link", { name: "Members" }).click();
  // The audit log's cells name B's owner too: wait for the members page before looking for the cell.
  await expect(page.getByRole("heading", { level: 1, name: "Members" })).toBeVisible();
  await expect(page.getByRole("cell", { name: logins.ownerB })).toBeVisible();
  await expect(page.getByText(logins.ownerA)).toHaveCount(0);
  await shot(page, "members-tenant-b");
});

test("pages at a phone width", async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await signIn(page, fixtures().logins.ownerA);
  await expect(page.getByTestId("api-key-row").first()).toBeVisible();
  // Wide tables scroll inside their card; the page itself never scrolls sideways.
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await shot(page, "api-keys-phone");
  // At phone width the navigation sits behind the menu button.
  await page.getByRole("button", { name: "Open navigation" }).click();
  await page.getByRole("dialog").getByRole("link", { name: "Analytics" }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Analytics" })).toBeVisible();
  await page.getByRole("button", { name: "30 days" }).click();
  await expect(page.getByRole("button", { name: "30 days" })).toHaveAttribute("aria-pressed", "true");
  await shot(page, "analytics-phone");
});
