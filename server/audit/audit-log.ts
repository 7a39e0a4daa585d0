// The dashboard's audit log: filtered pages (actor, action, date range) and a bounded CSV export
// whose cells cannot run as spreadsheet formulas.
import type { Prisma } from "../db/generated/client";
import type { TenantDb } from "../db/tenant-scope";
import { keysetPage, toListEnvelope } from "../lib/pagination";
import { AUDIT_CSV_MAX_ROWS, type AuditFilter, auditEntryResource } from "./audit-log.types";

const DAY_MS = 86_400_000;

const auditToWire = auditEntryResource.toWire;

/** The filter as conditions (inside AND, so they never collide with the page cursor's own bounds). */
function auditWhere(filter: AuditFilter): Prisma.AuditLogWhereInput[] {
  const conditions: Prisma.AuditLogWhereInput[] = [];
  if (filter.actor) {
    conditions.push({ OR: [{ actorLabel: { contains: filter.actor, mode: "insensitive" } }, { actorId: filter.actor }] });
  }
  if (filter.action) {
    conditions.push(filter.action.endsWith(".") ? { action: { startsWith: filter.action } } : { action: filter.action });
  }
  if (filter.from) conditions.push({ createdAt: { gte: new Date(`${filter.from}T00:00:00Z`) } });
  if (filter.to) conditions.push({ createdAt: { lt: new Date(Date.parse(`${filter.to}T00:00:00Z`) + DAY_MS) } });
  return conditions;
}

export async function listAuditEntries(db: TenantDb, input: AuditFilter & { limit?: number; cursor?: string }) {
  const AND = auditWhere(input);
  const page = await keysetPage({
    limit: input.limit,
    cursor: input.cursor,
    sortKey: "createdAt",
    direction: "desc",
    loadCursor: (id) => db.auditLog.findFirst({ where: { id }, select: { createdAt: true } }),
    findMany: (args) => db.auditLog.findMany({ ...args, where: { ...args.where, AND } }),
  });
  return toListEnvelope(page, auditToWire);
}

/** The actions this tenant's log holds (the filter's choices). */
export async function listAuditActions(db: TenantDb): Promise<string[]> {
  const rows = await db.auditLog.groupBy({ by: ["action"], orderBy: { action: "asc" } });
  return rows.map((r) => r.action);
}

/**
 * One CSV cell. A cell a spreadsheet would read as a formula (starting with = + - @, or a tab or
 * carriage return that some strip first) gets a leading apostrophe; quotes, commas and line
 * breaks are quoted per RFC 4180.
 */
export function csvCell(value: string | null | undefined): string {
  let text = value ?? "";
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

const CSV_COLUMNS = ["created_at", "actor_type", "actor_id", "actor_label", "action", "target_type", "target_id", "details"] as const;

export async function exportAuditCsv(db: TenantDb, filter: AuditFilter, now = new Date()) {
  const rows = await db.auditLog.findMany({
    where: { AND: auditWhere(filter) },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: AUDIT_CSV_MAX_ROWS + 1,
  });
  const truncated = rows.length > AUDIT_CSV_MAX_ROWS;
  const lines = [CSV_COLUMNS.join(",")];
  for (const row of rows.slice(0, AUDIT_CSV_MAX_ROWS)) {
    const e = auditToWire(row);
    lines.push([e.created_at, e.actor_type, e.actor_id, e.actor_label, e.action, e.target_type, e.target_id, JSON.stringify(e.details)].map(csvCell).join(","));
  }
  return {
    filename: `audit-log-${now.toISOString().slice(0, 10)}.csv`,
    csv: `${lines.join("\r\n")}\r\n`,
    rows: lines.length - 1,
    truncated,
  };
}
