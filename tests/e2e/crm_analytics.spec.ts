import { expect, test } from "@playwright/test";
import { fixtures, shot, signIn } from "./fixtures";

test("an owner connects a CRM (token write-only) and edits the field mapping", async ({ page }) => {
  await signIn(page, fixtures().logins.ownerA);
  await page.getByRole("link", { name: "CRM" }).click();
  await expect(page.getByText("Not connected")).toBeVisible();
  await shot(page, "crm-empty");

  // The server's zod schema, run in the form: the message sits beside the field.
  await page.getByLabel("Base URL").fill("ftp://crm.example");
  await page.getByRole("button", { name: "Connect" }).click();
  await expect(page.locator("[data-field-error]")).toHaveText("must be an https URL");

  await page.getByLabel("Base URL").fill("https://crm.example.com/api");
  await page.getByLabel("API token").fill("secret-crm-token-123");
  await page.getByRole("button", { name: "Connect" }).click();
  await expect(page.getByText(/^Connected/)).toBeVisible();
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
  await expect(page.locator("[data-field-error]")).toContainText("must be 1 to 100 letters");
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

test("a member sees the CRM connection read-only", async ({ page }) => {
  await signIn(page, fixtures().logins.memberA);
  await page.getByRole("link", { name: "CRM" }).click();
  await expect(page.getByLabel("Base URL")).toBeDisabled();
  await expect(page.getByRole("button", { name: "Save connection" })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Save mapping" })).toHaveCount(0);
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
