import { z } from "zod";
import type { Prisma } from "../db/generated/client";
import { resourceFields } from "../db/resource";
import { invalid, uuid } from "../lib/wire";
import { unknownFieldMessage } from "../lib/strict-body";

const MAX_CSAT_COMMENT = 1000;

/** A customer's satisfaction answer, as `csat.received` carries it. */
const column = resourceFields<Prisma.CsatResponseGetPayload<object>>();
export const csatResource = column.define("CsatResponse", {
  id: column.value("id", z.uuid()),
  conversation_id: column.value("conversationId", z.uuid()),
  score: column.value("score", z.number().int().min(1).max(5).describe("1 (very unsatisfied) to 5 (very satisfied)")),
  comment: column.value("comment", z.string().nullable().describe("The customer's own words, if any")),
  created_at: column.timestamp("createdAt", z.string().describe("ISO 8601 date-time")),
});
export const csatSchema = csatResource.schema;

const scoreMessage = "must be an integer from 1 to 5";
export const recordCsatInput = z.strictObject(
  {
    conversation_id: uuid().describe("The conversation the customer rated (404 if it is not this tenant's)"),
    score: z
      .number(invalid(scoreMessage))
      .int({ message: scoreMessage })
      .min(1, { message: scoreMessage })
      .max(5, { message: scoreMessage })
      .describe("The customer's rating: 1 (very unsatisfied) to 5 (very satisfied)"),
    comment: z.string().trim().max(MAX_CSAT_COMMENT).nullable().optional().describe(`What the customer said about it, at most ${MAX_CSAT_COMMENT} characters`),
  },
  unknownFieldMessage(),
);

export type CsatResponse = z.infer<typeof csatSchema>;
export type RecordCsatInput = z.infer<typeof recordCsatInput>;
