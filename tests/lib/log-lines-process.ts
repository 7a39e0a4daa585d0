// A process that logs one line of each kind (run by log_lines_*.test.ts, which reads its stdout),
// around one line of its own output; with the argument `stderr`, as the CLI does, its lines go to stderr.
import { log, setLogDestination, withRequestLogger } from "../../server/lib/log";

if (process.argv[2] === "stderr") setLogDestination(2);
log.debug({ step: 1 }, "a debug detail");
log.info({ tenant_id: "t-1" }, "outside a request");
await withRequestLogger("req-42", async (logger) => {
  await Promise.resolve();
  log.warn({ headers: { authorization: "Bearer tdp_secret_a" }, token: "secret-b", detail: { password: "secret-c" } }, "inside a request");
  const cause = Object.assign(new Error("connection refused"), { code: "ECONNREFUSED" });
  logger.error({ error: new Error("upstream failed", { cause }) }, "through the context's logger");
});
process.stdout.write("the process's own output\n");
log.error({ error: "plain text" }, "not an error object");
// Exits at once, as the CLI does: every line written above is out already (synchronous destination).
process.exit(0);
