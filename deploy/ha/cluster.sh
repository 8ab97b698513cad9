#!/usr/bin/env bash
# The highly available deployment on one machine, for testing: etcd, three Patroni-managed Postgres nodes in
# synchronous replication, HAProxy in front of the current primary (and of the service replicas), PgBouncer in
# transaction mode, and N service replicas, each on its own port with its data under one directory. What changes on
# several machines is in docs/deploy.md; the failover drill (npm run drill:failover) drives this script.
#
#   deploy/ha/cluster.sh up [--dir DIR] [--replicas N] [--port-base PORT]   start everything, print where it is
#   deploy/ha/cluster.sh down --dir DIR [--keep]                             stop everything, delete DIR (unless --keep)
#   deploy/ha/cluster.sh status --dir DIR                                    the Patroni cluster and each process
#   deploy/ha/cluster.sh start-node --dir DIR N                              (re)start Patroni node N (1-3)
#   deploy/ha/cluster.sh start-replica --dir DIR N                           (re)start service replica N
#
# Ports, from PORT (default 7500): etcd +0 (peers +1); Postgres nodes +10..+12, their Patroni REST APIs +20..+22;
# HAProxy: the primary +30 (sessions: migrations, LISTEN, the CLI), its stats page +31, the service +50;
# PgBouncer +40 (the replicas' pools); service replica i on +59+i. DIR defaults to a new /tmp/svc-ha.XXXXXX.
# Every process is started by pid and stopped by pid (DIR/*.pid); `down` leaves nothing running. Missing Debian
# packages (patroni, etcd-server, haproxy, pgbouncer, and postgresql when no server binaries exist) are installed
# first (root needed for that); the stock services they bring are never started, and a Postgres on 5432 is left alone.
set -Eeuo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
source "$repo/deploy/ha/lib.sh"

usage() { sed -n '6,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

command=${1:-}
[ -n "$command" ] || usage
shift
dir="" replicas=2 port_base=7500 keep="" index=""
while [ $# -gt 0 ]; do
  case $1 in
    --dir) dir=$2; shift 2 ;;
    --replicas) replicas=$2; shift 2 ;;
    --port-base) port_base=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    [0-9]*) index=$1; shift ;;
    *) usage ;;
  esac
done
[[ $replicas =~ ^[1-9][0-9]?$ ]] && [ "$replicas" -le 20 ] || { echo "--replicas must be 1 to 20" >&2; exit 2; }
[[ $port_base =~ ^[0-9]+$ ]] && [ "$port_base" -ge 1024 ] && [ "$port_base" -le 65400 ] || { echo "--port-base must be 1024 to 65400" >&2; exit 2; }

# ---- Layout ----

# Writes DIR/cluster.env: every port, address and secret of this cluster (mode 0600), read by every subcommand
# and by the drill. Secrets are random per cluster and never printed.
write_environment() {
  local scope secret
  scope="svc-ha-$(openssl rand -hex 3)"
  secret() { openssl rand -hex 24; }
  umask 077
  cat >"$dir/cluster.env" <<EOF
HA_DIR=$dir
HA_SCOPE=$scope
HA_REPLICAS=$replicas
HA_ETCD_PORT=$((port_base + 0))
HA_ETCD_PEER_PORT=$((port_base + 1))
HA_PG_PORTS="$((port_base + 10)) $((port_base + 11)) $((port_base + 12))"
HA_REST_PORTS="$((port_base + 20)) $((port_base + 21)) $((port_base + 22))"
HA_PRIMARY_PORT=$((port_base + 30))
HA_STATS_PORT=$((port_base + 31))
HA_PGBOUNCER_PORT=$((port_base + 40))
HA_HTTP_PORT=$((port_base + 50))
HA_REPLICA_PORT_BASE=$((port_base + 59))
HA_SUPERUSER_PASSWORD=$(secret)
HA_REPLICATION_PASSWORD=$(secret)
HA_REST_PASSWORD=$(secret)
HA_SERVICE_PASSWORD=$(secret)
EOF
  umask 022
}

load_environment() {
  [ -n "$dir" ] || { echo "--dir is required" >&2; exit 2; }
  [ -f "$dir/cluster.env" ] || { echo "$dir holds no cluster (no cluster.env)" >&2; exit 1; }
  # shellcheck disable=SC1091
  source "$dir/cluster.env"
  read -r -a pg_ports <<<"$HA_PG_PORTS"
  read -r -a rest_ports <<<"$HA_REST_PORTS"
  daemon_user=$(ha_daemon_user)
  service_url="postgresql://svc:$HA_SERVICE_PASSWORD@127.0.0.1:$HA_PGBOUNCER_PORT/svc"
  session_url="postgresql://svc:$HA_SERVICE_PASSWORD@127.0.0.1:$HA_PRIMARY_PORT/svc"
}

# ---- Configuration files ----

write_etcd() {
  mkdir -p "$dir/etcd"
  chown "$daemon_user" "$dir/etcd"
  chmod 700 "$dir/etcd"
}

# One Patroni node. The dynamic settings under bootstrap.dcs are the cluster's (docs/deploy.md explains each):
# synchronous replication to one standby, strict, so that no acknowledged commit exists on one node only; a
# primary whose Postgres crashes fails over at once (primary_start_timeout 0) instead of restarting in place; short
# timeouts, so a lost primary is replaced within seconds.
write_patroni() {
  local node=$1 pg_port=${pg_ports[$(($1 - 1))]} rest_port=${rest_ports[$(($1 - 1))]} node_dir="$dir/node$1"
  local bin_dir
  bin_dir=$(ha_postgres_bin_dir)
  # Only the daemon user may enter the node's directory: its socket there trusts whoever reaches it.
  mkdir -p "$node_dir"
  chmod 700 "$node_dir"
  umask 077
  cat >"$node_dir/patroni.yml" <<EOF
scope: $HA_SCOPE
namespace: /svc/
name: node$node

restapi:
  listen: 127.0.0.1:$rest_port
  connect_address: 127.0.0.1:$rest_port
  authentication: {username: patroni, password: $HA_REST_PASSWORD}

etcd3:
  hosts: 127.0.0.1:$HA_ETCD_PORT

bootstrap:
  dcs:
    ttl: 12
    loop_wait: 2
    retry_timeout: 4
    primary_start_timeout: 0
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    synchronous_mode_strict: true
    synchronous_node_count: 1
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        max_connections: 100
        shared_buffers: 64MB
        wal_level: replica
        hot_standby: 'on'
        wal_log_hints: 'on'
        synchronous_commit: 'on'
        max_wal_senders: 10
        max_replication_slots: 10
        wal_keep_size: 256MB
        password_encryption: scram-sha-256
  initdb:
    - encoding: UTF8
    - data-checksums

postgresql:
  listen: 127.0.0.1:$pg_port
  connect_address: 127.0.0.1:$pg_port
  use_unix_socket: true
  data_dir: $node_dir/data
  bin_dir: $bin_dir
  pgpass: $node_dir/pgpass
  remove_data_directory_on_rewind_failure: true
  remove_data_directory_on_diverged_timelines: true
  authentication:
    superuser: {username: postgres, password: $HA_SUPERUSER_PASSWORD}
    replication: {username: replicator, password: $HA_REPLICATION_PASSWORD}
  parameters:
    unix_socket_directories: '$node_dir'
    logging_collector: 'on'
    log_directory: '$node_dir/log'
    log_min_messages: warning
  pg_hba:
    - local all all trust
    - host replication replicator 127.0.0.1/32 scram-sha-256
    - host all all 127.0.0.1/32 scram-sha-256

tags: {nofailover: false, noloadbalance: false, clonefrom: false, nosync: false}
EOF
  umask 022
  chown -R "$daemon_user" "$node_dir"
}

# HAProxy: the primary by Patroni's health check (200 on the leader only), cutting every session to a node the
# moment it is marked down; and the service replicas, by their liveness (not readiness: when the database is away
# every replica is equally unready, and the service's own 503 with Retry-After is the better answer than the proxy's).
write_haproxy() {
  local node server_lines="" replica_lines="" i
  for node in 1 2 3; do
    server_lines+="  server node$node 127.0.0.1:${pg_ports[$((node - 1))]} check port ${rest_ports[$((node - 1))]}"$'\n'
  done
  for ((i = 1; i <= HA_REPLICAS; i++)); do
    replica_lines+="  server svc$i 127.0.0.1:$((HA_REPLICA_PORT_BASE + i)) check"$'\n'
  done
  cat >"$dir/haproxy.cfg" <<EOF
global
  maxconn 4000
  log stdout format raw local0 notice
  stats socket $dir/haproxy.sock mode 600 level admin

defaults
  log global
  timeout connect 2s
  timeout check 2s

listen postgres_primary
  bind 127.0.0.1:$HA_PRIMARY_PORT
  mode tcp
  timeout client 30m
  timeout server 30m
  option httpchk
  http-check send meth GET uri /primary
  http-check expect status 200
  default-server inter 1s fastinter 500ms downinter 1s rise 1 fall 2 on-marked-down shutdown-sessions
$server_lines
listen svc_http
  bind 127.0.0.1:$HA_HTTP_PORT
  mode http
  balance roundrobin
  timeout client 75s
  timeout server 75s
  timeout http-request 10s
  timeout http-keep-alive 10s
  option httpchk
  http-check send meth GET uri /healthz
  http-check expect status 200
  # Only a request that never reached a replica is sent to another one; anything else is the client's to retry
  # with its idempotency key.
  retry-on conn-failure
  retries 2
  option redispatch 1
  # With no replica up, the proxy answers as a replica would when its database is away: 503 internal.unavailable in
  # the service's envelope, with Retry-After, so that clients back off instead of hammering.
  http-error status 503 content-type application/json lf-string "{\"error\":{\"code\":\"internal.unavailable\",\"message\":\"A dependency of the service is temporarily unavailable. Retry with backoff.\"},\"request_id\":\"req_%[uuid(4),regsub(-,,g),bytes(0,24)]\"}" hdr retry-after 1
  default-server inter 1s fastinter 500ms downinter 1s rise 2 fall 2
$replica_lines
listen stats
  bind 127.0.0.1:$HA_STATS_PORT
  mode http
  timeout client 10s
  timeout server 10s
  stats enable
  stats uri /
EOF
}

# PgBouncer in transaction mode in front of HAProxy's primary port: the replicas' pools keep their connections to
# PgBouncer across a failover, and Postgres sees default_pool_size connections however many replicas there are.
write_pgbouncer() {
  mkdir -p "$dir/pgbouncer"
  umask 077
  printf '"svc" "%s"\n' "$HA_SERVICE_PASSWORD" >"$dir/pgbouncer/userlist.txt"
  umask 022
  cat >"$dir/pgbouncer/pgbouncer.ini" <<EOF
[databases]
; The service's statement timeout (15 s) travels as a startup parameter, which PgBouncer does not pass on: it is
; set on each server connection instead.
svc = host=127.0.0.1 port=$HA_PRIMARY_PORT dbname=svc connect_query='SET statement_timeout = 15000'

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $HA_PGBOUNCER_PORT
unix_socket_dir =
pidfile = $dir/pgbouncer/pgbouncer.pid
logfile = $dir/pgbouncer/pgbouncer.log
auth_type = scram-sha-256
auth_file = $dir/pgbouncer/userlist.txt
pool_mode = transaction
max_client_conn = 2000
default_pool_size = 20
reserve_pool_size = 0
server_connect_timeout = 3
server_login_retry = 1
server_check_delay = 5
server_idle_timeout = 60
query_wait_timeout = 10
tcp_keepalive = 1
ignore_startup_parameters = statement_timeout
EOF
  chown -R "$daemon_user" "$dir/pgbouncer"
}

# The gateway signing keys, one set for every replica.
write_signing_keys() {
  mkdir -p "$dir/service"
  chmod 700 "$dir/service"
  umask 077
  printf '{"keys":[{"kid":"gk_%s_%s","seed_hex":"%s","status":"active","created_at":"%s"}]}\n' \
    "$(date -u +%Y-%m-%d)" "$(openssl rand -hex 4)" "$(openssl rand -hex 32)" "$(date -u +%Y-%m-%dT%H:%M:%S.000Z)" >"$dir/service/signing-keys.json"
  umask 022
}

# ---- Starting ----

start_etcd() {
  ( HA_DAEMON_HOME=$dir/etcd ha_as_daemon etcd --name etcd1 --data-dir "$dir/etcd/data" \
      --listen-client-urls "http://127.0.0.1:$HA_ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$HA_ETCD_PORT" \
      --listen-peer-urls "http://127.0.0.1:$HA_ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$HA_ETCD_PEER_PORT" \
      --initial-cluster "etcd1=http://127.0.0.1:$HA_ETCD_PEER_PORT" --initial-cluster-token "$HA_SCOPE" \
      --initial-cluster-state new --logger zap --log-level warn ) >"$dir/etcd/etcd.log" 2>&1 &
  echo $! >"$dir/etcd/etcd.pid"
  ha_wait_port "$HA_ETCD_PORT" 30 etcd || { tail -n 20 "$dir/etcd/etcd.log" >&2; return 1; }
}

start_node() {
  local node=$1 node_dir="$dir/node$1"
  if [ -f "$node_dir/patroni.pid" ] && ha_alive "$(cat "$node_dir/patroni.pid")" patroni; then
    echo "node$node: Patroni already runs (pid $(cat "$node_dir/patroni.pid"))" >&2
    return 0
  fi
  ( HA_DAEMON_HOME=$node_dir ha_as_daemon patroni "$node_dir/patroni.yml" ) >>"$node_dir/patroni.log" 2>&1 &
  echo $! >"$node_dir/patroni.pid"
}

start_haproxy() {
  haproxy -c -q -f "$dir/haproxy.cfg"
  # HAProxy needs no other user (its ports are unprivileged) and keeps its admin socket in DIR.
  ( exec setsid haproxy -db -f "$dir/haproxy.cfg" ) >"$dir/haproxy.log" 2>&1 &
  echo $! >"$dir/haproxy.pid"
  ha_wait_port "$HA_PRIMARY_PORT" 10 HAProxy
  wait_primary_routed 30
}

# HAProxy takes every server for up until its checks say otherwise, so for its first second it may send a session
# to a standby: wait until exactly one node, the leader, is up behind the primary port.
wait_primary_routed() {
  local seconds=$1 deadline=$((SECONDS + $1)) up leader
  while :; do
    up=$(curl -fsS --max-time 2 "http://127.0.0.1:$HA_STATS_PORT/;csv" 2>/dev/null | awk -F, '$1 == "postgres_primary" && $2 != "BACKEND" && $2 != "FRONTEND" && $18 == "UP" { print $2 }' | tr '\n' ' ')
    leader=$(cluster_json | jq -r '.members[] | select(.role == "leader") | .name' 2>/dev/null || true)
    [ "$up" = "$leader " ] && [ -n "$leader" ] && return 0
    if [ "$SECONDS" -ge "$deadline" ]; then echo "HAProxy routes the primary port to '${up}', the leader is '$leader'" >&2; return 1; fi
    sleep 0.5
  done
}

start_pgbouncer() {
  ( HA_DAEMON_HOME=$dir/pgbouncer ha_as_daemon pgbouncer -q "$dir/pgbouncer/pgbouncer.ini" ) >/dev/null 2>&1 &
  echo $! >"$dir/pgbouncer/pgbouncer.process.pid"
  ha_wait_port "$HA_PGBOUNCER_PORT" 10 PgBouncer || { tail -n 20 "$dir/pgbouncer/pgbouncer.log" >&2; return 1; }
}

# One service replica, as `npm start` runs it, on its own port; its log in DIR/service/svcN.log.
start_replica() {
  local replica=$1 port=$((HA_REPLICA_PORT_BASE + $1))
  if [ -f "$dir/service/svc$replica.pid" ] && ha_alive "$(cat "$dir/service/svc$replica.pid")" src/server.ts; then
    echo "svc$replica already runs (pid $(cat "$dir/service/svc$replica.pid"))" >&2
    return 0
  fi
  mkdir -p "$dir/service/svc$replica"
  ( cd "$repo" && exec env HOST=127.0.0.1 PORT="$port" DATABASE_URL="$service_url" DATABASE_SESSION_URL="$session_url" \
      SVC_SIGNING_KEY_FILE="$dir/service/signing-keys.json" SVC_DATA_DIR="$dir/service/svc$replica" \
      LOG_LEVEL="${HA_LOG_LEVEL:-warn}" SVC_RATE_LIMIT_PER_MINUTE="${HA_RATE_LIMIT_PER_MINUTE:-1000000000}" \
      setsid node --max-semi-space-size=64 --import tsx src/server.ts ) >>"$dir/service/svc$replica.log" 2>&1 &
  echo $! >"$dir/service/svc$replica.pid"
}

# Waits until GET $1 answers 200, at most $2 seconds; fails naming $3.
wait_http() {
  local url=$1 seconds=$2 what=$3 deadline=$((SECONDS + $2))
  until curl -fsS -o /dev/null --max-time 2 "$url" 2>/dev/null; do
    if [ "$SECONDS" -ge "$deadline" ]; then echo "$what did not answer $url within ${seconds}s" >&2; return 1; fi
    sleep 0.5
  done
}

# The Patroni cluster as node 1..3 see it (the first that answers).
cluster_json() {
  local port
  for port in "${rest_ports[@]}"; do
    curl -fsS --max-time 2 "http://127.0.0.1:$port/cluster" 2>/dev/null && return 0
  done
  return 1
}

# Waits until the cluster has a running leader, a synchronous standby and all three members running.
wait_cluster_healthy() {
  local seconds=$1 deadline=$((SECONDS + $1)) json
  while :; do
    json=$(cluster_json || true)
    if [ -n "$json" ] && jq -e '([.members[] | select(.role == "leader" and .state == "running")] | length) == 1
        and ([.members[] | select(.role == "sync_standby")] | length) >= 1
        and ([.members[] | select(.state == "running" or .state == "streaming")] | length) == 3' >/dev/null <<<"$json"; then
      return 0
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "the Patroni cluster was not healthy within ${seconds}s:" >&2
      [ -n "$json" ] && jq -c '.members[] | {name, role, state}' <<<"$json" >&2
      return 1
    fi
    sleep 1
  done
}

psql_primary() {
  PGPASSWORD=$HA_SUPERUSER_PASSWORD psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$HA_PRIMARY_PORT" -U postgres -d postgres "$@"
}

# The service's login role owns its database and may create roles (the migrations create svc_app and svc_system
# and grant them to it); it is not a superuser, so row-level security binds it.
create_service_database() {
  psql_primary -c "CREATE ROLE svc LOGIN CREATEROLE PASSWORD '$HA_SERVICE_PASSWORD'" -c "CREATE DATABASE svc OWNER svc" \
    -c "REVOKE ALL ON DATABASE svc FROM PUBLIC"
}

up() {
  [ -z "$dir" ] && dir=$(mktemp -d /tmp/svc-ha.XXXXXX)
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  [ ! -f "$dir/cluster.env" ] || { echo "$dir already holds a cluster; choose another --dir or take it down first" >&2; exit 1; }
  # The daemons run as another user, which must reach its files below DIR.
  chmod 755 "$dir"

  "$repo/deploy/ha/install-packages.sh"

  write_environment
  load_environment
  echo "== cluster $HA_SCOPE in $dir"
  # Whatever fails from here on, nothing stays running.
  trap 'echo "== start failed: taking the cluster down" >&2; "$0" down --dir "$dir" --keep >&2' ERR
  write_etcd
  write_patroni 1
  write_patroni 2
  write_patroni 3
  write_haproxy
  write_pgbouncer
  write_signing_keys

  start_etcd
  start_node 1
  # The first node bootstraps the cluster alone; the others then clone it.
  wait_http "http://127.0.0.1:${rest_ports[0]}/primary" 90 "node1 (bootstrap)"
  start_node 2
  start_node 3
  wait_cluster_healthy 180
  start_haproxy
  create_service_database
  start_pgbouncer

  # Migrations run once, here, before any replica starts (each replica would otherwise run them at start, one at a
  # time under the migrations' lock, the later ones finding nothing to do).
  ( cd "$repo" && DATABASE_URL="$service_url" DATABASE_SESSION_URL="$session_url" node bin/svc.js migrate ) >&2

  local i
  for ((i = 1; i <= HA_REPLICAS; i++)); do start_replica "$i"; done
  for ((i = 1; i <= HA_REPLICAS; i++)); do
    wait_http "http://127.0.0.1:$((HA_REPLICA_PORT_BASE + i))/readyz" 180 "svc$i" || { tail -n 30 "$dir/service/svc$i.log" >&2; false; }
  done
  wait_http "http://127.0.0.1:$HA_HTTP_PORT/readyz" 30 "HAProxy's service port"
  trap - ERR
  cat <<EOF
== up: $HA_REPLICAS service replicas behind http://127.0.0.1:$HA_HTTP_PORT
   primary (sessions)   127.0.0.1:$HA_PRIMARY_PORT     PgBouncer (pools)  127.0.0.1:$HA_PGBOUNCER_PORT
   Patroni REST         ${rest_ports[*]/#/127.0.0.1:}
   HAProxy stats        http://127.0.0.1:$HA_STATS_PORT/
   secrets and ports    $dir/cluster.env
   take it down with    deploy/ha/cluster.sh down --dir $dir
EOF
}

# ---- Stopping ----

# Postgres processes of this cluster that outlived their Patroni (a killed node): the postmasters by their data
# directory, and any backend whose title names this cluster (Postgres titles its processes with cluster_name, which
# Patroni sets to the scope, unique per cluster).
leftover_postgres_pids() {
  local pid cmdline
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    cmdline=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") || continue
    case $cmdline in
      *"-D $dir/node"*|"postgres: $HA_SCOPE: "*) echo "$pid" ;;
    esac
  done
}

down() {
  load_environment
  local i node pids
  for ((i = 1; i <= 20; i++)); do ha_stop_pidfile "$dir/service/svc$i.pid" src/server.ts 20; done
  ha_stop_pidfile "$dir/pgbouncer/pgbouncer.process.pid" pgbouncer 10
  ha_stop_pidfile "$dir/haproxy.pid" haproxy 10
  # Patroni stops its Postgres on SIGTERM; the replicas first, so the primary does not wait on a standby leaving.
  for node in 3 2 1; do ha_stop_pidfile "$dir/node$node/patroni.pid" patroni 40 & done
  wait
  ha_stop_pidfile "$dir/etcd/etcd.pid" etcd 10
  pids=$(leftover_postgres_pids)
  if [ -n "$pids" ]; then
    echo "== stopping Postgres processes left by a killed node: $(echo $pids)" >&2
    kill -KILL $pids 2>/dev/null || true
    sleep 0.5
  fi
  pids=$(leftover_postgres_pids)
  [ -z "$pids" ] || { echo "still running: $pids" >&2; exit 1; }
  if [ -z "$keep" ]; then rm -rf "$dir"; echo "== down; $dir removed"; else echo "== down; $dir kept"; fi
}

status() {
  load_environment
  cluster_json | jq -r '.members[] | "\(.name)  \(.role)  \(.state)  timeline \(.timeline // "-")  lag \(.lag // 0)"' || echo "no Patroni node answers"
  local file
  for file in "$dir"/etcd/etcd.pid "$dir"/node*/patroni.pid "$dir"/haproxy.pid "$dir"/pgbouncer/pgbouncer.process.pid "$dir"/service/svc*.pid; do
    [ -f "$file" ] || continue
    if ha_alive "$(cat "$file")"; then echo "running  $(cat "$file")  ${file#"$dir"/}"; else echo "stopped  $(cat "$file")  ${file#"$dir"/}"; fi
  done
}

case $command in
  up) up ;;
  down) down ;;
  status) status ;;
  start-node)
    load_environment
    [[ $index =~ ^[1-3]$ ]] || usage
    start_node "$index" ;;
  start-replica)
    load_environment
    [[ $index =~ ^[0-9]+$ ]] && [ "$index" -ge 1 ] && [ "$index" -le "$HA_REPLICAS" ] || usage
    start_replica "$index" ;;
  *) usage ;;
esac
