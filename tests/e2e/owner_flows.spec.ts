// Owner flows at laptop (1440x900) and phone (390x844) width, each state scanned by axe: the skip link,
// the events error of the add-endpoint form seen where it is, editing / disabling / rolling / deleting an
// endpoint, long audit details opened in full, revoking a key, and testing a CRM connection before saving.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test, type Page } from "@playwright/test";
import { fixtures, signIn } from "./fixtures";
import { axeViolations, collectConsoleErrors, expectNoHorizontalScroll, LAPTOP, PHONE } from "./page-checks";

// A fake CRM on 127.0.0.1 (the e2e server allows loopback targets): answers 200 and records each call.
let fakeCrm: Server;
const crmRequests: { method: string; path: string; authorization: string | undefined }[] = [];
test.beforeAll(async () => {
  fakeCrm = createServer((req, res) => {
    crmRequests.push({ method: req.method ?? "", path: req.url ?? "", authorization: req.headers.authorization });
    req.resume();
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  await new Promise<void>((resolve) => fakeCrm.listen(0, "127.0.0.1", resolve));
});
test.afterAll(() => new Promise<void>((resolve) => fakeCrm.close(() => resolve())));

async function expectAxeClean(page: Page) {
  expect(await axeViolations(page)).toEqual([]);
}

for (const [width, viewport] of [
  ["1440", LAPTOP],
  ["390", PHONE],
] as const) {
  test.describe(`at ${width} px`, () => {
    test.beforeEach(async ({ page }) => {
      await page.setViewportSize(viewport);
    });

    test("skip_link_is_the_first_tab_stop_on_every_dashboard_page_and_moves_focus_to_the_content", async ({ page }) => {
      const errors = collectConsoleErrors(page);
      await signIn(page, fixtures().logins.ownerA);
      for (const path of [
        "/dashboard/api-keys",
        "/dashboard/webhooks",
        "/dashboard/audit-log",
        "/dashboard/members",
        "/dashboard/channels",
        "/dashboard/crm",
      ]) {
        await page.goto(path);
        await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
        await page.keyboard.press("Tab");
        const skip = page.getByRole("link", { name: "Skip to content" });
        await expect(skip).toBeFocused();
        await expect(skip).toBeInViewport();
        await page.keyboard.press("Enter");
        await expect(page.locator("main#main-content")).toBeFocused();
      }
      await expectAxeClean(page);
      expect(errors).toEqual([]);
    });

    test("adding_an_endpoint_with_no_event_shows_the_error_in_view_and_focuses_the_events", async ({ page }) => {
      await signIn(page, fixtures().logins.ownerA);
      await page.goto("/dashboard/webhooks");
      await page.getByRole("button", { name: "Add endpoint" }).first().click();
      const dialog = page.getByRole("dialog");
      await dialog.getByLabel("Endpoint URL").fill(`http://127.0.0.1:9/owner-flows-no-event-${width}`);
      await dialog.getByRole("button", { name: "Add endpoint" }).click();
      const error = dialog.locator("[data-field-error]");
      await expect(error).toHaveText("Must list at least one event");
      await expect(error).toBeInViewport();
      const events = dialog.getByRole("group", { name: "Events" });
      await expect(events).toHaveAttribute("aria-invalid", "true");
      await expect(events).toHaveAttribute("aria-describedby", (await error.getAttribute("id"))!);
      await expect(events).toBeFocused();
      await expectAxeClean(page);
      await dialog.getByRole("button", { name: "Cancel" }).click();
      await expect(dialog).toHaveCount(0);
    });

    test("an_owner_edits_disables_enables_rolls_and_deletes_an_endpoint_and_reads_its_long_audit_details", async ({ page }) => {
      const errors = collectConsoleErrors(page);
      const url = `http://127.0.0.1:9/owner-flows-${width}`;
      await signIn(page, fixtures().logins.ownerA);
      await page.goto("/dashboard/webhooks");
      await page.getByRole("button", { name: "Add endpoint" }).first().click();
      const dialog = page.getByRole("dialog");
      await dialog.getByLabel("Endpoint URL").fill(url);
      const groups = dialog.getByRole("checkbox", { name: /\.\*/ });
      // The list renders with the dialog: wait for it before reading it (at 390 px it came after the first read).
      await expect(groups.first()).toBeVisible();
      expect(await groups.count()).toBeGreaterThan(3);
      for (const group of await groups.all()) await group.click();
      await dialog.getByRole("button", { name: "Add endpoint" }).click();
      await expect(dialog.getByTestId("secret-value")).toHaveText(/^whsec_[0-9a-f]{48}$/);
      await dialog.getByRole("button", { name: "Open endpoint" }).click();
      await expect(page.getByRole("heading", { level: 1, name: "Webhook endpoint" })).toBeVisible();
      await expect(page.getByTestId("endpoint-url")).toHaveText(url);
      await expectNoHorizontalScroll(page);

      // Edit: the description is saved and is there after a reload.
      await page.getByLabel("Description (optional)").fill(`Edited at ${width} px`);
      await page.getByRole("button", { name: "Save changes" }).click();
      await expect(page.getByRole("status").filter({ hasText: "Saved." })).toHaveText("Saved.");
      await page.reload();
      await expect(page.getByLabel("Description (optional)")).toHaveValue(`Edited at ${width} px`);

      // Disable, then enable again: a disabled endpoint cannot be sent a test event.
      await page.getByRole("button", { name: "Disable", exact: true }).click();
      await expect(page.getByRole("button", { name: "Enable", exact: true })).toBeVisible();
      await expect(page.getByRole("button", { name: "Send test event" })).toBeDisabled();
      await expectAxeClean(page);
      await page.getByRole("button", { name: "Enable", exact: true }).click();
      await expect(page.getByRole("button", { name: "Disable", exact: true })).toBeVisible();
      await expect(page.getByRole("button", { name: "Send test event" })).toBeEnabled();

      // Roll the secret to the end: confirm, the new secret once, closed, its prefix on the page.
      await page.getByRole("button", { name: "Roll secret" }).click();
      await expectAxeClean(page);
      await page.getByRole("alertdialog").getByRole("button", { name: "Roll secret" }).click();
      const rolled = page.getByRole("dialog", { name: "New signing secret" });
      const secret = (await rolled.getByTestId("secret-value").textContent())!.trim();
      expect(secret).toMatch(/^whsec_[0-9a-f]{48}$/);
      await expectAxeClean(page);
      await rolled.getByRole("button", { name: "Close" }).first().click();
      await expect(rolled).toHaveCount(0);
      await expect(page.getByTestId("secret-prefix")).toHaveText(`${secret.slice(0, 12)}…`);
      await expect(page.getByTestId("previous-secret")).toContainText("The previous secret also signs until");
      await expect(page.locator("body")).not.toContainText(secret);

      // Delete: confirmed, gone from the list.
      await page.getByRole("button", { name: "Delete", exact: true }).click();
      const confirm = page.getByRole("alertdialog");
      await expect(confirm.getByTestId("pending-warning")).toHaveText("No delivery is pending.");
      await expectAxeClean(page);
      await confirm.getByRole("button", { name: "Delete endpoint" }).click();
      await expect(page).toHaveURL(/\/dashboard\/webhooks$/);
      await expect(page.getByTestId("subscription-row").filter({ hasText: url })).toHaveCount(0);

      // The creation's audit details (every event) are longer than a row: cut, then opened in full.
      await page.goto("/dashboard/audit-log");
      const row = page
        .getByTestId("audit-row")
        .filter({ hasText: "Created webhook subscription" })
        .filter({ hasText: `owner-flows-${width}` })
        .first();
      const details = row.getByTestId("audit-details");
      const full = details.getByTestId("audit-details-full");
      await expect(full).toBeHidden();
      await details.getByText("Show all").click();
      await expect(full).toBeVisible();
      await expect(full).toContainText(`url: ${url}`);
      await expect(full).toContainText("max_deliveries_per_second: ");
      await expect(full).toContainText("enabled: true");
      await expectNoHorizontalScroll(page);
      await expectAxeClean(page);
      await details.getByText("Hide").click();
      await expect(full).toBeHidden();
      expect(errors).toEqual([]);
    });

    test("an_owner_revokes_a_key_after_confirming_and_it_reads_revoked", async ({ page }) => {
      await signIn(page, fixtures().logins.ownerA);
      await page.getByRole("button", { name: "Create key" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.getByLabel("Name").fill(`Revoke me ${width}`);
      await dialog.getByRole("checkbox", { name: /assistant:read/ }).click();
      await dialog.getByRole("button", { name: "Create key" }).click();
      await expect(dialog.getByTestId("secret-value")).toHaveText(/^xapk_live_[0-9a-f]{48}$/);
      await dialog.getByRole("button", { name: "Done" }).click();
      const row = page.getByTestId("api-key-row").filter({ hasText: `Revoke me ${width}` });
      await expect(row).toContainText("Active");
      await row.getByRole("button", { name: "Revoke" }).click();
      const confirm = page.getByRole("alertdialog");
      await expect(confirm).toContainText("401");
      await expectAxeClean(page);
      await confirm.getByRole("button", { name: "Revoke key" }).click();
      await expect(confirm).toHaveCount(0);
      await expect(row).toContainText("Revoked");
      await expect(row.getByRole("button", { name: "Revoke" })).toHaveCount(0);
      await expectNoHorizontalScroll(page);
    });

    test("crm_test_connection_checks_the_forms_unsaved_credentials_and_saves_nothing", async ({ page }) => {
      // Tenant B may have a saved connection (crm_analytics.spec.ts connects one): what the form tests is never saved over it.
      const base = `http://127.0.0.1:${(fakeCrm.address() as AddressInfo).port}/unsaved-${width}`;
      await signIn(page, fixtures().logins.ownerB);
      await page.goto("/dashboard/crm");
      const state = page.getByText(/^(Not connected|Saved)/);
      await expect(state).toBeVisible();
      const savedState = await state.innerText();
      const savedBase = await page.getByLabel("Base URL").inputValue();
      await page.getByLabel("Base URL").fill(base);
      await page.getByLabel("API token").fill(`unsaved-token-${width}`);
      const before = crmRequests.length;
      await page.getByRole("button", { name: "Test connection" }).click();
      const result = page.getByTestId("crm-test-result");
      await expect(result).toHaveAttribute("data-outcome", "ok");
      await expect(result).toContainText("Connected: the CRM accepted the token (HTTP 200).");
      await expect(result).toContainText(`GET ${base}`);
      expect(crmRequests.slice(before)).toEqual([{ method: "GET", path: `/unsaved-${width}`, authorization: `Bearer unsaved-token-${width}` }]);
      await expect(page.locator("body")).not.toContainText(`unsaved-token-${width}`);
      await expectAxeClean(page);
      await page.reload();
      await expect(page.getByText(/^(Not connected|Saved)/)).toHaveText(savedState);
      await expect(page.getByLabel("Base URL")).toHaveValue(savedBase);
    });
  });
}
