// A worker process for timing tests: it sends a few signed POSTs to a local sink before it starts
// claiming, so its first real delivery is not slowed by a cold send path (module loading, the
// first connection), as a long-running server's never is. Prints "ready" once claiming.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { openDatabase } from "../../server/db/database";
import { startEmbeddedWorker } from "../../server/webhooks/embedded-worker";
import { sendWebhook } from "../../server/webhooks/send-webhook";
import { generateWebhookSecret } from "../../server/webhooks/signing";

const sink = http.createServer((req, res) => req.resume().on("end", () => res.end("ok")));
await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/warm-up`;
const secret = generateWebhookSecret();
for (let i = 0; i < 3; i++) await sendWebhook({ url, secret, body: "{}", eventId: `evt_warm_${i}`, eventType: "warm.up", timeoutMs: 5_000 });
sink.close();
await openDatabase();
await startEmbeddedWorker({ pollIntervalMs: 50 });
process.stdout.write("ready\n");
setInterval(() => {}, 1 << 30);
