// Thin mount of the agent tools' REST bridge (server/http/agent-rest.ts); the lean front answers
// these paths itself with the same handler.
import { handleAgentRequest } from "@/server/http/agent-rest";

export const dynamic = "force-dynamic";
const handler = (req: Request) => handleAgentRequest(req);
export { handler as GET, handler as POST, handler as PATCH, handler as PUT, handler as DELETE, handler as HEAD, handler as OPTIONS };
