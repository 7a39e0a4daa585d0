import type { ReactNode } from "react";
import { TrpcProviders } from "../_lib/trpc";
import { DashboardShell } from "./shell";

// The template again: a plain title here would stop the root layout's template reaching the pages.
export const metadata = { title: { template: "%s · Tenant data platform", default: "Dashboard · Tenant data platform" } };

export default function DashboardLayout({ children }: { children: ReactNode }) {
  return (
    <TrpcProviders>
      <DashboardShell>{children}</DashboardShell>
    </TrpcProviders>
  );
}
