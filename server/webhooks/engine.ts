// Starts this process's webhook engine: the Inngest dispatcher when Inngest is configured by its
// standard environment variables, otherwise the embedded worker.
import { log } from "../lib/log";
import { startEmbeddedWorker } from "./embedded-worker";
import type { DeliveryWorker } from "./embedded-worker";
import { setting } from "../lib/settings";

/** Inngest is configured by its standard environment variables. */
export const inngestConfigured = (env: Record<string, string | undefined> = process.env) =>
  Boolean(setting("INNGEST_EVENT_KEY", env) || setting("INNGEST_SIGNING_KEY", env) || setting("INNGEST_BASE_URL", env) || setting("INNGEST_DEV", env));

let started: Promise<DeliveryWorker | null> | undefined;

/** `WEBHOOK_ENGINE=off` starts nothing (a process that must not deliver, e.g. a read replica front). */
export function startWebhookEngine(): Promise<DeliveryWorker | null> {
  started ??= (async () => {
    if (setting("WEBHOOK_ENGINE") === "off") return null;
    if (inngestConfigured()) {
      const { createInngestDispatcher } = await import("./inngest-engine");
      const dispatcher = createInngestDispatcher();
      await dispatcher.start();
      log.info("webhook engine: inngest");
      return dispatcher;
    }
    const worker = await startEmbeddedWorker();
    log.info("webhook engine: embedded worker");
    return worker;
  })();
  return started;
}

/**
 * Stops this process's engine (graceful shutdown): no new claims; attempts in flight are sent and
 * recorded, or past `deadline` (epoch ms) their leases are released.
 */
export async function stopWebhookEngine(deadline?: number): Promise<void> {
  const engine = await started?.catch(() => null);
  started = undefined;
  await engine?.stop(deadline);
}
