// The intake providers, the channels each serves and the credentials each needs, apart from any
// server-only code: the dashboard's forms import this.
export const CHANNEL_PROVIDERS = ["twilio", "whatsapp_cloud", "retell", "vapi"] as const;
export type ChannelProvider = (typeof CHANNEL_PROVIDERS)[number];

/** The channels a connection can carry (webchat and email have no provider connection). */
export const CONNECTION_CHANNELS = ["voice", "sms", "whatsapp"] as const;
export type ConnectionChannel = (typeof CONNECTION_CHANNELS)[number];

export const CONNECTION_STATUSES = ["active", "disabled"] as const;

/** Which channels each provider serves. */
export const PROVIDER_CHANNELS: Record<ChannelProvider, readonly ConnectionChannel[]> = {
  twilio: ["sms", "whatsapp", "voice"],
  whatsapp_cloud: ["whatsapp"],
  retell: ["voice"],
  vapi: ["voice"],
};

/** The credential fields of each provider, in form order, with what each is for. */
export const CREDENTIAL_FIELDS: Record<ChannelProvider, readonly { name: string; label: string }[]> = {
  twilio: [
    { name: "account_sid", label: "Account SID (AC…)" },
    { name: "auth_token", label: "Auth token (verifies X-Twilio-Signature)" },
  ],
  whatsapp_cloud: [
    { name: "app_secret", label: "App secret (verifies X-Hub-Signature-256)" },
    { name: "verify_token", label: "Verify token (the webhook handshake)" },
    { name: "access_token", label: "Access token (sending)" },
  ],
  retell: [{ name: "api_key", label: "API key with the webhook badge (verifies x-retell-signature)" }],
  vapi: [{ name: "secret", label: "HMAC secret key (verifies x-vapi-signature)" }],
};

/** What `address` is for a provider: the number customers reach, or WhatsApp Cloud's phone_number_id. */
export const ADDRESS_KIND: Record<ChannelProvider, "e164" | "phone_number_id"> = {
  twilio: "e164",
  whatsapp_cloud: "phone_number_id",
  retell: "e164",
  vapi: "e164",
};

/** Each provider's console name for where the receiver URL goes, for the dashboard and docs. */
export const PROVIDER_LABELS: Record<ChannelProvider, string> = {
  twilio: "Twilio",
  whatsapp_cloud: "WhatsApp Cloud API",
  retell: "Retell AI",
  vapi: "Vapi",
};

/**
 * The path of the receiver a connection's provider calls (append it to PUBLIC_BASE_URL): Twilio's
 * Messaging webhook and status callback, or its Voice status callback; WhatsApp Cloud's callback
 * URL names the phone_number_id; the voice platforms' one webhook per account.
 */
export function receiverPath(connection: { provider: ChannelProvider; channel: ConnectionChannel; address: string }): string {
  switch (connection.provider) {
    case "twilio":
      return connection.channel === "voice" ? "/api/webhooks/twilio/voice" : "/api/webhooks/twilio/messaging";
    case "whatsapp_cloud":
      return `/api/webhooks/whatsapp/${encodeURIComponent(connection.address)}`;
    case "retell":
      return "/api/webhooks/retell";
    case "vapi":
      return "/api/webhooks/vapi";
  }
}
