"use client";
// An endpoint's deliveries: state and event filters, the event id, the last code and the next
// attempt in the row, and per attempt the request sent (headers, body) and the response (code, body, duration).
import { useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ChevronDown, ChevronRight, RotateCcw } from "lucide-react";
import { describeError, useTRPC } from "../../../_lib/trpc";
import { Button } from "../../../_ui/button";
import { Select } from "../../../_ui/field";
import { Badge, Card, EmptyState, ErrorState, LoadingState } from "../../../_ui/surface";
import { formatDateTime } from "../../../_lib/format";
import { useAccount } from "../../account";
import { DELIVERY_STATES, type Delivery, type DeliveryState } from "@/server/webhooks/webhooks.types";
import { STATE_LABEL } from "../event-picker";

type Attempt = Delivery["attempts"][number];

const lastAttempt = (d: Delivery): Attempt | undefined => d.attempts[d.attempts.length - 1];
const codeText = (code: number | null) => (code === null ? "no answer" : `HTTP ${code}`);

/** An attempt the target rules refused before sending (its error starts so). */
const isRefusal = (error: string | null | undefined) => !!error?.startsWith("refused target:");

/** One line saying where a delivery stands: what the last attempt got, and what happens next. */
export function DeliveryOutcome({ delivery: d }: { delivery: Delivery }) {
  const last = lastAttempt(d);
  const problem = last?.error ?? null;
  const tone = STATE_LABEL[d.state];
  return (
    <div className="text-sm text-slate-800" data-testid="delivery-outcome">
      <Badge tone={tone.tone} data-testid="delivery-state">
        {tone.label}
      </Badge>{" "}
      {d.state === "delivered" ? (
        <>
          {codeText(d.last_status_code)}
          {last ? ` in ${last.duration_ms} ms` : ""} · {formatDateTime(d.delivered_at)}
        </>
      ) : null}
      {d.state === "retrying" ? (
        <>
          last {codeText(d.last_status_code)} · next attempt {formatDateTime(d.next_attempt_at)}
        </>
      ) : null}
      {d.state === "failed" ? (
        isRefusal(problem) ? (
          <>not sent: the target rules refused the endpoint (not retried; fix the URL or the setting, then resend)</>
        ) : (
          <>{codeText(d.last_status_code)}: not retried (a 4xx answer is final)</>
        )
      ) : null}
      {d.state === "dead_lettered" ? (
        <>
          {codeText(d.last_status_code)} after {d.attempt_count} attempts: the retries are used up; resend it when the endpoint is fixed
        </>
      ) : null}
      {d.state === "pending" ? <>queued{d.cycle > 1 ? ` (resent, cycle ${d.cycle})` : ""}</> : null}
      {problem && d.state !== "delivered" ? <span className="mt-1 block break-words text-red-700">{problem}</span> : null}
    </div>
  );
}

export function DeliveryLog({ subscriptionId }: { subscriptionId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { canManage } = useAccount();
  const [state, setState] = useState<DeliveryState | "">("");
  const [eventType, setEventType] = useState("");
  const [open, setOpen] = useState<string | null>(null);
  const eventTypes = useQuery(trpc.webhooks.eventTypes.queryOptions());
  const filter = { subscription_id: subscriptionId, limit: 50, ...(state ? { state } : {}), ...(eventType ? { event_type: eventType } : {}) };
  const deliveries = useQuery({
    ...trpc.webhooks.listDeliveries.queryOptions(filter),
    // Deliveries still to be tried change on their own (the worker runs in the background): keep polling.
    refetchInterval: (q) => (q.state.data?.data.some((d) => d.status === "pending") ? 1500 : 10_000),
  });
  const resend = useMutation(
    trpc.webhooks.replayDelivery.mutationOptions({
      onSuccess: () =>
        Promise.all([
          queryClient.invalidateQueries({ queryKey: trpc.webhooks.listDeliveries.queryKey() }),
          queryClient.invalidateQueries({ queryKey: trpc.webhooks.getSubscription.queryKey() }),
        ]),
    }),
  );

  return (
    <Card>
      <div className="flex flex-col gap-3 border-b border-slate-100 px-4 py-3 sm:flex-row sm:items-end sm:justify-between">
        <h2 className="text-sm font-semibold text-slate-900">Deliveries</h2>
        <div className="flex flex-wrap gap-3">
          <label className="text-xs font-medium text-slate-700">
            Status
            <Select value={state} onChange={(e) => setState(e.target.value as DeliveryState | "")} className="mt-1 w-40">
              <option value="">All</option>
              {DELIVERY_STATES.map((s) => (
                <option key={s} value={s}>
                  {STATE_LABEL[s].label}
                </option>
              ))}
            </Select>
          </label>
          <label className="text-xs font-medium text-slate-700">
            Event type
            <Select value={eventType} onChange={(e) => setEventType(e.target.value)} className="mt-1 w-52">
              <option value="">All</option>
              {[...(eventTypes.data ?? []), "webhook.test"].map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            </Select>
          </label>
        </div>
      </div>
      {resend.error ? (
        <p role="alert" className="px-4 pt-3 text-sm text-red-700">
          {describeError(resend.error).message}
        </p>
      ) : null}
      {deliveries.isPending ? (
        <LoadingState />
      ) : deliveries.error ? (
        <ErrorState message={describeError(deliveries.error).message} onRetry={() => deliveries.refetch()} />
      ) : deliveries.data.data.length === 0 ? (
        <EmptyState title={state || eventType ? "No delivery matches these filters" : "No deliveries yet"}>
          {state || eventType
            ? "Choose “All” to see every delivery."
            : canManage
              ? "Press “Send test event” to send one now."
              : "Deliveries appear here as events happen."}
        </EmptyState>
      ) : (
        <ul className="divide-y divide-slate-100">
          {deliveries.data.data.map((d) => (
            <li key={d.id} data-testid="delivery-row" data-status={d.status} data-state={d.state}>
              <div className="flex flex-wrap items-start gap-x-4 gap-y-2 p-4">
                <Button
                  variant="ghost"
                  size="icon"
                  aria-label={open === d.id ? "Hide attempts" : "Show attempts"}
                  aria-expanded={open === d.id}
                  onClick={() => setOpen(open === d.id ? null : d.id)}
                >
                  {open === d.id ? <ChevronDown /> : <ChevronRight />}
                </Button>
                <div className="min-w-0 flex-1 basis-56">
                  <p className="font-mono text-sm text-slate-900">{d.event_type}</p>
                  <p className="break-all font-mono text-xs text-slate-600" data-testid="event-id">
                    {d.event_id}
                  </p>
                </div>
                <div className="min-w-0 flex-[2] basis-64">
                  <DeliveryOutcome delivery={d} />
                </div>
                <div className="text-xs text-slate-700">
                  <p>
                    {d.attempt_count} attempt{d.attempt_count === 1 ? "" : "s"}
                    {d.cycle > 1 ? ` (cycle ${d.cycle})` : ""}
                  </p>
                  <p className="text-slate-600">{formatDateTime(d.created_at)}</p>
                </div>
                {canManage ? (
                  <Button variant="secondary" size="sm" disabled={resend.isPending} onClick={() => resend.mutate({ id: d.id })}>
                    <RotateCcw /> Resend
                  </Button>
                ) : null}
              </div>
              {open === d.id ? <AttemptList delivery={d} /> : null}
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}

function AttemptList({ delivery: d }: { delivery: Delivery }) {
  return (
    <ol className="space-y-3 bg-slate-50 px-4 py-3" data-testid="attempts">
      {[...d.attempts].reverse().map((a) => (
        <li key={a.id} className="rounded-md border border-slate-200 bg-white p-3 text-xs" data-testid="attempt">
          <div className="flex flex-wrap items-center gap-x-3 gap-y-1">
            <span className="font-medium text-slate-900">
              Attempt {a.attempt_number}
              {d.cycle > 1 || a.cycle > 1 ? ` · cycle ${a.cycle}` : ""}
            </span>
            <Badge tone={a.outcome === "delivered" ? "good" : a.outcome === "retry" ? "warn" : "bad"}>
              {a.outcome === "retry" ? "will retry" : a.outcome.replace("_", " ")}
            </Badge>
            {a.possible_repeat ? (
              <Badge tone="warn" data-testid="possible-repeat">
                possible repeat
              </Badge>
            ) : null}
            <span>{a.status_code === null ? (isRefusal(a.error) ? "not sent" : "no answer") : `status ${a.status_code}`}</span>
            <span>{a.duration_ms} ms</span>
            {a.engine ? <span data-testid="attempt-engine">{a.engine === "inngest" ? "via Inngest" : "via embedded worker"}</span> : null}
            <span className="text-slate-600">{formatDateTime(a.created_at)}</span>
          </div>
          {a.error ? (
            <p className="mt-1 break-words text-red-700" data-testid="attempt-error">
              {isRefusal(a.error) ? "Refused by the target rules: " : ""}
              {a.error}
            </p>
          ) : null}
          {a.possible_repeat ? (
            <p className="mt-1 text-slate-700">
              A worker stopped after starting this attempt and before recording it, so the endpoint may already have received this event: it was sent again with{" "}
              <code>webhook-possible-repeat: true</code>. Endpoints de-duplicate on <code>webhook-id</code>.
            </p>
          ) : null}
          <div className="mt-2 grid gap-3 lg:grid-cols-2">
            <section>
              <h3 className="mb-1 font-semibold text-slate-800">Request</h3>
              {a.request_headers ? (
                <dl className="mb-2 grid grid-cols-[minmax(0,auto)_minmax(0,1fr)] gap-x-3 gap-y-0.5 font-mono text-[11px]" data-testid="request-headers">
                  {Object.entries(a.request_headers).map(([name, value]) => (
                    <div key={name} className="contents">
                      <dt className="text-slate-600">{name}</dt>
                      <dd className="break-all text-slate-900">{value}</dd>
                    </div>
                  ))}
                </dl>
              ) : (
                <p className="mb-2 text-slate-600">Headers were not recorded for this attempt.</p>
              )}
              <Body text={a.request_body} testId="request-body" empty="Body not recorded." />
            </section>
            <section>
              <h3 className="mb-1 font-semibold text-slate-800">Response</h3>
              <p className="mb-1 text-slate-800">
                {a.status_code === null ? "No response" : `Status ${a.status_code}`} · {a.duration_ms} ms
              </p>
              <Body text={a.response_body} testId="response-body" empty="Empty body." />
            </section>
          </div>
        </li>
      ))}
      {d.attempts.length === 0 ? <li className="text-xs text-slate-600">No attempt yet.</li> : null}
    </ol>
  );
}

function Body({ text, testId, empty }: { text: string | null; testId: string; empty: string }) {
  if (!text) return <p className="text-slate-600">{empty}</p>;
  return (
    <pre
      className="max-h-48 overflow-auto whitespace-pre-wrap break-all rounded bg-slate-100 p-2 font-mono text-[11px] text-slate-800"
      data-testid={testId}
      // A scrollable region must be reachable by keyboard (axe: scrollable-region-focusable).
      // biome-ignore lint/a11y/noNoninteractiveTabindex: scrolling a long body needs focus
      tabIndex={0}
    >
      {prettyJson(text)}
    </pre>
  );
}

/** Indented when it parses (a body cut at its limit does not: shown as stored). */
function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
