// The dashboard's Assistant page: an owner changes the handoff SLA (the server's bounds shown beside
// the field), the change is audited, and a member sees the new value read-only. The page also says
// where the tools live. Opened at its URL (the navigation link is the shell's).
import { expect, test } from "@playwright/test";
import { fixtures, shot, signIn } from "./fixtures";

test("an_owner_changes_the_handoff_sla_within_its_bounds_and_the_change_is_audited", async ({ page, baseURL }) => {
  await signIn(page, fixtures().logins.ownerA);
  await page.goto("/dashboard/assistant");
  await expect(page.getByRole("heading", { level: 1, name: "Assistant" })).toBeVisible();
  const minutes = page.getByLabel("Minutes before a breach");
  await expect(minutes).toHaveValue("15");
  await expect(minutes).toBeEditable();

  await minutes.fill("10081");
  await page.getByRole("button", { name: "Save SLA" }).click();
  await expect(page.locator("[data-field-error]")).toHaveText("Must be an integer from 1 to 10080");

  await minutes.fill("45");
  await page.getByRole("button", { name: "Save SLA" }).click();
  await expect(page.getByRole("status")).toHaveText("Saved: 45 minutes.");
  await page.reload();
  await expect(page.getByLabel("Minutes before a breach")).toHaveValue("45");

  // Where the tools live, on this server.
  await expect(page.getByText(`${baseURL}/api/agent/mcp`, { exact: true })).toBeVisible();
  await expect(page.getByText(`POST ${baseURL}/api/agent/v1/tools/{tool}`, { exact: true })).toBeVisible();
  await expect(page.getByRole("list", { name: "Tools" }).getByText("book_appointment", { exact: true })).toBeVisible();
  await expect(page.getByRole("link", { name: "The tools' reference" })).toHaveAttribute("href", "/api/v1/docs?api=agent-tools");
  await shot(page, "assistant-owner");

  await page.goto("/dashboard/audit-log");
  const latest = page.getByTestId("audit-row").first();
  await expect(latest).toContainText(`tenant ${fixtures().tenantA.id.slice(0, 8)}`);
  await expect(latest).toContainText(fixtures().logins.ownerA);
});

test("a_member_sees_the_handoff_sla_read_only", async ({ page }) => {
  await signIn(page, fixtures().logins.memberA);
  await page.goto("/dashboard/assistant");
  await expect(page.getByText("Your role is member: you can view this page; an owner or admin can make changes.")).toBeVisible();
  const minutes = page.getByLabel("Minutes before a breach");
  await expect(minutes).toHaveValue("45");
  await expect(minutes).toBeDisabled();
  await expect(page.getByRole("button", { name: "Save SLA" })).toHaveCount(0);
  await shot(page, "assistant-member");
});
