"use client";
import { useEffect, useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Plug, Plus, Trash2 } from "lucide-react";
import { describeError, useTRPC } from "../../_lib/trpc";
import { validate, type FieldErrors } from "../../_lib/form";
import { setCrmConnectionInput, testCrmConnectionInput, updateCrmMappingInput } from "@/server/crm/crm.types";
import type { RouterOutputs } from "../../_lib/router-types";
import { CRM_PROVIDERS } from "@/server/crm/drivers/providers";
import { Button } from "../../_ui/button";
import { ConfirmDialog } from "../../_ui/dialog";
import { Field, FieldError, FormError, Input, Select } from "../../_ui/field";
import { Badge, Card, ErrorState, LoadingState, PageHeader } from "../../_ui/surface";
import { formatDateTime } from "../../_lib/format";
import { READ_ONLY_HINT, useAccount } from "../account";

type Connection = NonNullable<RouterOutputs["crm"]["connection"]>;
type CrmConnectionTest = RouterOutputs["crm"]["testConnection"];

function fieldErrorHandler(setErrors: (e: FieldErrors) => void, setFormError: (m: string | null) => void) {
  return (err: unknown) => {
    const e = describeError(err);
    if (e.field) setErrors({ [e.field.split(/[.[]/)[0]]: e.message });
    else setFormError(e.message);
  };
}

export default function CrmPage() {
  const trpc = useTRPC();
  const { canManage } = useAccount();
  const connection = useQuery(trpc.crm.connection.queryOptions());
  return (
    <>
      <PageHeader
        title="CRM"
        description="Connect your CRM so POST /api/v1/crm/create-record can write records into it. Canonical field keys are translated to your CRM's keys by the mapping below."
      />
      {!canManage ? <p className="mb-4 rounded-md bg-slate-100 px-3 py-2 text-sm text-slate-700">{READ_ONLY_HINT}</p> : null}
      {connection.isPending ? (
        <Card>
          <LoadingState />
        </Card>
      ) : connection.error ? (
        <Card>
          <ErrorState message={describeError(connection.error).message} onRetry={() => connection.refetch()} />
        </Card>
      ) : (
        <div className="grid gap-6 lg:grid-cols-2">
          <ConnectionForm connection={connection.data} />
          {connection.data ? (
            <MappingEditor connection={connection.data} />
          ) : (
            <Card className="p-5 text-sm text-slate-600">
              <h2 className="mb-1 text-sm font-semibold text-slate-900">Field mapping</h2>
              Connect a CRM first; then map canonical keys (e.g. <code className="font-mono text-xs">email</code>) to the CRM&apos;s field names.
            </Card>
          )}
        </div>
      )}
    </>
  );
}

function ConnectionForm({ connection }: { connection: Connection | null }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { canManage } = useAccount();
  const [provider, setProvider] = useState<string>(connection?.provider ?? "http");
  const [baseUrl, setBaseUrl] = useState(connection?.base_url ?? "");
  const [token, setToken] = useState("");
  const [errors, setErrors] = useState<FieldErrors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [removing, setRemoving] = useState(false);
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.crm.connection.queryKey() });
  const save = useMutation(
    trpc.crm.setConnection.mutationOptions({
      onSuccess: () => {
        setToken("");
        test.reset();
        return refresh();
      },
      onError: fieldErrorHandler(setErrors, setFormError),
    }),
  );
  // A saved change makes an earlier test result stale.
  const test = useMutation(trpc.crm.testConnection.mutationOptions());

  function submit(e: FormEvent) {
    e.preventDefault();
    setFormError(null);
    const { data, errors } = validate(setCrmConnectionInput, { provider, base_url: baseUrl.trim(), token: token.trim() || undefined });
    setErrors(errors);
    if (data) save.mutate(data);
  }

  /** Tests what the form holds now, saved or not (an empty token field tests the stored token at the stored address). */
  function testForm() {
    setFormError(null);
    const { data, errors } = validate(testCrmConnectionInput, { provider, base_url: baseUrl.trim(), token: token.trim() || undefined });
    setErrors(errors);
    if (data) test.mutate(data);
  }

  return (
    <Card className="p-5">
      <div className="mb-4 flex items-center justify-between">
        <h2 className="text-sm font-semibold text-slate-900">Connection</h2>
        {!connection ? (
          <Badge>Not connected</Badge>
        ) : test.data ? (
          <Badge tone={test.data.ok ? "good" : "bad"}>{test.data.ok ? "Connection works" : "Connection test failed"}</Badge>
        ) : (
          <Badge tone="info">Saved · not tested</Badge>
        )}
      </div>
      <form onSubmit={submit} className="space-y-4" noValidate>
        <Field label="Provider" error={errors.provider}>
          {(id) => (
            <Select id={id} value={provider} disabled={!canManage} onChange={(e) => setProvider(e.target.value)}>
              {CRM_PROVIDERS.map((p) => (
                <option key={p} value={p}>
                  {p}
                </option>
              ))}
            </Select>
          )}
        </Field>
        <Field label="Base URL" error={errors.base_url}>
          {(id, d) => (
            <Input
              id={id}
              value={baseUrl}
              disabled={!canManage}
              onChange={(e) => setBaseUrl(e.target.value)}
              placeholder="https://api.hubapi.com"
              aria-invalid={!!errors.base_url}
              aria-describedby={d}
            />
          )}
        </Field>
        <Field
          label="API token"
          error={errors.token}
          hint={
            connection?.has_credentials
              ? "A token is stored. It is never shown; type a new one to replace it, or leave blank to keep it (a new provider or base URL needs the token again)."
              : "Stored encrypted and never shown again."
          }
        >
          {(id, d) => (
            <Input
              id={id}
              type="password"
              autoComplete="off"
              value={token}
              disabled={!canManage}
              onChange={(e) => setToken(e.target.value)}
              placeholder={connection?.has_credentials ? "••••••••••••" : ""}
              aria-invalid={!!errors.token}
              aria-describedby={d}
            />
          )}
        </Field>
        <FormError message={formError} />
        {canManage ? (
          <div className="flex flex-wrap justify-between gap-2">
            {connection ? (
              <Button variant="ghost" onClick={() => setRemoving(true)}>
                <Trash2 /> Disconnect
              </Button>
            ) : (
              <span />
            )}
            <Button type="submit" disabled={save.isPending}>
              {save.isPending ? "Saving…" : connection ? "Save connection" : "Connect"}
            </Button>
          </div>
        ) : null}
        {save.isSuccess ? (
          <p className="text-sm text-emerald-800" role="status">
            Saved. Test the connection to check the token and address.
          </p>
        ) : null}
      </form>
      {canManage ? <TestConnection test={test} onTest={testForm} saved={!!connection} /> : null}
      {removing ? (
        <ConfirmDialog
          title="Disconnect the CRM?"
          description="The connection, its stored token and the field mapping are deleted. create-record calls answer 409 until you connect again."
          confirmLabel="Disconnect"
          mutation={trpc.crm.deleteConnection.mutationOptions()}
          variables={undefined}
          refresh={trpc.crm.connection.queryKey()}
          onClose={() => setRemoving(false)}
          onDone={() => {
            setRemoving(false);
            setBaseUrl("");
            test.reset();
          }}
        />
      ) : null}
    </Card>
  );
}

const toRows = (m: Record<string, string>) => Object.entries(m).map(([canonical, crm]) => ({ canonical, crm }));

/** One harmless authenticated read with the stored token; the result stays on the page until the connection changes. */
function TestConnection({
  test,
  onTest,
  saved,
}: {
  test: { isPending: boolean; error: unknown; data?: CrmConnectionTest };
  onTest: () => void;
  saved: boolean;
}) {
  const r = test.data;
  return (
    <div className="mt-5 border-t border-slate-100 pt-4">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <p className="text-sm text-slate-700">
          Checks the provider, address and token in the form{saved ? "" : ", before you save them,"} with one read that changes nothing in your CRM.
        </p>
        <Button variant="secondary" disabled={test.isPending} onClick={onTest}>
          <Plug /> {test.isPending ? "Testing…" : "Test connection"}
        </Button>
      </div>
      <div aria-live="polite">
        {test.error ? (
          <p role="alert" className="mt-3 text-sm text-red-700">
            {describeError(test.error).message}
          </p>
        ) : null}
        {r ? (
          <div
            className={`mt-3 rounded-md border px-3 py-2 text-sm ${r.ok ? "border-emerald-200 bg-emerald-50 text-emerald-900" : "border-red-200 bg-red-50 text-red-800"}`}
            data-testid="crm-test-result"
            data-outcome={r.outcome}
          >
            <p className="font-medium">
              {r.ok
                ? "Connection works"
                : r.outcome === "timeout"
                  ? "Timed out"
                  : r.outcome === "error_status"
                    ? `The CRM answered ${r.status_code}`
                    : "Could not connect"}
            </p>
            <p>{r.message}</p>
            <p className="mt-1 break-all font-mono text-xs opacity-80">
              {r.request} · {r.duration_ms} ms · {formatDateTime(r.tested_at)}
            </p>
          </div>
        ) : null}
      </div>
    </div>
  );
}

function MappingEditor({ connection }: { connection: Connection }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { canManage } = useAccount();
  const [rows, setRows] = useState(() => toRows(connection.field_mapping));
  const [errors, setErrors] = useState<FieldErrors>({});
  const [formError, setFormError] = useState<string | null>(null);
  useEffect(() => setRows(toRows(connection.field_mapping)), [connection.field_mapping]);
  const save = useMutation(
    trpc.crm.updateMapping.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.crm.connection.queryKey() }),
      onError: fieldErrorHandler(setErrors, setFormError),
    }),
  );

  function submit(e: FormEvent) {
    e.preventDefault();
    setFormError(null);
    const filled = rows.filter((r) => r.canonical.trim() || r.crm.trim());
    const dupes = filled.map((r) => r.canonical.trim()).filter((k, i, all) => all.indexOf(k) !== i);
    if (dupes.length) return setErrors({ field_mapping: `'${dupes[0]}' is mapped twice` });
    const mapping = Object.fromEntries(filled.map((r) => [r.canonical.trim(), r.crm.trim()]));
    const { data, errors } = validate(updateCrmMappingInput, { field_mapping: mapping });
    setErrors(errors);
    if (data) save.mutate(data);
  }

  return (
    <Card className="p-5">
      <h2 className="mb-1 text-sm font-semibold text-slate-900">Field mapping</h2>
      <p className="mb-4 text-xs text-slate-500">
        Canonical key (what your API calls send) → the CRM&apos;s field name. A key without a mapping is refused with a 400 naming it.
      </p>
      <form onSubmit={submit} noValidate className="space-y-2">
        <div className="grid grid-cols-[1fr_1fr_2rem] gap-2 text-xs font-medium uppercase tracking-wide text-slate-500">
          <span>Canonical key</span>
          <span>CRM field</span>
          <span />
        </div>
        {rows.map((r, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows are editable inputs with no identity of their own; a row is its position
          <div key={i} className="grid grid-cols-[1fr_1fr_2rem] gap-2" data-testid="mapping-row">
            <Input
              aria-label={`Canonical key ${i + 1}`}
              value={r.canonical}
              disabled={!canManage}
              onChange={(e) => setRows(rows.map((x, j) => (j === i ? { ...x, canonical: e.target.value } : x)))}
              className="font-mono"
            />
            <Input
              aria-label={`CRM field ${i + 1}`}
              value={r.crm}
              disabled={!canManage}
              onChange={(e) => setRows(rows.map((x, j) => (j === i ? { ...x, crm: e.target.value } : x)))}
              className="font-mono"
            />
            {canManage ? (
              <Button variant="ghost" size="icon" aria-label={`Remove mapping ${i + 1}`} onClick={() => setRows(rows.filter((_, j) => j !== i))}>
                <Trash2 />
              </Button>
            ) : (
              <span />
            )}
          </div>
        ))}
        {rows.length === 0 ? (
          <p className="py-4 text-center text-sm text-slate-500">No mappings yet.{canManage ? " Add one to start writing records." : ""}</p>
        ) : null}
        <FieldError message={errors.field_mapping} />
        <FormError message={formError} />
        {canManage ? (
          <div className="flex justify-between pt-2">
            <Button variant="secondary" size="sm" onClick={() => setRows([...rows, { canonical: "", crm: "" }])}>
              <Plus /> Add mapping
            </Button>
            <Button type="submit" size="sm" disabled={save.isPending}>
              {save.isPending ? "Saving…" : "Save mapping"}
            </Button>
          </div>
        ) : null}
        {save.isSuccess ? (
          <p className="text-sm text-emerald-700" role="status">
            Mapping saved.
          </p>
        ) : null}
      </form>
    </Card>
  );
}
