// How the phone fields of leads and appointments are documented (their OpenAPI descriptions): a leaf,
// because the resource schemas reach the dashboard's browser bundle through the event catalog.
/** A phone field leads and appointments take (stored by customer-identifier.ts normalizePhoneField). */
export const PHONE_INPUT_DOC =
  "A phone number, with its country code or (with DEFAULT_PHONE_REGION set) in the national form; spaces, dashes, brackets and a 00 prefix are fine. Stored and answered in E.164; not a valid number is a 400";
/** What they answer (docs/data-rights.md). */
export const STORED_PHONE_DOC = "E.164 (a row written before phones were normalized keeps the number as it was written)";
