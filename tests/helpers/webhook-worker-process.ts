// A separate process running only the embedded delivery worker (against DATABASE_URL or the
// PGlite in DATA_DIR), so a test can kill it mid-ladder and start it again.
import { startEmbeddedWorker } from "../../server/webhooks/embedded-worker";

await startEmbeddedWorker({ pollIntervalMs: 50 });
process.stdout.write("ready\n");
setInterval(() => {}, 1 << 30);
