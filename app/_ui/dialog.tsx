"use client";
import { AlertDialog as AlertPrimitive, Dialog as DialogPrimitive } from "radix-ui";
import { X } from "lucide-react";
import { useRef, type ReactNode } from "react";
import { type QueryKey, type UseMutationOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { describeError } from "../_lib/trpc";
import { Button } from "./button";
import { FormError } from "./field";
import { cn } from "./cn";

const overlay = "fixed inset-0 z-40 bg-slate-900/40 backdrop-blur-[1px]";
const panel =
  "fixed left-1/2 top-1/2 z-50 max-h-[90vh] w-[calc(100vw-2rem)] max-w-lg -translate-x-1/2 -translate-y-1/2 overflow-y-auto rounded-xl bg-white p-6 shadow-xl focus:outline-none";

/**
 * Focus goes back to what opened the dialog when it closes. The dialogs here are opened from state
 * (no Radix Trigger), and the opener may have been re-rendered away meanwhile (a row that changed):
 * so the opener is remembered when the dialog opens, found again by its id or test id if React
 * replaced it, and else the page's heading takes focus rather than the body.
 */
function useReturnFocus(open: boolean) {
  const opener = useRef<{ element: HTMLElement | null; id: string | null; open: boolean }>({ element: null, id: null, open: false });
  // Read while rendering the opening: later (effects, Radix's onOpenAutoFocus) an autoFocus field
  // inside the dialog already has focus.
  if (open && !opener.current.open && typeof document !== "undefined") {
    const active = document.activeElement;
    const element = active instanceof HTMLElement && active !== document.body ? active : null;
    opener.current = { element, id: element?.id || null, open: true };
  }
  if (!open) opener.current.open = false;
  const onCloseAutoFocus = (event: Event) => {
    event.preventDefault();
    const { element, id } = opener.current;
    opener.current.open = false;
    const target = element?.isConnected ? element : id ? document.getElementById(id) : null;
    const fallback = document.querySelector<HTMLElement>("main h1");
    if (target) target.focus();
    else if (fallback) {
      fallback.tabIndex = -1;
      fallback.focus();
    }
  };
  return { onCloseAutoFocus };
}

export function Dialog(props: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: string;
  description?: ReactNode;
  children: ReactNode;
  className?: string;
}) {
  const returnFocus = useReturnFocus(props.open);
  return (
    <DialogPrimitive.Root open={props.open} onOpenChange={props.onOpenChange}>
      <DialogPrimitive.Portal>
        <DialogPrimitive.Overlay className={overlay} />
        <DialogPrimitive.Content className={cn(panel, props.className)} {...returnFocus} {...(props.description ? {} : { "aria-describedby": undefined })}>
          <div className="mb-4 flex items-start justify-between gap-4">
            <div>
              <DialogPrimitive.Title className="text-lg font-semibold text-slate-900">{props.title}</DialogPrimitive.Title>
              {props.description ? (
                <DialogPrimitive.Description className="mt-1 text-sm text-slate-600">{props.description}</DialogPrimitive.Description>
              ) : null}
            </div>
            <DialogPrimitive.Close asChild>
              <Button variant="ghost" size="icon" aria-label="Close">
                <X />
              </Button>
            </DialogPrimitive.Close>
          </div>
          {props.children}
        </DialogPrimitive.Content>
      </DialogPrimitive.Portal>
    </DialogPrimitive.Root>
  );
}

/**
 * "Are you sure?" before a destructive action, open while it is mounted. The confirm button runs
 * `mutation` (a tRPC procedure's `mutationOptions()`) with `variables`; while it runs the button says
 * so, and its error shows in the dialog, which stays open. Once it succeeds, the queries under
 * `refresh` are refreshed (so the page already shows the result as the dialog goes), then `onDone`
 * gets the result, or, without one, the dialog closes (`onClose`, which Cancel and Escape call too).
 * Each opening mounts a new dialog, so an earlier attempt's error is never shown again.
 */
export function ConfirmDialog<TData, TError, TVariables, TContext>(props: {
  title: string;
  description: ReactNode;
  confirmLabel: string;
  mutation: UseMutationOptions<TData, TError, TVariables, TContext>;
  variables: TVariables;
  refresh?: QueryKey;
  onClose: () => void;
  onDone?: (data: TData) => void;
}) {
  const returnFocus = useReturnFocus(true);
  const queryClient = useQueryClient();
  const action = useMutation({
    ...props.mutation,
    onSuccess: async (...args: Parameters<NonNullable<typeof props.mutation.onSuccess>>) => {
      await props.mutation.onSuccess?.(...args);
      if (props.refresh) await queryClient.invalidateQueries({ queryKey: props.refresh });
      if (props.onDone) props.onDone(args[0]);
      else props.onClose();
    },
  });
  return (
    <AlertPrimitive.Root open onOpenChange={(open) => !open && props.onClose()}>
      <AlertPrimitive.Portal>
        <AlertPrimitive.Overlay className={overlay} />
        <AlertPrimitive.Content className={panel} {...returnFocus}>
          <AlertPrimitive.Title className="text-lg font-semibold text-slate-900">{props.title}</AlertPrimitive.Title>
          <AlertPrimitive.Description className="mt-2 text-sm text-slate-600">{props.description}</AlertPrimitive.Description>
          {action.error ? (
            <p role="alert" className="mt-3 text-sm text-red-700">
              {describeError(action.error).message}
            </p>
          ) : null}
          <div className="mt-6 flex justify-end gap-2">
            <AlertPrimitive.Cancel asChild>
              <Button variant="secondary">Cancel</Button>
            </AlertPrimitive.Cancel>
            <Button variant="danger" disabled={action.isPending} onClick={() => action.mutate(props.variables)}>
              {action.isPending ? "Working…" : props.confirmLabel}
            </Button>
          </div>
        </AlertPrimitive.Content>
      </AlertPrimitive.Portal>
    </AlertPrimitive.Root>
  );
}

/** A dialog form's last lines: the form's error, then Cancel and the submit button, which says it is working while `pending`. */
export function DialogFormActions(props: {
  formError?: string | null;
  onCancel: () => void;
  submitLabel: string;
  pendingLabel: string;
  pending: boolean;
  disabled?: boolean;
}) {
  return (
    <>
      <FormError message={props.formError} />
      <div className="flex justify-end gap-2">
        <Button variant="secondary" onClick={props.onCancel}>
          Cancel
        </Button>
        <Button type="submit" disabled={props.pending || props.disabled}>
          {props.pending ? props.pendingLabel : props.submitLabel}
        </Button>
      </div>
    </>
  );
}
