// axe (WCAG 2.x A/AA and best practices) on every dashboard page and the public pages, at laptop and
// phone width, with the console free of errors throughout.
import { expect, test } from "@playwright/test";
import { fixtures, signIn } from "./fixtures";
import { axeViolations, collectConsoleErrors, LAPTOP, PHONE } from "./page-checks";

const DASHBOARD = ["analytics", "assistant", "api-keys", "webhooks", "channels", "crm", "members", "audit-log", "privacy", "retention"];

for (const [size, viewport] of [
  ["laptop", LAPTOP],
  ["phone", PHONE],
] as const) {
  test(`every dashboard page passes axe with no console errors (${size})`, async ({ page }) => {
    const errors = collectConsoleErrors(page);
    await signIn(page, fixtures().logins.ownerA);
    await page.setViewportSize(viewport);
    const found: Record<string, unknown> = {};
    for (const name of DASHBOARD) {
      await page.goto(`/dashboard/${name}`);
      await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
      await expect(page.locator("[role=status]")).toHaveCount(0);
      const violations = await axeViolations(page);
      if (violations.length) found[name] = violations;
    }
    expect(found).toEqual({});
    expect(errors).toEqual([]);
  });
}

test("the sign-in, accept-invitation and 404 pages pass axe with no console errors", async ({ page }) => {
  const errors = collectConsoleErrors(page);
  const found: Record<string, unknown> = {};
  for (const path of ["/sign-in", "/accept-invitation#secret=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "/no-such-page"]) {
    await page.goto(path);
    await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
    const violations = await axeViolations(page);
    if (violations.length) found[path] = violations;
  }
  expect(found).toEqual({});
  // Chrome logs the 404 page's own status; nothing else may be logged.
  expect(errors).toEqual([`${new URL("/no-such-page", page.url()).href}: Failed to load resource: the server responded with a status of 404 (Not Found)`]);
});
