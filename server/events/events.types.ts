// `GET /api/v1/events`: the tenant's events as webhook envelopes, newest first, so an integrator can
// reconcile deliveries it missed (Stripe's pattern). Listed for EVENTS_RETENTION_DAYS.
import { z } from "zod";
import { isoDateTime } from "../lib/wire";
import { listEnvelope, pageQuery } from "../lib/list-envelope";
import { EVENT_TYPES, eventEnvelopeSchema, type EventType } from "./catalog";

/** How far back the events API lists (older events stay in deliveries' history, unlisted). */
export const EVENTS_RETENTION_DAYS = 30;

export const listEventsInput = z.object({
  ...pageQuery,
  cursor: pageQuery.cursor.describe("The `next_cursor` of the previous page (an event id, `evt_<uuid>`); omit for the first page."),
  type: z
    .enum(EVENT_TYPES as [EventType, ...EventType[]], { error: `must be one of the ${EVENT_TYPES.length} event names` })
    .optional()
    .describe("Only events of this name, e.g. `booking.created`"),
  created_gte: isoDateTime().optional().describe("Only events created at or after this ISO 8601 date-time"),
  created_lt: isoDateTime().optional().describe("Only events created before this ISO 8601 date-time"),
});

export const eventListSchema = listEnvelope(eventEnvelopeSchema, "EventList");

export type ListEventsInput = z.infer<typeof listEventsInput>;
export type EventListItem = z.infer<typeof eventEnvelopeSchema>;
