#!/usr/bin/env bash
# PgBouncer in transaction mode on 127.0.0.1:6439, in front of the test database on
# 127.0.0.1:5432, for the tests that check the store behind a pooler (SPEC S27).
#
# Prints the URL to connect through it on stdout (everything else goes to stderr), so that
# .ci/run can export it. Idempotent: when something already answers on the port, it is used.
# It writes its own config and run files under $PGBOUNCER_DIR and never touches the Postgres
# cluster's configuration, nor the system's /etc/pgbouncer.
set -euo pipefail

port="${PGBOUNCER_PORT:-6439}"
dir="${PGBOUNCER_DIR:-/tmp/mutation-guard-pgbouncer}"
url="postgres://postgres@127.0.0.1:${port}/test"

log() { echo "ci/pgbouncer: $*" >&2; }
answers() { psql "$url" -tAc 'select 1' >/dev/null 2>&1; }

if answers; then
  log "already answering on 127.0.0.1:${port}"
  echo "$url"
  exit 0
fi

bin="$(command -v pgbouncer || true)"
[ -n "$bin" ] || bin=/usr/sbin/pgbouncer
if [ ! -x "$bin" ]; then
  log "PgBouncer is missing; installing it"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer >/dev/null
  bin=/usr/sbin/pgbouncer
fi
log "$("$bin" --version | head -n 1)"

mkdir -p "$dir"
# The server trusts loopback connections, so PgBouncer does too. `trust` still wants the
# user listed in the auth file; the password field is not checked.
echo '"postgres" ""' >"$dir/userlist.txt"
cat >"$dir/pgbouncer.ini" <<EOF
[databases]
test = host=127.0.0.1 port=5432 dbname=test

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${dir}/userlist.txt
admin_users = postgres
; A server connection serves one client transaction at a time, then goes back to the pool.
pool_mode = transaction
; Well under the server's max_connections, which other test files share; idle server
; connections are closed soon, so that the pooler does not sit on them between test files.
default_pool_size = 10
server_idle_timeout = 10
max_client_conn = 1000
; node-postgres and postgres.js send none that PgBouncer refuses, but other clients do.
ignore_startup_parameters = extra_float_digits
logfile = ${dir}/pgbouncer.log
pidfile = ${dir}/pgbouncer.pid
EOF

# PgBouncer refuses to run as root: as root, it switches to the cluster's owner.
run_as=()
if [ "$(id -u)" = 0 ]; then
  user=postgres
  id "$user" >/dev/null 2>&1 || user=nobody
  chown -R "$user" "$dir"
  run_as=(-u "$user")
fi
"$bin" -d "${run_as[@]}" "$dir/pgbouncer.ini"

for _ in $(seq 1 50); do
  if answers; then
    log "transaction pooling on 127.0.0.1:${port} -> 127.0.0.1:5432/test"
    echo "$url"
    exit 0
  fi
  sleep 0.2
done
log "PgBouncer did not answer on 127.0.0.1:${port}; its log says:"
tail -n 20 "$dir/pgbouncer.log" >&2 || true
exit 1
