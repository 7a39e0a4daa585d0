// The dashboard's download of the whole tenant (`GET /api/dashboard/export`, owners only): the
// export's JSON lines streamed as the browser reads them, never built in memory.
import { resolveDashboardIdentity } from "../dashboard/identity";
import { limitDashboardRequest } from "../ratelimit";
import { getDb } from "../db/client";
import { scopeToTenant } from "../db/tenant-scope";
import { recordAudit } from "../audit/record-audit";
import { actorOf } from "../auth/principal";
import { log } from "../lib/log";
import { errorBody, tenantSuspended } from "../lib/errors";
import { openTenantExport } from "./export";

export const EXPORT_DOWNLOAD_PATH = "/api/dashboard/export";

const refusal = (status: number, code: string, message: string, headers: Record<string, string> = {}) =>
  Response.json({ error: { code, message } }, { status, headers });

export async function answerExportDownload(req: Request): Promise<Response> {
  if (req.method !== "GET") return refusal(405, "bad_request", "use GET", { allow: "GET" });
  const identity = await resolveDashboardIdentity(req.headers);
  if (!identity) return refusal(401, "unauthorized", "sign in to continue");
  // As every dashboard procedure refuses a suspended tenant (server/trpc/trpc.ts authenticate): 403, before the limiter.
  if (identity.suspended) {
    log.info({ reason: "tenant suspended", tenant_id: identity.tenantId }, "dashboard auth refused");
    return Response.json(errorBody(tenantSuspended()), { status: 403 });
  }
  const decision = await limitDashboardRequest({ userId: identity.userId, tenantId: identity.tenantId });
  if (!decision.allowed) return refusal(429, "rate_limited", decision.message, decision.headers);
  if (identity.role !== "owner") return refusal(403, "forbidden", `role '${identity.role}' cannot export the tenant; an owner can`);
  const now = new Date();
  const lines = await openTenantExport(identity.tenantId, { now });
  if (!lines) return refusal(404, "not_found", "not found");
  const db = scopeToTenant(await getDb(), identity.tenantId);
  const principal = { kind: "user" as const, tenantId: identity.tenantId, userId: identity.userId, role: identity.role, email: identity.email };
  await recordAudit(db, { ...actorOf(principal), action: "tenant.exported", targetType: "tenant", targetId: identity.tenantId, details: { via: "dashboard" } });
  return new Response(exportStream(lines), {
    status: 200,
    headers: {
      "content-type": "application/x-ndjson; charset=utf-8",
      "content-disposition": `attachment; filename="tenant-export-${now.toISOString().slice(0, 10)}.jsonl"`,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    },
  });
}

/** The lines as a byte stream pulled by its reader (backpressure: the next page is read when the last is taken). */
export function exportStream(lines: AsyncGenerator<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const next = await lines.next();
          if (next.done) controller.close();
          else controller.enqueue(encoder.encode(next.value));
        } catch (err) {
          log.error({ error: err }, "tenant export failed");
          controller.error(err);
        }
      },
      async cancel() {
        await lines.return(undefined);
      },
    },
    { highWaterMark: 16 },
  );
}
