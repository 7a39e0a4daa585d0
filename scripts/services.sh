#!/usr/bin/env bash
# Throwaway PostgreSQL and Redis servers for tests and benchmarks, on 127.0.0.1.
# Source it, then: start_postgres (exports DATABASE_URL), start_redis (exports REDIS_URL);
# start_pgbouncer puts PgBouncer (transaction mode) in front of DATABASE_URL's server: DATABASE_URL
# then goes through it and DIRECT_DATABASE_URL is the server itself;
# stop_services stops them all (install it as an EXIT trap).
set -euo pipefail

# What this shell started, and only that, is what stop_services stops: a caller's SERVICES_DIR (shared
# servers another shell started) survives a run that merely used them.
STARTED_SERVICES=()
[ -n "${SERVICES_DIR:-}" ] || { SERVICES_DIR="$(mktemp -d /tmp/tdp-services.XXXXXX)"; STARTED_SERVICES+=(dir); }
PG_USER_NAME="${PG_USER_NAME:-tdptest}"

free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

# PostgreSQL refuses to run as root: run it as an unprivileged user.
as_pg_user() {
  if [ "$(id -u)" = "0" ]; then
    id -u "$PG_USER_NAME" >/dev/null 2>&1 || useradd --system --no-create-home "$PG_USER_NAME"
    su -s /bin/sh "$PG_USER_NAME" -c "$*"
  else
    sh -c "$*"
  fi
}

start_postgres() {
  command -v initdb >/dev/null || { echo "initdb not found: install PostgreSQL server binaries (apt-get install postgresql)" >&2; return 1; }
  local dir="$SERVICES_DIR/pg" port
  port="$(free_port)"
  mkdir -p "$dir"
  [ "$(id -u)" = "0" ] && { id -u "$PG_USER_NAME" >/dev/null 2>&1 || useradd --system --no-create-home "$PG_USER_NAME"; chown -R "$PG_USER_NAME" "$dir"; chmod 755 "$SERVICES_DIR"; }
  as_pg_user "initdb -D '$dir/data' --no-sync -A trust -U postgres -E UTF8 >'$dir/initdb.log' 2>&1"
  as_pg_user "pg_ctl -D '$dir/data' -l '$dir/server.log' -w -o \"-p $port -k '$dir' -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200\" start >/dev/null"
  export DATABASE_URL="postgresql://postgres@127.0.0.1:$port/postgres"
  export PG_DATA_DIR="$dir/data"
  STARTED_SERVICES+=(postgres)
  echo "postgres on 127.0.0.1:$port" >&2
}

start_pgbouncer() {
  local bin dir="$SERVICES_DIR/pgbouncer" port direct="${DATABASE_URL:?start_pgbouncer needs DATABASE_URL}" server
  bin="$(command -v pgbouncer || echo /usr/sbin/pgbouncer)"
  [ -x "$bin" ] || { echo "pgbouncer not found: apt-get install pgbouncer" >&2; return 1; }
  port="$(free_port)"
  mkdir -p "$dir"
  server="${direct#*://}"; server="${server#*@}"; server="${server%%/*}" # host:port
  printf '"postgres" ""\n' >"$dir/users.txt"
  # Every database name goes to the one server (the tests make a database per file); trust, as the server.
  printf '%s\n' "[databases]" "* = host=${server%%:*} port=${server##*:}" "[pgbouncer]" \
    "listen_addr = 127.0.0.1" "listen_port = $port" "unix_socket_dir =" "auth_type = trust" "auth_file = $dir/users.txt" \
    "pool_mode = transaction" "max_client_conn = 2000" "default_pool_size = 20" \
    "ignore_startup_parameters = extra_float_digits,options" "logfile = $dir/pgbouncer.log" "pidfile = $dir/pgbouncer.pid" >"$dir/pgbouncer.ini"
  # Like PostgreSQL, PgBouncer refuses to run as root.
  [ "$(id -u)" = "0" ] && { id -u "$PG_USER_NAME" >/dev/null 2>&1 || useradd --system --no-create-home "$PG_USER_NAME"; chown -R "$PG_USER_NAME" "$dir"; chmod 755 "$SERVICES_DIR"; }
  as_pg_user "'$bin' -d '$dir/pgbouncer.ini'"
  for _ in $(seq 1 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  export DIRECT_DATABASE_URL="$direct"
  export DATABASE_URL="${direct/$server/127.0.0.1:$port}"
  STARTED_SERVICES+=(pgbouncer)
  echo "pgbouncer (transaction mode) on 127.0.0.1:$port in front of $server" >&2
}

start_redis() {
  command -v redis-server >/dev/null || { echo "redis-server not found: apt-get install redis-server" >&2; return 1; }
  local port
  port="$(free_port)"
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
    --pidfile "$SERVICES_DIR/redis.pid" --logfile "$SERVICES_DIR/redis.log"
  for _ in $(seq 1 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  export REDIS_URL="redis://127.0.0.1:$port"
  STARTED_SERVICES+=(redis)
  echo "redis on 127.0.0.1:$port" >&2
}

stop_services() {
  local started=" ${STARTED_SERVICES[*]:-} "
  if [[ $started == *" pgbouncer "* && -f "$SERVICES_DIR/pgbouncer/pgbouncer.pid" ]]; then kill "$(cat "$SERVICES_DIR/pgbouncer/pgbouncer.pid")" 2>/dev/null || true; fi
  if [[ $started == *" postgres "* && -d "$SERVICES_DIR/pg/data" ]]; then as_pg_user "pg_ctl -D '$SERVICES_DIR/pg/data' -m immediate stop >/dev/null 2>&1" || true; fi
  if [[ $started == *" redis "* && -f "$SERVICES_DIR/redis.pid" ]]; then kill "$(cat "$SERVICES_DIR/redis.pid")" 2>/dev/null || true; fi
  if [[ $started == *" dir "* ]]; then rm -rf "$SERVICES_DIR" 2>/dev/null || true; fi
  STARTED_SERVICES=()
}
