"use client";
import { useInfiniteQuery } from "@tanstack/react-query";
import { describeError, useTRPC } from "../../_lib/trpc";
import { Button } from "../../_ui/button";
import { Badge, Card, EmptyState, ErrorState, LoadingState, PageHeader, Table } from "../../_ui/surface";
import { formatDateTime } from "../../_ui/format";

const ACTION_LABELS: Record<string, string> = {
  "api_key.issued": "Issued API key",
  "api_key.revoked": "Revoked API key",
  "webhook_subscription.created": "Created webhook subscription",
  "webhook_subscription.changed": "Changed webhook subscription",
  "webhook_subscription.deleted": "Deleted webhook subscription",
  "delivery.replayed": "Replayed delivery",
  "crm_connection.changed": "Changed CRM connection",
  "member.invited": "Invited member",
  "member.joined": "Member joined",
  "member.added": "Added member",
  "member.role_changed": "Changed member role",
};

function summary(details: Record<string, unknown>): string {
  return Object.entries(details)
    .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(", ") : typeof v === "object" && v !== null ? JSON.stringify(v) : String(v)}`)
    .join(" · ");
}

export default function AuditLogPage() {
  const trpc = useTRPC();
  const log = useInfiniteQuery(
    trpc.dashboard.auditLog.list.infiniteQueryOptions({ limit: 50 }, { getNextPageParam: (last) => last.next_cursor ?? undefined }),
  );
  const entries = log.data?.pages.flatMap((p) => p.data) ?? [];

  return (
    <>
      <PageHeader title="Audit log" description="Who issued or revoked keys, changed webhook subscriptions or the CRM connection, and replayed deliveries. Newest first." />
      <Card>
        {log.isPending ? (
          <LoadingState />
        ) : log.error ? (
          <ErrorState message={describeError(log.error).message} onRetry={() => log.refetch()} />
        ) : entries.length === 0 ? (
          <EmptyState title="Nothing recorded yet">Changes to API keys, webhooks and the CRM connection will appear here.</EmptyState>
        ) : (
          <>
            <Table>
              <thead><tr><th>When</th><th>Who</th><th>What</th><th>Target</th><th>Details</th></tr></thead>
              <tbody>
                {entries.map((e) => (
                  <tr key={e.id} data-testid="audit-row">
                    <td className="whitespace-nowrap text-slate-600">{formatDateTime(e.created_at)}</td>
                    <td className="whitespace-nowrap">{e.actor_label ?? e.actor_type}{e.actor_type !== "user" ? <Badge className="ml-2">{e.actor_type}</Badge> : null}</td>
                    <td className="whitespace-nowrap font-medium text-slate-900">{ACTION_LABELS[e.action] ?? e.action}</td>
                    <td><code className="font-mono text-xs text-slate-600">{e.target_type}{e.target_id ? ` ${e.target_id.slice(0, 8)}` : ""}</code></td>
                    <td className="max-w-sm truncate text-slate-600" title={summary(e.details)}>{summary(e.details)}</td>
                  </tr>
                ))}
              </tbody>
            </Table>
            {log.hasNextPage ? (
              <div className="border-t border-slate-100 p-3 text-center">
                <Button variant="secondary" size="sm" disabled={log.isFetchingNextPage} onClick={() => log.fetchNextPage()}>{log.isFetchingNextPage ? "Loading…" : "Load more"}</Button>
              </div>
            ) : null}
          </>
        )}
      </Card>
    </>
  );
}
