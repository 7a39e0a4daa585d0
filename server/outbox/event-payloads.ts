// The shapes every event's `data` is built from, and the test event: zod only (no database), so
// the catalog and the dashboard can import them.
import { z } from "zod";

/** `previous_attributes`: the old values of the fields that changed. */
export const previousAttributes = z.record(z.string(), z.unknown()).describe("Old values of the fields that changed (Stripe-like)");
/** `data` of an event that carries the resource as it is now. */
export const objectOnly = <T extends z.ZodType>(object: T) => z.strictObject({ object });
/** `data` of an event that carries the resource after a change, and the old values of what changed. */
export const objectChanged = <T extends z.ZodType>(object: T) => z.strictObject({ object, previous_attributes: previousAttributes });

/**
 * Sent only by "send test event" to the one subscription it names; never fanned out, never
 * subscribable, so a consumer can recognise and ignore it.
 */
export const TEST_EVENT_TYPE = "webhook.test" as const;
export const testEventPayload = z.strictObject({
  object: z.strictObject({ subscription_id: z.uuid(), message: z.string() }),
});
