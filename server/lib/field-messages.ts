// How a field's zod issue says "absent" apart from "invalid": wire.ts builds its schemas with
// `invalid`, errors.ts turns an issue into a 400 with `isMissingFieldMessage`. Its own module, with
// no imports, so neither of those two has to import the other in both directions.
const MISSING = "missing required field";

/**
 * A custom message for a field's invalid values that still reports an absent field as missing
 * (zod applies a custom message to every issue of the field, the absent case included).
 */
export const invalid = (message: string) => ({
  error: (issue: { input?: unknown }) => (issue.input === undefined ? MISSING : message),
});

export const isMissingFieldMessage = (message: string) => message === MISSING || /received undefined$/.test(message);
