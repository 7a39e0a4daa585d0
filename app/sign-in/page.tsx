"use client";
import { useState, type FormEvent } from "react";
import { useRouter } from "next/navigation";
import { KeyRound } from "lucide-react";
import { authClient } from "../_lib/auth-client";
import { Button } from "../_ui/button";
import { Field, FormError, Input } from "../_ui/field";
import { Card } from "../_ui/surface";

export default function SignInPage() {
  const router = useRouter();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setPending(true);
    setError(null);
    const { error } = await authClient.signIn.email({ email, password });
    setPending(false);
    if (error) {
      setError(error.status === 429 ? "Too many sign-in attempts. Wait a minute and try again." : error.message ?? "Sign-in failed");
      return;
    }
    router.replace("/dashboard");
  }

  return (
    <main className="flex min-h-dvh items-center justify-center bg-slate-50 px-4">
      <Card className="w-full max-w-sm p-6 sm:p-8">
        <div className="mb-6 flex items-center gap-2">
          <span className="grid size-9 place-items-center rounded-lg bg-indigo-600 text-white"><KeyRound className="size-5" /></span>
          <div>
            <h1 className="text-lg font-semibold text-slate-900">Sign in</h1>
            <p className="text-xs text-slate-500">Tenant dashboard</p>
          </div>
        </div>
        <form onSubmit={submit} className="space-y-4" noValidate>
          <Field label="Email">
            {(id) => <Input id={id} type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />}
          </Field>
          <Field label="Password">
            {(id) => <Input id={id} type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />}
          </Field>
          <FormError message={error} />
          <Button type="submit" className="w-full" disabled={pending || !email || !password}>{pending ? "Signing in…" : "Sign in"}</Button>
        </form>
        <p className="mt-6 text-xs text-slate-500">No account? Ask your tenant&apos;s owner or an operator (<code>npm run cli -- user create</code>).</p>
      </Card>
    </main>
  );
}
