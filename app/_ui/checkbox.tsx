"use client";
import { Checkbox as CheckboxPrimitive } from "radix-ui";
import { Check } from "lucide-react";
import { useId } from "react";
import { cn } from "./cn";

/** A Radix checkbox with its label (the label is the accessible name). */
export function Checkbox(props: {
  label: string;
  description?: string;
  checked: boolean;
  onCheckedChange: (checked: boolean) => void;
  disabled?: boolean;
  className?: string;
}) {
  const id = useId();
  return (
    <div className={cn("flex items-start gap-2", props.className)}>
      <CheckboxPrimitive.Root
        id={id}
        checked={props.checked}
        disabled={props.disabled}
        onCheckedChange={(v) => props.onCheckedChange(v === true)}
        className="mt-0.5 grid size-4 shrink-0 place-items-center rounded border border-slate-400 bg-white focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-indigo-500 data-[state=checked]:border-indigo-600 data-[state=checked]:bg-indigo-600 disabled:opacity-50"
      >
        <CheckboxPrimitive.Indicator>
          <Check className="size-3 text-white" strokeWidth={3} />
        </CheckboxPrimitive.Indicator>
      </CheckboxPrimitive.Root>
      <label htmlFor={id} className="text-sm leading-5 text-slate-800">
        <span className="font-mono text-[13px]">{props.label}</span>
        {props.description ? <span className="block text-xs text-slate-500">{props.description}</span> : null}
      </label>
    </div>
  );
}
