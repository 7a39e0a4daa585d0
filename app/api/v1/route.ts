// `/api/v1` itself has no endpoint; the bridge answers with the 404 envelope.
import { handleRestRequest } from "@/server/http/rest-bridge";
import { serverRoute } from "@/app/_lib/server-route";

export const dynamic = "force-dynamic";
const handler = serverRoute(handleRestRequest);
export { handler as GET, handler as POST, handler as PATCH, handler as PUT, handler as DELETE };
