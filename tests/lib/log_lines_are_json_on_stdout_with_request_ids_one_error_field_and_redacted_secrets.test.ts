// server/lib/log.ts in a real process: JSON lines written by pino to stdout (in order with the
// process's own output, none lost to an immediate exit), or to stderr once pointed there (as the
// CLI's entry does, its stdout being its JSON); LOG_LEVEL's meaning (debug, info, warn, silent); the
// request scope's `request_id` on lines written by `log` and by the context's logger; one serialized
// `error` field (type, message, code, stack, cause) and secrets redacted by the configuration.
import { execFileSync, spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

const SCRIPT = path.join(__dirname, "log-lines-process.ts");
const OWN_OUTPUT = "the process's own output";

function run(level: string, ...args: string[]) {
  const nodeEnv: "development" | "production" = args.includes("development") ? "development" : "production";
  const env = { ...process.env, LOG_LEVEL: level, NODE_ENV: nodeEnv };
  const out = spawnSync(process.execPath, ["--import", "tsx", SCRIPT, ...args], { env, encoding: "utf8", timeout: 60_000 });
  expect(out.status, out.stderr).toBe(0);
  const logged = args[0] === "stderr" ? out.stderr : out.stdout;
  const lines = logged
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l));
  return { stdout: out.stdout, stderr: out.stderr, lines };
}

describe("log lines", () => {
  it("info_writes_every_line_as_json_on_stdout_in_order_with_request_id_inside_a_request_and_secrets_redacted", () => {
    const { stdout, stderr, lines } = run("info");
    expect(stderr).toBe("");
    // Every line of stdout is a log line but the process's own, in the order written.
    expect(stdout.split("\n").map((l) => (l.startsWith("{") ? JSON.parse(l).msg : l))).toEqual([
      "outside a request",
      "inside a request",
      "through the context's logger",
      OWN_OUTPUT,
      "not an error object",
      "",
    ]);
    expect(lines.map((l) => [l.level, l.msg, l.request_id])).toEqual([
      ["info", "outside a request", undefined],
      ["warn", "inside a request", "req-42"],
      ["error", "through the context's logger", "req-42"],
      ["error", "not an error object", undefined],
    ]);
    for (const l of lines) expect(Number.isNaN(Date.parse(l.time))).toBe(false);
    expect(lines[0]).toEqual({ level: "info", time: lines[0].time, tenant_id: "t-1", msg: "outside a request" });
    expect(lines[1]).toMatchObject({ headers: { authorization: "[redacted]" }, token: "[redacted]", detail: { password: "[redacted]" } });
    for (const secret of ["tdp_secret_a", "secret-b", "secret-c"]) expect(stdout).not.toContain(secret);
    expect(lines[2].error).toMatchObject({
      type: "Error",
      message: "upstream failed",
      cause: { type: "Error", message: "connection refused", code: "ECONNREFUSED" },
    });
    expect(lines[2].error.stack).toContain("upstream failed");
    expect(lines[3].error).toEqual({ message: "plain text" });
  });

  it("debug_writes_debug_lines_too_warn_only_warnings_and_errors_and_silent_nothing", () => {
    const debug = run("debug");
    expect(debug.lines.map((l) => [l.level, l.msg])).toEqual([
      ["debug", "a debug detail"],
      ["info", "outside a request"],
      ["warn", "inside a request"],
      ["error", "through the context's logger"],
      ["error", "not an error object"],
    ]);
    expect(debug.lines[0]).toMatchObject({ step: 1 });
    expect(run("warn").lines.map((l) => l.msg)).toEqual(["inside a request", "through the context's logger", "not an error object"]);
    const silent = run("silent");
    expect(silent).toEqual({ stdout: `${OWN_OUTPUT}\n`, stderr: "", lines: [] });
  });

  it("pointed_at_stderr_the_lines_go_there_and_stdout_holds_only_the_processs_own_output", () => {
    const { stdout, lines } = run("info", "stderr");
    expect(stdout).toBe(`${OWN_OUTPUT}\n`);
    expect(lines.map((l) => l.msg)).toEqual(["outside a request", "inside a request", "through the context's logger", "not an error object"]);
  });

  it("in_development_lines_are_pretty_printed_on_a_terminal_and_stay_json_when_piped", () => {
    // Piped (a log collector, a test): JSON, development or not.
    expect(run("info", "development").lines.map((l) => l.msg)).toEqual([
      "outside a request",
      "inside a request",
      "through the context's logger",
      "not an error object",
    ]);
    // On a terminal (util-linux `script` gives the process one): pino-pretty's lines, secrets still redacted.
    const shown = execFileSync("script", ["-qec", `${process.execPath} --import tsx ${SCRIPT}`, "/dev/null"], {
      env: { ...process.env, LOG_LEVEL: "info", NODE_ENV: "development", NO_COLOR: "1" },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(shown).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: outside a request\r?\n {4}tenant_id: "t-1"\r?\n/);
    expect(shown).toMatch(/WARN: inside a request\r?\n {4}request_id: "req-42"/);
    expect(shown).toContain('token: "[redacted]"');
    expect(shown).not.toContain("secret-b");
  });
});
