/** Every message the dashboard shows starts with a capital letter, whoever wrote it (server, zod, the browser). */
export function sentenceCase(message: string): string {
  return message.charAt(0).toUpperCase() + message.slice(1);
}

/** "21 Nov 2026, 10:00" in the viewer's locale; "—" for nothing. */
export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  return new Date(iso).toLocaleString(undefined, { day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit" });
}
