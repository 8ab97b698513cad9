#!/usr/bin/env bash
# Runs test files with every pool of theirs behind PgBouncer in transaction mode, the pooling of deploy/ha: a test
# that passes here relies on no session state of a pooled connection (prepared statements, session settings,
# session advisory locks, LISTEN). Migrations and the revocation listener go to Postgres directly, as
# DATABASE_SESSION_URL sends them in a deployment (test/helpers/database.ts, docs/deploy.md).
#
#   deploy/ha/test-through-pgbouncer.sh [vitest arguments]        default: test/engine
#
# PgBouncer listens on 127.0.0.1:${PGBOUNCER_TEST_PORT:-7640} in front of the tests' Postgres (TEST_DATABASE_ADMIN_URL,
# default postgresql://postgres@127.0.0.1:5432/postgres, trust authentication), with a temporary directory for its
# files; both are gone when the script ends, however it ends. Exits with vitest's status.
set -euo pipefail
cd "$(dirname "$0")/../.."
source deploy/ha/lib.sh

port=${PGBOUNCER_TEST_PORT:-7640}
admin_url=${TEST_DATABASE_ADMIN_URL:-postgresql://postgres@127.0.0.1:5432/postgres}
# Host, port and user of the tests' Postgres, from the admin URL (no password: the tests' server trusts loopback).
target=$(node -e 'const u = new URL(process.argv[1]); console.log(`${u.hostname} ${u.port || 5432} ${decodeURIComponent(u.username) || "postgres"}`)' "$admin_url")
read -r target_host target_port target_user <<<"$target"

ha_packages_ensure pgbouncer
user=$(ha_daemon_user)
dir=$(mktemp -d /tmp/svc-pgbouncer-tests.XXXXXX)
chmod 755 "$dir"
pid=""
cleanup() {
  if [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

printf '"%s" ""\n' "$target_user" >"$dir/userlist.txt"
cat >"$dir/pgbouncer.ini" <<EOF
[databases]
; Any database name the tests ask for, on their Postgres. The statement timeout the service sets as a startup
; parameter (which PgBouncer does not pass on) is set on each server connection instead.
* = host=$target_host port=$target_port connect_query='SET statement_timeout = 15000'

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
pidfile = $dir/pgbouncer.pid
logfile = $dir/pgbouncer.log
auth_type = trust
auth_file = $dir/userlist.txt
admin_users = $target_user
pool_mode = transaction
max_client_conn = 2000
default_pool_size = 8
server_idle_timeout = 5
server_login_retry = 1
query_wait_timeout = 20
ignore_startup_parameters = statement_timeout
EOF
chown -R "$user" "$dir"

( HA_DAEMON_HOME=$dir ha_as_daemon pgbouncer -q "$dir/pgbouncer.ini" ) &
pid=$!
ha_wait_port "$port" 20 "PgBouncer" || { cat "$dir/pgbouncer.log" >&2; exit 1; }
echo "== PgBouncer $(pgbouncer --version | head -n 1 | awk '{print $2}') in transaction mode on 127.0.0.1:$port (pid $pid) in front of $target_host:$target_port"

status=0
TEST_DATABASE_POOLER_URL="postgresql://$target_user@127.0.0.1:$port/postgres" npx vitest run "${@:-test/engine}" || status=$?

# What went through the pooler: transactions and queries it passed on, over all databases, and how many server
# connections it ever opened.
stats=$(psql -X -A -t -F ' ' -h 127.0.0.1 -p "$port" -U "$target_user" pgbouncer -c 'SHOW STATS' 2>/dev/null |
  awk '$1 != "pgbouncer" { xact += $2; query += $3 } END { print xact + 0, query + 0 }')
echo "== PgBouncer passed on $(cut -d' ' -f1 <<<"$stats") transactions ($(cut -d' ' -f2 <<<"$stats") statements) in transaction mode"
if grep -qiE 'prepared statement|unsupported startup parameter' "$dir/pgbouncer.log"; then
  echo "== PgBouncer logged session-state errors:" >&2
  grep -iE 'prepared statement|unsupported startup parameter' "$dir/pgbouncer.log" | head -n 20 >&2
fi
exit "$status"
