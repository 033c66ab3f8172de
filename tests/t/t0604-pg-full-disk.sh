#!/bin/sh
# t0604-pg-full-disk: a server that cannot grow its files mid-push (issue
# 21's "full disk on the server"). The cluster is restarted with a file
# size limit (ulimit -f 4 MB; PostgreSQL ignores SIGXFSZ, so a write past
# it fails as a write to a full disk does: "could not extend file", the
# transaction rolled back, the server up). A push of ~10 MB of messages
# then fails part way with a clear error naming the server, whole batches
# only landed, the local store unchanged; once the server can grow again
# the next push completes: every message once, and a new store that pulls
# them equals the source byte for byte.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/pg.sh"
export CAIRN_EMBED_MODEL=none
# WAL segments of 1 MB (not 16): they are written in place, under the limit
PG_INITDB_EXTRA=--wal-segsize=1
pg_start || t_skip_all "$PG_WHY"

adm() { pg_sql cairn_admin "$PG_ADMIN_PW" "$1"; }
count() { adm "SELECT count(*) FROM cairn.messages"; }
pg_login_roles alice || { bad "roles and schema"; t_done; exit 1; }
ALICE=$(pg_url alice alice-pw)

# 30 sessions of 10 messages of ~32 KB of random words (compression and
# the word index cannot make them small): about 10 MB in all
python3 - "$TMP/s.jsonl" <<'PY'
import json, random, sys
r = random.Random(604)
def words(n):
    return " ".join("".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(3, 9)))
                    for _ in range(n))
with open(sys.argv[1], "w") as f:
    for s in range(30):
        f.write(json.dumps({"id": "d%d" % s, "project": "full", "messages": [
            {"role": "user" if i % 2 == 0 else "assistant", "content": words(5000)}
            for i in range(10)]}) + "\n")
PY
"$CAIRN" --db "$TMP/a.db" add -q "$TMP/s.jsonl"
"$CAIRN" --db "$TMP/a.db" export --format jsonl > "$TMP/a.jsonl"
before=$(md5sum < "$TMP/a.jsonl")

# 1. the server cannot grow its files past 4 MB (8k blocks of 512 bytes in
# POSIX sh)
pg_stop
if ! pg_as sh -c 'ulimit -f 8192 && exec "$@"' sh "$PG_BIN/pg_ctl" -D "$PG_DIR/data" \
        -l "$PG_DIR/server.log" -w -t 60 \
        -o "-c listen_addresses='' -c unix_socket_directories='$PG_SOCK' -p $PG_PORT -c fsync=off" \
        start >/dev/null 2>&1; then
    bad "the server starts with a file size limit: $(tail -n 3 "$PG_DIR/server.log" | tr '\n' ' ')"
    t_done; exit 1
fi
PG_STARTED=1
"$CAIRN" --db "$TMP/a.db" sync --push --batch 20 --server "$ALICE" >"$TMP/1.out" 2>"$TMP/1.err"
rc=$?
err=$(cat "$TMP/1.err")
check_fails "the push to a full server fails" test "$rc" -eq 0
contains "with the server named" "$err" "server alice@"
contains "and the server's reason" "$err" "could not extend file"
lacks "without the password" "$err" "alice-pw"
n1=$(count)
check "part of it landed ($n1 of 300)" test "$n1" -lt 300
eq "whole batches only" "$((n1 % 20))" 0
eq "the local store unchanged" "$("$CAIRN" --db "$TMP/a.db" export --format jsonl | md5sum)" "$before"
check "the server is still up" adm "SELECT 1"

# 2. room again: the next push completes, nothing lost, nothing twice
check "the server restarts without the limit" pg_restart
out=$("$CAIRN" --db "$TMP/a.db" sync --push --server "$ALICE" 2>&1)
check "the next push succeeds: $(printf %s "$out" | head -c 300)" test $? -eq 0
eq "300 messages on the server" "$(count)" 300
eq "each once" "$(adm "SELECT count(DISTINCT (sid, mkey)) FROM cairn.messages")" 300
out=$("$CAIRN" --db "$TMP/b.db" sync --pull --server "$ALICE" 2>&1)
contains "a new store pulls all 300" "$out" "pulled 300 messages in 30 sessions"
"$CAIRN" --db "$TMP/b.db" export --format jsonl > "$TMP/b.jsonl"
check "equal to the source byte for byte" cmp -s "$TMP/a.jsonl" "$TMP/b.jsonl"
t_done
