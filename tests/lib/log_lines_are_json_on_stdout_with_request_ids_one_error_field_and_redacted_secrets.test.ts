// server/lib/log.ts in a real process: JSON lines on stderr only (stdout is the CLI's), LOG_LEVEL's
// meaning (info, warn, silent), the request scope's `request_id` on lines written by `log` and by
// the context's logger, one serialized `error` field (type, message, code, stack, cause) and
// secrets redacted by the configuration.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

const SCRIPT = path.join(__dirname, "log-lines-process.ts");

function run(level: string) {
  const out = spawnSync(process.execPath, ["--import", "tsx", SCRIPT], { env: { ...process.env, LOG_LEVEL: level }, encoding: "utf8", timeout: 60_000 });
  expect(out.status).toBe(0);
  const lines = out.stderr
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l));
  return { stdout: out.stdout, stderr: out.stderr, lines };
}

describe("log lines", () => {
  it("info_writes_every_line_as_json_on_stderr_with_request_id_inside_a_request_and_secrets_redacted", () => {
    const { stdout, stderr, lines } = run("info");
    expect(stdout).toBe("stdout stays clean\n");
    expect(lines.map((l) => [l.level, l.msg, l.request_id])).toEqual([
      ["info", "outside a request", undefined],
      ["warn", "inside a request", "req-42"],
      ["error", "through the context's logger", "req-42"],
      ["error", "not an error object", undefined],
    ]);
    for (const l of lines) expect(Number.isNaN(Date.parse(l.time))).toBe(false);
    expect(lines[1]).toMatchObject({ headers: { authorization: "[redacted]" }, token: "[redacted]", detail: { password: "[redacted]" } });
    for (const secret of ["tdp_secret_a", "secret-b", "secret-c"]) expect(stderr).not.toContain(secret);
    expect(lines[2].error).toMatchObject({
      type: "Error",
      message: "upstream failed",
      cause: { type: "Error", message: "connection refused", code: "ECONNREFUSED" },
    });
    expect(lines[2].error.stack).toContain("upstream failed");
    expect(lines[3].error).toEqual({ message: "plain text" });
  });

  it("warn_writes_warnings_and_errors_and_silent_writes_nothing", () => {
    expect(run("warn").lines.map((l) => l.msg)).toEqual(["inside a request", "through the context's logger", "not an error object"]);
    const silent = run("silent");
    expect(silent.stderr).toBe("");
    expect(silent.stdout).toBe("stdout stays clean\n");
  });
});
