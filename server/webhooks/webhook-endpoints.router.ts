// Webhook endpoints over REST (/api/v1/webhook-endpoints): what the dashboard's webhook pages do,
// for an integrator's deploy script holding an API key. The same service functions as the
// dashboard (webhooks.service.ts): the same URL checks, limits and audit entries, the key as the
// actor. Changes need `webhooks:write`; reads take `read` or `webhooks:write`.
import { z } from "zod";
import { router, tenantProcedure } from "../trpc/trpc";
import { actorOf } from "../auth/principal";
import {
  createdSubscriptionSchema,
  createSubscriptionInput,
  idInput,
  listSubscriptionsInput,
  rollSecretInput,
  subscriptionDetailSchema,
  subscriptionListSchema,
  subscriptionSchema,
  updateSubscriptionInput,
} from "./webhooks.types";
import {
  createSubscription,
  deleteSubscription,
  getSubscription,
  listSubscriptions,
  rollSubscriptionSecret,
  updateSubscription,
  whyAnsweredSecretIsRetired,
} from "./webhooks.service";

const TAGS = ["Webhook endpoints"];
const WRITE = "webhooks:write";
/** Reads: `read`, or the endpoints' own write scope (a deploy script's key can find what it registered). */
const readEndpoints = () => tenantProcedure("read", { also: [WRITE] });
/** Create and roll answer the signing secret: stored sealed under an Idempotency-Key, replayed only while in force. */
const replayedSecret = { retiredBecause: whyAnsweredSecretIsRetired };

const deletedEndpointSchema = z
  .object({
    id: z.uuid(),
    deleted: z.literal(true),
    dropped_pending_deliveries: z.number().int().describe("Deliveries still to be tried that were dropped with the endpoint"),
  })
  .meta({ id: "DeletedWebhookEndpoint" });

export const webhookEndpointsRouter = router({
  list: readEndpoints()
    .meta({
      openapi: {
        method: "GET",
        path: "/webhook-endpoints",
        tags: TAGS,
        summary: "List webhook endpoints",
        description: "Newest first. Never carries a secret, only its first characters (`secret_prefix`).",
        protect: true,
      },
    })
    .input(listSubscriptionsInput)
    .output(subscriptionListSchema)
    .query(({ ctx, input }) => listSubscriptions(ctx.db, input)),

  get: readEndpoints()
    .meta({
      openapi: {
        method: "GET",
        path: "/webhook-endpoints/{id}",
        tags: TAGS,
        summary: "Get a webhook endpoint",
        description: "The endpoint with its count of deliveries still to be tried (`pending_deliveries`, which deleting it drops).",
        protect: true,
      },
    })
    .input(idInput)
    .output(subscriptionDetailSchema)
    .query(({ ctx, input }) => getSubscription(ctx.db, input.id)),

  create: tenantProcedure(WRITE)
    .meta({
      openapi: {
        method: "POST",
        path: "/webhook-endpoints",
        tags: TAGS,
        summary: "Register a webhook endpoint",
        description:
          "`url` must be https and resolve to public addresses only (loopback and private targets are refused; a platform run locally may allow loopback with `WEBHOOK_ALLOW_LOOPBACK=1`). " +
          "The answer carries the signing `secret` (`whsec_…`): this is the only time it is shown (a repeat with the same `Idempotency-Key` answers it again only while it is still the endpoint's secret, a 409 once rolled). Audited as `webhook_subscription.created` with the key as actor.",
        protect: true,
      },
      successStatus: 201,
      replayedSecret,
    })
    .input(createSubscriptionInput)
    .output(createdSubscriptionSchema)
    .mutation(({ ctx, input }) => createSubscription(ctx.db, input, actorOf(ctx.principal))),

  update: tenantProcedure(WRITE)
    .meta({
      openapi: {
        method: "PATCH",
        path: "/webhook-endpoints/{id}",
        tags: TAGS,
        summary: "Update a webhook endpoint",
        description:
          "Changes `url` (checked as on create), `events`, `description`, `enabled` or `max_deliveries_per_second`. Disabling holds new deliveries; enabling sends what waited, in order. Audited as `webhook_subscription.changed`.",
        protect: true,
      },
    })
    .input(updateSubscriptionInput)
    .output(subscriptionSchema)
    .mutation(({ ctx, input }) => updateSubscription(ctx.db, input, actorOf(ctx.principal))),

  delete: tenantProcedure(WRITE)
    .meta({
      openapi: {
        method: "DELETE",
        path: "/webhook-endpoints/{id}",
        tags: TAGS,
        summary: "Delete a webhook endpoint",
        description: "Deletes the endpoint with its deliveries; the ones still to be tried are dropped and counted. Audited as `webhook_subscription.deleted`.",
        protect: true,
      },
    })
    .input(idInput)
    .output(deletedEndpointSchema)
    .mutation(({ ctx, input }) => deleteSubscription(ctx.db, input.id, actorOf(ctx.principal))),

  rollSecret: tenantProcedure(WRITE)
    .meta({
      openapi: {
        method: "POST",
        path: "/webhook-endpoints/{id}/roll-secret",
        tags: TAGS,
        summary: "Roll a webhook endpoint's signing secret",
        description:
          "Issues a new secret, shown only in this answer (a repeat with the same `Idempotency-Key` answers it again only while no later roll replaced it, a 409 after). The replaced one goes on signing beside it for `overlap_seconds` (default 24 hours; every delivery then carries one signature per secret), so the consumer can switch without dropping a delivery. Audited as `webhook_subscription.secret_rolled`.",
        protect: true,
      },
      replayedSecret,
    })
    .input(rollSecretInput)
    .output(createdSubscriptionSchema)
    .mutation(({ ctx, input }) => rollSubscriptionSecret(ctx.db, input.id, actorOf(ctx.principal), input.overlap_seconds)),
});
