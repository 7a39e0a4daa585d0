// The inbound receivers under /api/webhooks, one per provider, as one Fetch handler: the Next route
// file (app/api/webhooks/[...path]/route.ts) mounts it, and so can any other front.
import { jsonAnswer } from "./receiver-http";
import { handleTwilioMessaging, handleTwilioVoiceStatus } from "./twilio";
import { handleRetellWebhook } from "./retell";
import { handleWhatsAppNotification, handleWhatsAppVerification } from "./whatsapp-cloud";
import { errorBody, AppError } from "../../errors";

type Handler = (req: Request) => Promise<Response>;

/** Path -> method -> receiver. */
const RECEIVERS: Record<string, Partial<Record<string, Handler>>> = {
  "/api/webhooks/twilio/messaging": { POST: handleTwilioMessaging },
  "/api/webhooks/twilio/voice": { POST: handleTwilioVoiceStatus },
  "/api/webhooks/retell": { POST: handleRetellWebhook },
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

export function answerWebhookRequest(req: Request): Promise<Response> {
  const { pathname } = new URL(req.url);
  const handler = receiverFor(pathname, req.method);
  if (handler) return handler(req);
  return Promise.resolve(jsonAnswer(404, errorBody(new AppError("not_found", `no receiver for ${req.method} ${pathname}`))));
}
