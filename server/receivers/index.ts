// The inbound receivers under /api/webhooks, one per provider, as one Fetch handler: the Next route
// file (app/api/webhooks/[...path]/route.ts) mounts it, and so can any other front. Every request
// under the prefix first counts against its client address (RATE_LIMIT_PER_IP a minute, default
// 500): past it the answer is a 429 with Retry-After before any receiver reads the request.
import { jsonAnswer } from "./receiver-http";
import { handleTwilioMessaging, handleTwilioVoiceStatus } from "./twilio";
import { handleRetellWebhook } from "./retell";
import { handleVapiWebhook } from "./vapi";
import { handleWhatsAppNotification, handleWhatsAppVerification } from "./whatsapp-cloud";
import { errorBody, AppError } from "../shared/errors";
import { clientIpFromHeaders } from "../shared/client-ip";
import { limitInboundRequest, type LimitDecision } from "../ratelimit";
import { failedAuthBucketOf } from "../ratelimit/failed-auth";

type Handler = (req: Request) => Promise<Response>;

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
 * The per-IP decision for a request. The address is the one the front resolved (X-Forwarded-For
 * believed only from TRUSTED_PROXIES; the lean front rewrites the header to that address); an
 * IPv6 client counts by its /64. A request with no address (an in-process caller) is not limited.
 */
function limitClientIp(req: Request): Promise<LimitDecision> | null {
  const ip = clientIpFromHeaders(req.headers);
  return ip ? limitInboundRequest({ ip: failedAuthBucketOf(ip) }) : null;
}

function withHeaders(response: Response, headers: Record<string, string>): Response {
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  return response;
}

export async function answerWebhookRequest(req: Request): Promise<Response> {
  const decision = await limitClientIp(req);
  if (decision && !decision.allowed) {
    return withHeaders(jsonAnswer(429, errorBody(new AppError("rate_limited", decision.message))), decision.headers);
  }
  const { pathname } = new URL(req.url);
  const handler = receiverFor(pathname, req.method);
  const response = handler ? await handler(req) : jsonAnswer(404, errorBody(new AppError("not_found", `no receiver for ${req.method} ${pathname}`)));
  return decision ? withHeaders(response, decision.headers) : response;
}
