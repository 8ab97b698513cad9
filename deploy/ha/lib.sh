# Shared by the scripts of deploy/ha (sourced, not run): installing the Debian packages the cluster needs without
# starting their stock services, the user the daemons run as, and waiting for a port to answer.

# What the deployment runs: Patroni, etcd, HAProxy, PgBouncer, and the tools the scripts use.
HA_PACKAGES=(patroni etcd-server haproxy pgbouncer jq curl openssl)

# Installs the named Debian packages that are missing (apt-get update once, first). A package's own service is
# never started: Postgres, etcd, HAProxy and PgBouncer run only as this directory's scripts start them, on their
# own ports, so the stock services (and a Postgres already on 5432) are left alone. When the machine has no
# policy-rc.d of its own, one that refuses every start is in place for the installation only.
ha_packages_ensure() {
  local missing=() package
  for package in "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "missing Debian packages: ${missing[*]} (run as root, or install them: apt-get install ${missing[*]})" >&2
    return 1
  fi
  echo "== installing ${missing[*]}" >&2
  local policy=/usr/sbin/policy-rc.d own_policy=""
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# deploy/ha: no service starts while packages install\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    own_policy=1
  fi
  local status=0
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >&2 || status=$?
  [ -n "$own_policy" ] && rm -f "$policy"
  return "$status"
}

# The newest Postgres server binaries of the machine (Debian keeps each major version in its own directory), or
# PG_BIN_DIR when set.
ha_postgres_bin_dir() {
  if [ -n "${PG_BIN_DIR:-}" ]; then echo "$PG_BIN_DIR"; return; fi
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$dir" ] && [ -x "$dir/postgres" ] || return 1
  echo "$dir"
}

# The user the daemons run as: Postgres refuses to run as root, and PgBouncer too, so as root they run as the
# `postgres` system user (created by Debian's postgresql-common); otherwise as the caller.
ha_daemon_user() {
  if [ "$(id -u)" -eq 0 ]; then echo postgres; else id -un; fi
}

# Runs a command as the daemon user, in a session of its own (so a Ctrl-C at the terminal does not reach it: the
# scripts stop what they started, in order). `exec`s, so `$!` of a backgrounded call is the daemon's own pid.
ha_as_daemon() {
  if [ "$(id -u)" -eq 0 ]; then
    exec setsid setpriv --reuid=postgres --regid=postgres --init-groups env HOME="${HA_DAEMON_HOME:-/tmp}" "$@"
  else
    exec setsid "$@"
  fi
}

# Waits until 127.0.0.1:$1 accepts a connection, at most $2 seconds (default 30); fails naming $3.
ha_wait_port() {
  local port=$1 seconds=${2:-30} what=${3:-"port $1"} waited=0
  until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
    waited=$((waited + 1))
    if [ "$waited" -gt $((seconds * 5)) ]; then echo "$what did not open 127.0.0.1:$port within ${seconds}s" >&2; return 1; fi
    sleep 0.2
  done
}

# True when process $1 runs (a zombie, already dead but not yet reaped, does not count) and, when $2 is given, its
# command line contains $2: a pid file outlives its process, and the pid may have been reused since.
ha_alive() {
  local pid=$1 pattern=${2:-} state
  [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 1
  state=$(sed -E 's/^[0-9]+ \(.*\) ([A-Za-z]).*/\1/' 2>/dev/null <"/proc/$pid/stat") || return 1
  [ "$state" != Z ] || return 1
  [ -z "$pattern" ] || tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF -- "$pattern"
}

# Stops the process whose pid is in file $1 (if its command line contains $2): SIGTERM, then SIGKILL after $3
# seconds (default 20). Quiet when the file or the process is gone already; removes the file.
ha_stop_pidfile() {
  local file=$1 pattern=${2:-} grace=${3:-20} pid waited=0
  [ -f "$file" ] || return 0
  pid=$(cat "$file")
  if ha_alive "$pid" "$pattern"; then
    kill -TERM "$pid" 2>/dev/null || true
    while ha_alive "$pid" "$pattern"; do
      waited=$((waited + 1))
      if [ "$waited" -gt $((grace * 10)) ]; then
        echo "pid $pid ($pattern) ignored SIGTERM for ${grace}s: SIGKILL" >&2
        kill -KILL "$pid" 2>/dev/null || true
        break
      fi
      sleep 0.1
    done
  fi
  rm -f "$file"
}
