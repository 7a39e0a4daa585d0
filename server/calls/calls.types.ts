// Calls on the wire: the resource of `GET /conversations/{id}/calls` and the `object` of the call.*
// events (the event catalog uses this schema: one definition).
import { z } from "zod";
import type { Prisma } from "../db/generated/client";
import { resourceFields } from "../db/resource";
import { uuid } from "../lib/wire";
import { listEnvelope, pageQuery } from "../lib/list-envelope";
import { CHANNEL_PROVIDERS } from "../channels/providers";

const CALL_DIRECTIONS = ["inbound", "outbound"] as const;
const CALL_STATUSES = ["ringing", "in_progress", "completed", "missed"] as const;

const iso = () => z.string().describe("ISO 8601 date-time");

const column = resourceFields<Prisma.CallGetPayload<object>>();

/** The call, declared once: wire schema and row mapping (calls change only by provider reports). */
export const callResource = column.define("Call", {
  id: column.value("id", z.uuid()),
  conversation_id: column.value("conversationId", z.uuid().describe("The conversation of (voice, the customer's number)")),
  provider: column.value("provider", z.enum(CHANNEL_PROVIDERS).describe("The voice provider that reported the call")),
  provider_call_id: column.value("providerCallId", z.string().describe("The provider's id of the call")),
  direction: column.value("direction", z.enum(CALL_DIRECTIONS)),
  status: column.value(
    "status",
    z
      .enum(CALL_STATUSES)
      .describe(
        "`ringing`, `in_progress` (answered), then `completed` (ended after being answered) or `missed` (no answer, busy, failed, or the caller hung up before the assistant answered)",
      ),
  ),
  started_at: column.timestamp("startedAt", iso()),
  answered_at: column.timestamp("answeredAt", iso().nullable()),
  ended_at: column.timestamp("endedAt", iso().nullable()),
  duration_seconds: column.value(
    "durationSeconds",
    z.number().int().nonnegative().nullable().describe("Talk time of a completed call; 0 for a missed one; null while it lasts"),
  ),
  end_reason: column.value(
    "endReason",
    z.string().nullable().describe("Why the call ended, as the provider reported it (e.g. `user_hangup`, `dial_no_answer`)"),
  ),
  recording_url: column.value("recordingUrl", z.string().nullable()),
  summary: column.value("summary", z.string().nullable()),
  created_at: column.timestamp("createdAt", iso()),
  updated_at: column.timestamp("updatedAt", iso()),
});
export const callSchema = callResource.schema;

export const listCallsInput = z.object({ id: uuid().describe("Conversation id"), ...pageQuery });
export const callListSchema = listEnvelope(callSchema, "CallList");

export type Call = z.infer<typeof callSchema>;
