// Without a signing key (and no dev server) /api/inngest serves nothing: every request is answered
// a 404 "not configured" in the error envelope, and the process logs that once, not once a request
// (Inngest's SDK alone answered 500 and logged a line per request, without bound).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp } from "./helpers";

const NOT_CONFIGURED = { error: { code: "not_found", message: "Inngest is not configured on this deployment" } };
const LOGGED = "/api/inngest called but Inngest is not configured (no INNGEST_SIGNING_KEY, and INNGEST_DEV unset): answering 404";

describe("without a signing key, /api/inngest answers not configured", () => {
  let started: Awaited<ReturnType<typeof startApp>>;
  beforeAll(async () => {
    // The embedded engine: no INNGEST_* at all; warnings are logged (LOG_LEVEL=warn).
    started = await startApp("embedded", { WEBHOOK_ENGINE: "off" });
  }, 120_000);
  afterAll(async () => {
    await started?.app.stop();
  });

  it("every_method_is_answered_404_not_configured_and_the_process_logs_it_once", async () => {
    const calls: [string, RequestInit, string][] = [
      ["GET", {}, ""],
      ["PUT", { headers: { host: "evil.example:8443" } }, ""],
      [
        "POST",
        { headers: { "content-type": "application/json", "x-inngest-signature": "t=1&s=00" }, body: JSON.stringify({ event: {} }) },
        "?fnId=tenant-data-platform-deliver-webhook&stepId=step",
      ],
    ];
    for (let round = 0; round < 5; round++) {
      for (const [method, init, query] of calls) {
        const res = await fetch(`${started.endpoint}${query}`, { method, ...init });
        expect(res.status, method).toBe(404);
        expect(res.headers.get("content-type"), method).toBe("application/json");
        expect(await res.json(), method).toEqual(NOT_CONFIGURED);
      }
    }
    // The process's whole log (its lines on stdout, anything else on stderr), once it has exited and both are closed.
    await started.app.stop();
    for (const stream of [started.app.proc.stdout!, started.app.proc.stderr!])
      if (!stream.closed) await new Promise((resolve) => stream.once("close", resolve));
    const output = started.app.output();
    expect(output.split(LOGGED).length - 1, output).toBe(1);
    expect(output).not.toContain("no signing key found");
  });
});
