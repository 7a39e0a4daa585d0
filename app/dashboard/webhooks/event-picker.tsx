"use client";
// The events checklist of the create and edit forms, grouped by resource (`lead.created` -> `lead`).
import { useId, useMemo } from "react";
import { useQuery } from "@tanstack/react-query";
import { describeError, useTRPC } from "../../_lib/trpc";
import { Checkbox } from "../../_ui/checkbox";
import { FieldError } from "../../_ui/field";
import { ErrorState, LoadingState } from "../../_ui/surface";

function groupEvents(events: string[]) {
  const groups = new Map<string, string[]>();
  for (const e of events) {
    const g = e.split(".")[0];
    groups.set(g, [...(groups.get(g) ?? []), e]);
  }
  return [...groups.entries()];
}

export function EventPicker({
  value,
  onChange,
  error,
  disabled,
}: {
  value: string[];
  onChange: (events: string[]) => void;
  error?: string;
  disabled?: boolean;
}) {
  const trpc = useTRPC();
  const eventTypes = useQuery(trpc.webhooks.eventTypes.queryOptions());
  const groups = useMemo(() => groupEvents(eventTypes.data ?? []), [eventTypes.data]);
  const errorId = useId();
  const toggle = (names: string[], on: boolean) => onChange(on ? [...new Set([...value, ...names])] : value.filter((x) => !names.includes(x)));
  return (
    <fieldset data-field aria-invalid={error ? true : undefined} aria-describedby={error ? errorId : undefined}>
      <legend className="mb-2 text-sm font-medium text-slate-800">Events</legend>
      {/* Above the checklist, not below it: the list is taller than a laptop screen. */}
      <FieldError id={errorId} message={error} className="mb-2" />
      {eventTypes.isPending ? (
        <LoadingState />
      ) : eventTypes.error ? (
        <ErrorState message={describeError(eventTypes.error).message} />
      ) : (
        <div className="grid gap-4 sm:grid-cols-2">
          {groups.map(([group, names]) => (
            <div key={group} className="rounded-lg border border-slate-200 p-3">
              <Checkbox
                label={`${group}.*`}
                description="All of this resource's events"
                checked={names.every((n) => value.includes(n))}
                onCheckedChange={(on) => toggle(names, on)}
                disabled={disabled}
                className="mb-2 border-b border-slate-100 pb-2"
              />
              <div className="space-y-1.5">
                {names.map((n) => (
                  <Checkbox key={n} label={n} checked={value.includes(n)} disabled={disabled} onCheckedChange={(on) => toggle([n], on)} />
                ))}
              </div>
            </div>
          ))}
        </div>
      )}
    </fieldset>
  );
}

/** How a delivery's state reads, and its badge colour. */
export const STATE_LABEL = {
  pending: { label: "pending", tone: "neutral" },
  retrying: { label: "retrying", tone: "warn" },
  delivered: { label: "delivered", tone: "good" },
  failed: { label: "failed", tone: "bad" },
  dead_lettered: { label: "dead-lettered", tone: "bad" },
} as const;
