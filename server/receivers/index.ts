// The inbound receivers under /api/webhooks, one per provider, behind one entry (`answerWebhook`)
// with two mounts: the lean front answers straight from node:http (server/http/node-receivers.ts,
// no Fetch Request or Response per request: inbound traffic is the busiest write path), and the
// Next route file (app/api/webhooks/[...path]/route.ts) mounts the Fetch handler
// (`answerWebhookRequest`).
// Every request under the prefix first counts against its client address (RATE_LIMIT_PER_IP a
// minute, default 500): past it the answer is a 429 with Retry-After before any receiver reads the
// request.
import { jsonAnswer, type ReceiverAnswer, type ReceiverRequest } from "./receiver-http";
import { handleTwilioMessaging, handleTwilioVoiceStatus } from "./twilio";
import { handleRetellWebhook } from "./retell";
import { handleVapiWebhook } from "./vapi";
import { handleWhatsAppNotification, handleWhatsAppVerification } from "./whatsapp-cloud";
import { errorBody, AppError } from "../lib/errors";
import { resolveClientIp } from "../lib/client-ip";
import { limitInboundRequest, type LimitDecision } from "../ratelimit";
import { failedAuthBucketOf } from "../ratelimit/failed-auth";
import { requestIdOf, withRequestScope } from "../lib/log";
import { traceRequest } from "../observability/tracing";

type Handler = (req: ReceiverRequest) => Promise<ReceiverAnswer>;

/** Path -> method -> receiver. */
const RECEIVERS: Record<string, Partial<Record<string, Handler>>> = {
  "/api/webhooks/twilio/messaging": { POST: handleTwilioMessaging },
  "/api/webhooks/twilio/voice": { POST: handleTwilioVoiceStatus },
  "/api/webhooks/retell": { POST: handleRetellWebhook },
  "/api/webhooks/vapi": { POST: handleVapiWebhook },
};

/** Receivers whose last path segment names the connection (WhatsApp Cloud: the phone_number_id). */
const BY_CONNECTION: Record<string, Partial<Record<string, Handler>>> = {
  "/api/webhooks/whatsapp/": { GET: handleWhatsAppVerification, POST: handleWhatsAppNotification },
};

function receiverFor(pathname: string, method: string): Handler | undefined {
  const exact = RECEIVERS[pathname];
  if (exact) return exact[method];
  const slash = pathname.lastIndexOf("/");
  return slash > 0 && slash < pathname.length - 1 ? BY_CONNECTION[pathname.slice(0, slash + 1)]?.[method] : undefined;
}

/**
 * The per-IP decision for a request. The address is resolved from the socket's (X-Forwarded-For
 * believed only from TRUSTED_PROXIES; behind Next, with no socket, from the header the front
 * passed on); an IPv6 client counts by its /64. A request with no address (an in-process caller)
 * is not limited.
 */
function limitClientIp(req: ReceiverRequest): Promise<LimitDecision> | null {
  const ip = resolveClientIp({ remoteAddress: req.remoteAddress, forwardedFor: req.headers.get("x-forwarded-for") });
  return ip ? limitInboundRequest({ ip: failedAuthBucketOf(ip) }) : null;
}

function withHeaders(answer: ReceiverAnswer, headers: Record<string, string>): ReceiverAnswer {
  for (const [name, value] of Object.entries(headers)) answer.headers[name.toLowerCase()] = value;
  return answer;
}

/**
 * Answers one request under /api/webhooks. Never throws for anything a caller sent. Its answer
 * carries `X-Request-Id`, as the API's do, and every line logged while it runs the same id.
 */
export async function answerWebhook(req: ReceiverRequest): Promise<ReceiverAnswer> {
  const requestId = requestIdOf(req.headers);
  // With tracing on, the request is a span named by its receiver's route (a connection's id is never in it).
  const run = () => withRequestScope(requestId, () => answerInScope(req));
  const answer = await traceRequest(
    { method: req.method, target: req.url.pathname, headers: req.headers },
    "/api/webhooks/{unmatched}",
    requestId,
    run,
    (answered) => ({
      status: answered.status,
      route: receiverRouteOf(req.url.pathname),
    }),
  );
  answer.headers["x-request-id"] = requestId;
  return answer;
}

async function answerInScope(req: ReceiverRequest): Promise<ReceiverAnswer> {
  const decision = await limitClientIp(req);
  if (decision && !decision.allowed) {
    return withHeaders(jsonAnswer(429, errorBody(new AppError("rate_limited", decision.message))), decision.headers);
  }
  const { pathname } = req.url;
  const handler = receiverFor(pathname, req.method);
  const answer = handler ? await handler(req) : jsonAnswer(404, errorBody(new AppError("not_found", `no receiver for ${req.method} ${pathname}`)));
  return decision ? withHeaders(answer, decision.headers) : answer;
}

/** The receivers as a Fetch handler (the Next route file, in-process callers such as the demo seed). */
export async function answerWebhookRequest(req: Request): Promise<Response> {
  const answer = await answerWebhook({ method: req.method, url: new URL(req.url), headers: req.headers, body: req.body });
  return new Response(answer.body, { status: answer.status, headers: answer.headers });
}

/** A receiver path's route template, the HTTP metrics' label: a connection's id in the path is never a label. */
export function receiverRouteOf(pathname: string): string {
  if (Object.hasOwn(RECEIVERS, pathname)) return pathname;
  const prefix = pathname.slice(0, pathname.lastIndexOf("/") + 1);
  return prefix.length < pathname.length && Object.hasOwn(BY_CONNECTION, prefix) ? `${prefix}{id}` : "/api/webhooks/{unmatched}";
}
