// Label values come from fixed sets, whatever a request carries: a receiver path's connection id
// becomes `{id}`, an unknown path `{unmatched}`, an unknown method `other`, a status its outcome
// word. (The scrape test proves the same end to end over HTTP.)
import { describe, expect, it } from "vitest";
import { enableMetrics, observeHttpRequest, outcomeOfStatus } from "../../server/observability/metrics";
import { receiverRouteOf } from "../../server/receivers";

describe("metric labels", () => {
  it("receiver_paths_become_templates_never_ids", () => {
    expect(
      [
        "/api/webhooks/twilio/messaging",
        "/api/webhooks/twilio/voice",
        "/api/webhooks/retell",
        "/api/webhooks/vapi",
        "/api/webhooks/whatsapp/106540352242922",
        "/api/webhooks/whatsapp/",
        "/api/webhooks/whatsapp/1/2",
        "/api/webhooks/anything-else",
        "/api/webhooks/__proto__",
      ].map(receiverRouteOf),
    ).toEqual([
      "/api/webhooks/twilio/messaging",
      "/api/webhooks/twilio/voice",
      "/api/webhooks/retell",
      "/api/webhooks/vapi",
      "/api/webhooks/whatsapp/{id}",
      "/api/webhooks/{unmatched}",
      "/api/webhooks/{unmatched}",
      "/api/webhooks/{unmatched}",
      "/api/webhooks/{unmatched}",
    ]);
  });

  it("statuses_become_outcome_words", () => {
    expect([200, 201, 204, 400, 401, 403, 404, 405, 409, 413, 429, 500, 502, 503].map(outcomeOfStatus)).toEqual([
      "ok",
      "ok",
      "ok",
      "bad_request",
      "unauthorized",
      "forbidden",
      "not_found",
      "bad_request",
      "conflict",
      "bad_request",
      "rate_limited",
      "internal_error",
      "internal_error",
      "unavailable",
    ]);
  });

  it("a_method_outside_the_http_set_is_other_and_each_kind_of_request_is_one_series", async () => {
    const registry = await enableMetrics();
    const t = performance.now();
    observeHttpRequest("/api/v1/offerings", "GET", 200, t);
    observeHttpRequest("/api/v1/offerings", "GET", 200, t);
    observeHttpRequest("/api/v1/offerings", "PROPFIND", 404, t);
    observeHttpRequest("/api/v1/offerings", undefined, 404, t);
    const counts = (await registry.getSingleMetricAsString("tdp_http_request_duration_seconds")).split("\n").filter((l) => l.includes("_count"));
    expect(counts).toEqual([
      'tdp_http_request_duration_seconds_count{route="/api/v1/offerings",method="GET",status="200"} 2',
      'tdp_http_request_duration_seconds_count{route="/api/v1/offerings",method="other",status="404"} 2',
    ]);
  });
});
