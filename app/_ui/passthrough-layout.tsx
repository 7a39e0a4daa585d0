import type { ReactNode } from "react";

/** A route's layout that only names the page (its `metadata.title`, set beside it) and renders it. */
export function PassThrough({ children }: { children: ReactNode }) {
  return children;
}
