// Delivery reports: a provider's status of an outbound message it carries (found by the provider's
// message id) moves it `queued`/`sent` -> `delivered`, or to `failed` with `outbound.failed`, once.
// Each move is one conditional UPDATE (the row's current status in its WHERE), so concurrent or
// repeated reports move a message at most once and emit at most one event; a report that arrives
// after a later state (delivered after failed, sent after delivered) changes nothing.
import type { TenantDb } from "../db/tenant-scope";
import { eventEmitter } from "../outbox/emit-event";
import { CONVERSATION_EVENTS } from "./conversations.events";
import { conversationToWire, messageToWire } from "./conversations.service";
import type { ChannelProvider } from "../channels/providers";
import { assertConnectionCurrentIn, type ConnectionCheck } from "../channels/channel-connections";

const emitEvent = eventEmitter(CONVERSATION_EVENTS);

export type DeliveryReport = {
  provider: ChannelProvider;
  providerMessageId: string;
  status: "sent" | "delivered" | "failed";
  /** Why it failed, as the provider said (code and text); never a credential. */
  error?: string | null;
};

const MOVES_FROM: Record<DeliveryReport["status"], string[]> = {
  sent: ["queued"],
  delivered: ["queued", "sent"],
  failed: ["queued", "sent"],
};

/**
 * Applies a report; `moved` is false when the message is unknown or already past that state.
 * `connection`: the channel connection a receiver verified the report with; nothing moves unless it
 * is still current (`StaleConnectionError`, see server/receivers/connection-gate.ts).
 */
export async function applyDeliveryReport(db: TenantDb, report: DeliveryReport, connection: ConnectionCheck | null = null): Promise<{ moved: boolean }> {
  return db.$transaction(async (tx) => {
    await assertConnectionCurrentIn(tx, connection);
    const where = { provider: report.provider, providerMessageId: report.providerMessageId, direction: "outbound" };
    const moved = await tx.message.updateMany({
      where: { ...where, status: { in: MOVES_FROM[report.status] } },
      data: { status: report.status, sendClaimedUntil: null },
    });
    if (moved.count === 0) return { moved: false };
    if (report.status === "failed") {
      const message = await tx.message.findFirstOrThrow({ where, include: { conversation: true } });
      const { conversation, ...row } = message;
      await emitEvent(tx, "outbound.failed", {
        object: messageToWire(row),
        conversation: conversationToWire(conversation),
        driver: report.provider,
        error: report.error || `${report.provider} reported the message failed`,
      });
    }
    return { moved: true };
  });
}
