// Bodies are strict: an unknown field is a 400 naming it, so a typo never passes silently.
export const unknownFieldMessage = (notUpdatable: ReadonlySet<string> = new Set()) => ({
  error: (issue: { code?: string; keys?: string[] }) => {
    if (issue.code !== "unrecognized_keys" || !issue.keys?.length) return undefined;
    const key = issue.keys[0];
    return notUpdatable.has(key) ? `field '${key}' cannot be updated` : `unknown field '${key}'`;
  },
});
