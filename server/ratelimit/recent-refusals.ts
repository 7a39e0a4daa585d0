// Callers (an API key or a dashboard user) this process refused, until their refusing window resets.
// Only steers the read-ahead in `tenantProcedure` (a refused caller's reads wait for the decision, so
// hammering past a limit does not cost a read per request); the limiter still counts and decides
// every request.
const refusedUntil = new Map<string, number>();
const MAX_REMEMBERED = 100_000;

/** Remembers `caller` as refused until `resetSeconds` (Unix seconds, the layer's X-RateLimit-Reset). */
export function rememberRefusal(caller: string, resetSeconds: number): void {
  if (!Number.isFinite(resetSeconds)) return;
  if (refusedUntil.size >= MAX_REMEMBERED) refusedUntil.clear();
  refusedUntil.set(caller, resetSeconds * 1000);
}

export function refusedRecently(caller: string): boolean {
  if (refusedUntil.size === 0) return false;
  const until = refusedUntil.get(caller);
  if (until === undefined) return false;
  if (Date.now() < until) return true;
  refusedUntil.delete(caller);
  return false;
}
