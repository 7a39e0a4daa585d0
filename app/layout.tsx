import type { ReactNode } from "react";
import "./globals.css";

export const metadata = {
  title: { template: "%s · Tenant data platform", default: "Tenant data platform" },
  description: "AI receptionist tenant data platform",
};

export const viewport = { width: "device-width", initialScale: 1 };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
