"use client";
import { useEffect, type ReactNode } from "react";
import Link from "next/link";
import { usePathname, useRouter } from "next/navigation";
import { useQuery } from "@tanstack/react-query";
import { BarChart3, Building2, KeyRound, LogOut, ScrollText, Users, Webhook } from "lucide-react";
import { describeError, useTRPC } from "../_lib/trpc";
import { authClient } from "../_lib/auth-client";
import { Button } from "../_ui/button";
import { cn } from "../_ui/cn";
import { Badge, ErrorState, LoadingState } from "../_ui/surface";
import { AccountContext } from "./account";
import { NotificationsBell } from "./notifications";

const NAV = [
  { href: "/dashboard/api-keys", label: "API keys", icon: KeyRound },
  { href: "/dashboard/webhooks", label: "Webhooks", icon: Webhook },
  { href: "/dashboard/crm", label: "CRM", icon: Building2 },
  { href: "/dashboard/analytics", label: "Analytics", icon: BarChart3 },
  { href: "/dashboard/audit-log", label: "Audit log", icon: ScrollText },
  { href: "/dashboard/members", label: "Members", icon: Users },
];

export function DashboardShell({ children }: { children: ReactNode }) {
  const trpc = useTRPC();
  const router = useRouter();
  const pathname = usePathname();
  const me = useQuery(trpc.dashboard.me.queryOptions());
  const failure = me.error ? describeError(me.error) : null;

  useEffect(() => {
    if (failure?.status === 401) router.replace("/sign-in");
  }, [failure?.status, router]);

  if (me.isPending || failure?.status === 401) return <div className="min-h-dvh bg-slate-50"><LoadingState /></div>;
  if (failure) return <div className="min-h-dvh bg-slate-50"><ErrorState message={failure.message} onRetry={() => me.refetch()} /></div>;
  const account = me.data!;

  async function signOut() {
    await authClient.signOut();
    router.replace("/sign-in");
  }

  return (
    <AccountContext.Provider value={account}>
      <div className="min-h-dvh bg-slate-50 lg:grid lg:grid-cols-[15rem_1fr]">
        <aside className="border-b border-slate-200 bg-white lg:sticky lg:top-0 lg:h-dvh lg:border-b-0 lg:border-r">
          <div className="flex items-center justify-between gap-2 px-4 py-3 lg:block lg:px-5 lg:py-5">
            <div className="min-w-0">
              <p className="truncate text-sm font-semibold text-slate-900" data-testid="tenant-name">{account.tenant.name}</p>
              <p className="truncate text-xs text-slate-500" title={account.user.email}>{account.user.email}</p>
              <Badge tone={account.role === "member" ? "neutral" : "info"} className="mt-1" data-testid="role">{account.role}</Badge>
            </div>
            <div className="flex items-center gap-1 lg:hidden">
              <NotificationsBell />
              <Button variant="ghost" size="icon" aria-label="Sign out" onClick={signOut}><LogOut /></Button>
            </div>
          </div>
          <nav aria-label="Dashboard" className="flex gap-1 overflow-x-auto px-2 pb-2 lg:flex-col lg:px-3">
            {NAV.map(({ href, label, icon: Icon }) => {
              const active = pathname?.startsWith(href);
              return (
                <Link
                  key={href}
                  href={href}
                  aria-current={active ? "page" : undefined}
                  className={cn(
                    "flex shrink-0 items-center gap-2 rounded-md px-3 py-2 text-sm font-medium",
                    active ? "bg-indigo-50 text-indigo-700" : "text-slate-700 hover:bg-slate-100",
                  )}
                >
                  <Icon className="size-4" /> {label}
                </Link>
              );
            })}
          </nav>
          <div className="hidden px-3 py-4 lg:absolute lg:bottom-0 lg:flex lg:w-full lg:items-center lg:justify-between">
            <NotificationsBell />
            <Button variant="ghost" size="sm" onClick={signOut}><LogOut /> Sign out</Button>
          </div>
        </aside>
        <main className="mx-auto w-full min-w-0 max-w-6xl px-4 py-6 sm:px-6 lg:px-10 lg:py-10">{children}</main>
      </div>
    </AccountContext.Provider>
  );
}
