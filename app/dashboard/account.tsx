"use client";
// The signed-in account (user, active tenant, role), shared by the dashboard's pages.
import { createContext, useContext } from "react";
import type { RouterOutputs } from "../_lib/router-types";

export type Account = RouterOutputs["dashboard"]["me"];

export const AccountContext = createContext<Account | null>(null);

export function useAccount(): Account & { canManage: boolean } {
  const account = useContext(AccountContext);
  if (!account) throw new Error("useAccount outside the dashboard shell");
  return { ...account, canManage: account.role === "owner" || account.role === "admin" };
}

/** Shown instead of a manage action to members. */
export const READ_ONLY_HINT = "Your role is member: you can view this page; an owner or admin can make changes.";
