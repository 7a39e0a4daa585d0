"use client";
// One webhook endpoint (Stripe/Svix-like): its settings, its signing secret, a test event with its
// result inline, and its deliveries with every attempt's request and response, filterable, each resendable.
import { useState, type FormEvent } from "react";
import Link from "next/link";
import { useParams, useRouter } from "next/navigation";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ArrowLeft, KeyRound, Send, Trash2 } from "lucide-react";
import { describeError, useTRPC } from "../../../_lib/trpc";
import { useFormErrors, validate } from "../../../_lib/form";
import { updateSubscriptionInput } from "@/server/webhooks/webhooks.types";
import { Button } from "../../../_ui/button";
import { ConfirmDialog, Dialog } from "../../../_ui/dialog";
import { Field, FormError, Input } from "../../../_ui/field";
import { SecretOnce } from "../../../_ui/copy-button";
import { Badge, Card, EmptyState, ErrorState, LoadingState, PageHeader } from "../../../_ui/surface";
import { formatDateTime } from "../../../_lib/format";
import { READ_ONLY_HINT, useAccount } from "../../account";
import { EventPicker } from "../event-picker";
import { LocalDevelopmentNote } from "../local-development-note";
import { useUrlHint } from "../url-hint";
import { DeliveryLog, DeliveryOutcome } from "./deliveries";
import type { RouterOutputs } from "../../../_lib/router-types";

type Subscription = RouterOutputs["webhooks"]["getSubscription"];

export default function EndpointPage() {
  const { id } = useParams<{ id: string }>();
  const trpc = useTRPC();
  const { canManage } = useAccount();
  // The client's default retry: a 404 (not yours, or deleted) shows at once; a 429 or 503 is retried.
  const sub = useQuery(trpc.webhooks.getSubscription.queryOptions({ id }));
  const [testId, setTestId] = useState<string | null>(null);

  const back = (
    <Link href="/dashboard/webhooks" className="mb-3 inline-flex items-center gap-1 text-sm font-medium text-indigo-700 hover:underline">
      <ArrowLeft className="size-4" aria-hidden /> All endpoints
    </Link>
  );
  if (sub.isPending)
    return (
      <>
        {back}
        <Card>
          <LoadingState />
        </Card>
      </>
    );
  if (sub.error) {
    const missing = describeError(sub.error).status === 404 || describeError(sub.error).code === "not_found";
    return (
      <>
        {back}
        <PageHeader title="Webhook endpoint" />
        <Card>
          {missing ? (
            <EmptyState title="This endpoint does not exist">It may have been deleted. Go back to the list of endpoints.</EmptyState>
          ) : (
            <ErrorState message={describeError(sub.error).message} onRetry={() => sub.refetch()} />
          )}
        </Card>
      </>
    );
  }
  const s = sub.data;
  return (
    <>
      {back}
      <PageHeader
        title="Webhook endpoint"
        description={
          <span className="break-all font-mono text-slate-800" data-testid="endpoint-url">
            {s.url}
          </span>
        }
        actions={canManage ? <EndpointActions sub={s} onTestSent={setTestId} /> : null}
      />
      <div className="mb-4 flex flex-wrap items-center gap-2">
        {s.enabled ? <Badge tone="good">Enabled</Badge> : <Badge>Disabled</Badge>}
        {s.enabled && s.circuit === "open" ? <Badge tone="bad">Failing: probing</Badge> : null}
        {s.description ? <span className="text-sm text-slate-700">{s.description}</span> : null}
      </div>
      <EndpointHealth sub={s} />
      {!canManage ? <p className="mb-4 rounded-md bg-slate-100 px-3 py-2 text-sm text-slate-700">{READ_ONLY_HINT}</p> : null}
      {testId ? <TestEventResult deliveryId={testId} /> : null}
      <DeliveryLog subscriptionId={s.id} />
      <div className="my-6 grid gap-6 lg:grid-cols-[2fr_1fr]">
        <SettingsForm key={s.id} sub={s} />
        <SecretCard sub={s} />
      </div>
      <LocalDevelopmentNote />
    </>
  );
}

function useRefreshEndpoint() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: trpc.webhooks.getSubscription.queryKey() }),
      queryClient.invalidateQueries({ queryKey: trpc.webhooks.listSubscriptions.queryKey() }),
      queryClient.invalidateQueries({ queryKey: trpc.webhooks.listDeliveries.queryKey() }),
    ]);
}

function EndpointActions({ sub, onTestSent }: { sub: Subscription; onTestSent: (deliveryId: string) => void }) {
  const trpc = useTRPC();
  const router = useRouter();
  const refresh = useRefreshEndpoint();
  const [deleting, setDeleting] = useState(false);
  const test = useMutation(
    trpc.webhooks.sendTestEvent.mutationOptions({
      onSuccess: (d) => {
        onTestSent(d.id);
        return refresh();
      },
    }),
  );
  const toggle = useMutation(trpc.webhooks.updateSubscription.mutationOptions({ onSuccess: refresh }));
  const error = test.error ?? toggle.error;
  return (
    <div className="flex flex-col items-start gap-2 sm:items-end">
      <div className="flex flex-wrap gap-2">
        <Button
          variant="secondary"
          disabled={test.isPending || !sub.enabled}
          onClick={() => test.mutate({ subscription_id: sub.id })}
          title={sub.enabled ? undefined : "Enable the endpoint to send a test event"}
        >
          <Send /> Send test event
        </Button>
        <Button variant="secondary" disabled={toggle.isPending} onClick={() => toggle.mutate({ id: sub.id, enabled: !sub.enabled })}>
          {sub.enabled ? "Disable" : "Enable"}
        </Button>
        <Button
          variant="secondary"
          onClick={() => {
            void refresh(); // the pending count the warning names
            setDeleting(true);
          }}
        >
          <Trash2 /> Delete
        </Button>
      </div>
      {error ? (
        <p role="alert" className="text-sm text-red-700">
          {describeError(error).message}
        </p>
      ) : null}
      {deleting ? (
        <ConfirmDialog
          title="Delete this endpoint?"
          description={
            <>
              No more events will be sent to <code className="break-all font-mono text-xs">{sub.url}</code>.{" "}
              {sub.pending_deliveries > 0 ? (
                <strong className="text-red-700" data-testid="pending-warning">
                  {sub.pending_deliveries} pending deliver{sub.pending_deliveries === 1 ? "y" : "ies"} will be dropped and never sent.
                </strong>
              ) : (
                <span data-testid="pending-warning">No delivery is pending.</span>
              )}{" "}
              This cannot be undone.
            </>
          }
          confirmLabel="Delete endpoint"
          mutation={trpc.webhooks.deleteSubscription.mutationOptions()}
          variables={{ id: sub.id }}
          onClose={() => setDeleting(false)}
          onDone={() => router.push("/dashboard/webhooks")}
        />
      ) : null}
    </div>
  );
}

/** The test event's delivery, polled until its first attempt is recorded. */
function TestEventResult({ deliveryId }: { deliveryId: string }) {
  const trpc = useTRPC();
  const delivery = useQuery({
    ...trpc.webhooks.getDelivery.queryOptions({ id: deliveryId }),
    refetchInterval: (q) => (q.state.data && q.state.data.attempts.length > 0 ? false : 700),
  });
  const d = delivery.data;
  const waiting = !d || d.attempts.length === 0;
  return (
    <Card className="mb-6 p-4" data-testid="test-result" data-state={waiting ? "sending" : d.state} aria-live="polite">
      <h2 className="mb-1 text-sm font-semibold text-slate-900">Test event</h2>
      {delivery.error ? (
        <p className="text-sm text-red-700">{describeError(delivery.error).message}</p>
      ) : waiting ? (
        <p className="text-sm text-slate-700">
          Sending <code className="font-mono text-xs">webhook.test</code>…
        </p>
      ) : (
        <DeliveryOutcome delivery={d} />
      )}
    </Card>
  );
}

function SettingsForm({ sub }: { sub: Subscription }) {
  const trpc = useTRPC();
  const refresh = useRefreshEndpoint();
  const { canManage } = useAccount();
  const urlHint = useUrlHint();
  const [url, setUrl] = useState(sub.url);
  const [description, setDescription] = useState(sub.description ?? "");
  const [events, setEvents] = useState<string[]>(sub.events);
  const [rate, setRate] = useState(String(sub.max_deliveries_per_second));
  const form = useFormErrors();
  const save = useMutation(trpc.webhooks.updateSubscription.mutationOptions({ onSuccess: refresh, onError: form.failFromServer }));

  function submit(e: FormEvent) {
    e.preventDefault();
    save.reset();
    const { data, errors } = validate(updateSubscriptionInput, {
      id: sub.id,
      url: url.trim(),
      events,
      description: description.trim() || null,
      max_deliveries_per_second: rate.trim() === "" ? undefined : Number(rate),
    });
    form.fail(errors);
    if (data) save.mutate(data);
  }

  return (
    <Card className="p-5">
      <h2 className="mb-4 text-sm font-semibold text-slate-900">Settings</h2>
      <form ref={form.ref} onSubmit={submit} className="space-y-5" noValidate aria-label="Endpoint settings">
        <Field label="Endpoint URL" error={form.errors.url} hint={urlHint}>
          {(id, d) => (
            <Input id={id} value={url} disabled={!canManage} onChange={(e) => setUrl(e.target.value)} aria-invalid={!!form.errors.url} aria-describedby={d} />
          )}
        </Field>
        <Field label="Description (optional)" error={form.errors.description}>
          {(id, d) => (
            <Input
              id={id}
              value={description}
              disabled={!canManage}
              onChange={(e) => setDescription(e.target.value)}
              aria-invalid={!!form.errors.description}
              aria-describedby={d}
            />
          )}
        </Field>
        <Field
          label="Max deliveries per second"
          error={form.errors.max_deliveries_per_second}
          hint="Deliveries above this rate wait their turn in order; they do not fail (1 to 1000)."
        >
          {(id, d) => (
            <Input
              id={id}
              type="number"
              inputMode="numeric"
              min={1}
              max={1000}
              value={rate}
              disabled={!canManage}
              onChange={(e) => setRate(e.target.value)}
              className="max-w-40"
              aria-invalid={!!form.errors.max_deliveries_per_second}
              aria-describedby={d}
            />
          )}
        </Field>
        <EventPicker value={events} onChange={setEvents} error={form.errors.events} disabled={!canManage} />
        <FormError message={form.formError} />
        {canManage ? (
          <div className="flex items-center justify-end gap-3">
            {save.isSuccess ? (
              <p className="text-sm text-emerald-800" role="status">
                Saved.
              </p>
            ) : null}
            <Button type="submit" disabled={save.isPending}>
              {save.isPending ? "Saving…" : "Save changes"}
            </Button>
          </div>
        ) : null}
      </form>
    </Card>
  );
}

function SecretCard({ sub }: { sub: Subscription }) {
  const trpc = useTRPC();
  const refresh = useRefreshEndpoint();
  const { canManage } = useAccount();
  const [rolling, setRolling] = useState(false);
  const [rolled, setRolled] = useState<RouterOutputs["webhooks"]["rollSecret"] | null>(null);
  return (
    <Card className="p-5">
      <h2 className="mb-2 text-sm font-semibold text-slate-900">Signing secret</h2>
      <p className="text-sm text-slate-700">
        Starts with{" "}
        <code className="font-mono text-xs" data-testid="secret-prefix">
          {sub.secret_prefix}…
        </code>
        ; the whole secret was shown once, when it was made.
      </p>
      {sub.previous_secret_expires_at ? (
        <p className="mt-2 text-sm text-slate-700" data-testid="previous-secret">
          The previous secret also signs until {formatDateTime(sub.previous_secret_expires_at)}.
        </p>
      ) : null}
      <p className="mt-2 text-xs text-slate-600">
        Verify <code className="font-mono">x-webhook-signature</code> (HMAC-SHA256 of the raw body) or the Standard Webhooks{" "}
        <code className="font-mono">webhook-signature</code> header.
      </p>
      {canManage ? (
        <Button className="mt-4" variant="secondary" onClick={() => setRolling(true)}>
          <KeyRound /> Roll secret
        </Button>
      ) : null}
      {rolling ? (
        <ConfirmDialog
          title="Roll the signing secret?"
          description={
            <>
              A new secret signs every delivery from now on. The current one keeps signing beside it for 24 hours, so you can switch your endpoint over without
              missing a delivery.
            </>
          }
          confirmLabel="Roll secret"
          mutation={trpc.webhooks.rollSecret.mutationOptions({ onSuccess: refresh })}
          variables={{ id: sub.id }}
          onClose={() => setRolling(false)}
          onDone={(data) => {
            setRolling(false);
            setRolled(data);
          }}
        />
      ) : null}
      {rolled ? (
        <Dialog open onOpenChange={(open) => !open && setRolled(null)} title="New signing secret">
          <div className="space-y-3">
            <p className="text-sm text-slate-600">
              Deliveries now carry a signature for each secret until {formatDateTime(rolled.previous_secret_expires_at ?? new Date().toISOString())}; after
              that, only this one.
            </p>
            <SecretOnce value={rolled.secret} what="signing secret" />
          </div>
        </Dialog>
      ) : null}
    </Card>
  );
}

/**
 * Why deliveries are not going out: disabled by the platform after failing too long (with when, and
 * that enabling resumes where it stopped), or a breaker open (only probes are sent until one succeeds).
 */
function EndpointHealth({ sub }: { sub: Subscription }) {
  if (sub.disabled_reason === "endpoint_failing") {
    return (
      <div role="alert" data-testid="endpoint-auto-disabled" className="mb-4 rounded-md border border-red-200 bg-red-50 px-3 py-2 text-sm text-red-900">
        <p className="font-medium">Disabled automatically{sub.disabled_at ? ` on ${formatDateTime(sub.disabled_at)}` : ""}</p>
        <p>
          Every delivery to this URL failed{sub.failing_since ? ` since ${formatDateTime(sub.failing_since)}` : ""}
          {sub.last_success_at ? ` (last success ${formatDateTime(sub.last_success_at)})` : " and none ever succeeded"}. New events are kept for it (
          {sub.pending_deliveries} waiting); fix the endpoint, then enable it to deliver them in order from where it stopped.
        </p>
      </div>
    );
  }
  if (sub.enabled && sub.circuit === "open") {
    return (
      <div role="status" data-testid="endpoint-circuit-open" className="mb-4 rounded-md border border-amber-200 bg-amber-50 px-3 py-2 text-sm text-amber-900">
        Its last attempts failed in a row{sub.failing_since ? ` (failing since ${formatDateTime(sub.failing_since)})` : ""}: one delivery at a time is sent as a
        probe now and then; the others wait in order without spending attempts, and all resume once a probe succeeds.
      </div>
    );
  }
  return null;
}
