// The events the CSAT domain emits, and the schema of each one's `data` (zod only: the catalog and the dashboard import it).
import { objectOnly } from "../outbox/event-payloads";
import { csatSchema } from "./csat.types";

export const CSAT_EVENTS = {
  "csat.received": objectOnly(csatSchema),
} as const;
