"use client";
import { useState, type FormEvent } from "react";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ChevronRight, Plus } from "lucide-react";
import { describeError, useTRPC } from "../../_lib/trpc";
import { useFormErrors, validate } from "../../_lib/form";
import { createSubscriptionInput } from "@/server/webhooks/webhooks.types";
import { Button } from "../../_ui/button";
import { Dialog, DialogFormActions } from "../../_ui/dialog";
import { Field, Input } from "../../_ui/field";
import { SecretOnce } from "../../_ui/copy-button";
import { Badge, Card, EmptyState, ErrorState, LoadingState, PageHeader } from "../../_ui/surface";
import { READ_ONLY_HINT, useAccount } from "../account";
import { EventPicker } from "./event-picker";
import { LocalDevelopmentNote } from "./local-development-note";
import { useUrlHint } from "./url-hint";

export default function WebhooksPage() {
  const trpc = useTRPC();
  const { canManage } = useAccount();
  const subs = useQuery(trpc.webhooks.listSubscriptions.queryOptions({ limit: 100 }));
  const [creating, setCreating] = useState(false);

  return (
    <>
      <PageHeader
        title="Webhooks"
        description="Signed POSTs of events to your endpoints. Each delivery is retried on a ladder (up to 6 attempts over about 14.5 hours) before it is dead-lettered. Open an endpoint to edit it, see its deliveries and resend them."
        actions={
          canManage ? (
            <Button onClick={() => setCreating(true)}>
              <Plus /> Add endpoint
            </Button>
          ) : null
        }
      />
      {!canManage ? <p className="mb-4 rounded-md bg-slate-100 px-3 py-2 text-sm text-slate-700">{READ_ONLY_HINT}</p> : null}
      <Card className="mb-6">
        {subs.isPending ? (
          <LoadingState />
        ) : subs.error ? (
          <ErrorState message={describeError(subs.error).message} onRetry={() => subs.refetch()} />
        ) : subs.data.data.length === 0 ? (
          <EmptyState
            title="No webhook endpoints yet"
            action={
              canManage ? (
                <Button onClick={() => setCreating(true)}>
                  <Plus /> Add your first endpoint
                </Button>
              ) : null
            }
          >
            Add an HTTPS endpoint and choose the events it should receive; then send a test event to check it.
          </EmptyState>
        ) : (
          <ul className="divide-y divide-slate-100">
            {subs.data.data.map((s) => (
              <li key={s.id} data-testid="subscription-row">
                <Link
                  href={`/dashboard/webhooks/${s.id}`}
                  className="flex items-center gap-3 p-4 hover:bg-slate-50 focus-visible:bg-slate-50 focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-inset focus-visible:ring-indigo-500"
                >
                  <div className="min-w-0 flex-1">
                    <p className="break-all font-mono text-sm font-medium text-slate-900">{s.url}</p>
                    <p className="mt-1 text-xs text-slate-600">
                      {s.events.length} event{s.events.length === 1 ? "" : "s"} · secret <code className="font-mono">{s.secret_prefix}…</code>
                      {s.description ? ` · ${s.description}` : ""}
                    </p>
                    <div className="mt-1.5 flex flex-wrap gap-1">
                      {s.enabled ? <Badge tone="good">Enabled</Badge> : <Badge>Disabled</Badge>}
                      {s.disabled_reason === "endpoint_failing" ? <Badge tone="bad">Disabled: failing</Badge> : null}
                      {s.enabled && s.circuit === "open" ? <Badge tone="bad">Failing: probing</Badge> : null}
                      {s.events.slice(0, 4).map((e) => (
                        <Badge key={e} tone="info">
                          {e}
                        </Badge>
                      ))}
                      {s.events.length > 4 ? <Badge>+{s.events.length - 4}</Badge> : null}
                    </div>
                  </div>
                  <ChevronRight className="size-4 shrink-0 text-slate-500" aria-hidden />
                </Link>
              </li>
            ))}
          </ul>
        )}
      </Card>
      <LocalDevelopmentNote />
      {creating ? <CreateSubscriptionDialog onClose={() => setCreating(false)} /> : null}
    </>
  );
}

function CreateSubscriptionDialog({ onClose }: { onClose: () => void }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const [url, setUrl] = useState("");
  const [description, setDescription] = useState("");
  const [events, setEvents] = useState<string[]>([]);
  const form = useFormErrors();
  const urlHint = useUrlHint();
  const create = useMutation(
    trpc.webhooks.createSubscription.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.webhooks.listSubscriptions.queryKey() }),
      onError: form.failFromServer,
    }),
  );

  function submit(e: FormEvent) {
    e.preventDefault();
    const { data, errors } = validate(createSubscriptionInput, { url: url.trim(), events, description: description.trim() || undefined });
    form.fail(errors);
    if (data) create.mutate(data);
  }

  return (
    <Dialog open onOpenChange={(open) => !open && onClose()} title={create.data ? "Endpoint added" : "Add a webhook endpoint"} className="max-w-2xl">
      {create.data ? (
        <div className="space-y-4">
          <p className="text-sm text-slate-600">
            Verify each delivery&apos;s <code className="font-mono text-xs">x-webhook-signature</code> (HMAC-SHA256 of the raw body) with this secret.
          </p>
          <SecretOnce value={create.data.secret} what="signing secret" />
          <div className="flex justify-end gap-2">
            <Button variant="secondary" onClick={() => router.push(`/dashboard/webhooks/${create.data.id}`)}>
              Open endpoint
            </Button>
            <Button onClick={onClose}>Done</Button>
          </div>
        </div>
      ) : (
        <form ref={form.ref} onSubmit={submit} className="space-y-5" noValidate>
          <Field label="Endpoint URL" error={form.errors.url} hint={urlHint}>
            {(id, d) => (
              <Input
                id={id}
                value={url}
                onChange={(e) => setUrl(e.target.value)}
                placeholder="https://example.com/webhooks"
                aria-invalid={!!form.errors.url}
                aria-describedby={d}
                autoFocus
              />
            )}
          </Field>
          <Field label="Description (optional)" error={form.errors.description}>
            {(id, d) => (
              <Input
                id={id}
                value={description}
                onChange={(e) => setDescription(e.target.value)}
                aria-invalid={!!form.errors.description}
                aria-describedby={d}
              />
            )}
          </Field>
          <EventPicker value={events} onChange={setEvents} error={form.errors.events} />
          <DialogFormActions formError={form.formError} onCancel={onClose} pending={create.isPending} submitLabel="Add endpoint" pendingLabel="Adding…" />
        </form>
      )}
    </Dialog>
  );
}
