// Thin mount of the inbound receivers (Twilio, Retell, WhatsApp Cloud); each verifies its provider's
// signature over the request as received, in server/receivers.
import { answerWebhookRequest } from "@/server/receivers";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";
const handler = (req: Request) => answerWebhookRequest(req);
export { handler as GET, handler as POST };
