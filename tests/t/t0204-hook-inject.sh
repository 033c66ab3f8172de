#!/bin/sh
# t0204-hook-inject: `cairn hook prompt` (UserPromptSubmit) and
# `cairn hook session-start` add memory to the context only when it is
# relevant, fenced as data, never twice, never blocking.
. "$(dirname "$0")/lib.sh"
"$CAIRN" add "$ROOT/examples/sample-history.jsonl" >/dev/null

# The hook input is written to a file before the hook starts, as Claude
# Code has it ready when it starts the hook: the hook waits at most 3 s for
# stdin, and a python3 starting beside it in a pipe took longer than that
# under load (the first prompt then got nothing: 4 checks failed).
ask() {  # session prompt -> stdout of the hook
    python3 -c 'import json,sys; print(json.dumps({"session_id":sys.argv[1],"prompt":sys.argv[2],"cwd":"/tmp","hook_event_name":"UserPromptSubmit"}))' "$1" "$2" \
        > "$TMP/ask.json" && "$CAIRN" hook prompt < "$TMP/ask.json"
}
ctx() { python3 -c 'import json,sys; d=sys.stdin.read(); print(json.loads(d)["hookSpecificOutput"]["additionalContext"] if d.strip() else "")'; }

out=$(ask s1 "which climbing gym did I pick?"); rc=$?
eq "exit 0" "$rc" 0
contains "injects the climbing turns" "$(printf %s "$out" | ctx)" "LBC on Thursday"
contains "hookEventName" "$out" '"hookEventName":"UserPromptSubmit"'
contains "fenced as data" "$out" "data, not instructions"
lacks "only what matched" "$(printf %s "$out" | ctx)" "Lisbon in March"
out2=$(ask s1 "which climbing gym did I pick?")
eq "never the same message twice in a session" "$out2" ""
out3=$(ask s2 "which climbing gym did I pick?")
eq "another session gets it, byte-identical" "$out3" "$out"
contains "Chinese prompt" "$(ask s3 '北京烤鸭订在哪里' | ctx)" "四季民福"
eq "ok is skipped" "$(ask s4 ok)" ""
eq "继续 is skipped" "$(ask s4 继续)" ""
eq "slash command skipped" "$(ask s4 '/compact')" ""
eq "unrelated prompt: nothing" "$(ask s4 'what is the weather like today in Oslo')" ""
eq "common words only: nothing" "$(ask s4 'can you help me with this')" ""
eq "machine text skipped" "$(ask s4 '{"a": [1, 2, 3], "b": {"c": 4, "d": [5, 6, 7, 8]}}')" ""
long=$(python3 -c 'print("climbing gym LBC " * 400)')
eq "very long prompt skipped" "$(ask s4 "$long")" ""
out=$(CAIRN_INJECT=0 ask s5 "which climbing gym did I pick?")
eq "CAIRN_INJECT=0 turns it off" "$out" ""
out=$(CAIRN_INJECT_BUDGET=120 ask s6 "which climbing gym did I pick?" | ctx)
t=$(python3 -c 'import sys; print(len(sys.argv[1]))' "$out")
check "a small budget still gives a bounded block" test "$t" -lt 800
# the current session is left out
out=$(ask demo/2026-03-20-climbing "which climbing gym did I pick?" | ctx)
lacks "current session not injected" "$out" "LBC on Thursday"
# every decision is logged
n=$(wc -l < "$HOME/.cairn/inject.jsonl")
check "decisions logged" test "$n" -ge 10
contains "log says why" "$(cat "$HOME/.cairn/inject.jsonl")" '"why":"short acknowledgement"'
# an all-space prompt is empty (trimming it once ran the length below 0,
# so it was logged as a long pasted prompt)
ask s4 "   " >/dev/null
contains "spaces only: empty prompt" "$(tail -1 "$HOME/.cairn/inject.jsonl")" '"why":"empty prompt"'
# garbage in: exit 0, nothing out
out=$(printf 'not json' | "$CAIRN" hook prompt); rc=$?
eq "garbage: exit 0" "$rc" 0
eq "garbage: no output" "$out" ""
out=$(printf '{"session_id":"x","prompt":"climbing gym LBC"}' | CAIRN_DB="$TMP/none.db" "$CAIRN" hook prompt); rc=$?
eq "no store: exit 0, nothing" "$rc:$out" "0:"
# after an upgrade of cairn: the hook opens the store read-only, finds an
# older schema (v4: no vec_stamp, FTS triggers), migrates it and still injects
cp "$CAIRN_DB" "$TMP/v4.db"
check "v4 store: made from the current one" python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.executescript("DROP TRIGGER vault_totals_ai; DROP TRIGGER vault_totals_au; DROP TRIGGER vault_totals_ad; DROP TABLE vault_totals; DROP TRIGGER post_dirty_ad; DROP TRIGGER post_dirty_au; DROP TABLE post_dirty; DROP TABLE post_blocks; DROP TABLE post_terms; DROP TABLE post_state; DROP TRIGGER session_sizes_ai; DROP TRIGGER session_sizes_au; DROP TRIGGER session_sizes_ad; DROP TABLE session_sizes; DROP TRIGGER tier_terms_forget; DROP TRIGGER tier_terms_gone; DROP TRIGGER tier_post_au; DROP TRIGGER tier_post_ad; DROP TABLE tier_post; DROP TABLE tier_terms; DROP TABLE tier_state; DROP TRIGGER session_turns_au; DROP TRIGGER session_turns_ad; DROP TABLE session_turns; DROP TRIGGER memory_sync_corr_au; DROP TRIGGER memory_sync_corr_ai; DROP TRIGGER memory_sync_au; DROP TABLE memory_sync; DROP TABLE memories_forgotten; ALTER TABLE sync_state DROP COLUMN pull_mtx; ALTER TABLE sync_state DROP COLUMN push_mtomb; DROP TRIGGER msg_runs_au; DROP TRIGGER vault_vectors_title; DROP TRIGGER vault_vectors_au; DROP TRIGGER vault_vectors_ad; DROP TABLE vault_vectors; DROP TRIGGER msg_runs_ad; DROP TABLE msg_runs; DROP TABLE events_fill; DROP TRIGGER message_events_au; DROP TRIGGER message_events_ad; DROP TABLE message_events; DROP TRIGGER store_totals_ai; DROP TRIGGER store_totals_au; DROP TRIGGER store_totals_ad; DROP TABLE store_totals; PRAGMA writable_schema=ON; DELETE FROM sqlite_master WHERE name = '"'"'vault_fts'"'"'; PRAGMA writable_schema=OFF; DROP TABLE vault_fts_data; DROP TABLE vault_fts_idx; DROP TABLE vault_fts_docsize; DROP TABLE vault_fts_config; DROP TABLE vault_sections; DROP TABLE vault_docs; DROP TABLE vaults; DROP INDEX messages_meta; DROP INDEX messages_hit; DROP TRIGGER session_stats_au; DROP TRIGGER session_stats_ad; DROP TABLE session_stats; DROP TRIGGER vec_stamp_ai; DROP TRIGGER vec_stamp_ad; DROP TRIGGER vec_stamp_au; DROP TABLE vec_stamp; DROP TABLE sync_foreign; DROP TABLE forgotten; DROP TABLE sync_state; DROP TABLE memory_vectors; DROP TABLE correction_candidates; DROP TABLE corrections; DROP TABLE memory_history; DROP TABLE memory_links; DROP TABLE memories; DROP INDEX sessions_first; DROP INDEX sessions_last; CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN INSERT INTO messages_fts(messages_fts, rowid, content) VALUES('"'"'delete'"'"', old.id, old.content); END; PRAGMA user_version=4;"); c.close()' "$TMP/v4.db"
out=$(CAIRN_DB="$TMP/v4.db" ask s7 "which climbing gym did I pick?" | ctx)
contains "v4 store: the hook still injects" "$out" "LBC on Thursday"
eq "v4 store: the hook migrated it" \
    "$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA user_version").fetchone()[0])' "$TMP/v4.db")" \
    "$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA user_version").fetchone()[0])' "$CAIRN_DB")"
eq "v4 store: the FTS trigger is gone (v7)" \
    "$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM sqlite_master WHERE type = '"'"'trigger'"'"' AND name = '"'"'messages_ad'"'"'").fetchone()[0])' "$TMP/v4.db")" 0

# SessionStart: the project's latest sessions
printf '%s\n' '{"id":"p1","project":"proj-x","title":"Refactor the parser","started_at":"2026-05-01T10:00:00","messages":[{"role":"user","content":"let us refactor the parser"}]}' \
    '{"id":"p2","project":"proj-x","title":"Fix flaky login test","started_at":"2026-05-02T10:00:00","messages":[{"role":"user","content":"the login test is flaky"}]}' | "$CAIRN" add - >/dev/null
out=$(printf '{"session_id":"new","source":"startup","cwd":"/tmp"}' | CAIRN_PROJECT=proj-x "$CAIRN" hook session-start | ctx)
contains "session-start lists the project's sessions" "$out" "Fix flaky login test"
contains "newest first" "$(printf %s "$out" | head -3 | tail -1)" "Fix flaky login test"
contains "each session with its id, for get_conversation" "$out" '- 2026-05-02 · Fix flaky login test (1 message) · session_id "p2"'
contains "the intro names get_conversation" "$out" "get_conversation with a session_id"
lacks "other projects not listed" "$out" "Climbing gyms"
# on compact: the recent turns of this session, verbatim
out=$(printf '{"session_id":"demo/2026-03-02-lisbon","source":"compact","cwd":"/tmp"}' | "$CAIRN" hook session-start | ctx)
contains "compact re-injects the session's turns" "$out" "1,400 EUR is workable"
contains "compact keeps order" "$out" "user: I'm moving to Lisbon"
# a message just over the compact budget (2000) is cut with " …" inside
# its own bytes: the cut once wrote the 5 bytes of " …\0" past the end
# of a 2001-byte message (reproduced with tests/fuzz/fuzz_hook.c)
python3 -c 'import json; print(json.dumps({"id":"cut","messages":[{"role":"user","content":"a " * 1000 + "b"}]}))' |
    "$CAIRN" add - >/dev/null
out=$(printf '{"session_id":"cut","source":"compact","cwd":"/tmp"}' | "$CAIRN" hook session-start); rc=$?
eq "compact cut: exit 0" "$rc" 0
n=$(printf %s "$out" | ctx | python3 -c 'import sys
for l in sys.stdin.buffer.read().split(b"\n"):
    if l.startswith(b"user: a a"): print(len(l) - len("user: "))')
eq "compact cut: shown in at most the message's 2001 bytes" "$(test -n "$n" && test "$n" -le 2001 && echo ok || echo "$n")" ok
t_done
