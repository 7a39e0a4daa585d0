#!/usr/bin/env bash
# Runs the API suite (tests/api) over real HTTP against each production mount in turn: the lean
# front (`npm start`'s server) and `next start`. The tests create tenants and keys directly in the
# database the server uses, so this needs a PostgreSQL DATABASE_URL (PGlite allows one process).
#
#   DATABASE_URL=postgresql://… bash scripts/test-mounts.sh            # both mounts
#   DATABASE_URL=postgresql://… bash scripts/test-mounts.sh lean       # one mount
#   … extra vitest arguments after `--`:  bash scripts/test-mounts.sh next -- -t smoke
#
# By hand, the same for one mount:
#   PORT=3100 npm start &        (or: node node_modules/next/dist/bin/next start -H 127.0.0.1 -p 3100 &)
#   API_BASE_URL=http://127.0.0.1:3100 npx vitest run tests/api
set -euo pipefail
cd "$(dirname "$0")/.."

: "${DATABASE_URL:?set DATABASE_URL to a PostgreSQL database: the tests and the server must share it}"
export NEXT_TELEMETRY_DISABLED=1

mounts=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do mounts+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
[ ${#mounts[@]} -eq 0 ] && mounts=(lean next)

if [ ! -f .next/BUILD_ID ]; then
  echo "[test-mounts] no production build: running next build"
  node node_modules/next/dist/bin/next build
fi

node scripts/build-server.mjs # the lean front runs compiled, as in production; a second, always fresh

free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

server_pid=""
stop_server() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$server_pid" 2>/dev/null || true
  fi
  server_pid=""
}
trap stop_server EXIT

status=0
for mount in "${mounts[@]}"; do
  port=$(free_port)
  log=$(mktemp -t "mount-$mount-XXXX.log")
  case "$mount" in
    lean) cmd=(node dist/server/main.mjs) ;; # what `npm start` runs: the compiled server
    next) cmd=(node node_modules/next/dist/bin/next start -H 127.0.0.1 -p "$port") ;;
    *) echo "unknown mount '$mount' (lean or next)" >&2; exit 2 ;;
  esac
  echo "[test-mounts] $mount: starting on 127.0.0.1:$port (log: $log)"
  # The server applies pending migrations on open; the demo seed stays off; the tests' fake CRM
  # listens on 127.0.0.1, which only the development allowance for loopback targets lets it call.
  HOST=127.0.0.1 PORT=$port NODE_ENV=production DEMO_SEED=0 LOG_LEVEL=warn WEBHOOK_ALLOW_LOOPBACK=1 "${cmd[@]}" >"$log" 2>&1 &
  server_pid=$!
  if ! node -e '
    const url = process.argv[1], deadline = Date.now() + 120000;
    (async () => {
      for (;;) {
        try { await fetch(url, { signal: AbortSignal.timeout(5000) }); process.exit(0); } catch {}
        if (Date.now() > deadline) process.exit(1);
        await new Promise((r) => setTimeout(r, 250));
      }
    })();' "http://127.0.0.1:$port/api/v1"; then
    echo "[test-mounts] $mount did not start; its log:" >&2; cat "$log" >&2; exit 1
  fi
  echo "[test-mounts] $mount: API_BASE_URL=http://127.0.0.1:$port npx vitest run tests/api $*"
  # Under scripts/test.sh (RESULTS_DIR set), results also go to JSON for its closing count.
  report=()
  [ -n "${RESULTS_DIR:-}" ] && report=(--reporter=default --reporter=json --outputFile="$RESULTS_DIR/vitest-mounts-$mount.json")
  API_BASE_URL="http://127.0.0.1:$port" npx vitest run tests/api "${report[@]}" "$@" || { status=1; echo "[test-mounts] $mount: FAILED (server log: $log)" >&2; }
  stop_server
done
exit $status
