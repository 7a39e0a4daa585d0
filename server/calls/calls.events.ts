// The events the calls domain emits, and the schema of each one's `data` (zod only: the catalog and the dashboard import it).
import { objectChanged, objectOnly } from "../outbox/event-payloads";
import { callSchema } from "./calls.types";

export const CALL_EVENTS = {
  "call.started": objectOnly(callSchema),
  "call.completed": objectChanged(callSchema),
  "call.missed": objectOnly(callSchema),
} as const;
