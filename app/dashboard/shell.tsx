"use client";
import { useEffect, useState, type ReactNode } from "react";
import Link from "next/link";
import { usePathname, useRouter } from "next/navigation";
import { useQuery } from "@tanstack/react-query";
import { Dialog as DialogPrimitive } from "radix-ui";
import { ChevronRight, LogOut, Menu, X } from "lucide-react";
import { describeError, useTRPC } from "../_lib/trpc";
import { authClient } from "../_lib/auth-client";
import { Button } from "../_ui/button";
import { cn } from "../_ui/cn";
import { Badge, ErrorState, LoadingState } from "../_ui/surface";
import { AccountContext, type Account } from "./account";
import { NotificationsBell } from "./notifications";
import { activeItem, NAV_GROUPS } from "./nav";

export function DashboardShell({ children }: { children: ReactNode }) {
  const trpc = useTRPC();
  const router = useRouter();
  const pathname = usePathname();
  // The session first (answered 200 either way): signed out goes to sign-in without a failed call.
  const session = authClient.useSession();
  // A failed session read (a 429, a network error) is not a sign-out: the page offers a retry.
  const signedOut = !session.isPending && !session.data && !session.error;
  const me = useQuery({ ...trpc.dashboard.me.queryOptions(), enabled: !!session.data });
  const failure = me.error ? describeError(me.error) : null;

  useEffect(() => {
    if (signedOut || failure?.status === 401) router.replace("/sign-in");
  }, [signedOut, failure?.status, router]);

  if (session.error && !session.data)
    return (
      <div className="min-h-dvh bg-slate-50">
        <ErrorState message="Your session could not be read. Try again in a moment." onRetry={() => session.refetch()} />
      </div>
    );
  if (me.isPending || failure?.status === 401)
    return (
      <div className="min-h-dvh bg-slate-50">
        <LoadingState />
      </div>
    );
  if (failure)
    return (
      <div className="min-h-dvh bg-slate-50">
        <ErrorState message={failure.message} onRetry={() => me.refetch()} />
      </div>
    );
  const account = me.data!;

  async function signOut() {
    await authClient.signOut();
    router.replace("/sign-in");
  }

  const current = activeItem(pathname);
  return (
    <AccountContext.Provider value={account}>
      <a
        href="#main-content"
        className="sr-only focus:not-sr-only focus:fixed focus:left-3 focus:top-3 focus:z-50 focus:rounded-md focus:bg-white focus:px-3 focus:py-2 focus:text-sm focus:font-medium focus:text-slate-900 focus:shadow focus:outline-2 focus:outline-slate-900"
      >
        Skip to content
      </a>
      <div className="min-h-dvh bg-slate-50 lg:grid lg:grid-cols-[15rem_1fr]">
        {/* Phone and tablet: a bar with the current page and a menu button that opens the navigation. */}
        <header className="sticky top-0 z-30 flex items-center gap-2 border-b border-slate-200 bg-white px-3 py-2 lg:hidden">
          <MobileMenu account={account} pathname={pathname} onSignOut={signOut} />
          <p className="min-w-0 flex-1 truncate text-sm font-semibold text-slate-900" data-testid="current-page">
            {current?.label ?? "Dashboard"}
          </p>
          <NotificationsBell />
        </header>
        <aside className="hidden border-r border-slate-200 bg-white lg:sticky lg:top-0 lg:flex lg:h-dvh lg:flex-col">
          <AccountSummary account={account} className="px-5 py-5" />
          <NavLinks pathname={pathname} className="flex-1 overflow-y-auto px-3" />
          <div className="flex items-center justify-between px-3 py-4">
            <NotificationsBell />
            <Button variant="ghost" size="sm" onClick={signOut}>
              <LogOut /> Sign out
            </Button>
          </div>
        </aside>
        <main id="main-content" tabIndex={-1} className="mx-auto focus:outline-none w-full min-w-0 max-w-6xl px-4 py-5 sm:px-6 lg:px-10 lg:py-10">
          {current && current.trail.length ? <Breadcrumb trail={current.trail} label={current.label} /> : null}
          {children}
        </main>
      </div>
    </AccountContext.Provider>
  );
}

function AccountSummary({ account, className }: { account: Account; className?: string }) {
  return (
    <div className={cn("min-w-0", className)}>
      <p className="truncate text-sm font-semibold text-slate-900" data-testid="tenant-name">
        {account.tenant.name}
      </p>
      <p className="truncate text-xs text-slate-600" title={account.user.email}>
        {account.user.email}
      </p>
      <Badge tone={account.role === "member" ? "neutral" : "info"} className="mt-1" data-testid="role">
        {account.role}
      </Badge>
    </div>
  );
}

function NavLinks({ pathname, className }: { pathname: string | null; className?: string }) {
  const current = activeItem(pathname);
  return (
    <nav aria-label="Dashboard" className={className}>
      {NAV_GROUPS.map((group, index) => (
        <div key={group.label ?? index} className="mb-4">
          {group.label ? <p className="px-3 pb-1 text-xs font-semibold uppercase tracking-wide text-slate-600">{group.label}</p> : null}
          <ul className="space-y-0.5">
            {group.items.map(({ href, label, icon: Icon }) => {
              const active = current?.href === href;
              return (
                <li key={href}>
                  <Link
                    href={href}
                    aria-current={active ? "page" : undefined}
                    className={cn(
                      "flex items-center gap-2 rounded-md px-3 py-2 text-sm font-medium focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-indigo-500",
                      active ? "bg-indigo-50 text-indigo-800" : "text-slate-700 hover:bg-slate-100",
                    )}
                  >
                    <Icon className="size-4" aria-hidden /> {label}
                  </Link>
                </li>
              );
            })}
          </ul>
        </div>
      ))}
    </nav>
  );
}

/** Where the page sits, in the specification's words (Settings › Integrations › API keys). */
function Breadcrumb({ trail, label }: { trail: string[]; label: string }) {
  return (
    <nav aria-label="Breadcrumb" className="mb-2">
      <ol className="flex flex-wrap items-center gap-1 text-xs text-slate-600">
        {trail.map((part) => (
          <li key={part} className="flex items-center gap-1">
            {part}
            <ChevronRight className="size-3" aria-hidden />
          </li>
        ))}
        <li aria-current="page" className="font-medium text-slate-800">
          {label}
        </li>
      </ol>
    </nav>
  );
}

/** The navigation as a drawer (Radix Dialog: focus trapped inside, Escape closes, focus back on the button). */
function MobileMenu({ account, pathname, onSignOut }: { account: Account; pathname: string | null; onSignOut: () => void }) {
  const [open, setOpen] = useState(false);
  // Following a link closes the drawer: the effect runs because the path changed.
  // biome-ignore lint/correctness/useExhaustiveDependencies: pathname is the trigger, not an input
  useEffect(() => setOpen(false), [pathname]);
  return (
    <DialogPrimitive.Root open={open} onOpenChange={setOpen}>
      <DialogPrimitive.Trigger asChild>
        <Button variant="ghost" size="icon" aria-label="Open navigation">
          <Menu />
        </Button>
      </DialogPrimitive.Trigger>
      <DialogPrimitive.Portal>
        <DialogPrimitive.Overlay className="fixed inset-0 z-40 bg-slate-900/40" />
        <DialogPrimitive.Content className="fixed inset-y-0 left-0 z-50 flex w-72 max-w-[85vw] flex-col overflow-y-auto bg-white shadow-xl focus:outline-none">
          <div className="flex items-start justify-between gap-2 px-4 py-4">
            <DialogPrimitive.Title className="sr-only">Navigation</DialogPrimitive.Title>
            <DialogPrimitive.Description className="sr-only">The dashboard&apos;s pages and your account</DialogPrimitive.Description>
            <AccountSummary account={account} />
            <DialogPrimitive.Close asChild>
              <Button variant="ghost" size="icon" aria-label="Close navigation">
                <X />
              </Button>
            </DialogPrimitive.Close>
          </div>
          <NavLinks pathname={pathname} className="flex-1 px-2" />
          <div className="border-t border-slate-200 px-3 py-3">
            <Button variant="ghost" size="sm" onClick={onSignOut}>
              <LogOut /> Sign out
            </Button>
          </div>
        </DialogPrimitive.Content>
      </DialogPrimitive.Portal>
    </DialogPrimitive.Root>
  );
}
