// Thin mount of the owner's download of the whole tenant as JSON lines (server/export).
import { answerExportDownload } from "@/server/export/export-download";
import { serverRoute } from "@/app/_lib/server-route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";
const handler = serverRoute(answerExportDownload, "/api/dashboard/export");
export { handler as GET };
