// Thin mount of the tools' MCP endpoint (server/http/mcp.ts); the lean front answers this path
// itself with the same handler.
import { handleMcpRequest } from "@/server/http/mcp";

export const dynamic = "force-dynamic";
const handler = (req: Request) => handleMcpRequest(req);
export { handler as GET, handler as POST, handler as DELETE };
