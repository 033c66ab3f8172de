#!/bin/sh
# t0222-spool: a save hook that finds the store locked past its budget
# keeps its event in the spool (STORE-spool), and the next save hook (of
# any session) or `cairn add` / `cairn import` saves it: a SessionEnd
# during a long add no longer loses the session's last turn. The spool
# holds one file per transcript, written whole, and is bounded.
. "$(dirname "$0")/lib.sh"
D="$ROOT/tests/data/capture"
LOG="$HOME/.cairn/cairn.log"
SPOOL="$CAIRN_DB-spool"
if ! command -v sqlite3 >/dev/null 2>&1; then
    echo "SKIP t0222-spool: no sqlite3 shell to hold the store's lock" >&2
    echo "0 passed, 0 failed"
    exit 0
fi

hook() {  # event session transcript
    printf '{"session_id":"%s","transcript_path":"%s","cwd":"/tmp","hook_event_name":"%s"}' \
        "$2" "$3" "$1" > "$TMP/in.json"
    CAIRN_HOOK_BUSY_MS=200 "$CAIRN" hook "$1" < "$TMP/in.json"
}
# lock / unlock: another writer holds the store's write lock until told
lock() {
    rm -f "$TMP/locked" "$TMP/release"
    (printf 'BEGIN IMMEDIATE;\nINSERT INTO capture_state(path, updated_at) VALUES ("lock-%s", 0);\n' "$$"
     printf '.shell touch %s\n' "$TMP/locked"
     n=0; while [ ! -e "$TMP/release" ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
     printf 'ROLLBACK;\n') | sqlite3 "$CAIRN_DB" >/dev/null 2>&1 &
    lockpid=$!
    n=0; while [ ! -e "$TMP/locked" ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
}
unlock() { touch "$TMP/release"; wait "$lockpid"; }
spooled() { ls "$SPOOL" 2>/dev/null | grep -c '\.json$'; }

# A session whose turns up to the last one are saved by Stop hooks.
head -18 "$D/cc-replay.jsonl" > "$TMP/a.jsonl"
hook stop replay-1 "$TMP/a.jsonl"
contains "the Stop hook saved the first turns" "$("$CAIRN" show replay-1)" "Set TZ=UTC"
# The last turn comes while a long add holds the lock: SessionEnd gives up.
sed -n '19,22p' "$D/cc-replay.jsonl" >> "$TMP/a.jsonl"
lock
out=$(hook session-end replay-1 "$TMP/a.jsonl" 2>&1); rc=$?
eq "session-end exits 0 on a locked store" "$rc" 0
eq "session-end prints nothing" "$out" ""
lacks "the last turn is not in the store yet" "$("$CAIRN" show replay-1)" "dpkg-buildpackage"
eq "the event is spooled" "$(spooled)" 1
eq "no temporary file left" "$(ls -A "$SPOOL" 2>/dev/null | grep -c '^\.')" 0
contains "the log says it was spooled" "$(cat "$LOG")" "spooled"
unlock
# The next hook, of another session, saves it.
cp "$D/cc-session.jsonl" "$TMP/b.jsonl"
hook stop sess-1 "$TMP/b.jsonl"
contains "the next hook saved the last turn" "$("$CAIRN" show replay-1)" "dpkg-buildpackage"
contains "and its own session" "$("$CAIRN" sessions)" "sess-1"
eq "the spool is empty again" "$(spooled)" 0

# `cairn add` drains it too; a session's later events replace its earlier.
head -7 "$D/cc-replay.jsonl" | sed 's/replay-1/replay-2/g' > "$TMP/c.jsonl"
lock
hook stop replay-2 "$TMP/c.jsonl"
sed -n '8,12p' "$D/cc-replay.jsonl" | sed 's/replay-1/replay-2/g' >> "$TMP/c.jsonl"
hook session-end replay-2 "$TMP/c.jsonl"
eq "one file per transcript" "$(spooled)" 1
unlock
echo '{"id": "note-1", "messages": [{"role": "user", "content": "a note"}]}' > "$TMP/note.json"
"$CAIRN" add "$TMP/note.json" >/dev/null
out=$("$CAIRN" show replay-2)
contains "cairn add saved the spooled turns" "$out" "gzip -n"
contains "from the first turn on" "$out" "Pin the compiler"
eq "drained by add" "$(spooled)" 0

# A claim left by a process that died is taken up again.
lock
hook session-end replay-3 "$TMP/c.jsonl"
unlock
f=$(ls "$SPOOL" | grep '\.json$')
mv "$SPOOL/$f" "$SPOOL/.claim.999999999.$f"
rm -f "$TMP/c.db"*
"$CAIRN" import claude-code "$TMP/b.jsonl" >/dev/null
eq "a dead claim is drained" "$(ls -A "$SPOOL" | wc -l | tr -d ' ')" 0

# Bounded: past CAIRN_SPOOL_MAX files the event is dropped and logged.
for i in 1 2 3; do cp "$TMP/c.jsonl" "$TMP/d$i.jsonl"; done
lock
for i in 1 2 3; do CAIRN_SPOOL_MAX=2 hook session-end "d-$i" "$TMP/d$i.jsonl"; done
eq "at most CAIRN_SPOOL_MAX files" "$(spooled)" 2
contains "a full spool is logged" "$(cat "$LOG")" "spool is full"
unlock
"$CAIRN" add "$TMP/note.json" >/dev/null
eq "a full spool drains" "$(spooled)" 0
t_done
