#!/bin/sh
# t0226-reindex-events: a store upgraded to schema 15 read the dates only
# its newest 30,000 messages speak of; `cairn doctor` says how many older
# ones are left, `cairn reindex --events` reads them (issue 16: "yesterday"
# in a message of 5 Dec is about 4 Dec), and a question naming that date
# then finds the message. The upgraded store is simulated by putting the
# fill's line above every message and dropping their rows.
. "$(dirname "$0")/lib.sh"
export CAIRN_EMBED_MODEL=none
export TZ=UTC
cat > "$TMP/s.jsonl" <<'JSON'
{"id":"fair","started_at":"2023-12-05T10:00:00Z","messages":[{"role":"user","content":"Yesterday we went to the county fair with the kids, so much fun","created_at":"2023-12-05T10:00:00Z"}]}
{"id":"move","started_at":"2023-11-20T10:00:00Z","messages":[{"role":"user","content":"we went to the county fair and the move is done","created_at":"2023-11-20T10:00:00Z"}]}
JSON
"$CAIRN" add -q "$TMP/s.jsonl"
out=$("$CAIRN" doctor 2>&1)
lacks "doctor: a new store has nothing left to read" "$out" "reindex --events"
out=$("$CAIRN" reindex --events 2>&1)
eq "reindex --events on a new store: exit 0" "$?" 0
contains "reindex --events: nothing to read" "$out" "every message was read already"

python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.executescript("UPDATE events_fill SET below = 1000000; DELETE FROM message_events;"); c.close()' "$CAIRN_DB"
out=$("$CAIRN" doctor 2>&1)
contains "doctor: the older messages left" "$out" "2 older messages not yet read for the dates they speak of"
contains "doctor: what to run" "$out" "cairn reindex --events"
Q="Which county fair did we go to on December 4, 2023?"
out=$("$CAIRN" recall "$Q" --now 2024-01-10 --budget 60 --json)
first=$(printf %s "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["items"][0]["session"])')
eq "before: the date names no event, the fair of 20 Nov wins on words" "$first" "move"
out=$("$CAIRN" reindex --events 2>&1)
eq "reindex --events: exit 0" "$?" 0
contains "reindex --events: both read" "$out" "2 older messages read"
out=$("$CAIRN" recall "$Q" --now 2024-01-10 --budget 60 --json)
first=$(printf %s "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["items"][0]["session"])')
eq "after: the message about 4 Dec comes first" "$first" "fair"
out=$("$CAIRN" doctor 2>&1)
lacks "doctor: nothing left after the fill" "$out" "reindex --events"
out=$("$CAIRN" reindex --events --bogus 2>&1)
eq "reindex --events --bogus: usage error" "$?" 2
t_done
