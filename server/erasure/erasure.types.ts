// Erasing one customer (`POST /api/v1/privacy/erasures`): the request, the answer and the
// `customer.erased` event's data. Zod only (no database): the catalog and the dashboard import it.
import { z } from "zod";
import { unknownFieldMessage } from "../lib/strict-body";
import { uuid } from "../lib/wire";

/** The text every personal value that cannot be nulled becomes (a message body, an appointment's name). */
export const ERASED = "[erased]";
/** A conversation's customer identifier after erasure: unique per conversation, and no personal value. */
export const ERASED_IDENTIFIER_PREFIX = "erased:";

export const eraseCustomerInput = z
  .strictObject(
    {
      customer_identifier: z
        .string()
        .max(320)
        .optional()
        .describe(
          "The customer's phone number (any format intake accepts; normalised to E.164) or email address (lower-cased). Every conversation of that identifier, on every channel, is erased, with the leads and appointments that carry it.",
        ),
      conversation_id: uuid().optional().describe("Erase the customer of this conversation (404 if it is not this tenant's)"),
    },
    unknownFieldMessage(),
  )
  .superRefine((v, ctx) => {
    const given = (v.customer_identifier !== undefined ? 1 : 0) + (v.conversation_id !== undefined ? 1 : 0);
    if (given !== 1)
      ctx.addIssue({
        code: "custom",
        path: [v.customer_identifier === undefined ? "customer_identifier" : "conversation_id"],
        message: "give exactly one of 'customer_identifier' or 'conversation_id'",
      });
  });
export type EraseCustomerInput = z.infer<typeof eraseCustomerInput>;

const ids = (what: string) => z.array(z.uuid()).describe(`Ids of the ${what} erased`);

/** The ids of what an erasure redacted: what `customer.erased` carries, so integrators erase their copies by id. */
export const erasedRecordsSchema = z.strictObject({
  conversation_ids: ids("conversations"),
  message_ids: ids("messages (their text)"),
  call_ids: ids("calls (recording URL and summary)"),
  lead_ids: ids("leads"),
  appointment_ids: ids("appointments"),
  csat_response_ids: ids("CSAT answers (their comment)"),
});
export type ErasedRecords = z.infer<typeof erasedRecordsSchema>;

export const erasureResultSchema = z
  .strictObject({
    status: z
      .enum(["erased", "already_erased", "nothing_found"])
      .describe(
        "`erased`: personal data was found and erased now (one `customer.erased` event was emitted); `already_erased`: the conversation was erased before (nothing emitted again); `nothing_found`: no record carries that identifier",
      ),
    event_id: z.string().nullable().describe("The `customer.erased` event (`evt_<uuid>`), or null when nothing was erased now"),
    ...erasedRecordsSchema.shape,
    redacted: z
      .strictObject({
        events: z.number().int().describe("Stored event payloads redacted"),
        deliveries: z.number().int().describe("Webhook delivery-log entries (deliveries and attempts) whose bodies were redacted"),
        notifications: z.number().int(),
        audit_entries: z.number().int(),
        tool_calls: z.number().int().describe("Stored answers of the assistant's tool calls redacted"),
        idempotent_responses: z.number().int().describe("Stored answers of `Idempotency-Key` requests redacted"),
      })
      .describe("Rows elsewhere that held the customer's values and were redacted"),
  })
  .meta({ id: "Erasure" });
export type ErasureResult = z.infer<typeof erasureResultSchema>;
