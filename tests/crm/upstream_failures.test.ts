// The CRM failing in every way: a 500 naming the provider, the detail in the log, and the
// credentials nowhere (not in the response, not in the log line).
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { call, errorOf, tenantWithKey } from "../helpers/api";
import { captureLogLines, releaseLogLines } from "../helpers/log-lines";
import { closedPort, startFakeCrm, type FakeCrm } from "./fake-crm-server";
import { connectCrm, TOKEN } from "./connect";

// The fake CRM listens on 127.0.0.1, which only development and tests may call.
process.env.WEBHOOK_ALLOW_LOOPBACK = "1";

describe.each(["http", "hubspot"] as const)("the %s driver when the CRM fails", (provider) => {
  let crm: FakeCrm;
  let key: string;
  let tenantId: string;
  let logged: string[];

  beforeAll(async () => {
    crm = await startFakeCrm({ kind: "json", status: 500, body: { error: "boom" } });
    ({ key, tenantId } = await tenantWithKey(["crm:write"]));
    await connectCrm(tenantId, { provider, baseUrl: crm.url, mapping: { name: "firstname" } });
  });
  afterAll(() => crm.close());

  const createRecord = async () => {
    logged = [];
    process.env.LOG_LEVEL = "info";
    const capture = (...args: unknown[]) => void logged.push(args.map(String).join(" "));
    const logs = captureLogLines();
    const spies = [
      vi.spyOn(console, "error").mockImplementation(capture),
      vi.spyOn(console, "warn").mockImplementation(capture),
      vi.spyOn(console, "log").mockImplementation(capture),
    ];
    try {
      return await call("POST", "/crm/create-record", { key, body: { object: "contacts", fields: { name: "Sara" } } });
    } finally {
      for (const s of spies) s.mockRestore();
      releaseLogLines();
      logged.push(...logs.raw);
      process.env.LOG_LEVEL = "silent";
    }
  };
  afterEach(() => {
    delete process.env.CRM_TIMEOUT_MS;
  });

  const expectProviderFailure = (res: Awaited<ReturnType<typeof call>>, reason: RegExp) => {
    expect(res.status).toBe(500);
    expect(res.body).toEqual(errorOf("internal_error", `CRM provider '${provider}' failed`));
    expect(res.text).not.toContain(TOKEN);
    const line = logged.find((l) => l.includes('"crm provider failed"'));
    expect(line).toBeDefined();
    expect(JSON.parse(line!)).toMatchObject({ level: "error", provider, tenant_id: tenantId, object: "contacts" });
    expect(line).toMatch(reason);
    for (const l of logged) expect(l).not.toContain(TOKEN);
  };

  it("an error status (500) is a 500 naming the provider", async () => {
    crm.respond({ kind: "json", status: 500, body: { error: "boom" } });
    expectProviderFailure(await createRecord(), /"status":500/);
  });

  it("an error body echoing the Authorization header is logged with the token redacted", async () => {
    crm.respond({ kind: "text", status: 401, body: `invalid token Bearer ${TOKEN}` });
    expectProviderFailure(await createRecord(), /\[redacted\]/);
  });

  it("a timeout (CRM_TIMEOUT_MS) is a 500 naming the provider", async () => {
    process.env.CRM_TIMEOUT_MS = "300";
    crm.respond({ kind: "hang" });
    const started = Date.now();
    const res = await createRecord();
    expect(Date.now() - started).toBeLessThan(5000);
    expectProviderFailure(res, /timed out after 300 ms/);
  });

  it("an unreadable answer (2xx that is not JSON, or without an id) is a 500 naming the provider", async () => {
    crm.respond({ kind: "text", status: 200, body: "<html>gateway</html>" });
    expectProviderFailure(await createRecord(), /response is not JSON/);
    crm.respond({ kind: "json", status: 201, body: { ok: true } });
    expectProviderFailure(await createRecord(), /no record id/);
  });

  it("a base URL that resolves inside our network is refused before any request is sent", async () => {
    const before = crm.received.length;
    delete process.env.WEBHOOK_ALLOW_LOOPBACK; // the fake CRM listens on 127.0.0.1
    try {
      crm.respond({ kind: "json", status: 201, body: { id: "never" } });
      expectProviderFailure(await createRecord(), /refused target: host 127\.0\.0\.1 is a loopback address/);
    } finally {
      process.env.WEBHOOK_ALLOW_LOOPBACK = "1";
    }
    expect(crm.received.length).toBe(before);
  });

  it("a refused connection is a 500 naming the provider", async () => {
    const other = await tenantWithKey(["crm:write"]);
    await connectCrm(other.tenantId, { provider, baseUrl: `http://127.0.0.1:${await closedPort()}`, mapping: { name: "firstname" } });
    key = other.key;
    tenantId = other.tenantId;
    expectProviderFailure(await createRecord(), /ECONNREFUSED/);
  });
});
