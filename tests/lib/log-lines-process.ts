// A process that logs one line of each kind (run by log_lines_*.test.ts, which reads its stderr).
import { log, withRequestLogger } from "../../server/lib/log";

log.info({ tenant_id: "t-1" }, "outside a request");
await withRequestLogger("req-42", async (logger) => {
  await Promise.resolve();
  log.warn({ headers: { authorization: "Bearer tdp_secret_a" }, token: "secret-b", detail: { password: "secret-c" } }, "inside a request");
  const cause = Object.assign(new Error("connection refused"), { code: "ECONNREFUSED" });
  logger.error({ error: new Error("upstream failed", { cause }) }, "through the context's logger");
});
log.error({ error: "plain text" }, "not an error object");
process.stdout.write("stdout stays clean\n");
