"use client";
import { useLayoutEffect, useRef, type HTMLAttributes, type ReactNode } from "react";
import { AlertTriangle, Inbox, Loader2 } from "lucide-react";
import { sentenceCase } from "../_lib/format";
import { cva, type VariantProps } from "class-variance-authority";
import { cn } from "./cn";
import { Button } from "./button";

export function Card({ className, ...props }: HTMLAttributes<HTMLDivElement>) {
  return <div className={cn("rounded-xl border border-slate-200 bg-white shadow-sm", className)} {...props} />;
}

export function PageHeader(props: { title: string; description?: ReactNode; actions?: ReactNode }) {
  return (
    <div className="mb-6 flex flex-col gap-3 sm:flex-row sm:items-end sm:justify-between">
      <div>
        <h1 className="text-2xl font-semibold tracking-tight text-slate-900">{props.title}</h1>
        {props.description ? <p className="mt-1 max-w-2xl text-sm text-slate-600">{props.description}</p> : null}
      </div>
      {props.actions ? <div className="flex shrink-0 gap-2">{props.actions}</div> : null}
    </div>
  );
}

const badge = cva("inline-flex items-center rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset", {
  variants: {
    tone: {
      neutral: "bg-slate-50 text-slate-700 ring-slate-200",
      good: "bg-emerald-50 text-emerald-700 ring-emerald-200",
      warn: "bg-amber-50 text-amber-800 ring-amber-200",
      bad: "bg-red-50 text-red-700 ring-red-200",
      info: "bg-indigo-50 text-indigo-700 ring-indigo-200",
    },
  },
  defaultVariants: { tone: "neutral" },
});

export function Badge({ tone, className, ...props }: HTMLAttributes<HTMLSpanElement> & VariantProps<typeof badge>) {
  return <span className={cn(badge({ tone }), className)} {...props} />;
}

export function LoadingState({ label = "Loading…" }: { label?: string }) {
  return (
    <div role="status" className="flex items-center justify-center gap-2 py-12 text-sm text-slate-600">
      <Loader2 className="size-4 animate-spin" /> {label}
    </div>
  );
}

export function ErrorState({ message, onRetry }: { message: string; onRetry?: () => void }) {
  return (
    <div className="flex flex-col items-center gap-2 py-12 text-center" data-state="error">
      <AlertTriangle className="size-6 text-red-500" />
      <p className="text-sm font-medium text-slate-900">Could not load this</p>
      <p className="text-sm text-slate-600">{sentenceCase(message)}</p>
      {onRetry ? (
        <button type="button" className="text-sm font-medium text-indigo-700 hover:underline" onClick={onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

export function EmptyState({ title, children, action }: { title: string; children?: ReactNode; action?: ReactNode }) {
  return (
    <div className="flex flex-col items-center gap-2 px-6 py-12 text-center" data-state="empty">
      <Inbox className="size-6 text-slate-400" />
      <p className="text-sm font-medium text-slate-900">{title}</p>
      {children ? <p className="max-w-md text-sm text-slate-600">{children}</p> : null}
      {action ? <div className="mt-2">{action}</div> : null}
    </div>
  );
}

/**
 * A table that is a table from 640 px up and a list of stacked rows below it: each cell shows its
 * column's heading above its value (copied from the <th> into `data-label`, so a page needs nothing
 * extra), and every cell, its buttons included, fits the screen without scrolling sideways.
 * `columns` are the headings (`{ label, className }` for one that needs a width); `actions` adds a
 * last column for the rows' buttons (`RowActions`), named for screen readers only; the children are
 * the rows, `<tr>`s of one `<td>` per column.
 */
export function Table({
  columns,
  actions = false,
  children,
  className,
}: {
  columns: (string | { label: string; className: string })[];
  actions?: boolean;
  children: ReactNode;
  className?: string;
}) {
  const ref = useRef<HTMLTableElement>(null);
  useLayoutEffect(() => {
    const table = ref.current;
    if (!table) return;
    labelCells(table);
    const observer = new MutationObserver(() => labelCells(table));
    observer.observe(table, { childList: true, subtree: true, characterData: true });
    return () => observer.disconnect();
  }, []);
  return (
    // `relative`: absolutely positioned cell content (sr-only labels) is clipped with the rest.
    <div className="relative sm:overflow-x-auto">
      <table
        ref={ref}
        className={cn(
          "w-full text-left text-sm sm:min-w-[640px] [&_td]:px-4 [&_td]:py-3 [&_th]:px-4 [&_th]:py-2.5 [&_th]:text-xs [&_th]:font-medium [&_th]:uppercase [&_th]:tracking-wide [&_th]:text-slate-600 [&_thead]:border-b [&_thead]:border-slate-200 [&_thead]:bg-slate-50 [&_tbody_tr]:border-b [&_tbody_tr]:border-slate-100 [&_tbody_tr:last-child]:border-0",
          // Below 640 px: rows become cards of labelled lines.
          "max-sm:block max-sm:[&_thead]:sr-only max-sm:[&_tbody]:block max-sm:[&_tr]:block max-sm:[&_tbody_tr]:py-2 max-sm:[&_td]:block max-sm:[&_td]:py-1.5 max-sm:[&_td]:break-words max-sm:[&_td[data-label]]:before:mb-0.5 max-sm:[&_td[data-label]]:before:block max-sm:[&_td[data-label]]:before:text-xs max-sm:[&_td[data-label]]:before:font-medium max-sm:[&_td[data-label]]:before:uppercase max-sm:[&_td[data-label]]:before:tracking-wide max-sm:[&_td[data-label]]:before:text-slate-600 max-sm:[&_td[data-label]]:before:content-[attr(data-label)]",
          className,
        )}
      >
        <thead>
          <tr>
            {columns.map((column) =>
              typeof column === "string" ? (
                <th key={column}>{column}</th>
              ) : (
                <th key={column.label} className={column.className}>
                  {column.label}
                </th>
              ),
            )}
            {actions ? (
              <th>
                <span className="sr-only">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/** One button of a row (its `id` lets focus come back to it after a dialog it opened). */
export type RowAction = { label: string; id?: string; onClick: () => void; disabled?: boolean; title?: string };

/** A row's buttons, in the `actions` column of a `Table`: right-aligned from 640 px up, wrapping below. */
export function RowActions({ actions }: { actions: RowAction[] }) {
  return (
    <td className="sm:text-right">
      <div className="flex flex-wrap gap-2 sm:justify-end">
        {actions.map(({ label, ...button }) => (
          <Button key={label} variant="secondary" size="sm" {...button}>
            {label}
          </Button>
        ))}
      </div>
    </td>
  );
}

/** Gives each body cell its column heading as `data-label` (none for headings that are visually hidden). */
function labelCells(table: HTMLTableElement) {
  const headings = Array.from(table.querySelectorAll("thead th")).map((th) =>
    th.querySelector(".sr-only") || th.classList.contains("sr-only") ? "" : (th.textContent?.trim() ?? ""),
  );
  for (const row of Array.from(table.tBodies).flatMap((b) => Array.from(b.rows))) {
    let column = 0;
    for (const cell of Array.from(row.cells)) {
      const label = cell.colSpan > 1 ? "" : (headings[column] ?? "");
      if (label && cell.tagName === "TD") {
        if (cell.getAttribute("data-label") !== label) cell.setAttribute("data-label", label);
      } else if (cell.hasAttribute("data-label")) cell.removeAttribute("data-label");
      column += cell.colSpan;
    }
  }
}
