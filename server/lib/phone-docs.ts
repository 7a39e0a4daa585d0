// How the phone fields of leads and appointments are documented (their OpenAPI descriptions): a leaf,
// because the resource schemas reach the dashboard's browser bundle through the event catalog.
/** A phone field leads and appointments take (stored by customer-identifier.ts normalizePhoneField). */
export const PHONE_INPUT_DOC =
  "The customer's phone number with its country code (+971 50 123 4567; spaces, dashes, brackets or a 00 prefix are fine; a national number only where the operator set DEFAULT_PHONE_REGION). Stored and answered in E.164; not a valid number is a 400";
/** What they answer (docs/data-rights.md). */
export const STORED_PHONE_DOC = "E.164 (a row written before phones were normalized keeps the number as it was written)";
