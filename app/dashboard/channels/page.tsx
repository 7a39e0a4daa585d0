"use client";
// Channels: the provider accounts the assistant talks through. Each connection shows the receiver
// URL to paste into the provider's console; owners and admins connect (credentials are write-only:
// typed once, stored encrypted, never shown again) and disconnect; members read.
import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Plus } from "lucide-react";
import { describeError, useTRPC } from "../../_lib/trpc";
import { humanMessage, useFormErrors, type FieldErrors } from "../../_lib/form";
import { connectChannelInput, CREDENTIAL_SCHEMAS } from "@/server/channels/channels.types";
import {
  ADDRESS_KIND,
  CHANNEL_PROVIDERS,
  CREDENTIAL_FIELDS,
  PROVIDER_CHANNELS,
  PROVIDER_LABELS,
  receiverPath,
  type ChannelProvider,
  type ConnectionChannel,
} from "@/server/channels/providers";
import { Button } from "../../_ui/button";
import { ConfirmDialog, Dialog, DialogFormActions } from "../../_ui/dialog";
import { Field, Input, Select } from "../../_ui/field";
import { CopyButton } from "../../_ui/copy-button";
import { Badge, Card, EmptyState, ErrorState, LoadingState, PageHeader, RowActions, Table } from "../../_ui/surface";
import { formatDateTime } from "../../_lib/format";
import { READ_ONLY_HINT, useAccount } from "../account";
import type { RouterOutputs } from "../../_lib/router-types";

type Connection = RouterOutputs["channels"]["list"]["data"][number];

const CHANNEL_LABELS: Record<ConnectionChannel, string> = { voice: "Voice", sms: "SMS", whatsapp: "WhatsApp" };

/** What to do with the receiver URL in each provider's console. */
const RECEIVER_HINT: Record<ChannelProvider, (channel: ConnectionChannel) => string> = {
  twilio: (channel) =>
    channel === "voice"
      ? "Twilio console → the number → Voice → “Call status changes” (POST)."
      : "Twilio console → the number (or WhatsApp sender) → Messaging → “A message comes in” (HTTP POST). Sends through Twilio report their status here too.",
  whatsapp_cloud: () => "Meta app → WhatsApp → Configuration → Callback URL, with the verify token you entered; subscribe to the “messages” field.",
  retell: () => "Retell dashboard → Webhooks: the account’s webhook URL (or the agent’s).",
  vapi: () =>
    "Vapi dashboard → the phone number’s Server URL, with an HMAC credential: the same secret key, SHA256, signature header x-vapi-signature, no timestamp, payload the body.",
};

/** This deployment's address as providers see it (PUBLIC_BASE_URL), else this page's own origin. */
function useReceiverBase(): { base: string; configured: boolean } {
  const trpc = useTRPC();
  const setting = useQuery(trpc.channels.receiverBaseUrl.queryOptions());
  const configured = setting.data?.public_base_url ?? null;
  return { base: configured ?? (typeof window === "undefined" ? "" : window.location.origin), configured: configured !== null };
}

export default function ChannelsPage() {
  const trpc = useTRPC();
  const { canManage } = useAccount();
  const connections = useQuery(trpc.channels.list.queryOptions({ limit: 100 }));
  const { base, configured } = useReceiverBase();
  const [connecting, setConnecting] = useState(false);
  const [removing, setRemoving] = useState<Connection | null>(null);
  const connectButton = (label: string) =>
    canManage ? (
      <Button onClick={() => setConnecting(true)}>
        <Plus /> {label}
      </Button>
    ) : null;

  return (
    <>
      <PageHeader
        title="Channels"
        description="The phone numbers and WhatsApp accounts customers reach you on. Connect a provider account, then paste its receiver URL into the provider's console so calls and messages arrive here."
        actions={connectButton("Connect a channel")}
      />
      {!canManage ? (
        <p className="mb-4 rounded-md bg-slate-100 px-3 py-2 text-sm text-slate-700" data-testid="read-only">
          {READ_ONLY_HINT}
        </p>
      ) : null}
      {!configured ? (
        <p className="mb-4 rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900" data-testid="public-url-hint">
          Receiver URLs below use this page&apos;s address. Providers must reach the public one: set <code className="font-mono text-xs">PUBLIC_BASE_URL</code>{" "}
          on the server (Twilio signs the exact URL it calls).
        </p>
      ) : null}
      <Card>
        {connections.isPending ? (
          <LoadingState />
        ) : connections.error ? (
          <ErrorState message={describeError(connections.error).message} onRetry={() => connections.refetch()} />
        ) : connections.data.data.length === 0 ? (
          <EmptyState title="No channels connected" action={connectButton("Connect your first channel")}>
            {canManage ? "Connect a Twilio number, a WhatsApp Cloud number or a voice assistant account." : "An owner or admin can connect one."}
          </EmptyState>
        ) : (
          <Table columns={["Provider", "Channel", "Address", "Receiver URL", "Status", "Connected"]} actions>
            {connections.data.data.map((c) => {
              const url = `${base}${receiverPath(c)}`;
              return (
                <tr key={c.id} data-testid="channel-row" data-connection-id={c.id}>
                  <td className="font-medium text-slate-900">{PROVIDER_LABELS[c.provider]}</td>
                  <td>{CHANNEL_LABELS[c.channel]}</td>
                  <td>
                    <code className="whitespace-nowrap font-mono text-xs text-slate-700">{c.address}</code>
                  </td>
                  <td>
                    <div className="flex min-w-[18rem] items-center gap-2">
                      <code className="break-all font-mono text-xs text-slate-700" data-testid="receiver-url" title={RECEIVER_HINT[c.provider](c.channel)}>
                        {url}
                      </code>
                      <CopyButton value={url} />
                    </div>
                  </td>
                  <td>{c.status === "active" ? <Badge tone="good">Active</Badge> : <Badge tone="warn">Disabled</Badge>}</td>
                  <td className="whitespace-nowrap text-slate-600">{formatDateTime(c.created_at)}</td>
                  <RowActions actions={canManage ? [{ label: "Disconnect", id: `disconnect-${c.id}`, onClick: () => setRemoving(c) }] : []} />
                </tr>
              );
            })}
          </Table>
        )}
      </Card>
      {connecting ? <ConnectDialog base={base} onClose={() => setConnecting(false)} /> : null}
      {removing ? (
        <ConfirmDialog
          title={`Disconnect ${removing.address}?`}
          description={
            <>
              {PROVIDER_LABELS[removing.provider]} requests to this {CHANNEL_LABELS[removing.channel]} address will be refused from now on, and its stored
              credentials are deleted. Conversations already received stay.
            </>
          }
          confirmLabel="Disconnect"
          mutation={trpc.channels.disconnect.mutationOptions()}
          variables={{ id: removing.id }}
          refresh={trpc.channels.list.queryKey()}
          onClose={() => setRemoving(null)}
        />
      ) : null}
    </>
  );
}

/** Client-side checks with the server's schemas; credential errors keyed `credentials.<name>`, like the server's. */
function checkConnection(provider: ChannelProvider, input: { channel: string; address: string; credentials: Record<string, string> }) {
  const errors: FieldErrors = {};
  const parsed = connectChannelInput.safeParse({ provider, ...input });
  if (!parsed.success) for (const issue of parsed.error.issues) errors[issue.path.map(String).join(".") || "_form"] ??= issue.message;
  if (!input.address.trim()) errors.address = "This field is required";
  const credentials = CREDENTIAL_SCHEMAS[provider].safeParse(input.credentials);
  if (!credentials.success) {
    for (const issue of credentials.error.issues) errors[["credentials", ...issue.path.map(String)].join(".")] ??= humanMessage(issue.message);
  }
  return errors;
}

function ConnectDialog({ base, onClose }: { base: string; onClose: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [provider, setProvider] = useState<ChannelProvider>("twilio");
  const [channel, setChannel] = useState<ConnectionChannel>("sms");
  const [address, setAddress] = useState("");
  const [credentials, setCredentials] = useState<Record<string, string>>({});
  const form = useFormErrors();
  const { errors } = form;
  const connect = useMutation(
    trpc.channels.connect.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.channels.list.queryKey() }),
      // The server names fields like `credentials.auth_token`: the error goes beside that input.
      onError: (err) => {
        const e = describeError(err);
        form.fail(e.field ? { [e.field]: e.message } : { _form: e.message });
      },
    }),
  );

  function chooseProvider(next: ChannelProvider) {
    setProvider(next);
    setChannel(PROVIDER_CHANNELS[next][0]!);
    setCredentials({});
    form.clear();
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    const trimmed = Object.fromEntries(
      Object.entries(credentials)
        .map(([k, v]) => [k, v.trim()])
        .filter(([, v]) => v),
    );
    const found = checkConnection(provider, { channel, address, credentials: trimmed });
    form.fail(found);
    if (Object.keys(found).length === 0) connect.mutate({ provider, channel, address: address.trim(), credentials: trimmed });
  }

  if (connect.data) {
    const url = `${base}${receiverPath(connect.data)}`;
    return (
      <Dialog open onOpenChange={(open) => !open && onClose()} title="Channel connected">
        <div className="space-y-4 text-sm text-slate-700">
          <p>Paste this receiver URL into {PROVIDER_LABELS[connect.data.provider]}:</p>
          <div className="flex items-center gap-2 rounded-md bg-slate-50 p-3">
            <code className="break-all font-mono text-xs" data-testid="new-receiver-url">
              {url}
            </code>
            <CopyButton value={url} />
          </div>
          <p className="text-slate-600">{RECEIVER_HINT[connect.data.provider](connect.data.channel)}</p>
          <p className="text-slate-600">The credentials are stored encrypted and are never shown again.</p>
          <div className="flex justify-end">
            <Button onClick={onClose}>Done</Button>
          </div>
        </div>
      </Dialog>
    );
  }

  return (
    <Dialog open onOpenChange={(open) => !open && onClose()} title="Connect a channel">
      <form ref={form.ref} onSubmit={submit} className="space-y-4" noValidate>
        <Field label="Provider" error={errors.provider}>
          {(id) => (
            <Select id={id} value={provider} onChange={(e) => chooseProvider(e.target.value as ChannelProvider)}>
              {CHANNEL_PROVIDERS.map((p) => (
                <option key={p} value={p}>
                  {PROVIDER_LABELS[p]}
                </option>
              ))}
            </Select>
          )}
        </Field>
        <Field label="Channel" error={errors.channel}>
          {(id) => (
            <Select id={id} value={channel} onChange={(e) => setChannel(e.target.value as ConnectionChannel)}>
              {PROVIDER_CHANNELS[provider].map((c) => (
                <option key={c} value={c}>
                  {CHANNEL_LABELS[c]}
                </option>
              ))}
            </Select>
          )}
        </Field>
        <Field
          label={ADDRESS_KIND[provider] === "phone_number_id" ? "Phone number ID" : "Phone number"}
          error={errors.address}
          hint={
            ADDRESS_KIND[provider] === "phone_number_id"
              ? "The phone_number_id from WhatsApp Manager (digits), not the phone number."
              : "The number customers reach, in international form, e.g. +97143001234."
          }
        >
          {(id, d) => (
            <Input
              id={id}
              value={address}
              onChange={(e) => setAddress(e.target.value)}
              aria-invalid={!!errors.address}
              aria-describedby={d}
              autoComplete="off"
            />
          )}
        </Field>
        {CREDENTIAL_FIELDS[provider].map((f) => {
          const key = `credentials.${f.name}`;
          return (
            <Field
              key={`${provider}-${f.name}`}
              label={f.label}
              error={errors[key] ?? (f === CREDENTIAL_FIELDS[provider][0] ? errors.credentials : undefined)}
              hint="Write-only: stored encrypted, never shown again."
            >
              {(id, d) => (
                <Input
                  id={id}
                  type="password"
                  autoComplete="off"
                  name={f.name}
                  value={credentials[f.name] ?? ""}
                  onChange={(e) => setCredentials((c) => ({ ...c, [f.name]: e.target.value }))}
                  aria-invalid={!!errors[key]}
                  aria-describedby={d}
                />
              )}
            </Field>
          );
        })}
        <DialogFormActions formError={form.formError} onCancel={onClose} pending={connect.isPending} submitLabel="Connect" pendingLabel="Connecting…" />
      </form>
    </Dialog>
  );
}
