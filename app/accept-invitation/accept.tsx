"use client";
// The page an invitation link opens: `/accept-invitation#secret=<secret>`. The secret is read from the
// fragment (never sent to a server with the page) and sent only in POST bodies. Someone without an
// account chooses a name and password (the platform's procedure creates the account and the
// membership together); someone with one signs in and accepts with the same secret. Either way they
// land in the tenant's dashboard.
import { useState, useSyncExternalStore, type FormEvent, type ReactNode } from "react";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useMutation, useQuery } from "@tanstack/react-query";
import { UserPlus } from "lucide-react";
import { acceptWithNewAccountInput } from "@/server/dashboard/dashboard.types";
import { authClient } from "../_lib/auth-client";
import { describeError, TrpcProviders, useTRPC, useTRPCClient } from "../_lib/trpc";
import { useFormErrors, validate } from "../_lib/form";
import { Button } from "../_ui/button";
import { Field, FormError, Input } from "../_ui/field";
import { Card, ErrorState, LoadingState } from "../_ui/surface";

const onHashChange = (notify: () => void) => {
  window.addEventListener("hashchange", notify);
  return () => window.removeEventListener("hashchange", notify);
};
const secretOfHash = () => new URLSearchParams(window.location.hash.replace(/^#/, "")).get("secret") ?? "";

/** The link's secret: "" when the link has none, undefined until the browser has read it (first render). */
const useLinkSecret = (): string | undefined => useSyncExternalStore(onHashChange, secretOfHash, () => undefined);

export function AcceptInvitation() {
  return (
    <TrpcProviders>
      <main className="flex min-h-dvh items-center justify-center bg-slate-50 px-4 py-10">
        <Card className="w-full max-w-md p-6 sm:p-8">
          <InvitationBody />
        </Card>
      </main>
    </TrpcProviders>
  );
}

const CLOSED: Record<string, string> = {
  expired: "This invitation has expired. Ask the person who invited you to send it again.",
  accepted: "This invitation has already been accepted. Sign in to open the dashboard.",
  canceled: "This invitation was revoked. Ask the person who invited you for a new one.",
  rejected: "This invitation was declined. Ask the person who invited you for a new one.",
};

function InvitationBody() {
  const secret = useLinkSecret();
  const client = useTRPCClient();
  // describe is a POST (the secret stays out of URLs); a query here all the same: it changes nothing.
  const invitation = useQuery({
    queryKey: ["dashboard.invitation.describe", secret],
    queryFn: () => client.dashboard.invitation.describe.mutate({ secret: secret ?? "" }),
    enabled: !!secret,
    retry: false,
    staleTime: Number.POSITIVE_INFINITY,
  });
  if (secret === undefined) return <LoadingState />;
  if (!secret)
    return (
      <Heading title="No invitation in this link">
        <p className="text-sm text-slate-700">
          Open the full link from your invitation, or{" "}
          <Link className="font-medium text-indigo-700 underline" href="/sign-in">
            sign in
          </Link>
          .
        </p>
      </Heading>
    );
  if (invitation.isPending) return <LoadingState />;
  if (invitation.error)
    return (
      <Heading title="The invitation could not be loaded">
        <ErrorState message={describeError(invitation.error).message} onRetry={() => invitation.refetch()} />
        <BackToSignIn />
      </Heading>
    );
  const inv = invitation.data;
  if (inv.status === "not_found")
    return (
      <Heading title="Invitation not found">
        <p role="alert" className="rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900">
          This link does not open an invitation. Check that the whole link was copied; if the invitation was sent again, only the newest link works. Or ask for
          a new one.
        </p>
        <BackToSignIn />
      </Heading>
    );
  return (
    <Heading title={`Join ${inv.tenant_name}`}>
      <p className="mb-5 text-sm text-slate-700">
        You are invited as <strong>{inv.role}</strong>, with the address{" "}
        <strong className="break-all" data-testid="invited-email">
          {inv.email}
        </strong>
        .
      </p>
      {inv.status !== "pending" ? (
        <>
          <p role="alert" className="rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900">
            {CLOSED[inv.status]}
          </p>
          <BackToSignIn />
        </>
      ) : inv.has_account ? (
        <SignInAndAccept secret={secret} email={inv.email!} />
      ) : (
        <CreateAccountAndJoin secret={secret} email={inv.email!} />
      )}
    </Heading>
  );
}

function Heading({ title, children }: { title: string; children: ReactNode }) {
  return (
    <>
      <div className="mb-4 flex items-center gap-2">
        <span className="grid size-9 place-items-center rounded-lg bg-indigo-600 text-white">
          <UserPlus className="size-5" aria-hidden />
        </span>
        <h1 className="text-lg font-semibold text-slate-900">{title}</h1>
      </div>
      {children}
    </>
  );
}

const BackToSignIn = () => (
  <p className="mt-4 text-sm">
    <Link className="font-medium text-indigo-700 underline" href="/sign-in">
      Go to sign in
    </Link>
  </p>
);

function CreateAccountAndJoin({ secret, email }: { secret: string; email: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [name, setName] = useState("");
  const [password, setPassword] = useState("");
  const form = useFormErrors();
  const join = useMutation(
    trpc.dashboard.invitation.acceptWithNewAccount.mutationOptions({
      onSuccess: async () => {
        const { error } = await authClient.signIn.email({ email, password });
        if (error) form.fail({ _form: `Your account is ready, but signing in failed (${error.message ?? error.status}). Sign in from the sign-in page.` });
        else router.replace("/dashboard");
      },
      onError: form.failFromServer,
    }),
  );
  function submit(e: FormEvent) {
    e.preventDefault();
    const { data, errors } = validate(acceptWithNewAccountInput, { secret, name, password });
    form.fail(errors);
    if (data) join.mutate(data);
  }
  return (
    <form ref={form.ref} onSubmit={submit} noValidate className="space-y-4">
      <p className="text-sm text-slate-700">Create your account to join.</p>
      <Field label="Your name" error={form.errors.name}>
        {(fid, d) => (
          <Input id={fid} autoComplete="name" value={name} onChange={(e) => setName(e.target.value)} aria-invalid={!!form.errors.name} aria-describedby={d} />
        )}
      </Field>
      <Field label="Choose a password" error={form.errors.password} hint="At least 8 characters.">
        {(fid, d) => (
          <Input
            id={fid}
            type="password"
            autoComplete="new-password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            aria-invalid={!!form.errors.password}
            aria-describedby={d}
          />
        )}
      </Field>
      <FormError message={form.formError ?? form.errors.secret ?? null} />
      <Button type="submit" className="w-full" disabled={join.isPending || !form.ready}>
        {join.isPending ? "Joining…" : "Create account and join"}
      </Button>
    </form>
  );
}

function SignInAndAccept({ secret, email }: { secret: string; email: string }) {
  const router = useRouter();
  const client = useTRPCClient();
  const [password, setPassword] = useState("");
  const [pending, setPending] = useState(false);
  const form = useFormErrors();
  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!password) return form.fail({ password: "enter your password" });
    setPending(true);
    const signedIn = await authClient.signIn.email({ email, password });
    if (signedIn.error) {
      setPending(false);
      return form.fail(
        signedIn.error.status === 429
          ? { _form: "Too many sign-in attempts. Wait a minute and try again." }
          : { password: signedIn.error.message ?? "sign-in failed" },
      );
    }
    try {
      // Joins and makes the tenant the session's active one.
      await client.dashboard.invitation.accept.mutate({ secret });
    } catch (err) {
      setPending(false);
      return form.fail({ _form: describeError(err).message });
    }
    router.replace("/dashboard");
  }
  return (
    <form ref={form.ref} onSubmit={submit} noValidate className="space-y-4">
      <p className="text-sm text-slate-700">You already have an account: sign in to accept.</p>
      <Field label="Email">{(fid) => <Input id={fid} type="email" value={email} readOnly autoComplete="username" />}</Field>
      <Field label="Password" error={form.errors.password}>
        {(fid, d) => (
          <Input
            id={fid}
            type="password"
            autoComplete="current-password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            aria-invalid={!!form.errors.password}
            aria-describedby={d}
          />
        )}
      </Field>
      <FormError message={form.formError} />
      <Button type="submit" className="w-full" disabled={pending || !form.ready}>
        {pending ? "Joining…" : "Sign in and accept"}
      </Button>
    </form>
  );
}
