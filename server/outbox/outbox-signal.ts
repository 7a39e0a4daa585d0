// In-process wake-up for the delivery worker when deliveries were written. On PGlite the worker's
// claim query queues behind the still-open transaction, so it runs right after the commit; on
// PostgreSQL the transaction also sends NOTIFY (delivered only at commit, to every process).
type Listener = () => void;
const listeners = new Set<Listener>();

export const OUTBOX_CHANNEL = "webhook_deliveries";

export function onOutboxWrite(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function signalOutboxWrite(): void {
  for (const listener of listeners) setImmediate(listener);
}
