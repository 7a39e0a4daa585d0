// Shared fixtures of the channel tests: provider credentials, unique business numbers, provider payloads.
import { randomInt } from "node:crypto";
import { toE164 } from "../../server/lib/customer-identifier";

export const TWILIO_SID = "AC0123456789abcdef0123456789abcdef";
export const TWILIO_TOKEN = "twilio-auth-token-5f1e0c9d2b7a";

let counter = 0;
/** A valid Dubai landline in E.164 (the business side), unique within the test run. */
export function uniqueBusinessNumber(): string {
  const n = (process.pid * 7919 + ++counter * 104_729 + randomInt(1_000_000)) % 10_000_000;
  const number = `+9714${String(n).padStart(7, "0")}`;
  if (toE164(number) !== number) return uniqueBusinessNumber();
  return number;
}

/** The same number as a person writes it: "+971 4 300 1234". */
export const spaced = (e164: string) => `${e164.slice(0, 4)} ${e164.slice(4, 5)} ${e164.slice(5, 8)} ${e164.slice(8)}`;

/** A WhatsApp Cloud notification as Meta sends it, for one change of the `messages` field (`value` adds messages or statuses). */
export function whatsAppNotification(phoneNumberId: string, value: Record<string, unknown>) {
  return {
    object: "whatsapp_business_account",
    entry: [
      {
        id: "102290129340398",
        changes: [
          {
            field: "messages",
            value: {
              messaging_product: "whatsapp",
              metadata: { display_phone_number: "97143001234", phone_number_id: phoneNumberId },
              ...value,
            },
          },
        ],
      },
    ],
  };
}
