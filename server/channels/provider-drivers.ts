// Channel drivers that send through a tenant's connected provider account: the Twilio Messages API
// (SMS, and WhatsApp through Twilio) and the WhatsApp Cloud API's messages endpoint. Each answers
// like any ChannelDriver: `ok` with the provider's message id (stored with the message, so the
// provider's delivery reports find it), or the provider's refusal as the error, never a credential.
// Plain HTTP as each provider documents it (the base URLs are settings, so tests point them at
// local fakes); neither API takes an idempotency key, so a send the recovery sweep repeats after a
// crash may reach the customer twice (at least once, never lost).
import { setting } from "../lib/settings";
import { publicBaseUrl } from "./receiver-settings";
import { connectionCredentials } from "./channel-connections";
import type { ChannelDriver, ChannelSendResult } from "./channel-driver.types";
import type { ChannelProvider, ConnectionChannel } from "./providers";

/** A connection a message is sent through (its credentials still sealed). */
export type SendingConnection = { provider: ChannelProvider; channel: ConnectionChannel; address: string; credentialsEncrypted: string };

/** Which providers can send on a channel, in order of preference when a tenant has several. */
export const SENDING_PROVIDERS: Partial<Record<string, readonly ChannelProvider[]>> = {
  sms: ["twilio"],
  whatsapp: ["whatsapp_cloud", "twilio"],
};

/** Longest provider error text kept in an event (a provider may answer with a whole HTML page). */
const MAX_ERROR_LENGTH = 500;

const trimBase = (url: string) => url.replace(/\/+$/, "");

/** POSTs to a provider, bounded by the provider timeout; a network failure or timeout is a failed send. */
async function postToProvider(
  provider: string,
  url: string,
  init: { headers: Record<string, string>; body: string },
): Promise<{ status: number; text: string } | { error: string }> {
  const timeoutMs = setting("CHANNEL_PROVIDER_TIMEOUT_MS");
  try {
    const res = await fetch(url, { method: "POST", headers: init.headers, body: init.body, signal: AbortSignal.timeout(timeoutMs) });
    return { status: res.status, text: await res.text().catch(() => "") };
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
    return { error: timedOut ? `${provider} timed out after ${timeoutMs} ms` : `${provider} unreachable` };
  }
}

function parseJson(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === "object" ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** `twilio responded 400: 21211 Invalid 'To' Phone Number` (or the start of whatever else it sent). */
function twilioRefusal(status: number, text: string): ChannelSendResult {
  const body = parseJson(text);
  const detail = body && (body.code !== undefined || body.message !== undefined) ? `${body.code ?? ""} ${body.message ?? ""}`.trim() : text.trim();
  return { ok: false, error: `twilio responded ${status}${detail ? `: ${detail.slice(0, MAX_ERROR_LENGTH)}` : ""}` };
}

/**
 * Twilio Messages API: `POST {TWILIO_API_BASE_URL}/2010-04-01/Accounts/{AccountSid}/Messages.json`,
 * HTTP Basic auth (Account SID : auth token), form fields To, From, Body and, when PUBLIC_BASE_URL is
 * set, StatusCallback (the Messaging receiver, which moves the message to delivered or failed).
 * WhatsApp through Twilio is the same call with `whatsapp:` addresses. 201 answers the message `sid`.
 */
function twilioMessagesDriver(connection: SendingConnection): ChannelDriver {
  const credentials = connectionCredentials<"twilio">(connection);
  const prefix = connection.channel === "whatsapp" ? "whatsapp:" : "";
  const url = `${trimBase(setting("TWILIO_API_BASE_URL"))}/2010-04-01/Accounts/${credentials.account_sid}/Messages.json`;
  const authorization = `Basic ${Buffer.from(`${credentials.account_sid}:${credentials.auth_token}`).toString("base64")}`;
  return {
    name: "twilio",
    provider: "twilio",
    timeoutMs: setting("CHANNEL_PROVIDER_TIMEOUT_MS"),
    async send({ conversation, message }) {
      const form = new URLSearchParams({ To: `${prefix}${conversation.customerIdentifier}`, From: `${prefix}${connection.address}`, Body: message.body });
      const base = publicBaseUrl();
      if (base) form.set("StatusCallback", `${base}/api/webhooks/twilio/messaging`);
      const answer = await postToProvider("twilio", url, {
        headers: { authorization, "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
        body: form.toString(),
      });
      if ("error" in answer) return { ok: false, error: answer.error };
      if (answer.status < 200 || answer.status >= 300) return twilioRefusal(answer.status, answer.text);
      const sid = parseJson(answer.text)?.sid;
      if (typeof sid !== "string" || !sid) return { ok: false, error: `twilio responded ${answer.status} without a message sid` };
      return { ok: true, providerMessageId: sid };
    },
  };
}

/** `whatsapp_cloud responded 400: 131030 Recipient phone number not in allowed list`. */
function graphRefusal(status: number, text: string): ChannelSendResult {
  const error = parseJson(text)?.error as { code?: unknown; message?: unknown } | undefined;
  const detail = error && typeof error === "object" ? `${error.code ?? ""} ${error.message ?? ""}`.trim() : text.trim();
  return { ok: false, error: `whatsapp_cloud responded ${status}${detail ? `: ${detail.slice(0, MAX_ERROR_LENGTH)}` : ""}` };
}

/**
 * WhatsApp Cloud API: `POST {WHATSAPP_GRAPH_BASE_URL}/{WHATSAPP_GRAPH_API_VERSION}/{phone_number_id}/messages`
 * with the connection's access token as a bearer token and a text message
 * (`{ messaging_product: "whatsapp", recipient_type: "individual", to, type: "text", text: { body } }`,
 * `to` the customer's number in digits). 200 answers `messages[0].id` (the wamid its statuses carry).
 */
function whatsAppCloudDriver(connection: SendingConnection): ChannelDriver {
  const credentials = connectionCredentials<"whatsapp_cloud">(connection);
  const url = `${trimBase(setting("WHATSAPP_GRAPH_BASE_URL"))}/${setting("WHATSAPP_GRAPH_API_VERSION")}/${connection.address}/messages`;
  return {
    name: "whatsapp_cloud",
    provider: "whatsapp_cloud",
    timeoutMs: setting("CHANNEL_PROVIDER_TIMEOUT_MS"),
    async send({ conversation, message }) {
      const answer = await postToProvider("whatsapp_cloud", url, {
        headers: { authorization: `Bearer ${credentials.access_token}`, "content-type": "application/json" },
        body: JSON.stringify({
          messaging_product: "whatsapp",
          recipient_type: "individual",
          to: conversation.customerIdentifier.replace(/^\+/, ""),
          type: "text",
          text: { preview_url: false, body: message.body },
        }),
      });
      if ("error" in answer) return { ok: false, error: answer.error };
      if (answer.status < 200 || answer.status >= 300) return graphRefusal(answer.status, answer.text);
      const messages = parseJson(answer.text)?.messages as { id?: unknown }[] | undefined;
      const id = Array.isArray(messages) ? messages[0]?.id : undefined;
      if (typeof id !== "string" || !id) return { ok: false, error: `whatsapp_cloud responded ${answer.status} without a message id` };
      return { ok: true, providerMessageId: id };
    },
  };
}

/** The driver of a connection's provider. */
export function providerDriver(connection: SendingConnection): ChannelDriver {
  if (connection.provider === "twilio") return twilioMessagesDriver(connection);
  if (connection.provider === "whatsapp_cloud") return whatsAppCloudDriver(connection);
  throw new Error(`provider '${connection.provider}' does not send messages`);
}
