// CHANNEL_DRIVER=http against a fake provider on 127.0.0.1: what it receives, and how a provider
// error, a timeout and a refused connection end the message `failed` with outbound.failed.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createServer } from "node:net";
import { call, tenantWithKey } from "../helpers/api";
import { eventsOf, makeConversation, startFakeServer } from "../helpers/conversations";

type Fake = Awaited<ReturnType<typeof startFakeServer>>;

describe("the http channel driver", () => {
  let mode: "ok" | "error" | "hang" = "ok";
  let fake: Fake;

  beforeAll(async () => {
    fake = await startFakeServer((req, res) => {
      if (mode === "hang") return; // never answers: the driver's timeout decides
      if (mode === "error") {
        res.writeHead(500, { "content-type": "text/plain" }).end("provider exploded");
        return;
      }
      res.writeHead(202, { "content-type": "application/json" }).end(JSON.stringify({ id: "prov-123" }));
    });
    process.env.CHANNEL_DRIVER = "http";
    process.env.CHANNEL_HTTP_BASE_URL = `${fake.url}/v1/`;
    process.env.CHANNEL_HTTP_TOKEN = "provider-token-abc";
    process.env.CHANNEL_HTTP_TIMEOUT_MS = "1500";
  });
  afterEach(() => {
    mode = "ok";
    process.env.CHANNEL_HTTP_BASE_URL = `${fake.url}/v1/`;
  });
  afterAll(async () => {
    for (const name of ["CHANNEL_DRIVER", "CHANNEL_HTTP_BASE_URL", "CHANNEL_HTTP_TOKEN", "CHANNEL_HTTP_TIMEOUT_MS"]) delete process.env[name];
    await fake.close();
  });

  it("POSTs the message to the provider and records it sent with the provider's id", async () => {
    const { tenantId, key } = await tenantWithKey();
    const conversation = await makeConversation(tenantId, "sms");
    const before = fake.received.length;
    const res = await call("POST", `/conversations/${conversation.id}/send`, { key, body: { body: "See you at 10" } });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe("sent");

    const got = fake.received.slice(before);
    expect(got).toHaveLength(1);
    expect(got[0].method).toBe("POST");
    expect(got[0].url).toBe("/v1/messages");
    expect(got[0].headers.authorization).toBe("Bearer provider-token-abc");
    expect(got[0].headers["idempotency-key"]).toBe(res.body.id);
    expect(JSON.parse(got[0].body)).toEqual({
      message_id: res.body.id,
      tenant_id: tenantId,
      conversation_id: conversation.id,
      channel: "sms",
      to: conversation.customer_identifier,
      body: "See you at 10",
    });
    const [event] = await eventsOf(tenantId, "outbound.sent");
    expect(event.data).toMatchObject({ object: res.body, driver: "http", provider_message_id: "prov-123" });
  });

  it("a provider 500 ends the message failed (still 201) with outbound.failed carrying the error", async () => {
    mode = "error";
    const { tenantId, key } = await tenantWithKey();
    const conversation = await makeConversation(tenantId, "whatsapp");
    const res = await call("POST", `/conversations/${conversation.id}/send`, { key, body: { body: "hello" } });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe("failed");
    expect(await eventsOf(tenantId, "outbound.sent")).toEqual([]);
    const [event] = await eventsOf(tenantId, "outbound.failed");
    expect(event.data).toMatchObject({ object: res.body, driver: "http", error: "provider responded 500: provider exploded" });
    const listed = await call("GET", `/conversations/${conversation.id}/messages`, { key });
    expect(listed.body.data).toEqual([res.body]);
  });

  it("a provider that never answers times out into failed", async () => {
    mode = "hang";
    const { tenantId, key } = await tenantWithKey();
    const conversation = await makeConversation(tenantId, "email");
    const res = await call("POST", `/conversations/${conversation.id}/send`, { key, body: { body: "hello" } });
    expect([res.status, res.body.status]).toEqual([201, "failed"]);
    const [event] = await eventsOf(tenantId, "outbound.failed");
    expect(event.data.error).toBe("provider timed out after 1500 ms");
  });

  it("a refused connection ends the message failed", async () => {
    // A port that was just free: nothing listens on it.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    process.env.CHANNEL_HTTP_BASE_URL = `http://127.0.0.1:${port}`;

    const { tenantId, key } = await tenantWithKey();
    const conversation = await makeConversation(tenantId, "webchat");
    const res = await call("POST", `/conversations/${conversation.id}/send`, { key, body: { body: "hello" } });
    expect([res.status, res.body.status]).toEqual([201, "failed"]);
    const [event] = await eventsOf(tenantId, "outbound.failed");
    expect(event.data.error).toBe("provider unreachable");
  });
});
