// better-auth's endpoints (sign-in, sign-out, session, organization) at /api/auth/*; under `npm start`
// the lean front answers these paths itself with the same handler.
import { answerAuthRequest } from "@/server/dashboard/auth";
import { serverRoute } from "@/app/_lib/server-route";

export const dynamic = "force-dynamic";
const handler = serverRoute(answerAuthRequest, "/api/auth/{action}");
export { handler as GET, handler as POST };
