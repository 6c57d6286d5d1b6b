#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server for the PostgreSQL store's tests (native/tests/pg_*.rs,
# fleet_postgres.rs) and the benchmark, and says where it is:
#   - installs the server from Debian's packages (apt-get install postgresql) when no
#     PostgreSQL binaries are on the machine;
#   - initdb's a data directory under a new temporary folder (as the user `postgres`, or
#     `nobody`, when run as root: initdb refuses root), trust authentication, loopback only;
#   - starts it on 127.0.0.1 on a free port, its socket in that folder, and creates the
#     database ctxkit_test with the pg_trgm extension;
#   - stops the server and removes the folder when the shell that sourced it exits.
#
#   source scripts/pg-server.sh     starts it, exports CTXKIT_TEST_POSTGRES_URL (postgres://...),
#                                   CTXKIT_TEST_POSTGRES_DATA (the data directory),
#                                   CTXKIT_TEST_POSTGRES_PG_CTL (pg_ctl's path) and
#                                   CTXKIT_TEST_POSTGRES_RUN_AS (the user pg_ctl must run as,
#                                   empty when it is this user); the fleet tests restart it
#                                   with them. pg_server_stop (in that shell) stops it early.
# scripts/test.sh sources it before the tests. With CI=true a test that finds no
# CTXKIT_TEST_POSTGRES_URL fails; without, it skips with a message.

pg_server_bin_dir() {
  local dir
  for dir in /usr/lib/postgresql/*/bin; do
    if [[ -x "$dir/initdb" && -x "$dir/pg_ctl" && -x "$dir/postgres" ]]; then
      echo "$dir"
    fi
  done | sort -V | tail -n 1
}

pg_server_stop() {
  if [[ -n "${PG_SERVER_ROOT:-}" && -d "$PG_SERVER_ROOT" ]]; then
    pg_server_as "$CTXKIT_TEST_POSTGRES_PG_CTL" -D "$CTXKIT_TEST_POSTGRES_DATA" -m immediate -w \
      stop >/dev/null 2>&1 || true
    rm -rf "$PG_SERVER_ROOT"
  fi
  PG_SERVER_ROOT=""
}

# Runs "$@" as the server's user.
pg_server_as() {
  if [[ -n "${CTXKIT_TEST_POSTGRES_RUN_AS:-}" ]]; then
    runuser -u "$CTXKIT_TEST_POSTGRES_RUN_AS" -- "$@"
  else
    "$@"
  fi
}

pg_server_start() {
  local bin started port user
  started=$SECONDS
  bin="$(pg_server_bin_dir)"
  if [[ -z "$bin" ]]; then
    if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null; then
      echo "pg-server: no PostgreSQL server binaries, and cannot apt-get install postgresql" >&2
      return 1
    fi
    echo "pg-server: installing postgresql (Debian)" >&2
    # The package's own cluster is not wanted: only the binaries.
    mkdir -p /etc/postgresql-common
    grep -qs '^create_main_cluster' /etc/postgresql-common/createcluster.conf \
      || echo 'create_main_cluster = false' >>/etc/postgresql-common/createcluster.conf
    { DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql \
        || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql; }
    } >&2 || return 1
    bin="$(pg_server_bin_dir)"
    [[ -n "$bin" ]] || { echo "pg-server: postgresql installed no server binaries" >&2; return 1; }
  fi

  user=""
  if [[ "$(id -u)" == 0 ]]; then
    if id postgres >/dev/null 2>&1; then user=postgres; else user=nobody; fi
  fi
  export CTXKIT_TEST_POSTGRES_RUN_AS="$user" CTXKIT_TEST_POSTGRES_PG_CTL="$bin/pg_ctl"

  PG_SERVER_ROOT="$(mktemp -d /tmp/ctxkit-pg.XXXXXX)" || return 1
  export CTXKIT_TEST_POSTGRES_DATA="$PG_SERVER_ROOT/data"
  [[ -n "$user" ]] && chown "$user" "$PG_SERVER_ROOT"
  chmod 700 "$PG_SERVER_ROOT"

  pg_server_as "$bin/initdb" -D "$CTXKIT_TEST_POSTGRES_DATA" -U ctxkit --auth=trust \
    --encoding=UTF8 --locale=C.UTF-8 --no-sync >"$PG_SERVER_ROOT/initdb.log" 2>&1 || {
    cat "$PG_SERVER_ROOT/initdb.log" >&2
    pg_server_stop
    return 1
  }

  # A free port: the kernel's choice for a socket bound to port 0.
  port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null \
    || echo $((20000 + RANDOM % 30000)))"
  # In postgresql.conf, so a restart (the fleet tests') keeps them.
  cat >>"$CTXKIT_TEST_POSTGRES_DATA/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$PG_SERVER_ROOT'
max_connections = 300
shared_buffers = 128MB
EOF
  pg_server_as "$bin/pg_ctl" -D "$CTXKIT_TEST_POSTGRES_DATA" -l "$PG_SERVER_ROOT/server.log" \
    -w -t 30 start >/dev/null || {
    cat "$PG_SERVER_ROOT/server.log" >&2
    pg_server_stop
    return 1
  }
  "$bin/psql" -q -h 127.0.0.1 -p "$port" -U ctxkit -d postgres -v ON_ERROR_STOP=1 \
    -c 'CREATE DATABASE ctxkit_test' >&2 || { pg_server_stop; return 1; }
  "$bin/psql" -q -h 127.0.0.1 -p "$port" -U ctxkit -d ctxkit_test -v ON_ERROR_STOP=1 \
    -c 'CREATE EXTENSION IF NOT EXISTS pg_trgm' >&2 || { pg_server_stop; return 1; }
  export CTXKIT_TEST_POSTGRES_URL="postgres://ctxkit@127.0.0.1:$port/ctxkit_test"
  trap pg_server_stop EXIT
  echo "pg-server: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port ($CTXKIT_TEST_POSTGRES_DATA), started in $((SECONDS - started)) s" >&2
}

if [[ "${BASH_SOURCE[0]}" != "$0" ]]; then
  # Sourced: start it, export into the caller's shell, stop it when that shell exits.
  pg_server_start
  return $?
fi

echo "usage: source scripts/pg-server.sh (it serves the shell that sources it)" >&2
exit 2
