#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server for the PostgreSQL store's tests (native/tests/all/pg_*.rs,
# fleet_*.rs, native/tests/alone/) and the benchmark, with a PgBouncer in front of it, and says where they are:
#   - installs the server, openssl and pgbouncer from Debian's packages (apt-get) when they
#     are not on the machine;
#   - initdb's a data directory under a new temporary folder (as the user `postgres`, or
#     `nobody`, when run as root: initdb refuses root), trust authentication, loopback only;
#   - makes a throwaway CA and a server certificate for IP 127.0.0.1 only (openssl; so
#     `localhost` is a wrong host under verify-full) and a second CA that signed nothing;
#   - starts the server with ssl=on on 127.0.0.1 on a free port, its socket in that folder,
#     and creates the database ctxkit_test with the pg_trgm extension; the role ctxkit_tls may
#     only connect over TLS (a plain connection is refused), the role ctxkit_password only with
#     its password, "right-password" (SCRAM), for the tests of a wrong or missing password;
#   - starts PgBouncer (transaction pooling) in front of it on another free loopback port;
#   - stops both and removes the folder when the shell that sourced it exits.
#
#   source scripts/pg-server.sh     starts them and exports
#       CTXKIT_TEST_POSTGRES_URL       postgres://ctxkit@127.0.0.1:PORT/ctxkit_test
#       CTXKIT_TEST_POSTGRES_DATA      the data directory
#       CTXKIT_TEST_POSTGRES_PG_CTL    pg_ctl's path
#       CTXKIT_TEST_POSTGRES_RUN_AS    the user pg_ctl and pgbouncer run as (empty: this user)
#       CTXKIT_TEST_POSTGRES_CA        the CA's certificate (PEM)
#       CTXKIT_TEST_POSTGRES_OTHER_CA  a CA that signed nothing (PEM)
#       CTXKIT_TEST_PGBOUNCER_URL      the same database through PgBouncer
#       CTXKIT_TEST_PGBOUNCER_BIN, CTXKIT_TEST_PGBOUNCER_INI, CTXKIT_TEST_PGBOUNCER_PID_FILE
#                                      to restart the pooler (kill the pid; run "BIN -d INI")
#   The fleet tests restart the server and the pooler with them. pg_server_stop (in that
#   shell) stops both early.
# scripts/test.sh sources it before the tests. With CI=true a test that finds no server,
# pooler or certificate fails; without, it skips with a message.

pg_server_bin_dir() {
  local dir
  for dir in /usr/lib/postgresql/*/bin; do
    if [[ -x "$dir/initdb" && -x "$dir/pg_ctl" && -x "$dir/postgres" ]]; then
      echo "$dir"
    fi
  done | sort -V | tail -n 1
}

pg_server_stop() {
  if [[ -n "${CTXKIT_TEST_PGBOUNCER_PID_FILE:-}" && -s "$CTXKIT_TEST_PGBOUNCER_PID_FILE" ]]; then
    kill "$(cat "$CTXKIT_TEST_PGBOUNCER_PID_FILE")" 2>/dev/null || true
  fi
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

# Installs the Debian package $1 (as root) when the command $2 is missing.
pg_server_need() {
  local package="$1" command="$2"
  if command -v "$command" >/dev/null || [[ -x "/usr/sbin/$command" ]]; then
    return 0
  fi
  if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null; then
    echo "pg-server: no $command, and cannot apt-get install $package" >&2
    return 1
  fi
  echo "pg-server: installing $package (Debian)" >&2
  { DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$package" \
      || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$package"; }
  } >&2
}

# A free loopback port: the kernel's choice for a socket bound to port 0.
pg_server_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null \
    || echo $((20000 + RANDOM % 30000))
}

# The CA, the server's certificate it signs, and the other CA, in $PG_SERVER_ROOT/tls.
pg_server_certificates() {
  local dir="$PG_SERVER_ROOT/tls" log="$PG_SERVER_ROOT/openssl.log"
  mkdir -p "$dir" || return 1
  {
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj '/CN=ctxkit test CA' \
      -keyout "$dir/ca.key" -out "$dir/ca.crt" \
      && openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj '/CN=ctxkit other CA' \
        -keyout "$dir/other-ca.key" -out "$dir/other-ca.crt" \
      && openssl req -newkey rsa:2048 -nodes -subj '/CN=127.0.0.1' \
        -keyout "$dir/server.key" -out "$dir/server.csr" \
      && printf 'subjectAltName = IP:127.0.0.1\nbasicConstraints = CA:FALSE\n' >"$dir/server.ext" \
      && openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
        -CAcreateserial -days 2 -extfile "$dir/server.ext" -out "$dir/server.crt"
  } >"$log" 2>&1 || { cat "$log" >&2; return 1; }
  chmod 600 "$dir"/*.key
  if [[ -n "${CTXKIT_TEST_POSTGRES_RUN_AS:-}" ]]; then
    chown -R "$CTXKIT_TEST_POSTGRES_RUN_AS" "$dir"
  fi
  export CTXKIT_TEST_POSTGRES_CA="$dir/ca.crt" CTXKIT_TEST_POSTGRES_OTHER_CA="$dir/other-ca.crt"
}

# PgBouncer, transaction pooling, in front of the server on port $1.
pg_server_pgbouncer() {
  local server_port="$1" port bin dir="$PG_SERVER_ROOT/pgbouncer" tries=0
  bin="$(command -v pgbouncer || echo /usr/sbin/pgbouncer)"
  port="$(pg_server_free_port)"
  mkdir -p "$dir" || return 1
  printf '"ctxkit" ""\n' >"$dir/users.txt"
  cat >"$dir/pgbouncer.ini" <<BOUNCER
[databases]
* = host=127.0.0.1 port=$server_port user=ctxkit
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $dir/users.txt
pool_mode = transaction
max_client_conn = 1000
default_pool_size = 40
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
BOUNCER
  if [[ -n "${CTXKIT_TEST_POSTGRES_RUN_AS:-}" ]]; then
    chown -R "$CTXKIT_TEST_POSTGRES_RUN_AS" "$dir"
  fi
  export CTXKIT_TEST_PGBOUNCER_BIN="$bin" CTXKIT_TEST_PGBOUNCER_INI="$dir/pgbouncer.ini" \
    CTXKIT_TEST_PGBOUNCER_PID_FILE="$dir/pgbouncer.pid"
  pg_server_as "$bin" -d -q "$dir/pgbouncer.ini" || { cat "$dir/pgbouncer.log" >&2; return 1; }
  until python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null; do
    tries=$((tries + 1))
    if [[ $tries -ge 50 ]]; then
      echo "pg-server: pgbouncer is not listening on 127.0.0.1:$port" >&2
      cat "$dir/pgbouncer.log" >&2
      return 1
    fi
    sleep 0.1
  done
  export CTXKIT_TEST_PGBOUNCER_URL="postgres://ctxkit@127.0.0.1:$port/ctxkit_test?sslmode=disable"
  echo "pg-server: PgBouncer $("$bin" --version | head -n 1 | awk '{print $2}') (transaction pooling) on 127.0.0.1:$port" >&2
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
  pg_server_need openssl openssl || return 1
  pg_server_need pgbouncer pgbouncer || return 1

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
  pg_server_certificates || { pg_server_stop; return 1; }
  # First match wins: ctxkit_tls over TLS only, ctxkit_password with its password, everyone
  # else as initdb wrote.
  { printf 'hostssl all ctxkit_tls 127.0.0.1/32 trust\nhostnossl all ctxkit_tls 127.0.0.1/32 reject\n'
    printf 'host all ctxkit_password 127.0.0.1/32 scram-sha-256\n'
    cat "$CTXKIT_TEST_POSTGRES_DATA/pg_hba.conf"; } >"$PG_SERVER_ROOT/pg_hba.conf" \
    && cat "$PG_SERVER_ROOT/pg_hba.conf" >"$CTXKIT_TEST_POSTGRES_DATA/pg_hba.conf"

  port="$(pg_server_free_port)"
  # In postgresql.conf, so a restart (the fleet tests') keeps them.
  cat >>"$CTXKIT_TEST_POSTGRES_DATA/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$PG_SERVER_ROOT'
max_connections = 300
shared_buffers = 128MB
ssl = on
ssl_cert_file = '$PG_SERVER_ROOT/tls/server.crt'
ssl_key_file = '$PG_SERVER_ROOT/tls/server.key'
EOF
  pg_server_as "$bin/pg_ctl" -D "$CTXKIT_TEST_POSTGRES_DATA" -l "$PG_SERVER_ROOT/server.log" \
    -w -t 30 start >/dev/null || {
    cat "$PG_SERVER_ROOT/server.log" >&2
    pg_server_stop
    return 1
  }
  "$bin/psql" -q -h 127.0.0.1 -p "$port" -U ctxkit -d postgres -v ON_ERROR_STOP=1 \
    -c 'CREATE DATABASE ctxkit_test' -c 'CREATE ROLE ctxkit_tls LOGIN SUPERUSER' \
    -c "CREATE ROLE ctxkit_password LOGIN SUPERUSER PASSWORD 'right-password'" >&2 \
    || { pg_server_stop; return 1; }
  "$bin/psql" -q -h 127.0.0.1 -p "$port" -U ctxkit -d ctxkit_test -v ON_ERROR_STOP=1 \
    -c 'CREATE EXTENSION IF NOT EXISTS pg_trgm' >&2 || { pg_server_stop; return 1; }
  export CTXKIT_TEST_POSTGRES_URL="postgres://ctxkit@127.0.0.1:$port/ctxkit_test"
  trap pg_server_stop EXIT
  pg_server_pgbouncer "$port" || { pg_server_stop; return 1; }
  echo "pg-server: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port with TLS ($CTXKIT_TEST_POSTGRES_DATA), started in $((SECONDS - started)) s" >&2
}

if [[ "${BASH_SOURCE[0]}" != "$0" ]]; then
  # Sourced: start it, export into the caller's shell, stop it when that shell exits.
  pg_server_start
  return $?
fi

echo "usage: source scripts/pg-server.sh (it serves the shell that sources it)" >&2
exit 2
