import { handleTrpcRequest } from "@/server/http/trpc-handler";
import { serverRoute } from "@/app/_lib/server-route";

export const dynamic = "force-dynamic";
const handler = serverRoute(handleTrpcRequest, "/api/trpc/{procedure}");
export { handler as GET, handler as POST };
