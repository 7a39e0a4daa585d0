// better-auth's endpoints (sign-in, sign-out, session, organization) at /api/auth/*; under `npm start`
// the lean front answers these paths itself with the same handler.
import { answerAuthRequest } from "@/server/dashboard/auth";

export const dynamic = "force-dynamic";
export { answerAuthRequest as GET, answerAuthRequest as POST };
