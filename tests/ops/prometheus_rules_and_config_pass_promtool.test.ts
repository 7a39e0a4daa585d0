// ops/prometheus/ is what operators load into Prometheus: the scrape configuration and the alert
// rules must be valid (`promtool check`), and every alert must fire on the series that should raise
// it and not on its near misses (`promtool test rules ops/prometheus/alerts.test.yml`).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

const DIR = path.resolve(__dirname, "../../ops/prometheus");
const promtool = (...args: string[]) => {
  const r = spawnSync("promtool", args, { cwd: DIR, encoding: "utf8" });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
};

describe("ops/prometheus", () => {
  it("alert_rules_pass_promtool_check_rules", () => {
    expect(promtool("check", "rules", "alerts.yml")).toEqual({ status: 0, output: expect.stringContaining("SUCCESS: 6 rules found") });
  });

  it("alert_rules_pass_their_promtool_unit_tests", () => {
    expect(promtool("test", "rules", "alerts.test.yml")).toEqual({ status: 0, output: expect.stringContaining("SUCCESS") });
  });

  it("scrape_configuration_passes_promtool_check_config", () => {
    expect(promtool("check", "config", "prometheus.yml")).toMatchObject({ status: 0 });
  });

  it("the_rules_cover_backlog_age_dead_letters_5xx_readiness_and_the_limiter_store", () => {
    const names = [...readFileSync(path.join(DIR, "alerts.yml"), "utf8").matchAll(/- alert: (\w+)/g)].map((m) => m[1]);
    expect(names).toEqual([
      "TdpTargetDown",
      "TdpReadinessFailing",
      "TdpHigh5xxRatio",
      "TdpWebhookBacklogOld",
      "TdpWebhookDeadLettersRising",
      "TdpRateLimitStoreFailing",
    ]);
    // Each alert's runbook entry exists in docs/operations.md.
    const doc = readFileSync(path.resolve(__dirname, "../../docs/operations.md"), "utf8");
    expect(names.filter((name) => !doc.includes(`### ${name}`))).toEqual([]);
  });

  it("promtool_refuses_a_broken_rule_and_a_failing_unit_test", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "tdp-rules-"));
    writeFileSync(path.join(dir, "bad.yml"), "groups:\n  - name: x\n    rules:\n      - alert: X\n        expr: sum(rate(x[5m]) > \n");
    expect(promtool("check", "rules", path.join(dir, "bad.yml")).status).not.toBe(0);
    // The real rules with an expectation they do not meet: a 2% 5xx ratio expected to fire.
    const tests = readFileSync(path.join(DIR, "alerts.test.yml"), "utf8").replace(
      /(name: 2% of requests answered 5xx is no alert[\s\S]*?alertname: TdpHigh5xxRatio\n\s+exp_alerts:) \[\]/,
      "$1\n          - exp_labels: { severity: page }",
    );
    expect(tests).toContain("- exp_labels: { severity: page }\n\n");
    writeFileSync(path.join(dir, "alerts.test.yml"), tests.replace("  - alerts.yml", `  - ${path.join(DIR, "alerts.yml")}`));
    expect(promtool("test", "rules", path.join(dir, "alerts.test.yml")).status).not.toBe(0);
  });
});
