// Members end to end: an owner invites by email and gets a link to copy, shown once (no mail transport
// here; the list never shows links), the invitee opens it in another browser, creates an account and
// lands in the tenant; the owner changes their role, then removes them (their next click goes back to
// sign-in); invited again, they sign in with their account on the accept page and join. Another
// invitation is resent (a new link; the old one no longer opens it) and revoked (its link then says
// so). Each step shows in the audit log.
import { expect, test, type Page } from "@playwright/test";
import { fixtures, shot, signIn } from "./fixtures";
import { collectConsoleErrors, expectNoHorizontalScroll, expectWithinWidth, PHONE } from "./page-checks";

const run = Date.now().toString(36);

async function invite(page: Page, email: string, role: "member" | "admin") {
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Role").selectOption(role);
  await page.getByRole("button", { name: "Invite" }).click();
  const notice = page.getByTestId("invitation-sent");
  await expect(notice).toContainText(`Invitation created for ${email}.`);
  await expect(notice).toContainText("No mail transport is set up, so no email was sent.");
  const link = (await notice.getByTestId("invitation-link").textContent())!.trim();
  expect(link).toMatch(/\/accept-invitation#secret=[A-Za-z0-9_-]{43}$/);
  return link;
}

test("invite → accept with a new account → role change → removal, all audited", async ({ page, browser }) => {
  const errors = collectConsoleErrors(page);
  const invitee = `invitee-${run}@e2e.test`;
  await signIn(page, fixtures().logins.ownerA);
  await page.getByRole("link", { name: "Members" }).click();

  // A malformed address: the words sit beside the field and focus moves there.
  await page.getByLabel("Email").fill("not an email");
  await page.getByRole("button", { name: "Invite" }).click();
  await expect(page.locator("[data-field-error]")).toHaveText("Enter an email address, like name@company.com");
  await expect(page.getByLabel("Email")).toBeFocused();

  const link = await invite(page, invitee, "member");
  await expect(page.getByTestId("invitation-link-once")).toContainText("The link is shown only now.");
  const pendingRow = page.getByTestId("invitation-row").filter({ hasText: invitee });
  await expect(pendingRow).toBeVisible();
  await expect(pendingRow.getByRole("button", { name: "Copy link" })).toHaveCount(0);
  await shot(page, "members-invited");

  // The invitee, in a browser of their own.
  const other = await browser.newContext();
  const guest = await other.newPage();
  const guestErrors = collectConsoleErrors(guest);
  await guest.goto(link);
  await expect(guest).toHaveTitle("Accept invitation · Tenant data platform");
  await expect(guest.getByRole("heading", { level: 1 })).toHaveText(`Join ${fixtures().tenantA.name}`);
  await expect(guest.getByTestId("invited-email")).toHaveText(invitee);
  await guest.getByRole("button", { name: "Create account and join" }).click();
  await expect(guest.getByLabel("Your name")).toBeFocused();
  await expect(guest.locator("[data-field-error]").first()).toHaveText("Enter your name");
  await guest.getByLabel("Your name").fill("Ivy Invitee");
  await guest.getByLabel("Choose a password").fill("short");
  await guest.getByRole("button", { name: "Create account and join" }).click();
  await expect(guest.locator("[data-field-error]")).toHaveText("Use at least 8 characters");
  await expect(guest.getByLabel("Choose a password")).toBeFocused();
  await shot(guest, "accept-invitation-errors");
  await guest.getByLabel("Choose a password").fill("invitee password 1");
  await guest.getByRole("button", { name: "Create account and join" }).click();
  await expect(guest).toHaveURL(/\/dashboard\/api-keys$/);
  await expect(guest.getByTestId("tenant-name")).toHaveText(fixtures().tenantA.name);
  await expect(guest.getByTestId("role")).toHaveText("member");

  // The owner sees the new member, makes them an admin.
  await page.reload();
  await expect(page.getByTestId("invitation-row").filter({ hasText: invitee })).toHaveCount(0);
  const row = page.getByTestId("member-row").filter({ hasText: invitee });
  await expect(row.getByTestId("member-role")).toHaveText("member");
  const changeRole = row.getByRole("button", { name: "Change role" });
  await changeRole.click();
  await page.getByRole("dialog").getByLabel("Role").selectOption("admin");
  await page.getByRole("dialog").getByRole("button", { name: "Save role" }).click();
  await expect(row.getByTestId("member-role")).toHaveText("admin");
  await expect(changeRole).toBeFocused();
  await guest.reload();
  await expect(guest.getByTestId("role")).toHaveText("admin");

  // The last owner cannot be demoted or removed: the dialog says why, and offers no way to try.
  const ownerRow = page.getByTestId("member-row").filter({ hasText: fixtures().logins.ownerA });
  await expect(ownerRow.getByRole("button", { name: "Remove" })).toBeDisabled();
  await ownerRow.getByRole("button", { name: "Change role" }).click();
  await expect(page.getByRole("dialog").getByTestId("last-owner")).toHaveText(
    "This is the only owner. Make someone else an owner first; a tenant always keeps one.",
  );
  await expect(page.getByRole("dialog").getByLabel("Role")).toBeDisabled();
  await page.getByRole("dialog").getByRole("button", { name: "Cancel" }).click();

  // Removal: confirmed, then the removed person's next load goes to sign-in.
  await row.getByRole("button", { name: "Remove" }).click();
  await page.getByRole("alertdialog").getByRole("button", { name: "Remove member" }).click();
  await expect(page.getByTestId("member-row").filter({ hasText: invitee })).toHaveCount(0);
  await guest.reload();
  await expect(guest).toHaveURL(/\/sign-in$/);
  await other.close();

  await page.getByRole("link", { name: "Audit log" }).click();
  const entries = page.getByTestId("audit-row").filter({ hasText: invitee });
  await expect(entries).toHaveCount(4);
  await expect(entries.nth(0)).toContainText(/removed/i);
  await expect(entries.nth(1)).toContainText(/role/i);
  await expect(entries.nth(2)).toContainText(/joined/i);
  await expect(entries.nth(3)).toContainText(/invited/i);
  // The one failed call: the removed person's session no longer has this tenant (401), which is
  // what sends them to sign-in.
  expect(guestErrors).toEqual([
    `${new URL("/dashboard/api-keys", page.url()).href}: Failed to load resource: the server responded with a status of 401 (Unauthorized)`,
  ]);

  // Invited again: they have an account now, so the page asks them to sign in, and they join.
  await page.getByRole("link", { name: "Members" }).click();
  const again = await invite(page, invitee, "member");
  const back = await browser.newContext();
  const returning = await back.newPage();
  const returningErrors = collectConsoleErrors(returning);
  await returning.goto(again);
  await expect(returning.getByText("You already have an account: sign in to accept.")).toBeVisible();
  await returning.getByLabel("Password").fill("invitee password 1");
  await returning.getByRole("button", { name: "Sign in and accept" }).click();
  await expect(returning).toHaveURL(/\/dashboard\/api-keys$/);
  await expect(returning.getByTestId("tenant-name")).toHaveText(fixtures().tenantA.name);
  await expect(returning.getByTestId("role")).toHaveText("member");
  // The used link says so.
  await returning.goto(again);
  await expect(returning.locator("main").getByRole("alert")).toHaveText("This invitation has already been accepted. Sign in to open the dashboard.");
  await back.close();
  expect(returningErrors).toEqual([]);
  expect(errors).toEqual([]);
});

test("resend and revoke a pending invitation at phone width; the revoked link says so", async ({ page, browser }) => {
  const errors = collectConsoleErrors(page);
  const invitee = `pending-${run}@e2e.test`;
  await signIn(page, fixtures().logins.ownerA);
  await page.setViewportSize(PHONE);
  await page.goto("/dashboard/members");
  const link = await invite(page, invitee, "admin");
  const row = page.getByTestId("invitation-row").filter({ hasText: invitee });
  await expectWithinWidth(page, row.getByRole("button", { name: "Resend" }));
  await row.getByRole("button", { name: "Resend" }).click();
  await expect(page.getByTestId("invitation-sent")).toContainText(`Invitation sent again for ${invitee}.`);
  await expect(page.getByTestId("invitation-link")).not.toHaveText(link);
  const resent = (await page.getByTestId("invitation-link").textContent())!.trim();
  expect(resent).toMatch(/\/accept-invitation#secret=[A-Za-z0-9_-]{43}$/);
  await expectWithinWidth(page, row.getByRole("button", { name: "Revoke" }));
  await expectNoHorizontalScroll(page);
  await shot(page, "members-phone");
  await row.getByRole("button", { name: "Revoke" }).click();
  await page.getByRole("alertdialog").getByRole("button", { name: "Revoke invitation" }).click();
  await expect(row).toHaveCount(0);

  const other = await browser.newContext({ viewport: PHONE });
  const guest = await other.newPage();
  await guest.goto(resent);
  await expect(guest.locator("main").getByRole("alert")).toHaveText("This invitation was revoked. Ask the person who invited you for a new one.");
  await expectNoHorizontalScroll(guest);
  // The link from before the resend opens nothing.
  await guest.goto(link);
  await expect(guest.getByRole("heading", { level: 1 })).toHaveText("Invitation not found");
  await other.close();
  expect(errors).toEqual([]);
});

test("a member sees members and invitations but no manage buttons", async ({ page }) => {
  await signIn(page, fixtures().logins.memberA);
  await page.getByRole("link", { name: "Members" }).click();
  await expect(page.getByTestId("member-row").first()).toBeVisible();
  await expect(page.getByRole("button", { name: "Invite" })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Change role" })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Remove" })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Revoke" })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Copy link" })).toHaveCount(0);
});
