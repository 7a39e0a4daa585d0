// Thin mount of the liveness probe: the process answers; server/http/probes.ts answers, as on the lean front.
import { handleProbeRequest } from "@/server/http/probe-route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";
const handler = handleProbeRequest;
export { handler as GET, handler as HEAD, handler as POST, handler as PUT, handler as PATCH, handler as DELETE, handler as OPTIONS };
