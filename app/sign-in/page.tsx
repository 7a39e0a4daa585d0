"use client";
import { useState, type FormEvent } from "react";
import { useRouter } from "next/navigation";
import { KeyRound } from "lucide-react";
import { authClient } from "../_lib/auth-client";
import { useFormErrors } from "../_lib/form";
import { Button } from "../_ui/button";
import { Field, FormError, Input } from "../_ui/field";
import { Card } from "../_ui/surface";

export default function SignInPage() {
  const router = useRouter();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [pending, setPending] = useState(false);
  const form = useFormErrors();

  async function submit(e: FormEvent) {
    e.preventDefault();
    const missing = { ...(email.trim() ? {} : { email: "enter your email address" }), ...(password ? {} : { password: "enter your password" }) };
    form.fail(missing);
    if (Object.keys(missing).length) return;
    setPending(true);
    const { error } = await authClient.signIn.email({ email, password });
    setPending(false);
    if (error) {
      form.fail({ _form: error.status === 429 ? "Too many sign-in attempts. Wait a minute and try again." : (error.message ?? "Sign-in failed") });
      return;
    }
    router.replace("/dashboard");
  }

  return (
    <main className="flex min-h-dvh items-center justify-center bg-slate-50 px-4">
      <Card className="w-full max-w-sm p-6 sm:p-8">
        <div className="mb-6 flex items-center gap-2">
          <span className="grid size-9 place-items-center rounded-lg bg-indigo-600 text-white">
            <KeyRound className="size-5" />
          </span>
          <div>
            <h1 className="text-lg font-semibold text-slate-900">Sign in</h1>
            <p className="text-xs text-slate-600">Tenant dashboard</p>
          </div>
        </div>
        <form ref={form.ref} onSubmit={submit} className="space-y-4" noValidate>
          <Field label="Email" error={form.errors.email}>
            {(id, d) => (
              <Input
                id={id}
                type="email"
                autoComplete="username"
                required
                value={email}
                onChange={(e) => setEmail(e.target.value)}
                aria-invalid={!!form.errors.email}
                aria-describedby={d}
              />
            )}
          </Field>
          <Field label="Password" error={form.errors.password}>
            {(id, d) => (
              <Input
                id={id}
                type="password"
                autoComplete="current-password"
                required
                value={password}
                onChange={(e) => setPassword(e.target.value)}
                aria-invalid={!!form.errors.password}
                aria-describedby={d}
              />
            )}
          </Field>
          <FormError message={form.formError} />
          <Button type="submit" className="w-full" disabled={pending || !form.ready}>
            {pending ? "Signing in…" : "Sign in"}
          </Button>
        </form>
        <p className="mt-6 text-xs text-slate-600">
          No account yet? Ask an owner or admin of your team to invite you from Settings › Members; the invitation link lets you choose a password.
        </p>
      </Card>
    </main>
  );
}
