"use client";
// Dead-letter notifications for owners and admins (the webhooks domain records them).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Popover } from "radix-ui";
import { Bell } from "lucide-react";
import { useTRPC } from "../_lib/trpc";
import { Button } from "../_ui/button";
import { formatDateTime } from "../_lib/format";
import { useAccount } from "./account";

export function NotificationsBell() {
  const { canManage } = useAccount();
  return canManage ? <Bell_ /> : null;
}

function Bell_() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const unread = useQuery({ ...trpc.webhooks.listNotifications.queryOptions({ unread_only: true, limit: 20 }), refetchInterval: 15_000 });
  const markRead = useMutation(
    trpc.webhooks.markNotificationRead.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.webhooks.listNotifications.queryKey() }),
    }),
  );
  const items = unread.data?.data ?? [];
  return (
    <Popover.Root>
      <Popover.Trigger asChild>
        <Button variant="ghost" size="icon" aria-label={`Notifications (${items.length} unread)`} className="relative">
          <Bell />
          {items.length ? (
            <span
              className="absolute -right-0.5 -top-0.5 grid min-w-4 place-items-center rounded-full bg-red-600 px-1 text-[10px] font-semibold text-white"
              data-testid="unread-count"
            >
              {items.length}
            </span>
          ) : null}
        </Button>
      </Popover.Trigger>
      <Popover.Portal>
        <Popover.Content align="start" sideOffset={6} className="z-50 w-80 rounded-lg border border-slate-200 bg-white p-2 shadow-lg">
          <p className="px-2 py-1 text-xs font-semibold uppercase tracking-wide text-slate-600">Notifications</p>
          {items.length === 0 ? (
            <p className="px-2 py-4 text-sm text-slate-500">You are all caught up.</p>
          ) : (
            <ul className="max-h-80 space-y-1 overflow-y-auto">
              {items.map((n) => (
                <li key={n.id} className="rounded-md p-2 hover:bg-slate-50" data-testid="notification">
                  <p className="text-sm font-medium text-slate-900">{n.title}</p>
                  <p className="text-xs text-slate-600">{n.body}</p>
                  <div className="mt-1 flex items-center justify-between">
                    <span className="text-[11px] text-slate-500">{formatDateTime(n.created_at)}</span>
                    <button type="button" className="text-xs font-medium text-indigo-700 hover:underline" onClick={() => markRead.mutate({ id: n.id })}>
                      Mark read
                    </button>
                  </div>
                </li>
              ))}
            </ul>
          )}
        </Popover.Content>
      </Popover.Portal>
    </Popover.Root>
  );
}
