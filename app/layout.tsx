import type { ReactNode } from "react";
import "./globals.css";

export const metadata = { title: "Tenant data platform", description: "AI receptionist tenant data platform" };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
