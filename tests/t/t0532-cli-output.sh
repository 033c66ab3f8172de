#!/bin/sh
# t0532-cli-output: what the text output of the CLI says. `cairn sessions`
# has a project column (the names --project takes); `recall --explain`
# explains in text output too, not only with --json; counts read as
# English ("1 session", not "1 sessions"); stats names no project when no
# session has one, and gives a small store's size in KB or bytes, not
# "0.0 MB".
. "$(dirname "$0")/lib.sh"

# one session, one message, no project
out=$(printf '%s\n' '{"id":"solo","messages":[{"role":"user","content":"the kettle whistles at dawn"}]}' |
      "$CAIRN" add -)
contains "add: one session, one message" "$out" "added 1 session (0 updated), 1 message;"
lacks "add: no '1 sessions'" "$out" "1 sessions"
out=$("$CAIRN" export)
contains "export: 1 session" "$out" "1 session, oldest first."
out=$("$CAIRN" stats)
lacks "stats: no project counted when none has one" "$out" "in 1 projects"
contains "stats: says no session is in a project" "$out" "1, none in a project"
contains "stats: a few bytes are bytes" "$out" "27 bytes verbatim"
lacks "stats: not 0.0 MB" "$out" "0.0 MB"
contains "stats --json: no project" "$("$CAIRN" stats --json)" '"projects":0,'
out=$("$CAIRN" sessions)
lacks "sessions: no 'msgs'" "$out" "msgs"
contains "sessions: a session with no project shows -" "$(printf '%s\n' "$out" | grep solo)" "  -  "

# 212 short messages in two projects: KB, and projects named in sessions
python3 - "$TMP/s.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for s in range(4):
        msgs = [{"role": "user" if i % 2 == 0 else "assistant",
                 "content": "note %d of session %d about the garden shed and its hinges" % (i, s)}
                for i in range(53)]
        f.write(json.dumps({"id": "g%d" % s, "project": "garden/shed" if s < 2 else "attic",
                            "title": "session %d" % s, "messages": msgs}) + "\n")
PY
"$CAIRN" add -q "$TMP/s.jsonl"
out=$("$CAIRN" stats)
contains "stats: 213 messages" "$out" "messages       213"
contains "stats: their size in KB" "$out" " KB verbatim"
contains "stats: sessions with and without a project" "$out" "sessions       5 (4 in 2 projects, 1 in none)"
out=$("$CAIRN" sessions)
contains "sessions: a header naming the project column" "$(printf '%s\n' "$out" | head -1)" "project"
line=$(printf '%s\n' "$out" | grep ' g0 ')
contains "sessions: the project on the session's line" "$line" "garden/shed"
# the name shown is the name --project takes
p=$(printf '%s\n' "$line" | awk '{print $4}')
eq "sessions: the fourth column is the project" "$p" "garden/shed"
out=$("$CAIRN" sessions --project "$p")
eq "sessions --project with the name shown" "$(printf '%s\n' "$out" | sed 1d | wc -l | tr -d ' ')" 2

# --explain in text output
out=$("$CAIRN" recall "hinges session 3" --budget 200 --explain)
contains "recall --explain: the text" "$out" "hinges"
contains "recall --explain: an explanation after it" "$out" "--- explain:"
contains "recall --explain: each item's reason" "$out" ": rank 1, fused score"
contains "recall --explain: the item named by session and message" "$out" "g3 #"
contains "recall --explain: how much of the question matched" "$out" "of the question's weight"
out=$("$CAIRN" recall "hinges session 3" --budget 200)
lacks "recall without --explain: no explanation" "$out" "--- explain"
out=$("$CAIRN" recall "what did I note last week" --now 2026-05-10 --budget 200 --explain 2>/dev/null)
contains "recall --explain: the period read from the question" "$out" "time: the question asks about"
t_done
