import { readFileSync } from "node:fs";
import { expect, test } from "@playwright/test";
import { fixtures, shot, signIn } from "./fixtures";

// Tenant B's own entries (a CRM connection saved twice), so the other specs' data does not matter.
test("an owner filters the audit log by actor, action and date, exports the CSV, and the table fits its card", async ({ page }) => {
  const { logins } = fixtures();
  await page.setViewportSize({ width: 1440, height: 900 });
  await signIn(page, logins.ownerB);
  await page.getByRole("link", { name: "CRM" }).click();
  await page.getByLabel("Base URL").fill("https://crm.example.com/api");
  await page.getByLabel("API token").fill("audit-e2e-token");
  await page.getByRole("button", { name: "Connect", exact: true }).click();
  await expect(page.getByText("Saved · not tested")).toBeVisible();
  await page.getByRole("button", { name: "Add mapping" }).click();
  await page.getByLabel("Canonical key 1").fill("email");
  await page.getByLabel("CRM field 1").fill("contact_email_address_with_a_rather_long_name_to_stretch_the_details_column");
  await page.getByRole("button", { name: "Save mapping" }).click();
  await expect(page.getByText("Mapping saved.")).toBeVisible();

  await page.getByRole("link", { name: "Audit log" }).click();
  await expect(page).toHaveTitle(/Audit log/);
  const rows = page.getByTestId("audit-row");
  await expect(rows.first()).toContainText("Changed CRM connection");
  const total = await rows.count();
  expect(total).toBeGreaterThanOrEqual(2);
  // Nothing sticks out of the card at 1440 px.
  const fits = await page.evaluate(() => {
    const table = document.querySelector("table")!;
    const card = table.closest("[class*='rounded-xl']")!;
    return table.getBoundingClientRect().right <= card.getBoundingClientRect().right + 0.5 && document.documentElement.scrollWidth <= window.innerWidth;
  });
  expect(fits).toBe(true);
  await shot(page, "audit-log-1440");

  await page.getByLabel("Action").selectOption("crm_connection.changed");
  await page.getByLabel("Actor").fill(logins.ownerB.slice(0, 10).toUpperCase());
  await page.getByRole("button", { name: "Apply" }).click();
  await expect(rows).toHaveCount(2);
  await page.getByLabel("Actor").fill("nobody-at-all");
  await page.getByRole("button", { name: "Apply" }).click();
  await expect(page.getByText("No entry matches these filters")).toBeVisible();

  await page.getByRole("button", { name: "Clear" }).click();
  await expect(rows).toHaveCount(total);
  await page.getByLabel("From", { exact: true }).fill("2030-01-02");
  await page.getByLabel("To", { exact: true }).fill("2030-01-01");
  await page.getByRole("button", { name: "Apply" }).click();
  await expect(page.locator("[data-field-error]")).toHaveText("Must not be before the 'from' date");
  await page.getByLabel("To", { exact: true }).fill("2030-01-03");
  await page.getByRole("button", { name: "Apply" }).click();
  await expect(page.getByText("No entry matches these filters")).toBeVisible();
  await page.getByRole("button", { name: "Clear" }).click();
  await page.getByLabel("Action").selectOption("crm_connection.changed");
  await page.getByRole("button", { name: "Apply" }).click();
  await expect(rows).toHaveCount(2);

  const download = page.waitForEvent("download");
  await page.getByRole("button", { name: "Export CSV" }).click();
  const file = await download;
  expect(file.suggestedFilename()).toMatch(/^audit-log-\d{4}-\d\d-\d\d\.csv$/);
  const lines = readFileSync((await file.path())!, "utf8")
    .trimEnd()
    .split("\r\n");
  expect(lines[0]).toBe("created_at,actor_type,actor_id,actor_label,action,target_type,target_id,details");
  expect(lines).toHaveLength(3);
  for (const line of lines.slice(1)) expect(line).toContain(`,user,`);
  for (const line of lines.slice(1)) expect(line).toContain(`,${logins.ownerB},crm_connection.changed,crm_connection,`);
  expect(lines.join("\n")).not.toContain("audit-e2e-token");
  await expect(page.getByTestId("export-status")).toHaveText("Exported 2 entries.");

  await page.setViewportSize({ width: 390, height: 844 });
  await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
  await shot(page, "audit-log-390");
});

test("a member reads and exports the audit log of their own tenant only", async ({ page }) => {
  await signIn(page, fixtures().logins.memberA);
  await page.getByRole("link", { name: "Audit log" }).click();
  await expect(page.getByRole("button", { name: "Export CSV" })).toBeEnabled();
  await expect(page.getByTestId("audit-row").filter({ hasText: fixtures().logins.ownerB })).toHaveCount(0);
});
