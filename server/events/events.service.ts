import { badRequest } from "../lib/errors";
import type { TenantDb } from "../db/tenant-scope";
import { keysetPage } from "../lib/pagination";
import { EVENT_TYPES, toEnvelope } from "./catalog";
import { EVENTS_RETENTION_DAYS, type EventListItem, type ListEventsInput } from "./events.types";

const EVENT_ID = /^evt_([0-9a-f-]{36})$/i;
const DAY_MS = 86_400_000;

/** The tenant's events, newest first, as the envelopes webhooks carry; cursors are event ids (`evt_<uuid>`). */
export async function listEvents(db: TenantDb, input: ListEventsInput) {
  let cursor: string | undefined;
  if (input.cursor !== undefined) {
    const match = EVENT_ID.exec(input.cursor);
    if (!match) throw badRequest("invalid field 'cursor': not a cursor of this list", "cursor");
    cursor = match[1];
  }
  const retained = new Date(Date.now() - EVENTS_RETENTION_DAYS * DAY_MS);
  const createdAt: Record<string, Date> = { gte: retained };
  if (input.created_gte && new Date(input.created_gte) > retained) createdAt.gte = new Date(input.created_gte);
  if (input.created_lt) createdAt.lt = new Date(input.created_lt);
  // Only catalog events: a dashboard "send test event" is for its one subscription, not the record.
  const filter = { createdAt, type: input.type ?? { in: EVENT_TYPES } };
  const page = await keysetPage({
    limit: input.limit,
    cursor,
    sortKey: "createdAt",
    direction: "desc",
    loadCursor: (id) => db.event.findFirst({ where: { id, ...filter }, select: { createdAt: true } }),
    findMany: (args) => db.event.findMany({ ...args, where: { AND: [args.where, filter] } }),
  });
  return {
    // The filter lets only catalog events through; the output schema checks each one again.
    data: page.rows.map((row) => toEnvelope(row) as EventListItem),
    next_cursor: page.nextCursor && `evt_${page.nextCursor}`,
    has_more: page.hasMore,
  };
}
