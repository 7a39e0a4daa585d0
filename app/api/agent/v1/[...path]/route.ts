// Thin mount of the agent tools' REST bridge (server/http/agent-rest.ts); the lean front answers
// these paths itself with the same handler.
import { handleAgentRequest } from "@/server/http/agent-rest";
import { serverRoute } from "@/app/_lib/server-route";

export const dynamic = "force-dynamic";
const handler = serverRoute(handleAgentRequest);
export { handler as GET, handler as POST, handler as PATCH, handler as PUT, handler as DELETE, handler as HEAD, handler as OPTIONS };
