"use client";
import { useState, type FormEvent } from "react";
import { useInfiniteQuery, useQuery, useQueryClient } from "@tanstack/react-query";
import { Download, Search, X } from "lucide-react";
import { describeError, useTRPC } from "../../_lib/trpc";
import { useFormErrors, validate } from "../../_lib/form";
import { auditLogExportInput, type AuditFilter } from "@/server/audit/audit-log.types";
import { Button } from "../../_ui/button";
import { Field, FormError, Input, Select } from "../../_ui/field";
import { Badge, Card, EmptyState, ErrorState, LoadingState, PageHeader, Table } from "../../_ui/surface";
import { formatDateTime } from "../../_lib/format";

const ACTION_LABELS: Record<string, string> = {
  "api_key.issued": "Issued API key",
  "api_key.revoked": "Revoked API key",
  "webhook_subscription.created": "Created webhook subscription",
  "webhook_subscription.changed": "Changed webhook subscription",
  "webhook_subscription.deleted": "Deleted webhook subscription",
  "webhook_subscription.auto_disabled": "Disabled failing webhook endpoint",
  "delivery.replayed": "Replayed delivery",
  "crm_connection.changed": "Changed CRM connection",
  "member.invited": "Invited member",
  "member.joined": "Member joined",
  "member.added": "Added member",
  "member.role_changed": "Changed member role",
  "webhook_subscription.secret_rolled": "Rolled webhook secret",
  "member.invitation_resent": "Resent invitation",
  "member.invitation_revoked": "Revoked invitation",
  "member.removed": "Removed member",
  "channel_connection.changed": "Changed channel connection",
  "channel_connection.claimed_by_another_tenant": "Another tenant tried to connect this address",
  "channel_connection.claim_refused": "Address held by another tenant",
  "tenant.handoff_sla_changed": "Changed handoff SLA",
  "tenant.retention_changed": "Changed data retention",
};

function summary(details: Record<string, unknown>): string {
  return Object.entries(details)
    .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(", ") : typeof v === "object" && v !== null ? JSON.stringify(v) : String(v)}`)
    .join(" · ");
}

/** Short details read in the row; longer ones show their start and open in full (nothing is cut off for good). */
function AuditDetails({ details }: { details: Record<string, unknown> }) {
  const text = summary(details);
  if (text.length <= 120) return <span>{text}</span>;
  return (
    <details className="group" data-testid="audit-details">
      <summary className="cursor-pointer rounded focus-visible:outline-2 focus-visible:outline-indigo-500">
        <span className="group-open:hidden">{text.slice(0, 100)}… </span>
        <span className="font-medium text-indigo-700 underline">
          <span className="group-open:hidden">Show all</span>
          <span className="hidden group-open:inline">Hide</span>
        </span>
      </summary>
      <dl className="mt-1 space-y-1" data-testid="audit-details-full">
        {Object.entries(details).map(([k, v]) => (
          <div key={k}>
            <dt className="inline font-medium text-slate-800">{k}: </dt>
            <dd className="inline whitespace-pre-wrap">{typeof v === "object" && v !== null ? JSON.stringify(v, null, 2) : String(v)}</dd>
          </div>
        ))}
      </dl>
    </details>
  );
}

export default function AuditLogPage() {
  const trpc = useTRPC();
  const [filter, setFilter] = useState<AuditFilter>({});
  const log = useInfiniteQuery(
    trpc.dashboard.auditLog.list.infiniteQueryOptions({ limit: 50, ...filter }, { getNextPageParam: (last) => last.next_cursor ?? undefined }),
  );
  const entries = log.data?.pages.flatMap((p) => p.data) ?? [];
  const filtered = Object.values(filter).some(Boolean);

  return (
    <>
      <PageHeader
        title="Audit log"
        description="Who issued or revoked keys, changed webhook endpoints, members or the CRM connection, and resent deliveries. Newest first."
      />
      <Filters filter={filter} onApply={setFilter} />
      <Card className="min-w-0 overflow-hidden">
        {log.isPending ? (
          <LoadingState />
        ) : log.error ? (
          <ErrorState message={describeError(log.error).message} onRetry={() => log.refetch()} />
        ) : entries.length === 0 ? (
          filtered ? (
            <EmptyState title="No entry matches these filters">Clear the filters to see every entry.</EmptyState>
          ) : (
            <EmptyState title="Nothing recorded yet">Changes to API keys, webhooks and the CRM connection will appear here.</EmptyState>
          )
        ) : (
          <>
            <Table
              className="table-fixed"
              columns={[
                { label: "When", className: "w-[15%]" },
                { label: "Who", className: "w-[20%]" },
                { label: "What", className: "w-[18%]" },
                { label: "Target", className: "w-[15%]" },
                "Details",
              ]}
            >
              {entries.map((e) => (
                <tr key={e.id} data-testid="audit-row" className="align-top">
                  <td className="text-slate-600">{formatDateTime(e.created_at)}</td>
                  <td className="[overflow-wrap:anywhere]">
                    {e.actor_label ?? e.actor_type}
                    {e.actor_type !== "user" ? <Badge className="ml-2">{e.actor_type}</Badge> : null}
                  </td>
                  <td className="font-medium text-slate-900" title={e.action}>
                    {ACTION_LABELS[e.action] ?? e.action}
                  </td>
                  <td>
                    <code className="font-mono text-xs text-slate-600 [overflow-wrap:anywhere]">
                      {e.target_type}
                      {e.target_id ? ` ${e.target_id.slice(0, 8)}` : ""}
                    </code>
                  </td>
                  <td className="text-slate-600 [overflow-wrap:anywhere]">
                    <AuditDetails details={e.details} />
                  </td>
                </tr>
              ))}
            </Table>
            {log.hasNextPage ? (
              <div className="border-t border-slate-100 p-3 text-center">
                <Button variant="secondary" size="sm" disabled={log.isFetchingNextPage} onClick={() => log.fetchNextPage()}>
                  {log.isFetchingNextPage ? "Loading…" : "Load more"}
                </Button>
              </div>
            ) : null}
          </>
        )}
      </Card>
    </>
  );
}

/** Actor, action and date filters, applied together; the CSV export takes the same filters. */
function Filters({ filter, onApply }: { filter: AuditFilter; onApply: (f: AuditFilter) => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const actions = useQuery(trpc.dashboard.auditLog.actions.queryOptions());
  const [actor, setActor] = useState(filter.actor ?? "");
  const [action, setAction] = useState(filter.action ?? "");
  const [from, setFrom] = useState(filter.from ?? "");
  const [to, setTo] = useState(filter.to ?? "");
  const [exporting, setExporting] = useState(false);
  const [exported, setExported] = useState<string | null>(null);
  const form = useFormErrors();

  function read(): AuditFilter | null {
    const { data, errors } = validate(auditLogExportInput, {
      actor: actor.trim() || undefined,
      action: action || undefined,
      from: from || undefined,
      to: to || undefined,
    });
    form.fail(errors);
    return data ?? null;
  }
  function apply(e: FormEvent) {
    e.preventDefault();
    setExported(null);
    const next = read();
    if (next) onApply(next);
  }
  function clear() {
    setActor("");
    setAction("");
    setFrom("");
    setTo("");
    setExported(null);
    form.clear();
    onApply({});
  }
  async function exportCsv() {
    const next = read();
    if (!next) return;
    setExporting(true);
    try {
      const file = await queryClient.fetchQuery({ ...trpc.dashboard.auditLog.exportCsv.queryOptions(next), staleTime: 0 });
      const url = URL.createObjectURL(new Blob([file.csv], { type: "text/csv;charset=utf-8" }));
      const link = Object.assign(document.createElement("a"), { href: url, download: file.filename });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      setExported(
        `Exported ${file.rows} entr${file.rows === 1 ? "y" : "ies"}${file.truncated ? " (the newest 10,000; narrow the filters for older ones)" : ""}.`,
      );
    } catch (err) {
      form.failFromServer(err);
    } finally {
      setExporting(false);
    }
  }

  return (
    <Card className="mb-4 p-4">
      <form
        ref={form.ref}
        onSubmit={apply}
        noValidate
        aria-label="Filter the audit log"
        className="grid gap-3 sm:grid-cols-2 lg:grid-cols-[1.4fr_1.4fr_1fr_1fr_auto] lg:items-start"
      >
        <Field label="Actor" error={form.errors.actor} hint="Email, key name or cli">
          {(id, d) => (
            <Input
              id={id}
              value={actor}
              onChange={(e) => setActor(e.target.value)}
              placeholder="ann@company.com"
              aria-invalid={!!form.errors.actor}
              aria-describedby={d}
            />
          )}
        </Field>
        <Field label="Action" error={form.errors.action}>
          {(id, d) => (
            <Select id={id} value={action} onChange={(e) => setAction(e.target.value)} aria-describedby={d}>
              <option value="">Any action</option>
              {(actions.data ?? []).map((a) => (
                <option key={a} value={a}>
                  {ACTION_LABELS[a] ?? a}
                </option>
              ))}
            </Select>
          )}
        </Field>
        <Field label="From" error={form.errors.from}>
          {(id, d) => (
            <Input id={id} type="date" value={from} onChange={(e) => setFrom(e.target.value)} aria-invalid={!!form.errors.from} aria-describedby={d} />
          )}
        </Field>
        <Field label="To" error={form.errors.to}>
          {(id, d) => <Input id={id} type="date" value={to} onChange={(e) => setTo(e.target.value)} aria-invalid={!!form.errors.to} aria-describedby={d} />}
        </Field>
        <div className="flex flex-wrap gap-2 sm:col-span-2 lg:col-span-1 lg:pt-6">
          <Button type="submit">
            <Search /> Apply
          </Button>
          <Button variant="ghost" onClick={clear}>
            <X /> Clear
          </Button>
          <Button variant="secondary" disabled={exporting} onClick={exportCsv}>
            <Download /> {exporting ? "Exporting…" : "Export CSV"}
          </Button>
        </div>
      </form>
      <FormError message={form.formError} />
      {exported ? (
        <p role="status" className="mt-2 text-sm text-slate-700" data-testid="export-status">
          {exported}
        </p>
      ) : null}
    </Card>
  );
}
