"use client";
// How long this tenant keeps each kind of data: owners set a period per class, within the operator's
// bound (shown beside each field); everyone else sees the periods read-only. Changes are audited.
import { useEffect, useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { describeError, useTRPC } from "../../_lib/trpc";
import { useFormErrors, validate } from "../../_lib/form";
import { RETENTION_CLASSES, type RetentionClass, retentionInput } from "@/server/retention/retention.types";
import type { RouterOutputs } from "../../_lib/router-types";
import { Button } from "../../_ui/button";
import { Field, FormError, Input } from "../../_ui/field";
import { Card, ErrorState, LoadingState, PageHeader } from "../../_ui/surface";
import { useAccount } from "../account";

type View = RouterOutputs["retention"]["get"];

const ownersOnly = (role: string) => `Your role is ${role}: you can view these periods; an owner can change them.`;

/** What each class holds and what the purge does to it, in the words of the operator docs. */
const CLASSES: Record<RetentionClass, { label: string; what: string }> = {
  messages: { label: "Messages and call transcripts", what: "Deleted once older than this." },
  call_recordings: { label: "Call recordings and summaries", what: "Cleared once older than this; the call itself (times, status) stays." },
  events: { label: "Events and webhook delivery logs", what: "Deleted with their deliveries and request and response bodies, once no delivery is pending." },
  audit_log: { label: "Audit log", what: "Entries deleted once older than this." },
  notifications: { label: "Dashboard notifications", what: "Deleted once older than this." },
};

const days = (n: number) => `${n.toLocaleString("en")} ${n === 1 ? "day" : "days"}`;

/** The period that applies now, and where it comes from. */
function applies(v: View[RetentionClass]): string {
  if (v.days === null) return "Kept forever";
  return v.tenant_days === null ? `${days(v.days)} (the operator's default)` : `${days(v.days)} (this tenant's setting)`;
}

/** The operator's bound, and (for an owner) what an empty field means. */
function bound(v: View[RetentionClass], canEdit: boolean): string {
  if (!canEdit) return v.operator_days ? `At most ${days(v.operator_days)}, the operator's limit.` : "The operator keeps these forever.";
  return v.operator_days
    ? `At most ${days(v.operator_days)}, the operator's limit. Leave empty for the operator's default.`
    : `The operator keeps these forever; set at most ${days(v.max_days)}, or leave empty to keep them.`;
}

export default function RetentionPage() {
  const trpc = useTRPC();
  const { role } = useAccount();
  const current = useQuery(trpc.retention.get.queryOptions());
  return (
    <>
      <PageHeader
        title="Data retention"
        description="How long this tenant keeps its customers' data. Older records are removed by a periodic purge; analytics totals keep counting them."
      />
      {role !== "owner" ? <p className="mb-4 rounded-md bg-slate-100 px-3 py-2 text-sm text-slate-700">{ownersOnly(role)}</p> : null}
      <Card className="p-5">
        {current.isPending ? (
          <LoadingState />
        ) : current.error ? (
          <ErrorState message={describeError(current.error).message} onRetry={() => current.refetch()} />
        ) : (
          <RetentionForm view={current.data} canEdit={role === "owner"} />
        )}
      </Card>
    </>
  );
}

const asTyped = (view: View) => Object.fromEntries(RETENTION_CLASSES.map((c) => [c, view[c].tenant_days === null ? "" : String(view[c].tenant_days)]));

function RetentionForm({ view, canEdit }: { view: View; canEdit: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [typed, setTyped] = useState<Record<string, string>>(() => asTyped(view));
  const [saved, setSaved] = useState<string | null>(null);
  const { ref, errors, formError, fail, failFromServer, clear } = useFormErrors();
  useEffect(() => setTyped(asTyped(view)), [view]);
  const save = useMutation(
    trpc.retention.update.mutationOptions({
      onSuccess: (data) => {
        queryClient.setQueryData(trpc.retention.get.queryKey(), data);
        setSaved("Saved. The next purge applies the new periods.");
      },
      onError: failFromServer,
    }),
  );

  function submit(e: FormEvent) {
    e.preventDefault();
    clear();
    setSaved(null);
    // Only the classes whose value changed are sent (and audited); empty means the operator's default.
    const changed: Record<string, unknown> = {};
    for (const cls of RETENTION_CLASSES) {
      const value = typed[cls].trim();
      const parsed = value === "" ? null : /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
      if (parsed !== view[cls].tenant_days) changed[cls] = parsed;
    }
    const { data, errors } = validate(retentionInput, changed);
    if (!data) return fail(errors);
    if (!Object.keys(data).length) return setSaved("Nothing changed.");
    save.mutate(data);
  }

  return (
    <form ref={ref} onSubmit={submit} className="space-y-5" noValidate>
      <div className="grid gap-5 lg:grid-cols-2">
        {RETENTION_CLASSES.map((cls) => (
          <div key={cls} className="space-y-1" data-retention-class={cls}>
            <Field label={`${CLASSES[cls].label} (days)`} error={errors[cls]} hint={bound(view[cls], canEdit)}>
              {(id, d) => (
                <Input
                  id={id}
                  inputMode="numeric"
                  placeholder={view[cls].operator_days ? String(view[cls].operator_days) : "Forever"}
                  value={typed[cls]}
                  readOnly={!canEdit}
                  disabled={!canEdit}
                  onChange={(e) => setTyped((t) => ({ ...t, [cls]: e.target.value }))}
                  aria-invalid={!!errors[cls]}
                  aria-describedby={d}
                />
              )}
            </Field>
            <p className="text-xs text-slate-600">
              {CLASSES[cls].what} Now: <span className="font-medium text-slate-800">{applies(view[cls])}</span>.
            </p>
          </div>
        ))}
      </div>
      <FormError message={formError} />
      {canEdit ? (
        <div className="flex flex-wrap items-center justify-end gap-3">
          {saved ? (
            <p className="text-sm text-emerald-700" role="status">
              {saved}
            </p>
          ) : null}
          <Button type="submit" disabled={save.isPending}>
            {save.isPending ? "Saving…" : "Save retention"}
          </Button>
        </div>
      ) : null}
    </form>
  );
}
