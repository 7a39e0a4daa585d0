// Calls on the wire: the resource of `GET /conversations/{id}/calls` and the `object` of the call.*
// events (the event catalog uses this schema: one definition).
import { z } from "zod";
import { uuid } from "../shared/wire";
import { listEnvelope, pageQuery } from "../shared/pagination";
import { CHANNEL_PROVIDERS } from "../channels/providers";

export const CALL_DIRECTIONS = ["inbound", "outbound"] as const;
export const CALL_STATUSES = ["ringing", "in_progress", "completed", "missed"] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];

const iso = () => z.string().describe("ISO 8601 date-time");

export const callSchema = z
  .object({
    id: z.uuid(),
    conversation_id: z.uuid().describe("The conversation of (voice, the customer's number)"),
    provider: z.enum(CHANNEL_PROVIDERS).describe("The voice provider that reported the call"),
    provider_call_id: z.string().describe("The provider's id of the call"),
    direction: z.enum(CALL_DIRECTIONS),
    status: z
      .enum(CALL_STATUSES)
      .describe(
        "`ringing`, `in_progress` (answered), then `completed` (ended after being answered) or `missed` (no answer, busy, failed, or the caller hung up before the assistant answered)",
      ),
    started_at: iso(),
    answered_at: iso().nullable(),
    ended_at: iso().nullable(),
    duration_seconds: z.number().int().nonnegative().nullable().describe("Talk time of a completed call; 0 for a missed one; null while it lasts"),
    end_reason: z.string().nullable().describe("Why the call ended, as the provider reported it (e.g. `user_hangup`, `dial_no_answer`)"),
    recording_url: z.string().nullable(),
    summary: z.string().nullable(),
    created_at: iso(),
    updated_at: iso(),
  })
  .meta({ id: "Call" });

export const listCallsInput = z.object({ id: uuid().describe("Conversation id"), ...pageQuery });
export const callListSchema = listEnvelope(callSchema, "CallList");

export type Call = z.infer<typeof callSchema>;
