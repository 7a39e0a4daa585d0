import { databaseKind, getDb } from "./db/client";
import { log } from "./log";

let started: Promise<void> | undefined;

/** Once per server process, whichever front (Next or the lean server) starts it. */
export function startServerProcess(): Promise<void> {
  started ??= (async () => {
    await getDb();
    const seed = process.env.DEMO_SEED ?? (databaseKind() === "pglite" ? "1" : "0");
    if (seed === "1") {
      const { seedDemoTenant } = await import("./demo/seed-demo");
      const demo = await seedDemoTenant();
      if (demo.apiKey) {
        // Printed once, at creation: the plaintext is not stored anywhere.
        console.log(`\nDemo tenant ${demo.tenantId} created.\nDemo API key (shown once): ${demo.apiKey}\n` +
          `Try: curl -H "Authorization: Bearer ${demo.apiKey}" http://127.0.0.1:${process.env.PORT ?? 3000}/api/v1/offerings\n`);
      }
    }
    log.info("server process ready", { database: databaseKind() });
  })();
  return started;
}
