// Dashboard procedures for webhooks (tRPC only; REST manages the endpoints themselves through the
// same service functions: webhook-endpoints.router.ts; deliveries and replays stay here). Reads are open to every member; changes need an owner or admin. Dead-letter
// notifications are for owners and admins only (seeing them and marking them read).
import { z } from "zod";
import { router } from "../trpc/trpc";
import { managerProcedure, managerReadProcedure, memberProcedure } from "../trpc/procedures";
import { actorOf } from "../auth/principal";
import { EVENT_TYPES } from "../events/catalog";
import { loopbackAllowed } from "../lib/target-url";
import {
  createdSubscriptionSchema,
  deliveryListSchema,
  deliverySchema,
  idInput,
  listDeliveriesInput,
  listNotificationsInput,
  listSubscriptionsInput,
  notificationListSchema,
  notificationSchema,
  sendTestEventInput,
  subscriptionListSchema,
  subscriptionSchema,
  createSubscriptionInput,
  updateSubscriptionInput,
  rollSecretInput,
  subscriptionDetailSchema,
} from "./webhooks.types";
import {
  createSubscription,
  deleteSubscription,
  getDelivery,
  getSubscription,
  listDeliveries,
  listNotifications,
  listSubscriptions,
  markNotificationRead,
  replayDelivery,
  rollSubscriptionSecret,
  sendTestEvent,
  updateSubscription,
} from "./webhooks.service";

export const webhooksRouter = router({
  eventTypes: memberProcedure.output(z.array(z.string())).query(() => [...EVENT_TYPES]),

  /** What the URL field's hint says: whether this server takes loopback targets (WEBHOOK_ALLOW_LOOPBACK). */
  targetRules: memberProcedure.output(z.object({ loopback_allowed: z.boolean() })).query(() => ({ loopback_allowed: loopbackAllowed() })),

  listSubscriptions: memberProcedure
    .input(listSubscriptionsInput)
    .output(subscriptionListSchema)
    .query(({ ctx, input }) => listSubscriptions(ctx.db, input)),

  /** The endpoint page: one subscription and its count of deliveries still to be tried. */
  getSubscription: memberProcedure
    .input(idInput)
    .output(subscriptionDetailSchema)
    .query(({ ctx, input }) => getSubscription(ctx.db, input.id)),

  createSubscription: managerProcedure
    .input(createSubscriptionInput)
    .output(createdSubscriptionSchema)
    .mutation(({ ctx, input }) => createSubscription(ctx.db, input, actorOf(ctx.principal))),

  updateSubscription: managerProcedure
    .input(updateSubscriptionInput)
    .output(subscriptionSchema)
    .mutation(({ ctx, input }) => updateSubscription(ctx.db, input, actorOf(ctx.principal))),

  /** A new secret (shown once); the old one keeps signing beside it for the overlap. */
  rollSecret: managerProcedure
    .input(rollSecretInput)
    .output(createdSubscriptionSchema)
    .mutation(({ ctx, input }) => rollSubscriptionSecret(ctx.db, input.id, actorOf(ctx.principal), input.overlap_seconds)),

  deleteSubscription: managerProcedure
    .input(idInput)
    .output(z.object({ id: z.uuid(), deleted: z.literal(true), dropped_pending_deliveries: z.number().int() }))
    .mutation(({ ctx, input }) => deleteSubscription(ctx.db, input.id, actorOf(ctx.principal))),

  listDeliveries: memberProcedure
    .input(listDeliveriesInput)
    .output(deliveryListSchema)
    .query(({ ctx, input }) => listDeliveries(ctx.db, input)),

  getDelivery: memberProcedure
    .input(idInput)
    .output(deliverySchema)
    .query(({ ctx, input }) => getDelivery(ctx.db, input.id)),

  replayDelivery: managerProcedure
    .input(idInput)
    .output(deliverySchema)
    .mutation(({ ctx, input }) => replayDelivery(ctx.db, input.id, actorOf(ctx.principal))),

  sendTestEvent: managerProcedure
    .input(sendTestEventInput)
    .output(deliverySchema)
    .mutation(({ ctx, input }) => sendTestEvent(ctx.db, input.subscription_id)),

  listNotifications: managerReadProcedure
    .input(listNotificationsInput)
    .output(notificationListSchema)
    .query(({ ctx, input }) => listNotifications(ctx.db, input)),

  markNotificationRead: managerProcedure
    .input(idInput)
    .output(notificationSchema)
    .mutation(({ ctx, input }) => markNotificationRead(ctx.db, input.id)),
});
