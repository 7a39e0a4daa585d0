"use client";
import { useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { describeError, useTRPC } from "../../_lib/trpc";
import { useFormErrors } from "../../_lib/form";
import { ROLES } from "@/server/dashboard/dashboard.types";
import { ConfirmDialog, Dialog, DialogFormActions } from "../../_ui/dialog";
import { Field, Select } from "../../_ui/field";
import { Badge, Card, EmptyState, ErrorState, LoadingState, PageHeader, RowActions, Table } from "../../_ui/surface";
import { formatDateTime } from "../../_lib/format";
import { READ_ONLY_HINT, useAccount } from "../account";

import { InvitationTable, InviteForm, mayManage, type Member, ROLE_HELP, type Role, type Sent, SentNotice } from "./invitations";

export default function MembersPage() {
  const trpc = useTRPC();
  const { canManage } = useAccount();
  const members = useQuery(trpc.dashboard.members.list.queryOptions());
  const [sent, setSent] = useState<Sent | null>(null);
  return (
    <>
      <PageHeader
        title="Members"
        description="People who can sign in to this tenant. Owners manage everyone; admins manage keys, integrations and members; members can only look."
      />
      {canManage ? <InviteForm onSent={setSent} /> : <p className="mb-4 rounded-md bg-slate-100 px-3 py-2 text-sm text-slate-700">{READ_ONLY_HINT}</p>}
      {sent ? <SentNotice sent={sent} onDismiss={() => setSent(null)} /> : null}
      {members.isPending ? (
        <Card>
          <LoadingState />
        </Card>
      ) : members.error ? (
        <Card>
          <ErrorState message={describeError(members.error).message} onRetry={() => members.refetch()} />
        </Card>
      ) : (
        <>
          <MemberTable members={members.data.members} />
          <InvitationTable invitations={members.data.invitations} onSent={setSent} />
        </>
      )}
    </>
  );
}

function MemberTable({ members }: { members: Member[] }) {
  const trpc = useTRPC();
  const { role: myRole, user } = useAccount();
  const [changing, setChanging] = useState<Member | null>(null);
  const [removing, setRemoving] = useState<Member | null>(null);
  const owners = members.filter((m) => m.role === "owner").length;
  const isLastOwner = (m: Member) => m.role === "owner" && owners <= 1;
  return (
    <Card className="mb-6">
      <h2 className="border-b border-slate-200 px-4 py-3 text-sm font-semibold text-slate-900">Members ({members.length})</h2>
      {members.length === 0 ? (
        <EmptyState title="No members" />
      ) : (
        <Table columns={["Email", "Name", "Role", "Since"]} actions>
          {members.map((m) => (
            <tr key={m.id} data-testid="member-row">
              <td className="font-medium text-slate-900">
                {m.email}
                {m.user_id === user.id ? <span className="ml-1 text-xs font-normal text-slate-600">(you)</span> : null}
              </td>
              <td className="text-slate-700">{m.name}</td>
              <td>
                <Badge tone={m.role === "owner" ? "info" : "neutral"} data-testid="member-role">
                  {m.role}
                </Badge>
              </td>
              <td className="whitespace-nowrap text-slate-600">{formatDateTime(m.created_at)}</td>
              <RowActions
                actions={
                  mayManage(myRole, m.role)
                    ? [
                        { label: "Change role", id: `role-${m.id}`, onClick: () => setChanging(m) },
                        {
                          label: "Remove",
                          id: `remove-${m.id}`,
                          disabled: isLastOwner(m),
                          title: isLastOwner(m) ? "The only owner cannot be removed" : undefined,
                          onClick: () => setRemoving(m),
                        },
                      ]
                    : []
                }
              />
            </tr>
          ))}
        </Table>
      )}
      {changing ? <ChangeRoleDialog member={changing} lastOwner={isLastOwner(changing)} onClose={() => setChanging(null)} /> : null}
      {removing ? (
        <ConfirmDialog
          title={`Remove ${removing.email}?`}
          description="They lose access to this tenant on their next request. Their account stays; you can invite them again later."
          confirmLabel="Remove member"
          mutation={trpc.dashboard.members.remove.mutationOptions()}
          variables={{ member_id: removing.id }}
          refresh={trpc.dashboard.members.list.queryKey()}
          onClose={() => setRemoving(null)}
        />
      ) : null}
    </Card>
  );
}

function ChangeRoleDialog({ member, lastOwner, onClose }: { member: Member; lastOwner: boolean; onClose: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { role: myRole } = useAccount();
  const [role, setRole] = useState<Role>(member.role as Role);
  const form = useFormErrors();
  const change = useMutation(
    trpc.dashboard.members.changeRole.mutationOptions({
      onSuccess: async () => {
        await queryClient.invalidateQueries({ queryKey: trpc.dashboard.members.list.queryKey() });
        onClose();
      },
      onError: (err) => {
        const e = describeError(err);
        // The server names member_id for rules about the person (last owner): the form's message then.
        if (e.field === "role") form.failFromServer(err);
        else form.fail({ _form: e.message });
      },
    }),
  );
  const choices = ROLES.filter((r) => r !== "owner" || myRole === "owner");
  return (
    <Dialog
      open
      onOpenChange={(open) => !open && onClose()}
      title={`Change the role of ${member.email}`}
      description="The new role applies from their next click."
    >
      <form
        ref={form.ref}
        className="space-y-5"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          change.mutate({ member_id: member.id, role });
        }}
      >
        <Field label="Role" error={form.errors.role}>
          {(id, d) => (
            <Select
              id={id}
              value={role}
              onChange={(e) => setRole(e.target.value as Role)}
              aria-invalid={!!form.errors.role}
              aria-describedby={d}
              autoFocus
              disabled={lastOwner}
            >
              {choices.map((r) => (
                <option key={r} value={r}>
                  {r} ({ROLE_HELP[r]})
                </option>
              ))}
            </Select>
          )}
        </Field>
        {lastOwner ? (
          <p className="rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900" data-testid="last-owner">
            This is the only owner. Make someone else an owner first; a tenant always keeps one.
          </p>
        ) : null}
        <DialogFormActions
          formError={form.formError}
          onCancel={onClose}
          pending={change.isPending}
          disabled={lastOwner || role === member.role}
          submitLabel="Save role"
          pendingLabel="Saving…"
        />
      </form>
    </Dialog>
  );
}
