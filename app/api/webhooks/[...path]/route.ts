// Thin mount of the inbound receivers (Twilio, Retell, WhatsApp Cloud); each verifies its provider's
// signature over the request as received, in server/receivers.
import { answerWebhookRequest, receiverRouteOf } from "@/server/receivers";
import { serverRoute } from "@/app/_lib/server-route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";
const handler = serverRoute(answerWebhookRequest, (req) => receiverRouteOf(new URL(req.url).pathname));
export { handler as GET, handler as POST };
