import { actorOf } from "../auth/principal";
import { router, tenantProcedure } from "../trpc/trpc";
import { eraseCustomer } from "./erasure.service";
import { eraseCustomerInput, erasureResultSchema } from "./erasure.types";

export const erasureRouter = router({
  erase: tenantProcedure("privacy:write")
    .meta({
      openapi: {
        method: "POST",
        path: "/privacy/erasures",
        tags: ["Privacy"],
        summary: "Erase one customer's personal data",
        description:
          "Irreversibly removes a customer's personal values (identifier, name, phone, email, message and transcript text, recording URL, CSAT comment, and the same inside stored event payloads and webhook delivery-log bodies) from every record, by `customer_identifier` (a phone number or email, normalised as intake does: every channel's conversation of it) or by `conversation_id`. Ids, timestamps, statuses and analytics stay. Emits one `customer.erased` event carrying the erased records' ids and no personal value. Idempotent: erasing again emits nothing. Needs the `privacy:write` scope, which only a tenant owner can grant. A message from the customer arriving meanwhile is either erased or kept whole in a new conversation.",
        protect: true,
      },
    })
    .input(eraseCustomerInput)
    .output(erasureResultSchema)
    .mutation(({ ctx, input }) => eraseCustomer(ctx.db, input, actorOf(ctx.principal))),
});
