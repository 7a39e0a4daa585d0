// Thin mount of the tools' MCP endpoint (server/http/mcp.ts); the lean front answers this path
// itself with the same handler.
import { handleMcpRequest } from "@/server/http/mcp";
import { serverRoute } from "@/app/_lib/server-route";

export const dynamic = "force-dynamic";
const handler = serverRoute(handleMcpRequest, "/api/agent/mcp");
export { handler as GET, handler as POST, handler as DELETE };
