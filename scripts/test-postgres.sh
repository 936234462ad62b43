#!/usr/bin/env bash
# A throwaway PostgreSQL server for the test suite: a fresh cluster on a loopback port, trust
# authentication, no fsync. Installs Debian's postgresql package first when no server is there
# (as root, with apt-get).
#
#   scripts/test-postgres.sh start [DIR]   # prints SKILLREG_TEST_POSTGRES_URL=postgres://…
#   scripts/test-postgres.sh stop  [DIR]   # stops the server and removes DIR
#   scripts/test-postgres.sh halt  [DIR]   # stops the server, keeping its data (a restart test)
#   scripts/test-postgres.sh resume [DIR]  # starts a halted server again
#
# DIR defaults to /tmp/skillreg-postgres-PORT. The port is
# $SKILLREG_TEST_POSTGRES_PORT, default 55432. PostgreSQL refuses to run as root, so as root
# the cluster belongs to the `postgres` system user (created by the package).
set -euo pipefail

ACTION="${1:-}"
PORT="${SKILLREG_TEST_POSTGRES_PORT:-55432}"
# Not under $HOME: as root, the postgres user must be able to reach it.
DIR="${2:-${TMPDIR:-/tmp}/skillreg-postgres-$PORT}"

log() { echo "test-postgres: $*" >&2; }
die() { log "error: $*"; exit 1; }

# The newest installed server's bin directory.
pg_bin() {
    local bin
    bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
    if [[ -z "$bin" ]] && command -v pg_config >/dev/null; then
        bin="$(pg_config --bindir)"
    fi
    [[ -n "$bin" && -x "$bin/postgres" ]] && echo "$bin"
}

# Run a command as the cluster's owner.
as_owner() {
    if [[ "$(id -u)" == 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

start() {
    local bin
    if ! bin="$(pg_bin)"; then
        [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null \
            || die "no PostgreSQL server found: install it (Debian/Ubuntu: apt-get install postgresql)"
        log "installing Debian's postgresql package (apt-get)"
        apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
        bin="$(pg_bin)" || die "no PostgreSQL server after 'apt-get install postgresql'"
    fi
    if [[ -f "$DIR/data/postmaster.pid" ]]; then
        log "stopping a server left in $DIR"
        as_owner "$bin/pg_ctl" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true
    fi
    rm -rf "$DIR"
    mkdir -p "$DIR"
    [[ "$(id -u)" == 0 ]] && chown postgres: "$DIR"
    as_owner "$bin/initdb" -D "$DIR/data" -U skillreg --auth=trust --encoding=UTF8 \
        --locale=C.UTF-8 >/dev/null
    # In the cluster's own configuration, so that `resume` starts it the same way.
    cat >>"$DIR/data/postgresql.conf" <<CONF
port = $PORT
listen_addresses = '127.0.0.1'
unix_socket_directories = '$DIR'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 400
CONF
    as_owner "$bin/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 start >/dev/null \
        || { cat "$DIR/server.log" >&2; die "the server did not start"; }
    log "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$PORT ($DIR)"
    echo "SKILLREG_TEST_POSTGRES_URL=postgres://skillreg@127.0.0.1:$PORT/postgres"
}

halt() {
    local bin
    bin="$(pg_bin)" || die "no PostgreSQL server found"
    as_owner "$bin/pg_ctl" -D "$DIR/data" -m fast -w stop >/dev/null
}

resume() {
    local bin
    bin="$(pg_bin)" || die "no PostgreSQL server found"
    as_owner "$bin/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 start >/dev/null \
        || { cat "$DIR/server.log" >&2; die "the server did not start again"; }
}

stop() {
    local bin
    if [[ -f "$DIR/data/postmaster.pid" ]] && bin="$(pg_bin)"; then
        as_owner "$bin/pg_ctl" -D "$DIR/data" -m fast stop >/dev/null || true
    fi
    rm -rf "$DIR"
}

case "$ACTION" in
    start) start ;;
    stop) stop ;;
    halt) halt ;;
    resume) resume ;;
    *) die "usage: $0 start|stop|halt|resume [DIR]" ;;
esac
