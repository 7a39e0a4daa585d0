// The event the erasure domain emits, and the schema of its `data` (zod only: the catalog and the dashboard import it).
import { z } from "zod";
import { erasedRecordsSchema } from "./erasure.types";

export const ERASURE_EVENTS = {
  "customer.erased": z.strictObject({
    object: erasedRecordsSchema.describe("The ids of every record whose personal values were erased; no personal value"),
  }),
} as const;
