// What a channel driver is, apart from the drivers themselves: channel-driver.ts (the environment's
// drivers, and the choice per conversation) and provider-drivers.ts (Twilio, WhatsApp Cloud) both
// implement it, and channel-driver.ts picks among provider-drivers.ts's, so the shape lives here.
import type { ChannelProvider } from "./providers";

type OutboundConversation = { id: string; channel: string; customerIdentifier: string };
type OutboundMessage = { id: string; body: string };

export type ChannelSendResult = { ok: true; providerMessageId?: string } | { ok: false; error: string };

export interface ChannelDriver {
  readonly name: string;
  /** The provider whose message ids `send` answers: stored with the message so its delivery reports find it. */
  readonly provider?: ChannelProvider;
  /** The longest one send may take (a sender's claim on the message outlasts it). */
  readonly timeoutMs: number;
  send(args: { tenantId: string; conversation: OutboundConversation; message: OutboundMessage }): Promise<ChannelSendResult>;
}
