import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test, type Page } from "@playwright/test";
import { fixtures, shot, signIn } from "./fixtures";

// A fake CRM on 127.0.0.1 (the e2e server allows loopback targets): answers `crmStatus` to any request.
let fakeCrm: Server;
let crmStatus = 200;
const crmRequests: { method: string; path: string; authorization: string | undefined }[] = [];
test.beforeAll(async () => {
  fakeCrm = createServer((req, res) => {
    crmRequests.push({ method: req.method ?? "", path: req.url ?? "", authorization: req.headers.authorization });
    req.resume();
    res.writeHead(crmStatus, { "content-type": "application/json" }).end(JSON.stringify({ ok: crmStatus < 300 }));
  });
  await new Promise<void>((resolve) => fakeCrm.listen(0, "127.0.0.1", resolve));
});
test.afterAll(() => new Promise<void>((resolve) => fakeCrm.close(() => resolve())));

async function crmShots(page: Page, name: string) {
  await page.setViewportSize({ width: 1440, height: 900 });
  await shot(page, `${name}-1440`);
  await page.setViewportSize({ width: 390, height: 844 });
  await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
  await shot(page, `${name}-390`);
  await page.setViewportSize({ width: 1440, height: 900 });
}

test("an owner connects a CRM (token write-only) and edits the field mapping", async ({ page }) => {
  await signIn(page, fixtures().logins.ownerA);
  await page.getByRole("link", { name: "CRM" }).click();
  await expect(page.getByText("Not connected")).toBeVisible();
  await shot(page, "crm-empty");

  // The server's zod schema, run in the form: the message sits beside the field.
  await page.getByLabel("Base URL").fill("ftp://crm.example");
  await page.getByRole("button", { name: "Connect", exact: true }).click();
  await expect(page.locator("[data-field-error]")).toHaveText("Must be an https URL");

  await page.getByLabel("Base URL").fill("https://crm.example.com/api");
  await page.getByLabel("API token").fill("secret-crm-token-123");
  await page.getByRole("button", { name: "Connect", exact: true }).click();
  // Saving is not connecting: the page says so until the connection is tested.
  await expect(page.getByText("Saved · not tested")).toBeVisible();
  await expect(page.getByText(/^Connected/)).toHaveCount(0);
  await expect(page.getByLabel("API token")).toHaveValue("");
  await expect(page.getByText("A token is stored.")).toBeVisible();
  await expect(page.locator("body")).not.toContainText("secret-crm-token-123");

  await page.getByRole("button", { name: "Add mapping" }).click();
  await page.getByLabel("Canonical key 1").fill("email");
  await page.getByLabel("CRM field 1").fill("contact_email");
  await page.getByRole("button", { name: "Add mapping" }).click();
  await page.getByLabel("Canonical key 2").fill("bad key!");
  await page.getByLabel("CRM field 2").fill("x");
  await page.getByRole("button", { name: "Save mapping" }).click();
  await expect(page.locator("[data-field-error]")).toContainText("Must be 1 to 100 letters");
  await page.getByRole("button", { name: "Remove mapping 2" }).click();
  await page.getByRole("button", { name: "Save mapping" }).click();
  await expect(page.getByText("Mapping saved.")).toBeVisible();
  await page.reload();
  await expect(page.getByLabel("CRM field 1")).toHaveValue("contact_email");
  await shot(page, "crm-connected");

  await page.getByRole("link", { name: "Audit log" }).click();
  await expect(page.getByTestId("audit-row").first()).toContainText("Changed CRM connection");
  await expect(page.locator("body")).not.toContainText("secret-crm-token-123");
});

test("an owner tests the CRM connection: ok, then the CRM's own error status", async ({ page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const base = `http://127.0.0.1:${(fakeCrm.address() as AddressInfo).port}/api`;
  await signIn(page, fixtures().logins.ownerA);
  await page.getByRole("link", { name: "CRM" }).click();
  await page.getByLabel("Base URL").fill(base);
  await page.getByLabel("API token").fill("crm-token-for-the-test-call");
  await page.getByRole("button", { name: "Save connection" }).click();
  await expect(page.getByText("Saved. Test the connection to check the token and address.")).toBeVisible();
  await expect(page.getByText("Saved · not tested")).toBeVisible();

  crmStatus = 200;
  const before = crmRequests.length;
  await page.getByRole("button", { name: "Test connection" }).click();
  const result = page.getByTestId("crm-test-result");
  await expect(result).toHaveAttribute("data-outcome", "ok");
  await expect(result).toContainText("Connected: the CRM accepted the token (HTTP 200).");
  await expect(result).toContainText(`GET ${base}`);
  await expect(page.getByText("Connection works", { exact: true }).first()).toBeVisible();
  expect(crmRequests.slice(before)).toEqual([{ method: "GET", path: "/api", authorization: "Bearer crm-token-for-the-test-call" }]);
  await expect(page.locator("body")).not.toContainText("crm-token-for-the-test-call");
  await crmShots(page, "crm-test-ok");

  crmStatus = 401;
  await page.getByRole("button", { name: "Test connection" }).click();
  await expect(result).toHaveAttribute("data-outcome", "error_status");
  await expect(result).toContainText("The CRM answered 401 Unauthorized: check the API token and its scopes.");
  await expect(page.getByText("Connection test failed")).toBeVisible();
  await crmShots(page, "crm-test-401");
});

test("a member sees the CRM connection read-only", async ({ page }) => {
  await signIn(page, fixtures().logins.memberA);
  await page.getByRole("link", { name: "CRM" }).click();
  await expect(page.getByLabel("Base URL")).toBeDisabled();
  await expect(page.getByRole("button", { name: "Save connection" })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Save mapping" })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Test connection" })).toHaveCount(0);
});

test("analytics charts with a day-range selector", async ({ page }) => {
  await signIn(page, fixtures().logins.ownerA);
  await page.getByRole("link", { name: "Analytics" }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Analytics" })).toBeVisible();
  await expect(page.getByText("Conversations and leads")).toBeVisible();
  await page.getByRole("button", { name: "14 days" }).click();
  await expect(page.getByRole("button", { name: "14 days" })).toHaveAttribute("aria-pressed", "true");
  await expect(page.locator(".recharts-surface").first()).toBeVisible();
  await shot(page, "analytics");
  await page.getByRole("link", { name: "Members" }).click();
  await expect(page.getByRole("cell", { name: fixtures().logins.memberA })).toBeVisible();
  await shot(page, "members");
});
