// The dashboard's Data retention page: an owner sets a class's period within the operator's bound
// (shown beside each field; a longer one is refused beside the field), the change is audited, and a
// member sees the periods read-only. Both at laptop and phone width, with axe and no console errors.
import { expect, test } from "@playwright/test";
import { fixtures, shot, signIn } from "./fixtures";
import { axeViolations, collectConsoleErrors, expectNoHorizontalScroll, expectWithinWidth, LAPTOP, PHONE } from "./page-checks";

const MESSAGES = "Messages and call transcripts (days)";
const EVENTS = "Events and webhook delivery logs (days)";

test("an_owner_sets_a_retention_period_within_the_operator_bound_and_the_change_is_audited", async ({ page }) => {
  const errors = collectConsoleErrors(page);
  await page.setViewportSize(LAPTOP);
  await signIn(page, fixtures().logins.ownerA);
  await page.goto("/dashboard/retention");
  await expect(page.getByRole("heading", { level: 1, name: "Data retention" })).toBeVisible();
  const messages = page.getByLabel(MESSAGES);
  // No tenant setting yet: empty, the operator's default (RETENTION_MESSAGES_DAYS, 365) shown as the bound.
  await expect(messages).toHaveValue("");
  await expect(messages).toBeEditable();
  await expect(messages).toHaveAccessibleDescription("At most 365 days, the operator's limit. Leave empty for the operator's default.");
  const messagesBlock = page.locator("[data-retention-class=messages]");
  await expect(messagesBlock).toContainText("Now: 365 days (the operator's default).");
  expect(await axeViolations(page)).toEqual([]);

  // Past the bound: the server refuses, and says so beside the field (focused).
  await messages.fill("400");
  await page.getByRole("button", { name: "Save retention" }).click();
  await expect(messagesBlock.locator("[data-field-error]")).toHaveText(
    "Messages must be a whole number of days from 1 to 365, the operator's bound (RETENTION_MESSAGES_DAYS); got 400",
  );
  await expect(messages).toBeFocused();
  await expect(messages).toHaveAttribute("aria-invalid", "true");
  // Not a whole number: refused before it is sent, beside its own field.
  await messages.fill("30");
  await page.getByLabel(EVENTS).fill("2.5");
  await page.getByRole("button", { name: "Save retention" }).click();
  await expect(page.locator("[data-retention-class=events] [data-field-error]")).toHaveText("Must be a whole number of days");
  await expect(messagesBlock.locator("[data-field-error]")).toHaveCount(0);
  expect(await axeViolations(page)).toEqual([]);

  await page.getByLabel(EVENTS).fill("");
  await page.getByRole("button", { name: "Save retention" }).click();
  await expect(page.getByRole("status")).toHaveText("Saved. The next purge applies the new periods.");
  await expect(messagesBlock).toContainText("Now: 30 days (this tenant's setting).");
  await shot(page, "retention-owner-laptop");
  await page.reload();
  await expect(page.getByLabel(MESSAGES)).toHaveValue("30");

  await page.goto("/dashboard/audit-log");
  const latest = page.getByTestId("audit-row").first();
  await expect(latest).toContainText("Changed data retention");
  // Only the class that changed is recorded (the events field was left as it was).
  await expect(latest).toContainText('days: {"messages":30}');
  await expect(latest).toContainText(fixtures().logins.ownerA);
  // Chrome logs the refused save's 400 (shown beside the field); nothing else may be logged.
  expect(errors).toEqual([
    `${new URL("/dashboard/retention", page.url()).href}: Failed to load resource: the server responded with a status of 400 (Bad Request)`,
  ]);
});

test("the_retention_page_fits_a_phone_and_passes_axe", async ({ page }) => {
  const errors = collectConsoleErrors(page);
  await page.setViewportSize(PHONE);
  await signIn(page, fixtures().logins.ownerA);
  await page.goto("/dashboard/retention");
  await expect(page.getByLabel(MESSAGES)).toHaveValue("30");
  await expectNoHorizontalScroll(page);
  await expectWithinWidth(page, page.getByLabel("Dashboard notifications (days)"));
  await expectWithinWidth(page, page.getByRole("button", { name: "Save retention" }));
  expect(await axeViolations(page)).toEqual([]);
  await shot(page, "retention-owner-phone");
  expect(errors).toEqual([]);
});

test("a_member_sees_the_retention_periods_read_only", async ({ page }) => {
  const errors = collectConsoleErrors(page);
  for (const viewport of [LAPTOP, PHONE]) {
    await page.setViewportSize(viewport);
    if (viewport === LAPTOP) await signIn(page, fixtures().logins.memberA);
    await page.goto("/dashboard/retention");
    await expect(page.getByText("Your role is member: you can view these periods; an owner can change them.")).toBeVisible();
    const messages = page.getByLabel(MESSAGES);
    await expect(messages).toHaveValue("30");
    await expect(messages).toBeDisabled();
    await expect(messages).toHaveAccessibleDescription("At most 365 days, the operator's limit.");
    await expect(page.getByRole("button", { name: "Save retention" })).toHaveCount(0);
    await expectNoHorizontalScroll(page);
    expect(await axeViolations(page)).toEqual([]);
  }
  await shot(page, "retention-member-phone");
  expect(errors).toEqual([]);
});
