import { databaseKind, getDb } from "./db/client";
import { log } from "./log";
import { warmUpRateLimiter } from "./ratelimit";

// On globalThis: under the lean front, Next's bundled copy of this module (instrumentation.ts) and
// the front's own copy share one process, and must start it once.
const shared = globalThis as { __tenantDataStarted?: Promise<void> };

/** Once per server process, whichever front (Next or the lean server) starts it. */
export function startServerProcess(): Promise<void> {
  shared.__tenantDataStarted ??= (async () => {
    await Promise.all([getDb(), warmUpRateLimiter()]);
    const seed = process.env.DEMO_SEED ?? (databaseKind() === "pglite" ? "1" : "0");
    if (seed === "1") {
      const { seedDemoTenant } = await import("./demo/seed-demo");
      const demo = await seedDemoTenant();
      if (demo.apiKey) {
        // Printed once, at creation: the plaintext is not stored anywhere.
        console.log(`\nDemo tenant ${demo.tenantId} created.\nDemo API key (shown once): ${demo.apiKey}\n` +
          `Try: curl -H "Authorization: Bearer ${demo.apiKey}" http://127.0.0.1:${process.env.PORT ?? 3000}/api/v1/offerings\n`);
        if (demo.owner) console.log(`Dashboard owner login (shown once): ${demo.owner.email} / ${demo.owner.password}\n`);
      }
    }
    await (await import("./webhooks/engine")).startWebhookEngine();
    (await import("./conversations/send-recovery")).startSendRecovery();
    (await import("./conversations/sla-monitor")).startSlaMonitor();
    log.info("server process ready", { database: databaseKind() });
  })();
  return shared.__tenantDataStarted;
}
