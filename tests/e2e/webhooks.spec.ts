import { createServer, type Server, type ServerResponse } from "node:http";
import { expect, test, type Page } from "@playwright/test";
import { fixtures, shot, signIn } from "./fixtures";
import { axeViolations, collectConsoleErrors } from "./page-checks";

// A local consumer: /ok answers 200, /flaky answers `failingStatus`, /hang never answers.
let consumer: Server;
const received: { path: string; signature: string | undefined; previous: string | undefined; event: string | undefined; body: string }[] = [];
const hanging = new Set<ServerResponse>();
let failingStatus = 500;
const port = Number(process.env.E2E_CONSUMER_PORT);

test.beforeAll(async () => {
  consumer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({
        path: req.url ?? "",
        signature: req.headers["x-webhook-signature"] as string | undefined,
        previous: req.headers["x-webhook-signature-previous"] as string | undefined,
        event: req.headers["x-event-type"] as string | undefined,
        body: Buffer.concat(chunks).toString("utf8"),
      });
      if (req.url === "/hang") return void hanging.add(res);
      const status = req.url === "/flaky" ? failingStatus : 200;
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ ok: status < 300 }));
    });
  });
  await new Promise<void>((resolve) => consumer.listen(port, "127.0.0.1", resolve));
});
test.afterAll(async () => {
  for (const res of hanging) res.destroy();
  consumer.closeAllConnections();
  await new Promise<void>((resolve) => consumer.close(() => resolve()));
});

test.beforeEach(async ({ page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
});

/** A screenshot at 1440x900 and one at 390x844 (the page's own viewport is restored). */
async function shots(page: Page, name: string) {
  await shot(page, `${name}-1440`);
  await page.setViewportSize({ width: 390, height: 844 });
  await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
  await shot(page, `${name}-390`);
  await page.setViewportSize({ width: 1440, height: 900 });
}

async function addEndpoint(page: Page, url: string) {
  await page.getByRole("button", { name: "Add endpoint" }).first().click();
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel("Endpoint URL").fill(url);
  await dialog.getByRole("checkbox", { name: /booking\.\*/ }).click();
  await dialog.getByRole("checkbox", { name: /^lead\.created/ }).click();
  await dialog.getByRole("button", { name: "Add endpoint" }).click();
  const secret = (await dialog.getByTestId("secret-value").textContent())!.trim();
  expect(secret).toMatch(/^whsec_[0-9a-f]{48}$/);
  await shot(page, "webhooks-secret-once");
  await dialog.getByRole("button", { name: "Done" }).click();
  return secret;
}

async function openEndpoint(page: Page, path: string) {
  await page
    .getByTestId("subscription-row")
    .filter({ hasText: `:${port}${path}` })
    .getByRole("link")
    .click();
  await expect(page.getByRole("heading", { level: 1, name: "Webhook endpoint" })).toBeVisible();
  await expect(page.getByTestId("endpoint-url")).toHaveText(`http://127.0.0.1:${port}${path}`);
}

test("an owner adds an endpoint, sends a test event and reads its request and response on the endpoint page", async ({ page }) => {
  const errors = collectConsoleErrors(page);
  await signIn(page, fixtures().logins.ownerA);
  await page.getByRole("link", { name: "Webhooks" }).click();
  await expect(page.getByTestId("local-development-note")).toContainText("WEBHOOK_ALLOW_LOOPBACK=1");
  // This server allows loopback (playwright.config.ts): the note and the URL hint say so, not that it is refused.
  await expect(page.getByTestId("loopback-allowed")).toBeVisible();

  // The server's zod schema, run in the browser, refuses a subscription without events; its message sits beside the field.
  await page.getByRole("button", { name: "Add endpoint" }).first().click();
  await expect(page.getByRole("dialog").getByText("this server allows loopback targets")).toBeVisible();
  await page.getByRole("dialog").getByLabel("Endpoint URL").fill(`http://127.0.0.1:${port}/ok`);
  await page.getByRole("dialog").getByRole("button", { name: "Add endpoint" }).click();
  await expect(page.getByRole("dialog").locator("[data-field-error]")).toHaveText("Must list at least one event");
  await page.getByRole("dialog").getByRole("button", { name: "Cancel" }).click();

  const secret = await addEndpoint(page, `http://127.0.0.1:${port}/ok`);
  await expect(page.getByTestId("subscription-row").filter({ hasText: "/ok" })).toContainText(`${secret.slice(0, 12)}…`);
  await expect(page.locator("body")).not.toContainText(secret);
  await openEndpoint(page, "/ok");
  await expect(page).toHaveTitle(/Webhook endpoint/);
  await expect(page.getByTestId("secret-prefix")).toHaveText(`${secret.slice(0, 12)}…`);

  await page.getByRole("button", { name: "Send test event" }).click();
  const result = page.getByTestId("test-result");
  await expect(result).toHaveAttribute("data-state", "delivered");
  await expect(result).toContainText(/delivered\s*HTTP 200 in \d+ ms/);
  const sent = received.find((r) => r.path === "/ok" && r.event === "webhook.test")!;
  expect(sent.signature).toMatch(/^[0-9a-f]{64}$/);
  const eventId = JSON.parse(sent.body).id as string;

  const delivery = page.getByTestId("delivery-row").first();
  await expect(delivery).toHaveAttribute("data-state", "delivered");
  await expect(delivery.getByTestId("event-id")).toHaveText(eventId);
  await delivery.getByRole("button", { name: "Show attempts" }).click();
  const attempt = delivery.getByTestId("attempt").first();
  await expect(attempt).toContainText("status 200");
  await expect(attempt.getByTestId("request-headers")).toContainText(`x-webhook-signature${sent.signature}`);
  await expect(attempt.getByTestId("request-body")).toContainText(`"id": "${eventId}"`);
  await expect(attempt.getByTestId("response-body")).toContainText(`"ok": true`);
  // The endpoint page with an attempt open: no axe violation, no console error.
  expect(await axeViolations(page)).toEqual([]);
  await shots(page, "webhooks-endpoint-delivered");

  // Edit the endpoint: description, events and its rate.
  const settings = page.getByRole("form", { name: "Endpoint settings" });
  await settings.getByLabel("Description (optional)").fill("Orders to the warehouse");
  await settings.getByLabel("Max deliveries per second").fill("0");
  await settings.getByRole("button", { name: "Save changes" }).click();
  await expect(settings.locator("[data-field-error]")).toHaveText("Must be at least 1");
  await expect(settings.getByLabel("Max deliveries per second")).toBeFocused();
  await settings.getByLabel("Max deliveries per second").fill("20");
  await settings.getByRole("checkbox", { name: /^lead\.created/ }).click();
  await settings.getByRole("button", { name: "Save changes" }).click();
  await expect(settings.getByText("Saved.")).toBeVisible();
  await page.reload();
  await expect(page.getByText("Orders to the warehouse")).toBeVisible();
  await expect(settings.getByLabel("Max deliveries per second")).toHaveValue("20");
  await expect(settings.getByRole("checkbox", { name: /^lead\.created/ })).not.toBeChecked();

  await page.getByRole("button", { name: "Disable" }).click();
  await expect(page.getByText("Disabled", { exact: true })).toBeVisible();
  await expect(page.getByRole("button", { name: "Send test event" })).toBeDisabled();
  await page.getByRole("button", { name: "Enable" }).click();
  await expect(page.getByRole("button", { name: "Send test event" })).toBeEnabled();
  expect(errors).toEqual([]);
});

test("a failing endpoint: dead-lettered with its code, filters by status and event, resend as a new cycle, audited", async ({ page }) => {
  failingStatus = 503;
  await signIn(page, fixtures().logins.ownerA);
  await page.getByRole("link", { name: "Webhooks" }).click();
  await addEndpoint(page, `http://127.0.0.1:${port}/flaky`);
  await openEndpoint(page, "/flaky");
  await page.getByRole("button", { name: "Send test event" }).click();
  const delivery = page.getByTestId("delivery-row").first();
  await expect(delivery).toHaveAttribute("data-state", "dead_lettered", { timeout: 30_000 });
  await expect(delivery.getByTestId("delivery-outcome")).toContainText("dead-lettered HTTP 503 after 6 attempts");
  await delivery.getByRole("button", { name: "Show attempts" }).click();
  await expect(delivery.getByTestId("attempt")).toHaveCount(6);
  await expect(delivery.getByTestId("attempt").first()).toContainText("status 503");
  await page.reload();
  await expect(page.getByTestId("unread-count").filter({ visible: true })).toHaveText("1", { timeout: 20_000 });

  await page.getByLabel("Status").selectOption("delivered");
  await expect(page.getByText("No delivery matches these filters")).toBeVisible();
  await page.getByLabel("Status").selectOption("dead_lettered");
  await expect(page.getByTestId("delivery-row")).toHaveCount(1);
  await page.getByLabel("Event type").selectOption("lead.created");
  await expect(page.getByText("No delivery matches these filters")).toBeVisible();
  await page.getByLabel("Event type").selectOption("webhook.test");
  await expect(page.getByTestId("delivery-row")).toHaveCount(1);
  await shots(page, "webhooks-endpoint-dead-lettered");
  await page.getByLabel("Status").selectOption("");
  await page.getByLabel("Event type").selectOption("");

  failingStatus = 200;
  const dead = page.getByTestId("delivery-row").first();
  await dead.getByRole("button", { name: "Resend" }).click();
  await expect(dead).toHaveAttribute("data-state", "delivered", { timeout: 20_000 });
  await expect(dead).toContainText("1 attempt (cycle 2)");
  // A delivered one can be resent too: a third cycle.
  await dead.getByRole("button", { name: "Resend" }).click();
  await expect(dead).toContainText("(cycle 3)", { timeout: 20_000 });
  await expect(dead).toHaveAttribute("data-state", "delivered", { timeout: 20_000 });

  await page.getByRole("link", { name: "Audit log" }).click();
  await expect(page.getByTestId("audit-row").first()).toContainText("Replayed delivery");
});

test("an owner rolls an endpoint's secret: the new one is shown once and both sign during the overlap", async ({ page }) => {
  await signIn(page, fixtures().logins.ownerA);
  await page.getByRole("link", { name: "Webhooks" }).click();
  await openEndpoint(page, "/flaky");
  await page.getByRole("button", { name: "Roll secret" }).click();
  await page.getByRole("alertdialog").getByRole("button", { name: "Roll secret" }).click();
  const dialog = page.getByRole("dialog");
  const secret = (await dialog.getByTestId("secret-value").textContent())!.trim();
  expect(secret).toMatch(/^whsec_[0-9a-f]{48}$/);
  await shot(page, "webhooks-secret-rolled");
  await dialog.getByRole("button", { name: "Close" }).first().click();
  await expect(page.getByTestId("secret-prefix")).toHaveText(`${secret.slice(0, 12)}…`);
  await expect(page.getByTestId("previous-secret")).toContainText("The previous secret also signs until");
  await expect(page.locator("body")).not.toContainText(secret);

  const before = received.length;
  await page.getByRole("button", { name: "Send test event" }).click();
  await expect(page.getByTestId("test-result")).toHaveAttribute("data-state", "delivered");
  const delivered = received.slice(before).find((r) => r.path === "/flaky")!;
  expect(delivered.signature).toMatch(/^[0-9a-f]{64}$/);
  expect(delivered.previous).toMatch(/^[0-9a-f]{64}$/);
  expect(delivered.previous).not.toBe(delivered.signature);
});

test("deleting an endpoint warns how many pending deliveries it drops", async ({ page }) => {
  await signIn(page, fixtures().logins.ownerA);
  await page.getByRole("link", { name: "Webhooks" }).click();
  await addEndpoint(page, `http://127.0.0.1:${port}/hang`);
  await openEndpoint(page, "/hang");
  await page.getByRole("button", { name: "Send test event" }).click();
  await expect(page.getByTestId("test-result")).toHaveAttribute("data-state", "sending");
  await expect.poll(() => received.some((r) => r.path === "/hang")).toBe(true);
  await page.getByRole("button", { name: "Delete" }).click();
  const confirm = page.getByRole("alertdialog");
  await expect(confirm.getByTestId("pending-warning")).toHaveText("1 pending delivery will be dropped and never sent.");
  await shots(page, "webhooks-delete-warning");
  await confirm.getByRole("button", { name: "Delete endpoint" }).click();
  await expect(page).toHaveURL(/\/dashboard\/webhooks$/);
  await expect(page.getByTestId("subscription-row").filter({ hasText: "/hang" })).toHaveCount(0);
});

test("a member sees endpoints and deliveries but cannot change them", async ({ page }) => {
  await signIn(page, fixtures().logins.memberA);
  await page.getByRole("link", { name: "Webhooks" }).click();
  await expect(page.getByTestId("subscription-row").first()).toBeVisible();
  await expect(page.getByRole("button", { name: "Add endpoint" })).toHaveCount(0);
  await openEndpoint(page, "/flaky");
  await expect(page.getByTestId("delivery-row").first()).toBeVisible();
  for (const name of ["Send test event", "Resend", "Roll secret", "Delete", "Save changes", "Disable"]) {
    await expect(page.getByRole("button", { name })).toHaveCount(0);
  }
  await expect(page.getByLabel("Endpoint URL")).toBeDisabled();
  await shots(page, "webhooks-endpoint-member");
});

test("tenant B sees none of tenant A's endpoints, and A's endpoint page is not found for B", async ({ page }) => {
  await signIn(page, fixtures().logins.ownerA);
  await page.getByRole("link", { name: "Webhooks" }).click();
  await openEndpoint(page, "/ok");
  const aEndpoint = page.url();
  await page.context().clearCookies();

  await signIn(page, fixtures().logins.ownerB);
  await page.getByRole("link", { name: "Webhooks" }).click();
  await expect(page.getByText("No webhook endpoints yet")).toBeVisible();
  await expect(page.getByText(`127.0.0.1:${port}`)).toHaveCount(0);
  await shots(page, "webhooks-empty");
  await page.goto(aEndpoint);
  await expect(page.getByText("This endpoint does not exist")).toBeVisible();
  await expect(page.getByText(`127.0.0.1:${port}`)).toHaveCount(0);
});
