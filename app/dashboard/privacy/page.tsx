"use client";
// Customers' data rights, for owners: download the whole tenant (JSON lines) and erase one customer
// behind a typed confirmation (the identifier typed again, or ERASE for a conversation id).
import { useState, type FormEvent } from "react";
import { useMutation } from "@tanstack/react-query";
import { Download, ShieldAlert } from "lucide-react";
import { describeError, useTRPC } from "../../_lib/trpc";
import type { ErasureResult } from "@/server/erasure/erasure.types";
import { Button, buttonVariants } from "../../_ui/button";
import { Field, FormError, Input, Select } from "../../_ui/field";
import { Card, PageHeader } from "../../_ui/surface";
import { useAccount } from "../account";

const OWNERS_ONLY = "Only an owner can export the tenant or erase a customer.";

export default function PrivacyPage() {
  const { role } = useAccount();
  const isOwner = role === "owner";
  return (
    <>
      <PageHeader
        title="Privacy"
        description="Your customers' data rights: take all of this tenant's data out, or erase one customer's personal data everywhere it is stored."
      />
      {!isOwner ? <p className="mb-4 rounded-md bg-slate-100 px-3 py-2 text-sm text-slate-700">{OWNERS_ONLY}</p> : null}
      <div className="grid gap-6 lg:grid-cols-2">
        <Card className="space-y-3 p-5">
          <h2 className="text-sm font-semibold text-slate-900">Export all data</h2>
          <p className="text-sm text-slate-600">
            One JSON line per record of every resource (conversations, messages, calls, leads, appointments, events, deliveries, audit log…). Secrets are never
            included. The file streams as it is written.
          </p>
          {isOwner ? (
            <a className={buttonVariants({ variant: "secondary" })} href="/api/dashboard/export" download>
              <Download /> Download export (.jsonl)
            </a>
          ) : null}
        </Card>
        {isOwner ? <EraseCustomer /> : null}
      </div>
    </>
  );
}

function EraseCustomer() {
  const trpc = useTRPC();
  const [by, setBy] = useState<"customer_identifier" | "conversation_id">("customer_identifier");
  const [value, setValue] = useState("");
  const [confirmation, setConfirmation] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<ErasureResult | null>(null);
  const erase = useMutation(trpc.privacy.erase.mutationOptions());
  const expected = by === "customer_identifier" ? value.trim() : "ERASE";
  const confirmed = value.trim() !== "" && confirmation.trim() === expected;

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!confirmed) return;
    setError(null);
    setResult(null);
    try {
      setResult(await erase.mutateAsync(by === "customer_identifier" ? { customer_identifier: value.trim() } : { conversation_id: value.trim() }));
      setValue("");
      setConfirmation("");
    } catch (err) {
      setError(describeError(err).message);
    }
  }

  return (
    <Card className="p-5">
      <form className="space-y-4" onSubmit={submit}>
        <h2 className="flex items-center gap-2 text-sm font-semibold text-slate-900">
          <ShieldAlert className="size-4 text-red-600" /> Erase a customer
        </h2>
        <p className="text-sm text-slate-600">
          Irreversible. Their name, phone, email, messages and transcripts, recordings, CSAT comments, and the same inside stored events and webhook logs are
          erased; ids, statuses and analytics stay. Integrators receive one <code className="font-mono text-xs">customer.erased</code> event.
        </p>
        <Field label="Find the customer by">
          {(id) => (
            <Select id={id} value={by} onChange={(e) => setBy(e.target.value as typeof by)}>
              <option value="customer_identifier">Phone number or email</option>
              <option value="conversation_id">Conversation id</option>
            </Select>
          )}
        </Field>
        <Field label={by === "customer_identifier" ? "Phone number or email" : "Conversation id"}>
          {(id, describedBy) => <Input id={id} aria-describedby={describedBy} value={value} onChange={(e) => setValue(e.target.value)} autoComplete="off" />}
        </Field>
        <Field label={`Type ${by === "customer_identifier" ? "the same phone number or email" : "ERASE"} to confirm`}>
          {(id, describedBy) => (
            <Input id={id} aria-describedby={describedBy} value={confirmation} onChange={(e) => setConfirmation(e.target.value)} autoComplete="off" />
          )}
        </Field>
        <FormError message={error} />
        <Button type="submit" variant="danger" disabled={!confirmed || erase.isPending}>
          {erase.isPending ? "Erasing…" : "Erase this customer"}
        </Button>
        {result ? (
          <p role="status" className="rounded-md bg-slate-100 px-3 py-2 text-sm text-slate-700" data-erasure-result>
            {result.status === "erased"
              ? `Erased: ${result.conversation_ids.length} conversation(s), ${result.message_ids.length} message(s), ${result.call_ids.length} call(s), ${result.lead_ids.length} lead(s), ${result.appointment_ids.length} appointment(s).`
              : result.status === "already_erased"
                ? "This conversation's customer was already erased."
                : "No record carries that identifier."}
          </p>
        ) : null}
      </form>
    </Card>
  );
}
