// How an outbound message leaves the platform. The send path stores the message as `queued`, calls
// the configured driver outside any database transaction (a slow provider must not hold a lock or
// PGlite's single connection), then records `sent` or `failed` from the driver's answer.
//
// Configuration (read on every send, so a deployment switches providers by environment alone):
//   CHANNEL_DRIVER=record (default)  records the message as sent; no external provider
//   CHANNEL_DRIVER=http              POSTs each message to CHANNEL_HTTP_BASE_URL + "/messages"
//                                    (optional CHANNEL_HTTP_TOKEN as a bearer token,
//                                    CHANNEL_HTTP_TIMEOUT_MS, default 10000)
// A conversation whose channel has a connected provider (channel_connections) sends through that
// provider instead (provider-drivers.ts: Twilio, WhatsApp Cloud): `driverForConversation`.
import { setting } from "../lib/settings";
import type { TenantTx } from "../db/tenant-scope";
import type { ChannelDriver } from "./channel-driver.types";
import { providerDriver, SENDING_PROVIDERS } from "./provider-drivers";
import type { ChannelProvider, ConnectionChannel } from "./providers";

export type { ChannelDriver, ChannelSendResult } from "./channel-driver.types";

/** The default: the platform itself is the record of the outbound message (nothing leaves it). */
const recordOnlyDriver: ChannelDriver = {
  name: "record",
  timeoutMs: 0,
  async send() {
    return { ok: true };
  },
};

/** Longest provider error text kept in an event (a provider may answer with a whole HTML page). */
const MAX_ERROR_LENGTH = 500;

/**
 * A generic HTTP provider: `POST {baseUrl}/messages` with
 * `{ message_id, tenant_id, conversation_id, channel, to, body }`; any 2xx is sent (its JSON `id`,
 * if any, is the provider's message id); anything else, a timeout or a network error is failed.
 * `message_id` is also sent as `Idempotency-Key` so a provider can dedupe a retried send.
 */
function httpChannelDriver(opts: { baseUrl: string; token?: string; timeoutMs?: number }): ChannelDriver {
  const url = `${opts.baseUrl.replace(/\/+$/, "")}/messages`;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  return {
    name: "http",
    timeoutMs,
    async send({ tenantId, conversation, message }) {
      const headers: Record<string, string> = { "content-type": "application/json", "idempotency-key": message.id };
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      let res: Response;
      try {
        res = await fetch(url, {
          method: "POST",
          headers,
          body: JSON.stringify({
            message_id: message.id,
            tenant_id: tenantId,
            conversation_id: conversation.id,
            channel: conversation.channel,
            to: conversation.customerIdentifier,
            body: message.body,
          }),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (err) {
        const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
        return { ok: false, error: timedOut ? `provider timed out after ${timeoutMs} ms` : "provider unreachable" };
      }
      const text = await res.text().catch(() => "");
      if (!res.ok) {
        const detail = text.trim().slice(0, MAX_ERROR_LENGTH);
        return { ok: false, error: `provider responded ${res.status}${detail ? `: ${detail}` : ""}` };
      }
      let providerMessageId: string | undefined;
      try {
        const parsed = JSON.parse(text) as { id?: unknown };
        if (typeof parsed?.id === "string" || typeof parsed?.id === "number") providerMessageId = String(parsed.id);
      } catch {
        // A 2xx without a JSON body is still a send.
      }
      return providerMessageId === undefined ? { ok: true } : { ok: true, providerMessageId };
    },
  };
}

/** The driver the environment selects. A misconfiguration fails loudly rather than silently recording. */
export function getChannelDriver(env: NodeJS.ProcessEnv = process.env): ChannelDriver {
  const name = setting("CHANNEL_DRIVER", env);
  if (name === "record") return recordOnlyDriver;
  if (name === "http") {
    const baseUrl = setting("CHANNEL_HTTP_BASE_URL", env);
    if (!baseUrl) throw new Error("CHANNEL_DRIVER=http needs CHANNEL_HTTP_BASE_URL");
    return httpChannelDriver({ baseUrl, token: setting("CHANNEL_HTTP_TOKEN", env), timeoutMs: setting("CHANNEL_HTTP_TIMEOUT_MS", env) });
  }
  throw new Error(`unknown CHANNEL_DRIVER '${name}' (expected 'record' or 'http')`);
}

/**
 * The driver a conversation's messages leave through: its tenant's active connection on the
 * conversation's channel with a provider that sends (Twilio for SMS; WhatsApp Cloud or Twilio for
 * WhatsApp), else the environment's driver. With several, the provider that carried the customer's
 * latest inbound message wins, then the provider order above, then the oldest connection.
 */
export async function driverForConversation(db: TenantTx, conversation: { id: string; channel: string }): Promise<ChannelDriver> {
  const providers = SENDING_PROVIDERS[conversation.channel];
  if (!providers) return getChannelDriver();
  const connections = await db.channelConnection.findMany({
    where: { channel: conversation.channel, status: "active", provider: { in: [...providers] } },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    select: { provider: true, channel: true, address: true, credentialsEncrypted: true },
  });
  if (connections.length === 0) return getChannelDriver();
  const lastInbound =
    connections.length > 1
      ? await db.message.findFirst({
          where: { conversationId: conversation.id, direction: "inbound", provider: { in: [...providers] } },
          orderBy: [{ createdAt: "desc" }, { id: "desc" }],
          select: { provider: true },
        })
      : null;
  const rank = (provider: string) => (provider === lastInbound?.provider ? -1 : providers.indexOf(provider as ChannelProvider));
  const [chosen] = [...connections].sort((a, b) => rank(a.provider) - rank(b.provider));
  return providerDriver({ ...chosen!, provider: chosen!.provider as ChannelProvider, channel: chosen!.channel as ConnectionChannel });
}

/** The longest claim any sender may need (the sweep claims before it knows each message's driver). */
export function longestSendTimeoutMs(): number {
  return Math.max(getChannelDriver().timeoutMs, setting("CHANNEL_PROVIDER_TIMEOUT_MS"));
}
