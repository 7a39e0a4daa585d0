// The channels a conversation runs on. A leaf the wire schemas (and through them the dashboard's
// forms) import: the phone-number parsing that depends on the channel stays in customer-identifier.ts.
export const CHANNELS = ["voice", "sms", "whatsapp", "webchat", "email"] as const;
export type Channel = (typeof CHANNELS)[number];
export const PHONE_CHANNELS: ReadonlySet<Channel> = new Set(["voice", "sms", "whatsapp"]);
