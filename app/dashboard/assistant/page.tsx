"use client";
// The assistant's settings and where its tools live: the handoff SLA (owners and admins change it,
// members see it), the tool endpoints, the catalog, the MCP server and the tools' reference.
import { useEffect, useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { describeError, useTRPC } from "../../_lib/trpc";
import { validate, type FieldErrors } from "../../_lib/form";
import { handoffSlaInput, MAX_HANDOFF_SLA_MINUTES } from "@/server/conversations/sla-monitor.types";
import { Button } from "../../_ui/button";
import { CopyButton } from "../../_ui/copy-button";
import { Field, FormError, Input } from "../../_ui/field";
import { Badge, Card, ErrorState, LoadingState, PageHeader } from "../../_ui/surface";
import { READ_ONLY_HINT, useAccount } from "../account";

export default function AssistantPage() {
  const { canManage } = useAccount();
  return (
    <>
      <PageHeader title="Assistant" description="How long a handed-off customer may wait for a person, and where your assistant calls its tools." />
      {!canManage ? <p className="mb-4 rounded-md bg-slate-100 px-3 py-2 text-sm text-slate-700">{READ_ONLY_HINT}</p> : null}
      <div className="grid gap-6 lg:grid-cols-2">
        <HandoffSlaForm />
        <ToolEndpoints />
      </div>
    </>
  );
}

function HandoffSlaForm() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { canManage } = useAccount();
  const current = useQuery(trpc.assistant.handoffSla.queryOptions());
  const [minutes, setMinutes] = useState("");
  const [errors, setErrors] = useState<FieldErrors>({});
  const [formError, setFormError] = useState<string | null>(null);
  useEffect(() => {
    if (current.data) setMinutes(String(current.data.handoff_sla_minutes));
  }, [current.data]);
  const save = useMutation(
    trpc.assistant.setHandoffSla.mutationOptions({
      onSuccess: (data) => queryClient.setQueryData(trpc.assistant.handoffSla.queryKey(), data),
      onError: (err) => {
        const e = describeError(err);
        if (e.field) setErrors({ [e.field]: e.message });
        else setFormError(e.message);
      },
    }),
  );

  function submit(e: FormEvent) {
    e.preventDefault();
    setFormError(null);
    save.reset();
    const typed = minutes.trim();
    const { data, errors } = validate(handoffSlaInput, { handoff_sla_minutes: /^-?\d+(\.\d+)?$/.test(typed) ? Number(typed) : typed });
    setErrors(errors);
    if (data) save.mutate(data);
  }

  return (
    <Card className="p-5">
      <h2 className="mb-1 text-sm font-semibold text-slate-900">Handoff SLA</h2>
      <p className="mb-4 text-sm text-slate-600">
        When the assistant hands a conversation to a person, a customer who waits longer than this for an operator&apos;s first reply emits{" "}
        <code className="font-mono text-xs">sla.breached</code> (once per handoff). A change applies from the next check.
      </p>
      {current.isPending ? (
        <LoadingState />
      ) : current.error ? (
        <ErrorState message={describeError(current.error).message} onRetry={() => current.refetch()} />
      ) : (
        <form onSubmit={submit} className="space-y-4" noValidate>
          <Field label="Minutes before a breach" error={errors.handoff_sla_minutes} hint={`A whole number from 1 to ${MAX_HANDOFF_SLA_MINUTES} (a week).`}>
            {(id, d) => (
              <Input
                id={id}
                inputMode="numeric"
                value={minutes}
                readOnly={!canManage}
                disabled={!canManage}
                onChange={(e) => setMinutes(e.target.value)}
                aria-invalid={!!errors.handoff_sla_minutes}
                aria-describedby={d}
              />
            )}
          </Field>
          <FormError message={formError} />
          {canManage ? (
            <div className="flex justify-end">
              <Button type="submit" disabled={save.isPending}>
                {save.isPending ? "Saving…" : "Save SLA"}
              </Button>
            </div>
          ) : null}
          {save.isSuccess ? (
            <p className="text-sm text-emerald-700" role="status">
              Saved: {save.data.handoff_sla_minutes} minutes.
            </p>
          ) : null}
        </form>
      )}
    </Card>
  );
}

function Endpoint({ label, value }: { label: string; value: string }) {
  return (
    <div>
      <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">{label}</dt>
      <dd className="mt-1 flex items-center gap-2">
        <code className="min-w-0 flex-1 break-all rounded bg-slate-100 px-2 py-1 font-mono text-xs text-slate-800">{value}</code>
        <CopyButton value={value} />
      </dd>
    </div>
  );
}

function ToolEndpoints() {
  const trpc = useTRPC();
  const tools = useQuery(trpc.assistant.tools.queryOptions());
  const [origin, setOrigin] = useState("");
  useEffect(() => setOrigin(window.location.origin), []);
  return (
    <Card className="p-5">
      <h2 className="mb-1 text-sm font-semibold text-slate-900">Where the tools live</h2>
      <p className="mb-4 text-sm text-slate-600">
        Call them with an API key (<code className="font-mono text-xs">assistant:read</code> for the read tools; the write tools need the matching write scope).
        Each tool is limited to 50 calls a minute per tenant, on top of the key&apos;s and the tenant&apos;s limits.
      </p>
      <dl className="space-y-3">
        <Endpoint label="Tool calls" value={`POST ${origin}/api/agent/v1/tools/{tool}`} />
        <Endpoint label="Catalog (JSON Schema for LLM tool calling)" value={`${origin}/api/agent/v1/tools?format=openai`} />
        <Endpoint label="MCP server (streamable HTTP)" value={`${origin}/api/agent/mcp`} />
        <Endpoint label="OpenAPI document" value={`${origin}/api/agent/v1/openapi.json`} />
      </dl>
      <p className="mt-4 text-sm">
        <a className="font-medium text-indigo-700 underline" href="/api/v1/docs?api=agent-tools">
          The tools&apos; reference
        </a>
        <span className="text-slate-600"> — every tool&apos;s input, output and errors.</span>
      </p>
      <h3 className="mb-2 mt-5 text-xs font-medium uppercase tracking-wide text-slate-500">Tools</h3>
      {tools.isPending ? (
        <LoadingState />
      ) : tools.error ? (
        <ErrorState message={describeError(tools.error).message} onRetry={() => tools.refetch()} />
      ) : (
        <ul className="divide-y divide-slate-100 text-sm" aria-label="Tools">
          {tools.data.map((t) => (
            <li key={t.name} className="flex items-center justify-between gap-2 py-1.5">
              <span>
                <code className="font-mono text-xs">{t.name}</code> <span className="text-slate-600">{t.title}</span>
              </span>
              <Badge tone={t.kind === "write" ? "warn" : undefined}>{t.required_scope}</Badge>
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}
