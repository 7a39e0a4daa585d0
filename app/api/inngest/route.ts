// Thin mount of Inngest's endpoint (the webhook delivery ladder); the lean front mounts the same handler.
import { handleInngestRequest } from "@/server/webhooks/inngest-engine";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";
const handler = (req: Request) => handleInngestRequest(req);
export { handler as GET, handler as POST, handler as PUT };
