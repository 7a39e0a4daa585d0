"use client";
import { Fragment, useMemo, useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ChevronDown, ChevronRight, KeyRound, Plus, RotateCcw, Send, Trash2 } from "lucide-react";
import { describeError, useTRPC } from "../../_lib/trpc";
import { validate, type FieldErrors } from "../../_lib/form";
import { createSubscriptionInput } from "@/server/webhooks/webhooks.types";
import { Button } from "../../_ui/button";
import { Checkbox } from "../../_ui/checkbox";
import { ConfirmDialog, Dialog } from "../../_ui/dialog";
import { Field, FormError, Input } from "../../_ui/field";
import { SecretOnce } from "../../_ui/copy-button";
import { Badge, Card, EmptyState, ErrorState, LoadingState, PageHeader, Table } from "../../_ui/surface";
import { formatDateTime } from "../../_ui/format";
import { cn } from "../../_ui/cn";
import { READ_ONLY_HINT, useAccount } from "../account";

type Subscription = {
  id: string; url: string; description: string | null; events: string[]; enabled: boolean; secret_prefix: string;
  previous_secret_expires_at: string | null; created_at: string;
};

const STATUS_TONE = { pending: "warn", delivered: "good", permanent_fail: "bad", dead_letter: "bad" } as const;

/** `lead.created` -> group `lead`. */
function groupEvents(events: string[]) {
  const groups = new Map<string, string[]>();
  for (const e of events) {
    const g = e.split(".")[0];
    groups.set(g, [...(groups.get(g) ?? []), e]);
  }
  return [...groups.entries()];
}

export default function WebhooksPage() {
  const trpc = useTRPC();
  const { canManage } = useAccount();
  const subs = useQuery(trpc.webhooks.listSubscriptions.queryOptions({ limit: 100 }));
  const [creating, setCreating] = useState(false);
  const [selected, setSelected] = useState<string | null>(null);
  const selectedSub = subs.data?.data.find((s) => s.id === selected) ?? subs.data?.data[0] ?? null;

  return (
    <>
      <PageHeader
        title="Webhooks"
        description="Signed POSTs of events to your endpoints. Each delivery is retried on a ladder (up to 6 attempts over about 14.5 hours) before it is dead-lettered."
        actions={canManage ? <Button onClick={() => setCreating(true)}><Plus /> Add endpoint</Button> : null}
      />
      {!canManage ? <p className="mb-4 rounded-md bg-slate-100 px-3 py-2 text-sm text-slate-700">{READ_ONLY_HINT}</p> : null}
      <Card className="mb-6">
        {subs.isPending ? (
          <LoadingState />
        ) : subs.error ? (
          <ErrorState message={describeError(subs.error).message} onRetry={() => subs.refetch()} />
        ) : subs.data.data.length === 0 ? (
          <EmptyState title="No webhook endpoints yet" action={canManage ? <Button onClick={() => setCreating(true)}><Plus /> Add your first endpoint</Button> : null}>
            Add an HTTPS endpoint and choose the events it should receive; then send a test event to check it.
          </EmptyState>
        ) : (
          <ul className="divide-y divide-slate-100">
            {subs.data.data.map((s) => (
              <SubscriptionRow key={s.id} sub={s} selected={selectedSub?.id === s.id} onSelect={() => setSelected(s.id)} />
            ))}
          </ul>
        )}
      </Card>
      {selectedSub ? <DeliveryLog subscription={selectedSub} /> : null}
      {creating ? <CreateSubscriptionDialog onClose={() => setCreating(false)} onCreated={(id) => setSelected(id)} /> : null}
    </>
  );
}

function SubscriptionRow({ sub, selected, onSelect }: { sub: Subscription; selected: boolean; onSelect: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { canManage } = useAccount();
  const [deleting, setDeleting] = useState(false);
  const [rolling, setRolling] = useState(false);
  const refresh = () => Promise.all([
    queryClient.invalidateQueries({ queryKey: trpc.webhooks.listSubscriptions.queryKey() }),
    queryClient.invalidateQueries({ queryKey: trpc.webhooks.listDeliveries.queryKey() }),
  ]);
  const toggle = useMutation(trpc.webhooks.updateSubscription.mutationOptions({ onSuccess: refresh }));
  const test = useMutation(trpc.webhooks.sendTestEvent.mutationOptions({ onSuccess: () => { onSelect(); return refresh(); } }));
  const remove = useMutation(trpc.webhooks.deleteSubscription.mutationOptions({ onSuccess: async () => { await refresh(); setDeleting(false); } }));
  const roll = useMutation(trpc.webhooks.rollSecret.mutationOptions({ onSuccess: refresh }));
  const error = toggle.error ?? test.error;

  return (
    <li data-testid="subscription-row" className={cn("flex flex-col gap-3 p-4 sm:flex-row sm:items-center sm:justify-between", selected && "bg-indigo-50/40")}>
      <button className="min-w-0 text-left" onClick={onSelect} aria-pressed={selected}>
        <p className="truncate font-mono text-sm font-medium text-slate-900">{sub.url}</p>
        <p className="mt-1 text-xs text-slate-500">
          {sub.events.length} event{sub.events.length === 1 ? "" : "s"} · secret <code className="font-mono">{sub.secret_prefix}…</code>
          {sub.description ? ` · ${sub.description}` : ""}
        </p>
        {sub.previous_secret_expires_at ? (
          <p className="mt-1 text-xs text-slate-600" data-testid="previous-secret">The previous secret also signs until {formatDateTime(sub.previous_secret_expires_at)}.</p>
        ) : null}
        <div className="mt-1.5 flex flex-wrap gap-1">
          {sub.enabled ? <Badge tone="good">Enabled</Badge> : <Badge>Disabled</Badge>}
          {sub.events.slice(0, 4).map((e) => <Badge key={e} tone="info">{e}</Badge>)}
          {sub.events.length > 4 ? <Badge>+{sub.events.length - 4}</Badge> : null}
        </div>
        {error ? <p className="mt-1 text-sm text-red-600">{describeError(error).message}</p> : null}
      </button>
      {canManage ? (
        <div className="flex shrink-0 flex-wrap gap-2">
          <Button variant="secondary" size="sm" disabled={test.isPending || !sub.enabled} onClick={() => test.mutate({ subscription_id: sub.id })}><Send /> Send test event</Button>
          <Button variant="secondary" size="sm" disabled={toggle.isPending} onClick={() => toggle.mutate({ id: sub.id, enabled: !sub.enabled })}>{sub.enabled ? "Disable" : "Enable"}</Button>
          <Button variant="secondary" size="sm" onClick={() => { roll.reset(); setRolling(true); }}><KeyRound /> Roll secret</Button>
          <Button variant="ghost" size="sm" aria-label="Delete endpoint" onClick={() => setDeleting(true)}><Trash2 /></Button>
        </div>
      ) : null}
      {rolling && !roll.data ? (
        <ConfirmDialog
          open
          onOpenChange={setRolling}
          title="Roll the signing secret?"
          description={<>A new secret signs every delivery from now on. The current one keeps signing beside it for 24 hours, so you can switch your endpoint over without missing a delivery.</>}
          confirmLabel="Roll secret"
          pending={roll.isPending}
          error={roll.error ? describeError(roll.error).message : null}
          onConfirm={() => roll.mutate({ id: sub.id })}
        />
      ) : null}
      {rolling && roll.data ? (
        <Dialog open onOpenChange={(open) => { if (!open) { setRolling(false); roll.reset(); } }} title="New signing secret">
          <div className="space-y-3">
            <p className="text-sm text-slate-600">Deliveries now carry a signature for each secret until {formatDateTime(roll.data.previous_secret_expires_at ?? new Date().toISOString())}; after that, only this one.</p>
            <SecretOnce value={roll.data.secret} what="signing secret" />
          </div>
        </Dialog>
      ) : null}
      <ConfirmDialog
        open={deleting}
        onOpenChange={setDeleting}
        title="Delete this endpoint?"
        description={<>No more events will be sent to <code className="font-mono text-xs">{sub.url}</code>. This cannot be undone.</>}
        confirmLabel="Delete endpoint"
        pending={remove.isPending}
        error={remove.error ? describeError(remove.error).message : null}
        onConfirm={() => remove.mutate({ id: sub.id })}
      />
    </li>
  );
}

function CreateSubscriptionDialog({ onClose, onCreated }: { onClose: () => void; onCreated: (id: string) => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const eventTypes = useQuery(trpc.webhooks.eventTypes.queryOptions());
  const [url, setUrl] = useState("");
  const [description, setDescription] = useState("");
  const [events, setEvents] = useState<string[]>([]);
  const [errors, setErrors] = useState<FieldErrors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const create = useMutation(
    trpc.webhooks.createSubscription.mutationOptions({
      onSuccess: (sub) => {
        onCreated(sub.id);
        return queryClient.invalidateQueries({ queryKey: trpc.webhooks.listSubscriptions.queryKey() });
      },
      onError: (err) => {
        const e = describeError(err);
        if (e.field) setErrors({ [e.field.split(/[.[]/)[0]]: e.message });
        else setFormError(e.message);
      },
    }),
  );
  const groups = useMemo(() => groupEvents(eventTypes.data ?? []), [eventTypes.data]);

  function submit(e: FormEvent) {
    e.preventDefault();
    setFormError(null);
    const { data, errors: invalid } = validate(createSubscriptionInput, {
      url: url.trim(), events, description: description.trim() || undefined,
    });
    setErrors(invalid);
    if (data) create.mutate(data);
  }
  const toggle = (names: string[], on: boolean) => setEvents((cur) => (on ? [...new Set([...cur, ...names])] : cur.filter((x) => !names.includes(x))));

  return (
    <Dialog open onOpenChange={(open) => !open && onClose()} title={create.data ? "Endpoint added" : "Add a webhook endpoint"} className="max-w-2xl">
      {create.data ? (
        <div className="space-y-4">
          <p className="text-sm text-slate-600">Verify each delivery&apos;s <code className="font-mono text-xs">x-webhook-signature</code> (HMAC-SHA256 of the raw body) with this secret.</p>
          <SecretOnce value={create.data.secret} what="signing secret" />
          <div className="flex justify-end"><Button onClick={onClose}>Done</Button></div>
        </div>
      ) : (
        <form onSubmit={submit} className="space-y-5" noValidate>
          <Field label="Endpoint URL" error={errors.url} hint="HTTPS; private and loopback addresses are refused.">
            {(id, d) => <Input id={id} value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://example.com/webhooks" aria-invalid={!!errors.url} aria-describedby={d} autoFocus />}
          </Field>
          <Field label="Description (optional)" error={errors.description}>
            {(id) => <Input id={id} value={description} onChange={(e) => setDescription(e.target.value)} />}
          </Field>
          <fieldset>
            <legend className="mb-2 text-sm font-medium text-slate-800">Events</legend>
            {eventTypes.isPending ? <LoadingState /> : eventTypes.error ? <ErrorState message={describeError(eventTypes.error).message} /> : (
              <div className="grid gap-4 sm:grid-cols-2">
                {groups.map(([group, names]) => (
                  <div key={group} className="rounded-lg border border-slate-200 p-3">
                    <Checkbox
                      label={`${group}.*`}
                      description="All of this resource's events"
                      checked={names.every((n) => events.includes(n))}
                      onCheckedChange={(on) => toggle(names, on)}
                      className="mb-2 border-b border-slate-100 pb-2"
                    />
                    <div className="space-y-1.5">
                      {names.map((n) => <Checkbox key={n} label={n} checked={events.includes(n)} onCheckedChange={(on) => toggle([n], on)} />)}
                    </div>
                  </div>
                ))}
              </div>
            )}
            {errors.events ? <p className="mt-2 text-sm text-red-600" data-field-error>{errors.events}</p> : null}
          </fieldset>
          <FormError message={formError} />
          <div className="flex justify-end gap-2">
            <Button variant="secondary" onClick={onClose}>Cancel</Button>
            <Button type="submit" disabled={create.isPending}>{create.isPending ? "Adding…" : "Add endpoint"}</Button>
          </div>
        </form>
      )}
    </Dialog>
  );
}

function DeliveryLog({ subscription }: { subscription: Subscription }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { canManage } = useAccount();
  const [open, setOpen] = useState<string | null>(null);
  const deliveries = useQuery({
    ...trpc.webhooks.listDeliveries.queryOptions({ subscription_id: subscription.id, limit: 50 }),
    // Pending deliveries change on their own (the worker runs in the background): keep polling.
    refetchInterval: (q) => (q.state.data?.data.some((d) => d.status === "pending") ? 1500 : 10_000),
  });
  const replay = useMutation(
    trpc.webhooks.replayDelivery.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.webhooks.listDeliveries.queryKey() }),
    }),
  );

  return (
    <Card>
      <div className="border-b border-slate-100 px-4 py-3">
        <h2 className="text-sm font-semibold text-slate-900">Delivery log</h2>
        <p className="truncate font-mono text-xs text-slate-500">{subscription.url}</p>
      </div>
      {deliveries.isPending ? (
        <LoadingState />
      ) : deliveries.error ? (
        <ErrorState message={describeError(deliveries.error).message} onRetry={() => deliveries.refetch()} />
      ) : deliveries.data.data.length === 0 ? (
        <EmptyState title="No deliveries yet">{canManage ? "Press “Send test event” to send one now." : "Deliveries appear here as events happen."}</EmptyState>
      ) : (
        <Table>
          <thead><tr><th></th><th>Event</th><th>Status</th><th>Attempts</th><th>Last code</th><th>Next attempt</th><th>Created</th><th><span className="sr-only">Actions</span></th></tr></thead>
          <tbody>
            {deliveries.data.data.map((d) => (
              <Fragment key={d.id}>
                <tr data-testid="delivery-row" data-status={d.status}>
                  <td className="w-8">
                    <Button variant="ghost" size="icon" aria-label={open === d.id ? "Hide attempts" : "Show attempts"} aria-expanded={open === d.id} onClick={() => setOpen(open === d.id ? null : d.id)}>
                      {open === d.id ? <ChevronDown /> : <ChevronRight />}
                    </Button>
                  </td>
                  <td className="font-mono text-xs">{d.event_type}</td>
                  <td><Badge tone={STATUS_TONE[d.status]}>{d.status.replace("_", " ")}</Badge></td>
                  <td>{d.attempt_count}{d.cycle > 1 ? <span className="text-xs text-slate-500"> (cycle {d.cycle})</span> : null}</td>
                  <td>{d.last_status_code ?? "—"}</td>
                  <td className="whitespace-nowrap text-slate-600">{d.status === "pending" ? formatDateTime(d.next_attempt_at) : "—"}</td>
                  <td className="whitespace-nowrap text-slate-600">{formatDateTime(d.created_at)}</td>
                  <td className="text-right">
                    {canManage && d.status === "dead_letter" ? (
                      <Button variant="secondary" size="sm" disabled={replay.isPending} onClick={() => replay.mutate({ id: d.id })}><RotateCcw /> Replay</Button>
                    ) : null}
                  </td>
                </tr>
                {open === d.id ? (
                  <tr className="bg-slate-50">
                    <td colSpan={8}>
                      <ol className="space-y-2" data-testid="attempts">
                        {d.attempts.map((a) => (
                          <li key={a.id} className="rounded-md border border-slate-200 bg-white p-3 text-xs">
                            <div className="flex flex-wrap items-center gap-x-3 gap-y-1">
                              <span className="font-medium text-slate-900">Attempt {a.attempt_number}{d.cycle > 1 ? ` · cycle ${a.cycle}` : ""}</span>
                              <Badge tone={a.outcome === "delivered" ? "good" : a.outcome === "retry" ? "warn" : "bad"}>{a.outcome}</Badge>
                              <span>status {a.status_code ?? "—"}</span>
                              <span>{a.duration_ms} ms</span>
                              <span className="text-slate-500">{formatDateTime(a.created_at)}</span>
                            </div>
                            {a.error ? <p className="mt-1 text-red-700">{a.error}</p> : null}
                            {a.response_body ? <pre className="mt-2 max-h-32 overflow-auto whitespace-pre-wrap break-all rounded bg-slate-100 p-2 font-mono text-[11px] text-slate-700">{a.response_body.slice(0, 500)}</pre> : null}
                          </li>
                        ))}
                        {d.attempts.length === 0 ? <li className="text-xs text-slate-500">No attempt yet.</li> : null}
                      </ol>
                    </td>
                  </tr>
                ) : null}
              </Fragment>
            ))}
          </tbody>
        </Table>
      )}
      {replay.error ? <p className="px-4 pb-3 text-sm text-red-600">{describeError(replay.error).message}</p> : null}
    </Card>
  );
}
