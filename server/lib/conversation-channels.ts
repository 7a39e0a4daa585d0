// The channels a conversation runs on. A leaf the wire schemas (and through them the dashboard's
// forms) import: the phone-number parsing that depends on the channel stays in customer-identifier.ts.
export const CHANNELS = ["voice", "sms", "whatsapp", "webchat", "email"] as const;
export type Channel = (typeof CHANNELS)[number];
export const PHONE_CHANNELS: ReadonlySet<Channel> = new Set(["voice", "sms", "whatsapp"]);

/** How a conversation's `customer_identifier` was stored: normalized (E.164, lower-case email, trimmed), or as a provider sent it (server/lib/sender-identifier.ts). */
export const CUSTOMER_IDENTIFIER_KINDS = ["normalized", "as_sent"] as const;
export type CustomerIdentifierKind = (typeof CUSTOMER_IDENTIFIER_KINDS)[number];
