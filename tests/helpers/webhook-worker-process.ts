// A separate process running only the embedded delivery worker (against DATABASE_URL or the
// PGlite in DATA_DIR), so a test can kill it mid-ladder and start it again. On SIGTERM it stops
// the worker (waiting for its attempts in flight to be sent and recorded) and exits 0: a test
// that waits for that exit knows the worker has nothing more to send.
import { startEmbeddedWorker, stopEmbeddedWorker } from "../../server/webhooks/embedded-worker";
import { closeDatabase, openDatabase } from "../../server/db/database";

await openDatabase(); // as the server process does before it starts its engine
await startEmbeddedWorker({ pollIntervalMs: 50 });
const keepAlive = setInterval(() => {}, 1 << 30);
// Before "ready": the test may signal the moment it reads that line.
process.on("SIGTERM", async () => {
  await stopEmbeddedWorker();
  await closeDatabase();
  clearInterval(keepAlive);
  process.exit(0);
});
process.stdout.write("ready\n");
