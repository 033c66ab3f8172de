#!/bin/sh
# t0201-capture-hook: `cairn hook stop|session-end|pre-compact`. Replaying a
# transcript line by line, with a Stop hook call after each assistant reply
# (before each new user record, and at the end), ends with the same store as
# one import of the whole file; hooks always exit 0 and print nothing, on
# garbage, a missing transcript, a locked store; CAIRN_CAPTURE=0 and
# CAIRN_EXCLUDE_PROJECTS turn capture off; failures land in ~/.cairn/cairn.log.
. "$(dirname "$0")/lib.sh"
D="$ROOT/tests/data/capture"
LOG="$HOME/.cairn/cairn.log"

hook_input() {  # session transcript cwd
    printf '{"session_id":"%s","transcript_path":"%s","cwd":"%s","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"x"}' "$1" "$2" "$3"
}

# replay FILE DB: grows a copy of FILE line by line into $TMP/live.jsonl and
# calls the Stop hook whenever the next line is a user record (or at EOF).
replay() {
    src=$1; db=$2
    live="$TMP/live-$(basename "$src")"
    : > "$live"
    n=$(wc -l < "$src")
    i=1
    calls=0
    while [ "$i" -le "$n" ]; do
        sed -n "${i}p" "$src" >> "$live"
        next=$(sed -n "$((i + 1))p" "$src")
        case "$next" in
            ""|*'"type":"user"'*|*'"type": "user"'*)
                out=$(hook_input "$(basename "$src" .jsonl)" "$live" "/nowhere" |
                      CAIRN_DB="$db" "$CAIRN" hook stop 2>&1)
                [ -z "$out" ] || bad "hook printed: $out"
                calls=$((calls + 1)) ;;
        esac
        i=$((i + 1))
    done
    echo "$calls"
}

# same_store FILE: replay vs one import, compared through export --format jsonl
same_store() {
    f=$1; name=$(basename "$f")
    rm -f "$TMP/r.db"* "$TMP/i.db"*
    calls=$(replay "$f" "$TMP/r.db")
    # import the same bytes under the same path, so paths in meta agree
    cp "$f" "$TMP/live-$name.full"
    mv "$TMP/live-$name.full" "$TMP/live-$name"
    CAIRN_DB="$TMP/i.db" "$CAIRN" import claude-code "$TMP/live-$name" >/dev/null
    CAIRN_DB="$TMP/r.db" "$CAIRN" export --format jsonl > "$TMP/r.jsonl"
    CAIRN_DB="$TMP/i.db" "$CAIRN" export --format jsonl > "$TMP/i.jsonl"
    if [ "$calls" -ge 2 ] && [ -s "$TMP/i.jsonl" ] && cmp -s "$TMP/r.jsonl" "$TMP/i.jsonl"; then
        ok
    else
        bad "replay of $name ($calls hook calls) differs from one import"
        diff "$TMP/r.jsonl" "$TMP/i.jsonl" | head -5 >&2
    fi
}

same_store "$D/cc-replay.jsonl"
eq "replay hook calls" "$(replay "$D/cc-replay.jsonl" "$TMP/r2.db")" 9
out=$(CAIRN_DB="$TMP/r2.db" "$CAIRN" sessions)
contains "title from the later custom-title" "$out" "Repro builds (renamed)"
out=$(CAIRN_DB="$TMP/r2.db" "$CAIRN" show replay-1)
lacks "private never stored" "$out" "abc"
contains "assistant blocks merged" "$out" "Also set gzip -n."
lacks "compaction summary left out" "$out" "being continued"

# the real samples (when ../shared is there) that have no rewound branch
S="$ROOT/../shared/data/transcripts"
if [ -d "$S" ]; then
    for f in "$S/claude-code-samples/real-2.1.332-headless-session-with-mcp-tool.jsonl" \
             "$S/claude-code/marot-spotter/short.jsonl" \
             "$S/claude-code/marot-spotter/tool_heavy.jsonl" \
             "$S/claude-code/marot-spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"; do
        [ -f "$f" ] && same_store "$f"
    done
else
    t_skip "../shared/data/transcripts missing: real samples not replayed through the hook"
fi

# the hooks exit 0 and print nothing, whatever happens
for ev in stop session-end pre-compact; do
    out=$(echo 'not json at all' | "$CAIRN" hook $ev 2>&1); rc=$?
    eq "$ev on garbage exits 0" "$rc" 0
    eq "$ev on garbage prints nothing" "$out" ""
done
out=$(head -c 3000 /dev/urandom | "$CAIRN" hook stop 2>&1); rc=$?
eq "binary stdin exits 0" "$rc" 0; eq "binary stdin silent" "$out" ""
out=$("$CAIRN" hook stop < /dev/null 2>&1); rc=$?
eq "empty stdin exits 0" "$rc" 0; eq "empty stdin silent" "$out" ""
out=$(hook_input s-miss "$TMP/no-such.jsonl" /tmp | "$CAIRN" hook stop 2>&1); rc=$?
eq "missing transcript exits 0" "$rc" 0; eq "missing transcript silent" "$out" ""
out=$(echo '{"session_id":5,"transcript_path":["x"]}' | "$CAIRN" hook stop 2>&1); rc=$?
eq "wrong field types exit 0" "$rc" 0; eq "wrong field types silent" "$out" ""
out=$("$CAIRN" hook 2>&1 < /dev/null); rc=$?
eq "no event exits 0" "$rc" 0
check "failures are logged" grep -q "no-such.jsonl" "$LOG"
check "garbage is logged" grep -q "not a JSON object" "$LOG"
eq "log is 0600" "$(stat -c %a "$LOG")" 600
check "log lines have a timestamp" sh -c "head -1 '$LOG' | grep -Eq '^20[0-9]{2}-[0-9]{2}-[0-9]{2}T'"

# a store locked by another writer: the hook gives up quickly, exit 0, and
# the next hook saves the turns
cp "$D/cc-replay.jsonl" "$TMP/locked.jsonl"
"$CAIRN" --db "$TMP/lock.db" import claude-code "$D/cc-session.jsonl" >/dev/null
# The writer says when it holds the lock and keeps it until told (a fixed
# sleep raced with sqlite3's start under load), so a hook that waited for
# the lock instead of giving up would run into its 30 s alarm.
if command -v sqlite3 >/dev/null; then
    (printf 'BEGIN IMMEDIATE;\nINSERT INTO capture_state(path, updated_at) VALUES ("x", 0);\n'
     printf '.shell touch %s\n' "$TMP/locked"
     n=0; while [ ! -e "$TMP/release" ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
     printf 'COMMIT;\n') |
        sqlite3 "$TMP/lock.db" >/dev/null 2>&1 &
    lockpid=$!
    n=0; while [ ! -e "$TMP/locked" ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
    t0=$(date +%s)
    out=$(hook_input replay-1 "$TMP/locked.jsonl" /tmp | CAIRN_DB="$TMP/lock.db" CAIRN_HOOK_BUSY_MS=300 "$CAIRN" hook stop 2>&1); rc=$?
    t1=$(date +%s)
    touch "$TMP/release"
    eq "locked store exits 0" "$rc" 0
    eq "locked store silent" "$out" ""
    check "locked store does not wait" [ $((t1 - t0)) -le 5 ]
    check "locked store is logged" grep -q "locked" "$LOG"
    wait $lockpid
    hook_input replay-1 "$TMP/locked.jsonl" /tmp | CAIRN_DB="$TMP/lock.db" "$CAIRN" hook stop
    out=$("$CAIRN" --db "$TMP/lock.db" sessions)
    contains "next hook saves the turns" "$out" "replay-1"
fi

# capture off
rm -f "$TMP/off.db"*
hook_input replay-1 "$D/cc-replay.jsonl" /tmp | CAIRN_DB="$TMP/off.db" CAIRN_CAPTURE=0 "$CAIRN" hook stop
check_fails "CAIRN_CAPTURE=0 saves nothing" test -e "$TMP/off.db"
mkdir -p "$TMP/secret-proj/sub"
hook_input replay-1 "$D/cc-replay.jsonl" "$TMP/secret-proj/sub" |
    CAIRN_DB="$TMP/off.db" CAIRN_EXCLUDE_PROJECTS="other,$TMP/secret-proj" "$CAIRN" hook stop
check_fails "excluded folder saves nothing" test -e "$TMP/off.db"
printf 'team-x\n' > "$TMP/secret-proj/.cairn-project"
hook_input replay-1 "$D/cc-replay.jsonl" "$TMP/secret-proj/sub" |
    CAIRN_DB="$TMP/off.db" CAIRN_EXCLUDE_PROJECTS="team-x" "$CAIRN" hook pre-compact
check_fails "excluded project name saves nothing" test -e "$TMP/off.db"
hook_input replay-1 "$D/cc-replay.jsonl" "$TMP/secret-proj/sub" |
    CAIRN_DB="$TMP/off.db" CAIRN_EXCLUDE_PROJECTS="team-y" "$CAIRN" hook session-end
check "other exclusions do not stop capture" test -e "$TMP/off.db"
# CAIRN_PROJECT names the project
rm -f "$TMP/p.db"*
hook_input replay-1 "$D/cc-replay.jsonl" /tmp | CAIRN_DB="$TMP/p.db" CAIRN_PROJECT=forced "$CAIRN" hook stop
out=$(CAIRN_DB="$TMP/p.db" "$CAIRN" sessions --project forced)
contains "CAIRN_PROJECT" "$out" "replay-1"

# project from git: a worktree of a repository with a remote
mkdir -p "$TMP/repo/.git/worktrees/wt" "$TMP/wt/src"
printf 'ref: refs/heads/main\n' > "$TMP/repo/.git/HEAD"
printf '[remote "origin"]\n\turl = https://github.com/acme/widget.git\n' > "$TMP/repo/.git/config"
printf '../..\n' > "$TMP/repo/.git/worktrees/wt/commondir"
printf 'gitdir: %s/repo/.git/worktrees/wt\n' "$TMP" > "$TMP/wt/.git"
sed "s|/home/u/replay|$TMP/wt/src|g" "$D/cc-replay.jsonl" > "$TMP/wt.jsonl"
rm -f "$TMP/g.db"*
hook_input replay-1 "$TMP/wt.jsonl" "$TMP/wt/src" | CAIRN_DB="$TMP/g.db" "$CAIRN" hook stop
out=$(CAIRN_DB="$TMP/g.db" "$CAIRN" sessions --project github.com/acme/widget)
contains "project from the worktree's remote" "$out" "replay-1"
t_done
