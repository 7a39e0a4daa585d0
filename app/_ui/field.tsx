import { forwardRef, useId, type InputHTMLAttributes, type ReactNode, type SelectHTMLAttributes } from "react";
import { cn } from "./cn";
import { sentenceCase } from "../_lib/format";

const control =
  "block w-full rounded-md border border-slate-300 bg-white px-3 py-2 text-sm text-slate-900 shadow-sm placeholder:text-slate-400 focus:border-indigo-500 focus:outline-none focus:ring-2 focus:ring-indigo-500/30 disabled:bg-slate-50 aria-[invalid=true]:border-red-500";

export const Input = forwardRef<HTMLInputElement, InputHTMLAttributes<HTMLInputElement>>(({ className, ...props }, ref) => (
  <input ref={ref} className={cn(control, className)} {...props} />
));
Input.displayName = "Input";

export const Select = forwardRef<HTMLSelectElement, SelectHTMLAttributes<HTMLSelectElement>>(({ className, ...props }, ref) => (
  <select ref={ref} className={cn(control, "pr-8", className)} {...props} />
));
Select.displayName = "Select";

/** A labelled form control with its hint and its error (client-side or the server's). */
export function Field(props: {
  label: string;
  error?: string;
  hint?: ReactNode;
  children: (id: string, describedBy: string | undefined) => ReactNode;
  className?: string;
}) {
  const id = useId();
  const describedBy = props.error ? `${id}-error` : props.hint ? `${id}-hint` : undefined;
  return (
    <div className={cn("space-y-1.5", props.className)} data-field>
      <label htmlFor={id} className="block text-sm font-medium text-slate-800">
        {props.label}
      </label>
      {props.children(id, describedBy)}
      {props.error ? (
        <FieldError id={`${id}-error`} message={props.error} />
      ) : props.hint ? (
        <p id={`${id}-hint`} className="text-xs text-slate-600">
          {props.hint}
        </p>
      ) : null}
    </div>
  );
}

/** A field's (or a group's) error: the one look every form uses (the server's "invalid field 'x': " prefix dropped: the label names the field); `focusFirstInvalid` finds it by `data-field-error`. */
export function FieldError({ id, message, className }: { id?: string; message?: string | null; className?: string }) {
  if (!message) return null;
  return (
    <p id={id} className={cn("text-sm text-red-700", className)} data-field-error>
      {sentenceCase(message.replace(/^invalid field '[^']*': /i, ""))}
    </p>
  );
}

export function FormError({ message }: { message?: string | null }) {
  if (!message) return null;
  return (
    <p role="alert" className="rounded-md border border-red-200 bg-red-50 px-3 py-2 text-sm text-red-700" data-form-error>
      {sentenceCase(message)}
    </p>
  );
}
