# tests/tools/pg.sh: a real PostgreSQL 15 for a test (sourced after lib.sh).
#
#   pg_start || t_skip_all "..."   initdb a cluster in $TMP/pg, start it on a
#                                  Unix socket there (no TCP: no port clash
#                                  between tests running at once)
#   pg_sql ROLE PASSWORD SQL       runs SQL as ROLE through psql; prints rows
#   pg_url ROLE PASSWORD           the postgres:// URL cairn is given
#   pg_login_roles NAME...         login roles (password NAME-pw), then the schema
#   pg_migrate                     the admin's sync (migrates); prints the version
#   pg_stop                        stops it now (the EXIT trap also does)
#   PG_INITDB_EXTRA="..."          more initdb options (set before pg_start)
#
# The cluster's superuser is cairn_admin (password $PG_ADMIN_PW); every
# connection, the superuser's too, authenticates with a password (scram), so
# a wrong password fails as it would on a real server. The server is stopped
# on exit, on failure or interrupt included (the trap replaces lib.sh's,
# and still removes $TMP).
#
# initdb refuses to run as root: as root the cluster belongs to the
# `postgres` user (from postgresql-common) and runs through runuser; the
# folders it needs are handed to that user, and the socket's folder is
# world-searchable so the tests' own processes (root or not) reach it.
PG_BIN=/usr/lib/postgresql/15/bin
PG_DIR="${TMP:-}/pg"
PG_SOCK="$PG_DIR/sock"
PG_ADMIN_PW=admin-pw
PG_PORT=5432
PG_STARTED=0

pg_as() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_stop() {
    [ "$PG_STARTED" -eq 1 ] || return 0
    pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
    PG_STARTED=0
}

# pg_start: 0 when the server is up; 1 (with $PG_WHY) when it cannot run here
pg_start() {
    PG_WHY=""
    if [ ! -x "$PG_BIN/initdb" ]; then PG_WHY="no PostgreSQL 15 ($PG_BIN/initdb): sh scripts/deps.sh"; return 1; fi
    if ! command -v psql >/dev/null 2>&1; then PG_WHY="no psql: sh scripts/deps.sh"; return 1; fi
    if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then PG_WHY="running as root and no postgres user"; return 1; fi
    mkdir -p "$PG_DIR" "$PG_SOCK"
    printf '%s\n' "$PG_ADMIN_PW" > "$PG_DIR/pw"
    if [ "$(id -u)" -eq 0 ]; then
        # the postgres user must reach $PG_DIR through $TMP (mktemp's 0700)
        chmod 0711 "$TMP"
        chown -R postgres "$PG_DIR"
    fi
    chmod 0755 "$PG_SOCK"
    # shellcheck disable=SC2086 # PG_INITDB_EXTRA: more initdb options, split on spaces
    if ! pg_as "$PG_BIN/initdb" -D "$PG_DIR/data" -U cairn_admin --pwfile="$PG_DIR/pw" ${PG_INITDB_EXTRA:-} \
            --auth-local=scram-sha-256 --auth-host=reject -E UTF8 --locale=C.UTF-8 \
            >"$PG_DIR/initdb.log" 2>&1; then
        PG_WHY="initdb failed: $(tail -n 3 "$PG_DIR/initdb.log" | tr '\n' ' ')"
        return 1
    fi
    trap 'pg_stop; rm -rf "$TMP"' EXIT
    trap 'exit 130' INT TERM
    if ! pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60 \
            -o "-c listen_addresses='' -c unix_socket_directories='$PG_SOCK' -p $PG_PORT -c fsync=off" \
            start >/dev/null 2>&1; then
        PG_WHY="pg_ctl start failed: $(tail -n 3 "$PG_DIR/server.log" | tr '\n' ' ')"
        return 1
    fi
    PG_STARTED=1
    # the connection variables psql and cairn read when a URL names no host
    export PGHOST="$PG_SOCK" PGPORT="$PG_PORT" PGDATABASE=postgres
    unset PGUSER PGPASSWORD PGSERVICE PGPASSFILE
    return 0
}

# pg_restart: stop and start the same cluster (a server restarted mid-sync)
pg_restart() {
    pg_stop
    pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60 \
        -o "-c listen_addresses='' -c unix_socket_directories='$PG_SOCK' -p $PG_PORT -c fsync=off" \
        start >/dev/null 2>&1 && PG_STARTED=1
}

pg_sql() {
    PGPASSWORD=$2 psql -X -q -A -t -v ON_ERROR_STOP=1 -h "$PG_SOCK" -p "$PG_PORT" -U "$1" \
        -d postgres -c "$3"
}

pg_url() {
    printf 'postgres://%s:%s@/postgres?host=%s&port=%s' "$1" "$2" "$PG_SOCK" "$PG_PORT"
}

# pg_login_roles NAME...: a login role each, password NAME-pw; then the
# cairn schema, made by the admin's first sync (the roles cannot create it)
pg_login_roles() {
    for r in "$@"; do
        pg_sql cairn_admin "$PG_ADMIN_PW" "CREATE ROLE $r LOGIN PASSWORD '$r-pw'" >/dev/null || return 1
    done
    "$CAIRN" --db "$TMP/admin.db" sync --pull -q --server "$(pg_url cairn_admin "$PG_ADMIN_PW")"
}

# pg_migrate: the admin's sync, which migrates the server; prints its schema
# version after
pg_migrate() {
    "$CAIRN" --db "$TMP/admin.db" sync --pull -q --server "$(pg_url cairn_admin "$PG_ADMIN_PW")" &&
    pg_sql cairn_admin "$PG_ADMIN_PW" "SELECT value FROM cairn.meta WHERE key = 'schema_version'"
}

# pg_bob_sessions DB: bob's two sessions of project `shared` (password
# bob-pw) added to the store DB and pushed: `bob-secret` then made private
# (its text: "zanzibar kestrel private plan of bob"), `bob-shared` not
# ("zanzibar shared notes about kestrel"). Sharing the project is the test's.
pg_bob_sessions() {
    printf '%s\n' \
        '{"id": "bob-secret", "project": "shared", "title": "bob private", "messages": [{"role": "user", "content": "zanzibar kestrel private plan of bob"}]}' \
        '{"id": "bob-shared", "project": "shared", "title": "bob shared", "messages": [{"role": "user", "content": "zanzibar shared notes about kestrel"}]}' \
        > "$TMP/bob.jsonl" &&
    "$CAIRN" --db "$1" add -q "$TMP/bob.jsonl" &&
    "$CAIRN" --db "$1" sync --push -q --server "$(pg_url bob bob-pw)" &&
    pg_sql bob bob-pw "UPDATE cairn.sessions SET private = true WHERE sid = 'bob-secret'" >/dev/null
}

# pg_bench_start NAME: for a bench (not a test, which has lib.sh's $TMP): a
# temporary folder $TMP (removed on exit) and the server up in it, else says
# "# NAME: skipped: why" and exits 0 (a bench that cannot run reports it)
pg_bench_start() {
    TMP=$(mktemp -d)
    PG_DIR="$TMP/pg" PG_SOCK="$TMP/pg/sock"
    trap 'rm -rf "$TMP"' EXIT
    pg_start && return 0
    echo "# $1: skipped: $PG_WHY"
    exit 0
}
