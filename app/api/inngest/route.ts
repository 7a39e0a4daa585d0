// Thin mount of Inngest's endpoint (the webhook delivery ladder); the lean front mounts the same handler.
import { handleInngestRequest } from "@/server/webhooks/inngest-engine";
import { serverRoute } from "@/app/_lib/server-route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";
const handler = serverRoute(handleInngestRequest, "/api/inngest");
export { handler as GET, handler as POST, handler as PUT };
