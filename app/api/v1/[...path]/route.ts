// Thin mount of the REST bridge; everything that makes a request correct lives in the handler.
import { handleRestRequest } from "@/server/http/rest-bridge";
import { serverRoute } from "@/app/_lib/server-route";

export const dynamic = "force-dynamic";
const handler = serverRoute(handleRestRequest);
export { handler as GET, handler as POST, handler as PATCH, handler as PUT, handler as DELETE, handler as HEAD, handler as OPTIONS };
