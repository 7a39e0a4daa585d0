"use client";
// The members page's invitations: the invite form, the notice with the link just made (shown once: only
// its hash is stored, and a resend makes a new one), and the table of pending invitations.
import { useState, type FormEvent } from "react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { describeError, useTRPC } from "../../_lib/trpc";
import { useFormErrors, validate } from "../../_lib/form";
import { inviteMemberInput, ROLES } from "@/server/dashboard/dashboard.types";
import { Button } from "../../_ui/button";
import { ConfirmDialog } from "../../_ui/dialog";
import { Field, FormError, Input, Select } from "../../_ui/field";
import { CopyButton } from "../../_ui/copy-button";
import { Badge, Card, EmptyState, RowActions, Table } from "../../_ui/surface";
import { formatDateTime } from "../../_lib/format";
import { useAccount } from "../account";
import type { RouterOutputs } from "../../_lib/router-types";

export type Role = (typeof ROLES)[number];
export type Member = RouterOutputs["dashboard"]["members"]["list"]["members"][number];
type Invitation = RouterOutputs["dashboard"]["members"]["list"]["invitations"][number];
/** An invitation just sent (or sent again): what the page shows once. */
export type Sent = RouterOutputs["dashboard"]["members"]["invite"] & { resent?: boolean };

export const ROLE_HELP: Record<Role, string> = {
  owner: "everything, including other owners",
  admin: "keys, webhooks, integrations, members",
  member: "read only",
};

/** The role rules, as the server enforces them: owners manage everyone, admins manage members. */
export const mayManage = (myRole: string, target: string) => myRole === "owner" || (myRole === "admin" && target === "member");

export function InviteForm({ onSent }: { onSent: (sent: Sent) => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { role: myRole } = useAccount();
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("member");
  const form = useFormErrors();
  const invite = useMutation(
    trpc.dashboard.members.invite.mutationOptions({
      onSuccess: (data) => {
        setEmail("");
        onSent(data);
        return queryClient.invalidateQueries({ queryKey: trpc.dashboard.members.list.queryKey() });
      },
      onError: form.failFromServer,
    }),
  );
  function submit(e: FormEvent) {
    e.preventDefault();
    const { data, errors } = validate(inviteMemberInput, { email, role });
    form.fail(errors);
    if (data) invite.mutate(data);
  }
  return (
    <Card className="mb-6 p-4 sm:p-5">
      <h2 className="mb-3 text-sm font-semibold text-slate-900">Invite someone</h2>
      <form ref={form.ref} onSubmit={submit} noValidate className="grid gap-4 sm:grid-cols-[1fr_12rem_auto] sm:items-start">
        <Field label="Email" error={form.errors.email}>
          {(id, d) => (
            <Input
              id={id}
              type="email"
              autoComplete="off"
              value={email}
              onChange={(e) => setEmail(e.target.value)}
              aria-invalid={!!form.errors.email}
              aria-describedby={d}
              placeholder="name@company.com"
            />
          )}
        </Field>
        <Field label="Role" error={form.errors.role}>
          {(id, d) => (
            <Select id={id} value={role} onChange={(e) => setRole(e.target.value as Role)} aria-invalid={!!form.errors.role} aria-describedby={d}>
              {ROLES.filter((r) => r !== "owner" || myRole === "owner").map((r) => (
                <option key={r} value={r}>
                  {r} ({ROLE_HELP[r]})
                </option>
              ))}
            </Select>
          )}
        </Field>
        <Button type="submit" className="sm:mt-7" disabled={invite.isPending}>
          {invite.isPending ? "Inviting…" : "Invite"}
        </Button>
        <div className="sm:col-span-3">
          <FormError message={form.formError} />
        </div>
      </form>
    </Card>
  );
}

/** After an invite or a resend: the link to copy (shown this once), and whether an email went out. */
export function SentNotice({ sent, onDismiss }: { sent: Sent; onDismiss: () => void }) {
  return (
    <div role="status" className="mb-6 rounded-lg border border-emerald-200 bg-emerald-50 p-4 text-sm text-emerald-900" data-testid="invitation-sent">
      <p className="font-medium">
        {sent.resent ? "Invitation sent again" : "Invitation created"} for {sent.email}.
      </p>
      <p className="mt-1">
        {sent.email_sent
          ? "An email with this link is on its way. You can also send the link yourself:"
          : sent.email_error
            ? `The email could not be sent (${sent.email_error}). Send this link yourself:`
            : "No mail transport is set up, so no email was sent. Send this link yourself:"}
      </p>
      <p className="mt-1" data-testid="invitation-link-once">
        The link is shown only now. To get a new one later, resend the invitation (the previous link then stops working).
      </p>
      <div className="mt-2 flex flex-col gap-2 sm:flex-row sm:items-center">
        <code
          className="block min-w-0 flex-1 select-all break-all rounded-md bg-white px-3 py-2 font-mono text-xs text-slate-800 ring-1 ring-emerald-200"
          data-testid="invitation-link"
        >
          {sent.link}
        </code>
        <div className="flex gap-2">
          <CopyButton value={sent.link} label="Copy link" />
          <Button variant="ghost" size="sm" onClick={onDismiss}>
            Dismiss
          </Button>
        </div>
      </div>
    </div>
  );
}

/** The server's rule: owners and admins manage invitations, and only owners an owner's invitation. */
const mayManageInvitation = (myRole: string, role: string) => myRole === "owner" || (myRole === "admin" && role !== "owner");

export function InvitationTable({ invitations, onSent }: { invitations: Invitation[]; onSent: (sent: Sent) => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { role: myRole } = useAccount();
  const [revoking, setRevoking] = useState<Invitation | null>(null);
  const listKey = trpc.dashboard.members.list.queryKey();
  const resend = useMutation(
    trpc.dashboard.members.resendInvitation.mutationOptions({
      onSuccess: (data) => {
        onSent({ ...data, resent: true });
        return queryClient.invalidateQueries({ queryKey: listKey });
      },
    }),
  );
  return (
    <Card>
      <h2 className="border-b border-slate-200 px-4 py-3 text-sm font-semibold text-slate-900">Pending invitations ({invitations.length})</h2>
      {resend.error ? (
        <p role="alert" className="px-4 pt-3 text-sm text-red-700">
          {describeError(resend.error).message}
        </p>
      ) : null}
      {invitations.length === 0 ? (
        <EmptyState title="No pending invitations">Invitations you send show here until they are accepted or revoked.</EmptyState>
      ) : (
        <Table columns={["Email", "Role", "Expires"]} actions>
          {invitations.map((i) => (
            <tr key={i.id} data-testid="invitation-row">
              <td className="font-medium text-slate-900">{i.email}</td>
              <td>
                <Badge>{i.role}</Badge>
              </td>
              <td className="whitespace-nowrap text-slate-600">{i.expired ? <Badge tone="warn">expired</Badge> : formatDateTime(i.expires_at)}</td>
              <RowActions
                actions={
                  mayManageInvitation(myRole, i.role)
                    ? [
                        { label: "Resend", disabled: resend.isPending, onClick: () => resend.mutate({ invitation_id: i.id }) },
                        { label: "Revoke", id: `revoke-invitation-${i.id}`, onClick: () => setRevoking(i) },
                      ]
                    : []
                }
              />
            </tr>
          ))}
        </Table>
      )}
      {revoking ? (
        <ConfirmDialog
          title={`Revoke the invitation for ${revoking.email}?`}
          description="The link stops working at once. You can invite them again later."
          confirmLabel="Revoke invitation"
          mutation={trpc.dashboard.members.revokeInvitation.mutationOptions()}
          variables={{ invitation_id: revoking.id }}
          refresh={listKey}
          onClose={() => setRevoking(null)}
        />
      ) : null}
    </Card>
  );
}
