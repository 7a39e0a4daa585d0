// One HTTP attempt: POST the exact signed bytes, no redirects followed, one overall timeout,
// connection only to addresses that pass the target rules. Never throws: every failure becomes
// the attempt's error text.
import http from "node:http";
import https from "node:https";
import { randomUUID } from "node:crypto";
import { checkUrlShape, guardedLookup } from "./target-url";
import { signBody, standardWebhookSignature } from "./signing";
import { RESPONSE_BODY_LIMIT } from "./retry-ladder";

// Keep-alive pools: most tenants have few targets, and a reused TLS connection saves a handshake.
const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 64, lookup: guardedLookup as never }),
  https: new https.Agent({ keepAlive: true, maxSockets: 64, lookup: guardedLookup as never }),
};

export type SendInput = {
  url: string;
  secret: string;
  /** The event's envelope as JSON text: the exact bytes signed and sent. */
  body: string;
  eventId: string;
  eventType: string;
  timeoutMs: number;
  /** `x-delivery-id`, also the attempt row's id. */
  attemptId?: string;
};

export type SendResult = { attemptId: string; statusCode: number | null; durationMs: number; responseBody: string | null; error: string | null };

function describeError(err: NodeJS.ErrnoException): string {
  if (err.name === "RefusedTargetError") return err.message;
  if (err.code) return `network error: ${err.code}${err.message && !err.message.includes(err.code) ? ` (${err.message})` : ""}`;
  return `network error: ${err.message}`;
}

export function buildHeaders(input: SendInput, attemptId: string, nowSeconds: number): Record<string, string> {
  return {
    "content-type": "application/json",
    "user-agent": "tenant-data-platform-webhooks/1",
    "x-webhook-signature": signBody(input.secret, input.body),
    "x-event-type": input.eventType,
    "x-delivery-id": attemptId,
    "webhook-id": input.eventId,
    "webhook-timestamp": String(nowSeconds),
    "webhook-signature": standardWebhookSignature(input.secret, input.eventId, nowSeconds, input.body),
  };
}

export function sendWebhook(input: SendInput): Promise<SendResult> {
  const attemptId = input.attemptId ?? randomUUID();
  const started = performance.now();
  const done = (r: Omit<SendResult, "attemptId" | "durationMs">): SendResult => ({ attemptId, durationMs: Math.round(performance.now() - started), ...r });

  const shape = checkUrlShape(input.url);
  if ("reason" in shape) return Promise.resolve(done({ statusCode: null, responseBody: null, error: `refused target: url ${shape.reason}` }));
  const { url } = shape;
  const payload = Buffer.from(input.body, "utf8");
  const headers = { ...buildHeaders(input, attemptId, Math.floor(Date.now() / 1000)), "content-length": String(payload.length) };

  return new Promise((resolve) => {
    let settled = false;
    const finish = (r: Omit<SendResult, "attemptId" | "durationMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(done(r));
    };
    const transport = url.protocol === "https:" ? https : http;
    const req = transport.request(url, { method: "POST", headers, agent: url.protocol === "https:" ? agents.https : agents.http }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        // Only the first RESPONSE_BODY_LIMIT characters are kept; stop reading well past that.
        if (size < RESPONSE_BODY_LIMIT * 4) chunks.push(chunk);
        size += chunk.length;
        if (size > 64 * 1024) res.destroy();
      });
      const complete = () => {
        const text = Buffer.concat(chunks).toString("utf8").slice(0, RESPONSE_BODY_LIMIT);
        finish({ statusCode: res.statusCode ?? null, responseBody: text, error: null });
      };
      res.on("end", complete);
      res.on("close", complete);
      res.on("error", complete);
    });
    const timer = setTimeout(() => {
      req.destroy();
      finish({ statusCode: null, responseBody: null, error: `timeout: no complete response within ${input.timeoutMs} ms` });
    }, input.timeoutMs);
    req.on("error", (err) => finish({ statusCode: null, responseBody: null, error: describeError(err) }));
    req.end(payload);
  });
}
