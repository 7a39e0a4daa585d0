// The events the offerings domain emits, and the schema of each one's `data` (zod only: the catalog and the dashboard import it).
import { objectChanged, objectOnly } from "../outbox/event-payloads";
import { offeringSchema } from "./offerings.types";

export const OFFERING_EVENTS = {
  "offering.created": objectOnly(offeringSchema),
  "offering.updated": objectChanged(offeringSchema),
} as const;
