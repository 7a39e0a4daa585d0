// The inbound receivers under /api/webhooks, one per provider, as one Fetch handler: the Next route
// file (app/api/webhooks/[...path]/route.ts) mounts it, and so can any other front.
import { jsonAnswer } from "./receiver-http";
import { handleTwilioMessaging } from "./twilio";
import { handleRetellWebhook } from "./retell";
import { errorBody, AppError } from "../../errors";

type Handler = (req: Request) => Promise<Response>;

/** Path -> method -> receiver. */
const RECEIVERS: Record<string, Partial<Record<string, Handler>>> = {
  "/api/webhooks/twilio/messaging": { POST: handleTwilioMessaging },
  "/api/webhooks/retell": { POST: handleRetellWebhook },
};

export function answerWebhookRequest(req: Request): Promise<Response> {
  const { pathname } = new URL(req.url);
  const handler = RECEIVERS[pathname]?.[req.method];
  if (handler) return handler(req);
  return Promise.resolve(jsonAnswer(404, errorBody(new AppError("not_found", `no receiver for ${req.method} ${pathname}`))));
}
