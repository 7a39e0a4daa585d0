import { router, tenantProcedure } from "../trpc/trpc";
import { createOfferingInput, listOfferingsInput, offeringIdInput, offeringListSchema, offeringSchema, updateOfferingInput } from "./offerings.types";
import { createOffering, getOffering, listOfferings, updateOffering } from "./offerings.service";

const TAGS = ["Offerings"];

export const offeringsRouter = router({
  list: tenantProcedure("read")
    .meta({
      openapi: {
        method: "GET",
        path: "/offerings",
        tags: TAGS,
        summary: "List offerings",
        description: "Newest first (created_at, then id, descending); soft-deleted offerings are excluded.",
        protect: true,
      },
    })
    .input(listOfferingsInput)
    .output(offeringListSchema)
    .query(({ ctx, input }) => listOfferings(ctx.sql, input)),

  get: tenantProcedure("read")
    .meta({
      openapi: {
        method: "GET",
        path: "/offerings/{id}",
        tags: TAGS,
        summary: "Get an offering",
        description: "A soft-deleted offering answers 404, as it is absent from the list.",
        protect: true,
      },
    })
    .input(offeringIdInput)
    .output(offeringSchema)
    .query(({ ctx, input }) => getOffering(ctx.db, input.id)),

  create: tenantProcedure("offerings:write")
    .meta({
      openapi: {
        method: "POST",
        path: "/offerings",
        tags: TAGS,
        summary: "Create an offering",
        description:
          "`title`, `price` (a decimal, answered as a string) and `price_currency` are required; `status` defaults to `active`. Emits `offering.created`.",
        protect: true,
      },
      successStatus: 201,
    })
    .input(createOfferingInput)
    .output(offeringSchema)
    .mutation(({ ctx, input }) => createOffering(ctx.db, input)),

  update: tenantProcedure("offerings:write")
    .meta({
      openapi: {
        method: "PATCH",
        path: "/offerings/{id}",
        tags: TAGS,
        summary: "Update an offering",
        description:
          "Fields set to null are cleared; `attributes` is shallow-merged (a null value deletes its key). `assigned_user_id`, `deleted_at` and `metadata` cannot be updated. Emits `offering.updated`.",
        protect: true,
      },
    })
    .input(updateOfferingInput)
    .output(offeringSchema)
    .mutation(({ ctx, input }) => updateOffering(ctx.db, input)),
});
