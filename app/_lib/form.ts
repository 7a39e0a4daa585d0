"use client";
// Client-side validation with the server's zod schemas, so both sides say the same thing per field.
import type { z } from "zod";

export type FieldErrors = Record<string, string>;

export function validate<T extends z.ZodType>(schema: T, value: unknown): { data?: z.infer<T>; errors: FieldErrors } {
  const parsed = schema.safeParse(value);
  if (parsed.success) return { data: parsed.data, errors: {} };
  const errors: FieldErrors = {};
  for (const issue of parsed.error.issues) {
    const field = issue.path.map(String).join(".") || "_form";
    errors[field.split(".")[0]] ??= messageOf(issue);
  }
  return { errors };
}

/** A record key failure wraps the key's own issue ("Invalid key in record"): say what is wrong with it. */
function messageOf(issue: z.core.$ZodIssue): string {
  if (issue.code === "invalid_key" && issue.issues[0]) return `key '${String(issue.path[issue.path.length - 1])}' ${issue.issues[0].message}`;
  return issue.message;
}
