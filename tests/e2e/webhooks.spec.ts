import { createServer, type Server } from "node:http";
import { expect, test } from "@playwright/test";
import { fixtures, shot, signIn } from "./fixtures";

// A local consumer: answers with whatever status `statusFor` says for the request path.
let consumer: Server;
const received: { path: string; signature: string | undefined; previous: string | undefined; event: string | undefined }[] = [];
let failingStatus = 500;
const port = Number(process.env.E2E_CONSUMER_PORT);

test.beforeAll(async () => {
  consumer = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received.push({
        path: req.url ?? "",
        signature: req.headers["x-webhook-signature"] as string | undefined,
        previous: req.headers["x-webhook-signature-previous"] as string | undefined,
        event: req.headers["x-event-type"] as string | undefined,
      });
      const status = req.url === "/flaky" ? failingStatus : 200;
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ ok: status < 300 }));
    });
  });
  await new Promise<void>((resolve) => consumer.listen(port, "127.0.0.1", resolve));
});
test.afterAll(() => new Promise<void>((resolve) => consumer.close(() => resolve())));

async function addEndpoint(page: import("@playwright/test").Page, url: string) {
  await page.getByRole("button", { name: "Add endpoint" }).first().click();
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel("Endpoint URL").fill(url);
  await dialog.getByRole("checkbox", { name: /booking\.\*/ }).click();
  await dialog.getByRole("checkbox", { name: /^lead\.created/ }).click();
  await dialog.getByRole("button", { name: "Add endpoint" }).click();
  const secret = (await dialog.getByTestId("secret-value").textContent())!.trim();
  expect(secret).toMatch(/^whsec_[0-9a-f]{48}$/);
  await shot(page, `webhooks-secret-once`);
  await dialog.getByRole("button", { name: "Done" }).click();
  return secret;
}

test("an owner subscribes a local consumer, sends a test event and sees it delivered", async ({ page }) => {
  await signIn(page, fixtures().logins.ownerA);
  await page.getByRole("link", { name: "Webhooks" }).click();
  await expect(page.getByText("No webhook endpoints yet")).toBeVisible();
  await shot(page, "webhooks-empty");

  // The server's zod schema, run in the browser, refuses a subscription without events; its message sits beside the field.
  await page.getByRole("button", { name: "Add endpoint" }).first().click();
  await page.getByRole("dialog").getByLabel("Endpoint URL").fill(`http://127.0.0.1:${port}/ok`);
  await page.getByRole("dialog").getByRole("button", { name: "Add endpoint" }).click();
  await expect(page.getByRole("dialog").locator("[data-field-error]")).toHaveText("must list at least one event");
  await shot(page, "webhooks-create-form");
  await page.getByRole("dialog").getByRole("button", { name: "Cancel" }).click();

  const secret = await addEndpoint(page, `http://127.0.0.1:${port}/ok`);
  const row = page.getByTestId("subscription-row").filter({ hasText: "/ok" });
  await expect(row).toContainText(`${secret.slice(0, 12)}…`);
  await expect(page.locator("body")).not.toContainText(secret);

  await row.getByRole("button", { name: "Send test event" }).click();
  const delivery = page.getByTestId("delivery-row").first();
  await expect(delivery).toHaveAttribute("data-status", "delivered");
  await delivery.getByRole("button", { name: "Show attempts" }).click();
  await expect(page.getByTestId("attempts")).toContainText("status 200");
  await shot(page, "webhooks-delivered");
  expect(received.some((r) => r.path === "/ok" && r.event === "webhook.test" && /^[0-9a-f]{64}$/.test(r.signature ?? ""))).toBe(true);

  await row.getByRole("button", { name: "Disable" }).click();
  await expect(row).toContainText("Disabled");
  await expect(row.getByRole("button", { name: "Send test event" })).toBeDisabled();
});

test("a dead-lettered delivery raises a notification and the owner replays it", async ({ page }) => {
  failingStatus = 503;
  await signIn(page, fixtures().logins.ownerA);
  await page.getByRole("link", { name: "Webhooks" }).click();
  await addEndpoint(page, `http://127.0.0.1:${port}/flaky`);
  const row = page.getByTestId("subscription-row").filter({ hasText: "/flaky" });
  await row.getByRole("button", { name: "Send test event" }).click();
  const delivery = page.getByTestId("delivery-row").first();
  await expect(delivery).toHaveAttribute("data-status", "dead_letter", { timeout: 30_000 });
  await expect(delivery).toContainText("503");
  await delivery.getByRole("button", { name: "Show attempts" }).click();
  await expect(page.getByTestId("attempts").getByRole("listitem")).toHaveCount(6);

  await page.reload();
  await expect(page.getByTestId("unread-count").filter({ visible: true })).toHaveText("1", { timeout: 20_000 });
  await page.getByRole("button", { name: /Notifications/ }).filter({ visible: true }).click();
  await expect(page.getByTestId("notification").first()).toBeVisible();
  await shot(page, "webhooks-dead-letter-notification");
  await page.keyboard.press("Escape");

  failingStatus = 200;
  await page.getByTestId("subscription-row").filter({ hasText: "/flaky" }).click();
  const dead = page.getByTestId("delivery-row").first();
  await dead.getByRole("button", { name: "Replay" }).click();
  await expect(dead).toHaveAttribute("data-status", "delivered", { timeout: 20_000 });
  await expect(dead).toContainText("cycle 2");
  await shot(page, "webhooks-replayed");

  await page.getByRole("link", { name: "Audit log" }).click();
  await expect(page.getByTestId("audit-row").first()).toContainText(/replayed/i);
});

test("an owner rolls an endpoint's secret: the new one is shown once and both sign during the overlap", async ({ page }) => {
  await signIn(page, fixtures().logins.ownerA);
  await page.getByRole("link", { name: "Webhooks" }).click();
  // The enabled endpoint of the tests above (its consumer answers 200 by now).
  const row = page.getByTestId("subscription-row").filter({ hasText: "/flaky" });
  await row.getByRole("button", { name: "Roll secret" }).click();
  await page.getByRole("alertdialog").getByRole("button", { name: "Roll secret" }).click();
  const dialog = page.getByRole("dialog");
  const secret = (await dialog.getByTestId("secret-value").textContent())!.trim();
  expect(secret).toMatch(/^whsec_[0-9a-f]{48}$/);
  await shot(page, "webhooks-secret-rolled");
  await dialog.getByRole("button", { name: "Close" }).first().click();
  await expect(row).toContainText(`${secret.slice(0, 12)}…`);
  await expect(row.getByTestId("previous-secret")).toContainText("The previous secret also signs until");
  await expect(page.locator("body")).not.toContainText(secret);

  const before = received.length;
  await row.getByRole("button", { name: "Send test event" }).click();
  await expect.poll(() => received.slice(before).find((r) => r.path === "/flaky")).toBeTruthy();
  const delivered = received.slice(before).find((r) => r.path === "/flaky")!;
  expect(delivered.signature).toMatch(/^[0-9a-f]{64}$/);
  expect(delivered.previous).toMatch(/^[0-9a-f]{64}$/);
  expect(delivered.previous).not.toBe(delivered.signature);
});

test("a member sees webhooks but cannot change them", async ({ page }) => {
  await signIn(page, fixtures().logins.memberA);
  await page.getByRole("link", { name: "Webhooks" }).click();
  await expect(page.getByTestId("subscription-row").first()).toBeVisible();
  await expect(page.getByRole("button", { name: "Add endpoint" })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Send test event" })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Replay" })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Roll secret" })).toHaveCount(0);
  await shot(page, "webhooks-member");
});

test("tenant B sees none of tenant A's endpoints or deliveries", async ({ page }) => {
  await signIn(page, fixtures().logins.ownerB);
  await page.getByRole("link", { name: "Webhooks" }).click();
  await expect(page.getByText("No webhook endpoints yet")).toBeVisible();
  await expect(page.getByText(`127.0.0.1:${port}`)).toHaveCount(0);
});
