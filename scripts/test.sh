#!/usr/bin/env bash
# The whole test suite, on real services:
#   1. vitest on PostgreSQL + Redis (throwaway servers started here unless DATABASE_URL / REDIS_URL are set);
#   2. vitest again on the embedded defaults (PGlite, in-process rate-limit store), for the folders
#      whose tests depend on the engine (tests/phases.ts);
#   3. the API contract suite over real HTTP through both mounts (lean front and Next route), after `npm run build`;
#   4. browser tests (Playwright driving Debian's Chromium) against `next start`.
# Set TEST_PHASES to a subset (e.g. "postgres pglite") to run fewer. TEST_POOLER=pgbouncer runs the
# PostgreSQL phase through PgBouncer in transaction mode (migrations and the template databases direct).
set -uo pipefail
cd "$(dirname "$0")/.."
export NEXT_TELEMETRY_DISABLED=1 CHECKPOINT_DISABLE=1
PHASES="${TEST_PHASES:-postgres pglite mounts e2e}"
RESULTS="$(mktemp -d /tmp/tdp-results.XXXXXX)"
status=0
FAILED_PHASES=()

[ -d node_modules ] || npm install --no-audit --no-fund
# shellcheck source=scripts/services.sh
source scripts/services.sh
trap stop_services EXIT
[ -n "${DATABASE_URL:-}" ] || start_postgres
[ -n "${REDIS_URL:-}" ] || start_redis
PG_URL="$DATABASE_URL"
PG_DIRECT_URL="${DIRECT_DATABASE_URL:-}"
if [ "${TEST_POOLER:-}" = "pgbouncer" ]; then start_pgbouncer; PG_URL="$DATABASE_URL"; PG_DIRECT_URL="$DIRECT_DATABASE_URL"; fi

# The HTTP-mount and browser tests run the production build; a fresh embedded start copies its database template.
if [ -z "${SKIP_BUILD:-}" ]; then
  echo "=== npm run build (the Next app, the compiled server, the embedded database template)"
  npm run build >"$RESULTS/next-build.log" 2>&1 || { tail -60 "$RESULTS/next-build.log"; echo "npm run build failed"; status=1; }
fi

fresh_database() { # server url, name: creates an empty database on that server and prints its url
  node -e '
    const { Client } = require("pg");
    const [url, name] = process.argv.slice(1);
    const client = new Client({ connectionString: url });
    client.connect()
      .then(() => client.query(`DROP DATABASE IF EXISTS "${name}"`))
      .then(() => client.query(`CREATE DATABASE "${name}"`))
      .then(() => { const u = new URL(url); u.pathname = "/" + name; console.log(u.toString()); return client.end(); })
      .catch((err) => { console.error(`cannot create database ${name}: ${err.message}`); process.exit(1); });
  ' "$1" "$2"
}

run_vitest() { # name, env... [-- vitest args...]
  local name="$1"; shift
  local envs=() args=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
  [ "${1:-}" = "--" ] && shift && args=("$@")
  echo; echo "=== vitest: $name"
  env "${envs[@]}" npx vitest run --reporter=default --reporter=json --outputFile="$RESULTS/vitest-$name.json" "${args[@]}" || { status=1; FAILED_PHASES+=("$name"); }
}

# The split by folder lives in tests/phases.ts: which folders run one file at a time, which on PostgreSQL only.
folders() { node --input-type=module -e 'const p = await import(process.argv[1]); console.log(p[process.argv[2]].join(" "))' "$PWD/tests/phases.ts" "$1"; }
one_at_a_time="$(folders ONE_AT_A_TIME)" && postgres_only="$(folders POSTGRES_ONLY)" || { echo "cannot read tests/phases.ts"; exit 1; }
ONE_AT_A_TIME=(); for d in $one_at_a_time; do ONE_AT_A_TIME+=("tests/$d"); done
NOT_ONE_AT_A_TIME=(); for d in "${ONE_AT_A_TIME[@]}"; do NOT_ONE_AT_A_TIME+=(--exclude "$d/**"); done
NOT_POSTGRES_ONLY=(); for d in $postgres_only; do NOT_POSTGRES_ONLY+=(--exclude "tests/$d/**"); done
# vitest's default on 2 cores is one file at a time; most files wait on servers, processes and
# timers, so two at once nearly halve the phase. TEST_WORKERS sets it.
WORKERS="--maxWorkers=${TEST_WORKERS:-2}"

for phase in $PHASES; do
  case "$phase" in
    postgres)
      run_vitest postgres DATABASE_URL="$PG_URL" DIRECT_DATABASE_URL="$PG_DIRECT_URL" REDIS_URL="$REDIS_URL" -- "$WORKERS" "${NOT_ONE_AT_A_TIME[@]}"
      run_vitest postgres-one-at-a-time DATABASE_URL="$PG_URL" DIRECT_DATABASE_URL="$PG_DIRECT_URL" REDIS_URL="$REDIS_URL" -- --no-file-parallelism "${ONE_AT_A_TIME[@]}" ;;
    pglite)
      # What depends on the engine: every folder but those tests/phases.ts runs on PostgreSQL only.
      run_vitest pglite -u DATABASE_URL -u DIRECT_DATABASE_URL -u REDIS_URL -u UPSTASH_REDIS_REST_URL -- "$WORKERS" "${NOT_ONE_AT_A_TIME[@]}" "${NOT_POSTGRES_ONLY[@]}"
      run_vitest pglite-one-at-a-time -u DATABASE_URL -u DIRECT_DATABASE_URL -u REDIS_URL -u UPSTASH_REDIS_REST_URL -- --no-file-parallelism "${ONE_AT_A_TIME[@]}" ;;
    mounts)
      if [ -x scripts/test-mounts.sh ]; then
        echo; echo "=== API suite over HTTP through both mounts"
        DATABASE_URL="$PG_URL" DIRECT_DATABASE_URL="$PG_DIRECT_URL" REDIS_URL="$REDIS_URL" RESULTS_DIR="$RESULTS" scripts/test-mounts.sh || { status=1; FAILED_PHASES+=(mounts); }
      fi ;;
    e2e)
      if [ -f playwright.config.ts ]; then
        echo; echo "=== browser tests (Playwright + Chromium)"
        # A database of its own: the vitest phases leave other tenants' pending deliveries in the shared one
        # (sealed with their own keys), and the e2e server's delivery worker would spend the run on them.
        E2E_DATABASE_URL="$(fresh_database "${PG_DIRECT_URL:-$PG_URL}" "tdp_e2e_$$")"
        env -u DIRECT_DATABASE_URL DATABASE_URL="$E2E_DATABASE_URL" \
          PLAYWRIGHT_JSON_OUTPUT_NAME="$RESULTS/playwright.json" npx playwright test --reporter=list,json || { status=1; FAILED_PHASES+=(e2e); }
      fi ;;
  esac
done

# One closing line over every runner's results.
node -e '
const fs = require("fs"), path = require("path");
let passed = 0, failed = 0, skipped = 0;
// The failed tests are named again at the very end: a CI log is often read from its tail.
const failures = [];
const slowest = [];
const firstLine = (m) => String(m || "").replace(/\x1b\[[0-9;]*m/g, "").split("\n").find((l) => l.trim()) || "";
const walkSuites = (suite, file, titles) => {
  for (const s of suite.suites || []) walkSuites(s, s.file || file, [...titles, s.title].filter(Boolean));
  for (const spec of suite.specs || []) for (const t of spec.tests || [])
    if (t.status === "unexpected" || t.status === "flaky") {
      const err = (t.results || []).map((x) => x.error && x.error.message).find(Boolean);
      failures.push(`e2e ${spec.file || file}: ${[...titles, spec.title].join(" › ")}: ${firstLine(err)}`);
    }
};
for (const f of fs.readdirSync(process.argv[1])) {
  if (!f.endsWith(".json")) continue;
  const r = JSON.parse(fs.readFileSync(path.join(process.argv[1], f), "utf8"));
  const phase = f.replace(/^vitest-/, "").replace(/\.json$/, "");
  if (r.stats && r.stats.expected !== undefined) { // Playwright
    passed += r.stats.expected; failed += r.stats.unexpected + (r.stats.flaky || 0); skipped += r.stats.skipped;
    for (const s of r.suites || []) walkSuites(s, s.file, []);
  } else if (r.numTotalTests !== undefined) { // vitest
    passed += r.numPassedTests; failed += r.numFailedTests; skipped += r.numPendingTests + (r.numTodoTests || 0);
    for (const file of r.testResults || []) {
      const rel = path.relative(process.cwd(), file.name);
      if (file.endTime && file.startTime) slowest.push({ phase, file: rel, ms: file.endTime - file.startTime });
      for (const t of file.assertionResults || [])
        if (t.status === "failed") failures.push(`${phase} ${rel}: ${t.fullName || t.title}: ${firstLine((t.failureMessages || [])[0])}`);
      if (file.status === "failed" && !(file.assertionResults || []).some((t) => t.status === "failed"))
        failures.push(`${phase} ${rel}: ${firstLine(file.message) || "the file failed outside its tests"}`);
    }
  }
}
// The ten slowest files over every vitest phase: where the next minute of the run goes.
if (slowest.length) {
  slowest.sort((a, b) => b.ms - a.ms);
  console.log(`\nSlowest files:\n${slowest.slice(0, 10).map((f) => `  ${(f.ms / 1000).toFixed(1).padStart(6)} s  ${f.phase} ${f.file}`).join("\n")}`);
}
if (failures.length) console.log(`\nFailed:\n${failures.map((x) => `  ${x.slice(0, 400)}`).join("\n")}`);
// A phase can fail without a failed test (a setup error, no test files): name it.
const failedPhases = process.argv[2] ? `; FAILED phases: ${process.argv[2]}` : "";
console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}${failedPhases}`);
' "$RESULTS" "${FAILED_PHASES[*]:-}"
rm -rf "$RESULTS"
exit $status
