"use client";
import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { describeError, useTRPC } from "../../_lib/trpc";
import { validate, type FieldErrors } from "../../_lib/form";
import { inviteMemberInput, ROLES } from "@/server/dashboard/dashboard.types";
import { Button } from "../../_ui/button";
import { Field, FormError, Input, Select } from "../../_ui/field";
import { Badge, Card, EmptyState, ErrorState, LoadingState, PageHeader, Table } from "../../_ui/surface";
import { formatDateTime } from "../../_ui/format";
import { READ_ONLY_HINT, useAccount } from "../account";

export default function MembersPage() {
  const trpc = useTRPC();
  const { canManage } = useAccount();
  const members = useQuery(trpc.dashboard.members.list.queryOptions());
  return (
    <>
      <PageHeader title="Members" description="People who can sign in to this tenant. Owners and admins manage keys, webhooks, the CRM connection and replays; members read." />
      {canManage ? <InviteForm /> : <p className="mb-4 rounded-md bg-slate-100 px-3 py-2 text-sm text-slate-700">{READ_ONLY_HINT}</p>}
      <Card>
        {members.isPending ? (
          <LoadingState />
        ) : members.error ? (
          <ErrorState message={describeError(members.error).message} onRetry={() => members.refetch()} />
        ) : (
          <Table>
            <thead><tr><th>Email</th><th>Name</th><th>Role</th><th>Since</th></tr></thead>
            <tbody>
              {members.data.members.map((m) => (
                <tr key={m.id}>
                  <td className="font-medium text-slate-900">{m.email}</td>
                  <td className="text-slate-600">{m.name}</td>
                  <td><Badge tone={m.role === "owner" ? "info" : "neutral"}>{m.role}</Badge></td>
                  <td className="text-slate-600">{formatDateTime(m.created_at)}</td>
                </tr>
              ))}
              {members.data.invitations.map((i) => (
                <tr key={i.id}>
                  <td className="text-slate-700">{i.email}</td>
                  <td><Badge tone="warn">invited</Badge></td>
                  <td><Badge>{i.role}</Badge></td>
                  <td className="text-slate-600">expires {formatDateTime(i.expires_at)}</td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
        {members.data && members.data.members.length === 0 ? <EmptyState title="No members" /> : null}
      </Card>
    </>
  );
}

function InviteForm() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<(typeof ROLES)[number]>("member");
  const [errors, setErrors] = useState<FieldErrors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const invite = useMutation(
    trpc.dashboard.members.invite.mutationOptions({
      onSuccess: () => {
        setEmail("");
        return queryClient.invalidateQueries({ queryKey: trpc.dashboard.members.list.queryKey() });
      },
      onError: (err) => {
        const e = describeError(err);
        if (e.field) setErrors({ [e.field]: e.message });
        else setFormError(e.message);
      },
    }),
  );
  function submit(e: FormEvent) {
    e.preventDefault();
    setFormError(null);
    const { data, errors } = validate(inviteMemberInput, { email, role });
    setErrors(errors);
    if (data) invite.mutate(data);
  }
  return (
    <Card className="mb-6 p-4 sm:p-5">
      <form onSubmit={submit} noValidate className="grid gap-4 sm:grid-cols-[1fr_10rem_auto] sm:items-start">
        <Field label="Invite by email" error={errors.email}>
          {(id, d) => <Input id={id} type="email" value={email} onChange={(e) => setEmail(e.target.value)} aria-invalid={!!errors.email} aria-describedby={d} placeholder="name@company.com" />}
        </Field>
        <Field label="Role" error={errors.role}>
          {(id) => (
            <Select id={id} value={role} onChange={(e) => setRole(e.target.value as (typeof ROLES)[number])}>
              {ROLES.map((r) => <option key={r} value={r}>{r}</option>)}
            </Select>
          )}
        </Field>
        <Button type="submit" className="sm:mt-6" disabled={invite.isPending}>{invite.isPending ? "Inviting…" : "Invite"}</Button>
      </form>
      <FormError message={formError} />
    </Card>
  );
}
