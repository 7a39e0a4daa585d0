// better-auth's endpoints (sign-in, sign-out, session, organization) at /api/auth/*.
import { getAuth } from "@/server/dashboard/auth";

export const dynamic = "force-dynamic";
const handler = async (req: Request) => (await getAuth()).handler(req);
export { handler as GET, handler as POST };
