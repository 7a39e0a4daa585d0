// Dashboard procedures for webhooks (tRPC only: replay and subscription management are not part of
// the REST API). Reads are open to every member; changes need an owner or admin.
import { z } from "zod";
import { router, tenantProcedure } from "../trpc";
import { actorOf, type Scope } from "../auth/principal";
import { EVENT_TYPES } from "../events/catalog";
import {
  createdSubscriptionSchema, deliveryListSchema, deliverySchema, idInput, listDeliveriesInput, listNotificationsInput,
  listSubscriptionsInput, notificationListSchema, notificationSchema, sendTestEventInput, subscriptionListSchema,
  subscriptionSchema, createSubscriptionInput, updateSubscriptionInput,
} from "./webhooks.types";
import {
  createSubscription, deleteSubscription, getDelivery, listDeliveries, listNotifications, listSubscriptions,
  markNotificationRead, replayDelivery, sendTestEvent, updateSubscription,
} from "./webhooks.service";

/**
 * No API-key scope covers webhook management and these procedures have no REST route, so only
 * dashboard users reach them; for a user any write scope means "owner or admin".
 */
const MANAGE: Scope = "crm:write";

export const webhooksRouter = router({
  eventTypes: tenantProcedure("read").output(z.array(z.string())).query(() => [...EVENT_TYPES]),

  listSubscriptions: tenantProcedure("read")
    .input(listSubscriptionsInput)
    .output(subscriptionListSchema)
    .query(({ ctx, input }) => listSubscriptions(ctx.db, input)),

  createSubscription: tenantProcedure(MANAGE)
    .input(createSubscriptionInput)
    .output(createdSubscriptionSchema)
    .mutation(({ ctx, input }) => createSubscription(ctx.db, input, actorOf(ctx.principal))),

  updateSubscription: tenantProcedure(MANAGE)
    .input(updateSubscriptionInput)
    .output(subscriptionSchema)
    .mutation(({ ctx, input }) => updateSubscription(ctx.db, input, actorOf(ctx.principal))),

  deleteSubscription: tenantProcedure(MANAGE)
    .input(idInput)
    .output(z.object({ id: z.uuid(), deleted: z.literal(true) }))
    .mutation(({ ctx, input }) => deleteSubscription(ctx.db, input.id, actorOf(ctx.principal))),

  listDeliveries: tenantProcedure("read")
    .input(listDeliveriesInput)
    .output(deliveryListSchema)
    .query(({ ctx, input }) => listDeliveries(ctx.db, input)),

  getDelivery: tenantProcedure("read")
    .input(idInput)
    .output(deliverySchema)
    .query(({ ctx, input }) => getDelivery(ctx.db, input.id)),

  replayDelivery: tenantProcedure(MANAGE)
    .input(idInput)
    .output(deliverySchema)
    .mutation(({ ctx, input }) => replayDelivery(ctx.db, ctx.tenantId, input.id, actorOf(ctx.principal))),

  sendTestEvent: tenantProcedure(MANAGE)
    .input(sendTestEventInput)
    .output(deliverySchema)
    .mutation(({ ctx, input }) => sendTestEvent(ctx.db, input.subscription_id)),

  listNotifications: tenantProcedure("read")
    .input(listNotificationsInput)
    .output(notificationListSchema)
    .query(({ ctx, input }) => listNotifications(ctx.db, input)),

  markNotificationRead: tenantProcedure("read")
    .input(idInput)
    .output(notificationSchema)
    .mutation(({ ctx, input }) => markNotificationRead(ctx.db, input.id)),
});
