import type { ReactNode } from "react";
import { TrpcProviders } from "../_lib/trpc";
import { DashboardShell } from "./shell";

export const metadata = { title: "Dashboard" };

export default function DashboardLayout({ children }: { children: ReactNode }) {
  return (
    <TrpcProviders>
      <DashboardShell>{children}</DashboardShell>
    </TrpcProviders>
  );
}
