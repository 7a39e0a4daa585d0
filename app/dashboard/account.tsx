"use client";
// The signed-in account (user, active tenant, role), shared by the dashboard's pages.
import { createContext, useContext } from "react";

export type Account = {
  user: { id: string; email: string; name: string };
  tenant: { id: string; name: string; slug: string };
  role: string;
};

export const AccountContext = createContext<Account | null>(null);

export function useAccount(): Account & { canManage: boolean } {
  const account = useContext(AccountContext);
  if (!account) throw new Error("useAccount outside the dashboard shell");
  return { ...account, canManage: account.role === "owner" || account.role === "admin" };
}

/** Shown instead of a manage action to members. */
export const READ_ONLY_HINT = "Your role is member: you can view this page; an owner or admin can make changes.";
