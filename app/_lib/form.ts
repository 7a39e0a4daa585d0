"use client";
// Client-side validation with the server's zod schemas, so both sides say the same thing per field,
// and the one way every dashboard form shows errors: in words, beside the field they are about,
// with focus moved to the first invalid field (or to the form's own message when no field is named).
import { useCallback, useEffect, useRef, useState } from "react";
import type { z } from "zod";
import { describeError } from "./trpc";
import { sentenceCase } from "./format";

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
  if (issue.code === "invalid_key" && issue.issues[0]) return `key '${String(issue.path[issue.path.length - 1])}' ${humanMessage(issue.issues[0].message)}`;
  return humanMessage(issue.message);
}

// zod's default wording, for schemas that did not give their own, said as a person would.
const HUMAN: [RegExp, (m: RegExpMatchArray) => string][] = [
  [/^Too small: expected string to have >=1 characters?$/i, () => "This field is required"],
  [/^Too small: expected string to have >=(\d+) characters?$/i, (m) => `Use at least ${m[1]} characters`],
  [/^Too big: expected string to have <=(\d+) characters?$/i, (m) => `Use at most ${m[1]} characters`],
  [/^Too small: expected array to have >=1 items?$/i, () => "Choose at least one"],
  [/^Too big: expected array to have <=(\d+) items?$/i, (m) => `Choose at most ${m[1]}`],
  [/^Too small: expected number to be >=(\S+)$/i, (m) => `Enter ${m[1]} or more`],
  [/^Too big: expected number to be <=(\S+)$/i, (m) => `Enter ${m[1]} or less`],
  [/^Invalid input: expected \w+, received (undefined|null)$/i, () => "This field is required"],
  [/^Invalid input: expected number, received \w+$/i, () => "Enter a number"],
  [/^Invalid URL$/i, () => "Enter a full URL, like https://example.com/hooks"],
  [/^Invalid email address$/i, () => "Enter an email address, like name@company.com"],
  [/^Invalid UUID$/i, () => "This is not a valid id"],
  [/^Invalid option: expected one of (.+)$/i, (m) => `Choose one of ${m[1].replaceAll('"', "").split("|").join(", ")}`],
];

/** The message as a person reads it: zod defaults reworded, the server's "invalid field 'x': " prefix dropped. */
export function humanMessage(message: string): string {
  const bare = message.replace(/^invalid field '[^']*': /i, "");
  for (const [pattern, say] of HUMAN) {
    const match = bare.match(pattern);
    if (match) return say(match);
  }
  return sentenceCase(bare);
}

/** Focuses the control of the first field showing an error in `root` (Field marks both), else its form-level alert. */
function focusFirstInvalid(root: HTMLElement | null) {
  if (!root) return;
  const error = root.querySelector("[data-field-error]");
  const field = error?.closest("[data-field]");
  // A group of checkboxes (a fieldset described by its error): the group itself takes focus, so a
  // screen reader says its legend and the error, and the error is scrolled into view (the list can be
  // taller than the screen).
  if (field instanceof HTMLFieldSetElement && error instanceof HTMLElement) {
    field.tabIndex = -1;
    field.focus({ preventScroll: true });
    error.scrollIntoView?.({ block: "center" });
    return;
  }
  const control = field?.querySelector<HTMLElement>("input:not([type=hidden]):not([aria-hidden=true]), select, textarea, button, [tabindex]");
  if (control) {
    control.focus();
    control.scrollIntoView?.({ block: "center" });
    return;
  }
  const alert = root.querySelector<HTMLElement>("[role=alert]");
  if (alert) {
    alert.tabIndex = -1;
    alert.focus();
  }
}

/**
 * A form's errors: `fail(errors)` after client validation, `failFromServer(err)` in a mutation's
 * onError (a named field goes beside it, anything else is the form's message). Either moves focus
 * to the first invalid field once it is on screen. Put `ref` on the <form>; a server-rendered form's
 * submit button is `disabled={!ready}` until hydrated.
 */
export function useFormErrors() {
  const ref = useRef<HTMLFormElement>(null);
  const [errors, setErrors] = useState<FieldErrors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    if (attempt) focusFirstInvalid(ref.current);
  }, [attempt]);
  const fail = useCallback((next: FieldErrors) => {
    const { _form, ...fields } = next;
    setErrors(Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, humanMessage(v)])));
    setFormError(_form ? humanMessage(_form) : null);
    if (Object.keys(next).length) setAttempt((n) => n + 1);
  }, []);
  const failFromServer = useCallback(
    (err: unknown) => {
      const e = describeError(err);
      const field = e.field?.split(/[.[]/)[0];
      fail(field ? { [field]: e.message } : { _form: e.message });
    },
    [fail],
  );
  const clear = useCallback(() => {
    setErrors({});
    setFormError(null);
  }, []);
  // A server-rendered form clicked before React has hydrated it is submitted natively: a GET of the
  // page, which drops what was typed. Its submit button waits for `ready`.
  const [ready, setReady] = useState(false);
  useEffect(() => setReady(true), []);
  return { ref, errors, formError, fail, failFromServer, clear, ready };
}
