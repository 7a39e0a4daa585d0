import { randomInt } from "node:crypto";
import { expect, test } from "@playwright/test";
import { fixtures, shot, signIn } from "./fixtures";

// Addresses of this run's own (one address belongs to one tenant across the database).
// A Dubai landline: +971 4, then a digit 2-8 (libphonenumber's fixed-line pattern), then six digits.
const smsNumber = `+9714${String(randomInt(2_000_000, 9_000_000))}`;
const phoneNumberId = String(randomInt(100_000_000, 999_999_999));
const AUTH_TOKEN = "twilio-auth-token-e2e-5f1e0c9d";
const ACCESS_TOKEN = "EAAG-e2e-whatsapp-access-token";

test.describe.configure({ mode: "serial" });

test("an owner connects channels (credentials write-only), copies each receiver URL and disconnects after confirming", async ({ page }) => {
  await signIn(page, fixtures().logins.ownerA);
  await page.goto("/dashboard/channels");
  await expect(page.getByRole("heading", { level: 1, name: "Channels" })).toBeVisible();
  await expect(page.getByText("No channels connected")).toBeVisible();
  await expect(page.getByTestId("public-url-hint")).toContainText("PUBLIC_BASE_URL");
  await shot(page, "channels-empty");

  // Twilio SMS: the server's credential schema runs in the form, its message beside the field.
  await page.getByRole("button", { name: "Connect a channel" }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByLabel("Provider")).toHaveValue("twilio");
  await expect(dialog.getByLabel("Channel")).toHaveValue("sms");
  await dialog.getByLabel("Phone number").fill("12ab");
  await dialog.getByLabel("Account SID (AC…)").fill("AC123");
  await dialog.getByRole("button", { name: "Connect" }).click();
  await expect(dialog.locator("[data-field-error]")).toHaveText(["Must be 'AC' followed by 32 hex characters", "This field is required"]);

  // The address is checked by the server: its 400 names the field, shown beside it.
  await dialog.getByLabel("Account SID (AC…)").fill("AC0123456789abcdef0123456789abcdef");
  await dialog.getByLabel("Auth token (verifies X-Twilio-Signature)").fill(AUTH_TOKEN);
  await dialog.getByRole("button", { name: "Connect" }).click();
  await expect(dialog.locator("[data-field-error]")).toHaveText("Not a valid phone number; write it in E.164, e.g. +97143001234");
  await expect(dialog.getByLabel("Phone number")).toBeFocused();

  await dialog.getByLabel("Phone number").fill(smsNumber);
  await dialog.getByRole("button", { name: "Connect" }).click();
  const origin = new URL(page.url()).origin;
  await expect(dialog.getByTestId("new-receiver-url")).toHaveText(`${origin}/api/webhooks/twilio/messaging`);
  await shot(page, "channels-connected-dialog");
  await dialog.getByRole("button", { name: "Done" }).click();

  // WhatsApp Cloud: the receiver URL names the phone_number_id.
  await page.getByRole("button", { name: "Connect a channel" }).click();
  await dialog.getByLabel("Provider").selectOption("whatsapp_cloud");
  await expect(dialog.getByLabel("Channel")).toHaveValue("whatsapp");
  await dialog.getByLabel("Phone number ID").fill(phoneNumberId);
  await dialog.getByLabel("App secret (verifies X-Hub-Signature-256)").fill("e2e-app-secret");
  await dialog.getByLabel("Verify token (the webhook handshake)").fill("e2e-verify-token");
  await dialog.getByLabel("Access token (sending)").fill(ACCESS_TOKEN);
  await dialog.getByRole("button", { name: "Connect" }).click();
  await expect(dialog.getByTestId("new-receiver-url")).toHaveText(`${origin}/api/webhooks/whatsapp/${phoneNumberId}`);
  await dialog.getByRole("button", { name: "Done" }).click();

  // Listed, newest first, with the receiver URL to paste; no credential anywhere on the page, after a reload too.
  await page.reload();
  const rows = page.getByTestId("channel-row");
  await expect(rows).toHaveCount(2);
  await expect(rows.nth(0)).toContainText("WhatsApp Cloud API");
  await expect(rows.nth(0).getByTestId("receiver-url")).toHaveText(`${origin}/api/webhooks/whatsapp/${phoneNumberId}`);
  await expect(rows.nth(1)).toContainText("Twilio");
  await expect(rows.nth(1)).toContainText("SMS");
  await expect(rows.nth(1)).toContainText(smsNumber);
  await expect(rows.nth(1).getByTestId("receiver-url")).toHaveText(`${origin}/api/webhooks/twilio/messaging`);
  await expect(rows.nth(1).getByRole("button", { name: "Copy" })).toBeVisible();
  for (const secret of [AUTH_TOKEN, ACCESS_TOKEN, "e2e-app-secret", "e2e-verify-token"]) await expect(page.locator("body")).not.toContainText(secret);
  await shot(page, "channels-list");

  // Disconnecting asks first; Cancel keeps the connection.
  await rows.nth(1).getByRole("button", { name: "Disconnect" }).click();
  const confirm = page.getByRole("alertdialog");
  await expect(confirm).toContainText(`Disconnect ${smsNumber}?`);
  await confirm.getByRole("button", { name: "Cancel" }).click();
  await expect(rows).toHaveCount(2);
  await rows.nth(1).getByRole("button", { name: "Disconnect" }).click();
  await confirm.getByRole("button", { name: "Disconnect" }).click();
  await expect(rows).toHaveCount(1);
  await expect(page.locator("body")).not.toContainText(smsNumber);
  await page.reload();
  await expect(rows).toHaveCount(1);

  // Each change is audited, without its secrets.
  await page.goto("/dashboard/audit-log");
  await expect(page.getByTestId("audit-row").first()).toBeVisible();
  for (const secret of [AUTH_TOKEN, ACCESS_TOKEN]) await expect(page.locator("body")).not.toContainText(secret);
});

test("a member sees the channels and their receiver URLs read-only", async ({ page }) => {
  await signIn(page, fixtures().logins.memberA);
  await page.goto("/dashboard/channels");
  await expect(page.getByTestId("read-only")).toBeVisible();
  const rows = page.getByTestId("channel-row");
  await expect(rows).toHaveCount(1);
  await expect(rows.first().getByTestId("receiver-url")).toHaveText(new RegExp(`/api/webhooks/whatsapp/${phoneNumberId}$`));
  await expect(page.getByRole("button", { name: "Connect a channel" })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Disconnect" })).toHaveCount(0);
});

test("another tenant's owner sees none of tenant A's channels", async ({ page }) => {
  await signIn(page, fixtures().logins.ownerB);
  await page.goto("/dashboard/channels");
  await expect(page.getByText("No channels connected")).toBeVisible();
  await expect(page.locator("body")).not.toContainText(phoneNumberId);
});
