"use client";
import { useState } from "react";
import { Check, Copy } from "lucide-react";
import { Button } from "./button";

export function CopyButton({ value, label = "Copy" }: { value: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <Button
      variant="secondary"
      size="sm"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(value);
        } catch {
          // Clipboard may be unavailable (http origin); the value stays selectable on screen.
        }
        setCopied(true);
        setTimeout(() => setCopied(false), 2000);
      }}
    >
      {copied ? <Check /> : <Copy />} {copied ? "Copied" : label}
    </Button>
  );
}

/** A secret shown exactly once, with a copy button and the warning that goes with it. */
export function SecretOnce({ value, what }: { value: string; what: string }) {
  return (
    <div className="space-y-3">
      <div className="rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-900" role="note">
        Copy this {what} now. It is shown only once and cannot be retrieved later; if it is lost, create a new one.
      </div>
      <div className="flex items-center gap-2">
        <code
          data-testid="secret-value"
          className="block min-w-0 flex-1 select-all break-all rounded-md bg-slate-900 px-3 py-2 font-mono text-[13px] text-emerald-300"
        >
          {value}
        </code>
        <CopyButton value={value} />
      </div>
    </div>
  );
}
