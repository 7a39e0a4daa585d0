"use client";
import { useId, useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Plus } from "lucide-react";
import { describeError, useTRPC } from "../../_lib/trpc";
import { useFormErrors, validate } from "../../_lib/form";
import type { RouterOutputs } from "../../_lib/router-types";
import { issueApiKeyInput } from "@/server/dashboard/dashboard.types";
import { SCOPES } from "@/server/auth/principal";
import { Button } from "../../_ui/button";
import { Checkbox } from "../../_ui/checkbox";
import { ConfirmDialog, Dialog, DialogFormActions } from "../../_ui/dialog";
import { Field, FieldError, Input } from "../../_ui/field";
import { SecretOnce } from "../../_ui/copy-button";
import { Badge, Card, EmptyState, ErrorState, LoadingState, PageHeader, RowActions, Table } from "../../_ui/surface";
import { formatDateTime } from "../../_lib/format";
import { READ_ONLY_HINT, useAccount } from "../account";

const SCOPE_HELP: Record<string, string> = {
  read: "Every GET endpoint",
  "leads:write": "Create, update and hand off leads",
  "appointments:write": "Create, reschedule, cancel, complete",
  "offerings:write": "Create and update offerings",
  "conversations:write": "Create, update, send messages",
  "crm:write": "Write records into the connected CRM",
  "webhooks:write": "Register, change, roll and delete webhook endpoints",
  "assistant:read": "Assistant access",
};

type ApiKey = RouterOutputs["dashboard"]["apiKeys"]["list"][number];

export default function ApiKeysPage() {
  const trpc = useTRPC();
  const { canManage } = useAccount();
  const keys = useQuery(trpc.dashboard.apiKeys.list.queryOptions());
  const [issuing, setIssuing] = useState(false);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);

  return (
    <>
      <PageHeader
        title="API keys"
        description="Keys let your own systems call the REST API under /api/v1. Each key belongs to this tenant and carries only the scopes you choose."
        actions={
          canManage ? (
            <Button onClick={() => setIssuing(true)}>
              <Plus /> Create key
            </Button>
          ) : null
        }
      />
      {!canManage ? (
        <p className="mb-4 rounded-md bg-slate-100 px-3 py-2 text-sm text-slate-700" data-testid="read-only">
          {READ_ONLY_HINT}
        </p>
      ) : null}
      <Card>
        {keys.isPending ? (
          <LoadingState />
        ) : keys.error ? (
          <ErrorState message={describeError(keys.error).message} onRetry={() => keys.refetch()} />
        ) : keys.data.length === 0 ? (
          <EmptyState
            title="No API keys yet"
            action={
              canManage ? (
                <Button onClick={() => setIssuing(true)}>
                  <Plus /> Create your first key
                </Button>
              ) : null
            }
          >
            {canManage ? "Create a key, copy it into your integration, and call /api/v1 with it as a Bearer token." : "An owner or admin can create one."}
          </EmptyState>
        ) : (
          <Table columns={["Name", "Key", "Scopes", "Created", "Last used", "Status"]} actions>
            {keys.data.map((k) => (
              <tr key={k.id} data-testid="api-key-row" data-key-id={k.id}>
                <td className="font-medium text-slate-900">{k.name}</td>
                <td>
                  <code className="whitespace-nowrap font-mono text-xs text-slate-700">
                    {k.prefix}…{k.last4}
                  </code>
                </td>
                <td>
                  <div className="flex max-w-xs flex-wrap gap-1">
                    {k.scopes.map((s) => (
                      <Badge key={s}>{s}</Badge>
                    ))}
                  </div>
                </td>
                <td className="whitespace-nowrap text-slate-600">{formatDateTime(k.created_at)}</td>
                <td className="whitespace-nowrap text-slate-600">{k.last_used_at ? formatDateTime(k.last_used_at) : "Never"}</td>
                <td>
                  {k.revoked_at ? (
                    <Badge tone="bad" title={formatDateTime(k.revoked_at)}>
                      Revoked
                    </Badge>
                  ) : (
                    <Badge tone="good">Active</Badge>
                  )}
                </td>
                <RowActions actions={canManage && !k.revoked_at ? [{ label: "Revoke", id: `revoke-${k.id}`, onClick: () => setRevoking(k) }] : []} />
              </tr>
            ))}
          </Table>
        )}
      </Card>
      {issuing ? <IssueKeyDialog onClose={() => setIssuing(false)} /> : null}
      {revoking ? (
        <ConfirmDialog
          title={`Revoke “${revoking.name}”?`}
          description={
            <>
              Requests with{" "}
              <code className="font-mono text-xs">
                {revoking.prefix}…{revoking.last4}
              </code>{" "}
              will get 401 from the next request on. This cannot be undone.
            </>
          }
          confirmLabel="Revoke key"
          mutation={trpc.dashboard.apiKeys.revoke.mutationOptions()}
          variables={{ id: revoking.id }}
          refresh={trpc.dashboard.apiKeys.list.queryKey()}
          onClose={() => setRevoking(null)}
        />
      ) : null}
    </>
  );
}

function IssueKeyDialog({ onClose }: { onClose: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<string[]>(["read"]);
  const form = useFormErrors();
  const scopesErrorId = useId();
  const { errors } = form;
  const issue = useMutation(
    trpc.dashboard.apiKeys.issue.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.dashboard.apiKeys.list.queryKey() }),
      onError: form.failFromServer,
    }),
  );

  function submit(e: FormEvent) {
    e.preventDefault();
    const { data, errors } = validate(issueApiKeyInput, { name, scopes });
    form.fail(errors);
    if (data) issue.mutate(data);
  }

  const toggle = (scope: string, on: boolean) => setScopes((s) => (on ? [...s, scope] : s.filter((x) => x !== scope)));

  return (
    <Dialog open onOpenChange={(open) => !open && onClose()} title={issue.data ? "Your new API key" : "Create an API key"}>
      {issue.data ? (
        <div className="space-y-4">
          <SecretOnce value={issue.data.plaintext} what="API key" />
          <p className="text-sm text-slate-600">
            Use it as <code className="font-mono text-xs">Authorization: Bearer &lt;key&gt;</code>.
          </p>
          <div className="flex justify-end">
            <Button onClick={onClose}>Done</Button>
          </div>
        </div>
      ) : (
        <form ref={form.ref} onSubmit={submit} className="space-y-5" noValidate>
          <Field label="Name" error={errors.name} hint="Where the key is used, e.g. “CRM sync”.">
            {(id, describedBy) => (
              <Input id={id} value={name} onChange={(e) => setName(e.target.value)} aria-invalid={!!errors.name} aria-describedby={describedBy} autoFocus />
            )}
          </Field>
          <fieldset data-field aria-invalid={errors.scopes ? true : undefined} aria-describedby={errors.scopes ? scopesErrorId : undefined}>
            <legend className="mb-2 text-sm font-medium text-slate-800">Scopes</legend>
            <FieldError id={scopesErrorId} message={errors.scopes} className="mb-2" />
            <div className="grid gap-3 sm:grid-cols-2">
              {SCOPES.map((scope) => (
                <Checkbox
                  key={scope}
                  label={scope}
                  description={SCOPE_HELP[scope]}
                  checked={scopes.includes(scope)}
                  onCheckedChange={(on) => toggle(scope, on)}
                />
              ))}
            </div>
          </fieldset>
          <DialogFormActions formError={form.formError} onCancel={onClose} pending={issue.isPending} submitLabel="Create key" pendingLabel="Creating…" />
        </form>
      )}
    </Dialog>
  );
}
