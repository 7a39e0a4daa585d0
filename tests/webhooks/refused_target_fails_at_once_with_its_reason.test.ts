// A target the SSRF/loopback rules refuse at send time (loopback not allowed any more, or a name
// that resolves to a loopback address) fails the delivery at once: one attempt, outcome
// permanent_fail, nothing sent, and the guard's reason (with how to allow loopback for local
// testing) in the attempt's error on the delivery log, instead of an opaque "refused target" going
// round the retry ladder. The consumer never hears of it.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { tenantWithKey } from "../helpers/api";
import { eventually, startConsumer, type Consumer } from "../helpers/webhook-consumer";
import { dashboardCaller, deliveriesOf, emitInOrder } from "../helpers/webhooks";
import { startEmbeddedWorker, stopEmbeddedWorker } from "../../server/webhooks/embedded-worker";

process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
// A short ladder: a refusal that went round it would show a second attempt within the test.
process.env.WEBHOOK_RETRY_DELAYS_MS = "0,100,100,100,100,100";

let consumer: Consumer;
beforeAll(async () => {
  consumer = await startConsumer(200);
  await startEmbeddedWorker({ pollIntervalMs: 50 });
});
afterEach(() => {
  process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
});
afterAll(async () => {
  await stopEmbeddedWorker();
  await consumer.close();
});

const HINT = " (loopback and plain-http targets are allowed only with WEBHOOK_ALLOW_LOOPBACK=1, for local testing)";

async function refusedDelivery(url: string) {
  const { tenantId } = await tenantWithKey();
  await dashboardCaller(tenantId).webhooks.createSubscription({ url, events: ["csat.received"] });
  // Allowed when the endpoint was registered; not any more when the delivery goes out.
  process.env.WEBHOOK_ALLOW_LOOPBACK = "0";
  await emitInOrder(tenantId, 1);
  // Out of `pending` is final (claims take only pending deliveries): no later attempt can follow.
  const [d] = await eventually(async () => {
    const list = await deliveriesOf(tenantId);
    return list.length === 1 && list[0].status !== "pending" ? list : null;
  });
  return d;
}

describe("a target refused at send time", () => {
  it("a_loopback_http_target_fails_at_once_with_the_reason_in_the_delivery_log", async () => {
    const d = await refusedDelivery(consumer.url("/plain"));
    expect(d.status).toBe("permanent_fail");
    expect(d.state).toBe("failed");
    expect(d.attempt_count).toBe(1);
    expect(d.attempts.map((a) => [a.attempt_number, a.outcome, a.status_code, a.error, a.request_headers])).toEqual([
      [1, "permanent_fail", null, `refused target: url must be an https URL${HINT}`, null],
    ]);
    expect(consumer.received.filter((r) => r.path === "/plain")).toHaveLength(0);
  });

  it("an_https_loopback_name_fails_at_once_with_the_reason", async () => {
    const port = new URL(consumer.url()).port;
    const d = await refusedDelivery(`https://localhost:${port}/named`);
    expect(d.status).toBe("permanent_fail");
    expect(d.attempt_count).toBe(1);
    expect(d.attempts).toHaveLength(1);
    expect(d.attempts[0].outcome).toBe("permanent_fail");
    expect(d.attempts[0].error).toBe(`refused target: host localhost is a loopback address${HINT}`);
    expect(consumer.received.filter((r) => r.path === "/named")).toHaveLength(0);
  });
});
