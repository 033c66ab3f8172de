#!/bin/sh
# t0236-add-thread: `cairn add` with its second thread (the default: one
# thread reads, parses, masks and tokenizes the next sessions while the
# other writes) against one thread (CAIRN_ADD_THREAD=0) on an input full of
# errors and of sessions whose order matters: the same output, the same
# messages in the same order, the same rows. A session reordered or lost
# between the threads changes the rows' ids, positions or counts.
. "$(dirname "$0")/lib.sh"
export CAIRN_EMBED_MODEL=none
G="$TMP/gen.py"
cat > "$G" <<'PY'
import json, random, sys
random.seed(7)
w = sys.stdout.write
words = ("the websocket reconnect bug was fixed yesterday after we talked last week about "
         "the deploy on Monday and the token rotation two days ago").split()
def text(i):
    return " ".join(random.choice(words) for _ in range(5 + i % 40))
def msgs(i, n, ids=False):
    out = []
    for k in range(n):
        m = {"role": "user" if k % 2 == 0 else "assistant", "content": text(i + k),
             "at": "2026-03-%02dT10:%02d:00Z" % (1 + i % 28, k % 60)}
        if ids:
            m["id"] = "m%d-%d" % (i, k)
        out.append(m)
    return out
for i in range(400):
    r = i % 23
    if r == 3:                                 # broken JSON
        w('{"id": "bad%d", "messages": [\n' % i)
    elif r == 5:                               # a role no session may have
        w(json.dumps({"id": "r%d" % i, "messages": [{"role": "system", "content": "x"}]}) + "\n")
    elif r == 7:                               # not a date
        w(json.dumps({"id": "d%d" % i, "messages": [{"role": "user", "content": "hi",
                                                     "at": "soon"}]}) + "\n")
    elif r == 11:                              # an array, its second session refused
        w(json.dumps([{"id": "a%d" % i, "messages": msgs(i, 3)},
                      {"id": "a%d-bad" % i, "messages": "none"},
                      {"id": "a%d-c" % i, "messages": msgs(i + 1, 2)}]) + "\n")
    elif r == 13:                              # an id repeated with other text
        w(json.dumps({"id": "x%d" % i, "messages": [{"id": "same", "role": "user", "content": "a"},
                                                    {"id": "same", "role": "user",
                                                     "content": "b"}]}) + "\n")
    elif r == 17:                              # a secret and a private span
        w(json.dumps({"id": "p%d" % i, "title": "key ghp_R3m0teT0kenAbCdEfGhIjKlMnOpQrStUv12",
                      "messages": [{"role": "user", "content": "mine <private>hidden %d</private> "
                                    "token ghp_T1tleT0kenAbCdEfGhIjKlMnOpQrStUv9876 ok" % i}]})
          + "\n")
    elif r == 19 and i > 40:                   # an earlier session again: a reply grown, a turn more
        j = i - 40 - (i - 40) % 23 + 1         # a plain session (r == 1)
        ms = msgs(j, 4, ids=True)
        ms[3]["content"] += " and then some more words about it"
        ms.append({"id": "m%d-late" % j, "role": "user", "content": "later " + text(i)})
        w(json.dumps({"id": "s%d" % j, "messages": ms}) + "\n")
    elif r == 21:                              # no id: found again by its content
        w(json.dumps({"messages": msgs(i % 5, 2)}) + "\n")
    else:
        w(json.dumps({"id": "s%d" % i, "project": "p%d" % (i % 3), "messages": msgs(i, 4, ids=True)})
          + "\n")
PY
D="$TMP/dump.py"
cat > "$D" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for q in ("SELECT id, ext_id, source, project, title, started_at, ended_at, meta FROM sessions ORDER BY id",
          "SELECT id, session, position, ext_id, role, speaker, content, created_at, hash, ntok "
          "FROM messages ORDER BY id",
          "SELECT * FROM message_events ORDER BY msg, t_from, t_to",
          "SELECT * FROM msg_runs ORDER BY first",
          "SELECT * FROM session_stats ORDER BY session",
          "SELECT session, n, hex(turns) FROM session_turns ORDER BY session"):
    for row in c.execute(q):
        print(repr(row))
PY
python3 "$G" > "$TMP/in.jsonl"

CAIRN_DB="$TMP/one.db" CAIRN_ADD_THREAD=0 "$CAIRN" add "$TMP/in.jsonl" > "$TMP/o1" 2> "$TMP/e1"
rc1=$?
CAIRN_DB="$TMP/two.db" "$CAIRN" add "$TMP/in.jsonl" > "$TMP/o2" 2> "$TMP/e2"
rc2=$?
eq "one thread: exit 1 (refused input)" "$rc1" 1
eq "two threads: the same exit" "$rc2" "$rc1"
eq "the same summary" "$(cat "$TMP/o2")" "$(cat "$TMP/o1")"
eq "the same messages, in the same order" "$(cat "$TMP/e2")" "$(cat "$TMP/e1")"
contains "a broken line named" "$(cat "$TMP/e1")" "in.jsonl:4:"
contains "an array's refused session named" "$(cat "$TMP/e1")" "session 2 of the array"
contains "sessions updated by later lines" "$(cat "$TMP/o1")" "updated"
contains "secrets masked" "$(cat "$TMP/o1")" "secrets masked"
python3 "$D" "$TMP/one.db" > "$TMP/d1"
eq "one thread's rows read" "$?" 0
python3 "$D" "$TMP/two.db" > "$TMP/d2"
eq "two threads' rows read" "$?" 0
check "the store has rows" [ "$(wc -l < "$TMP/d1")" -gt 3000 ]
check "the same rows" cmp -s "$TMP/d1" "$TMP/d2"
lacks "no private text stored" "$(cat "$TMP/d2")" "hidden"
lacks "no secret stored" "$(cat "$TMP/d2")" "ghp_T1tle"

# Added again: everything is found, nothing written, the same way.
CAIRN_DB="$TMP/one.db" CAIRN_ADD_THREAD=0 "$CAIRN" add "$TMP/in.jsonl" > "$TMP/o1" 2> "$TMP/e1"
CAIRN_DB="$TMP/two.db" "$CAIRN" add "$TMP/in.jsonl" > "$TMP/o2" 2> "$TMP/e2"
eq "again: the same summary" "$(cat "$TMP/o2")" "$(cat "$TMP/o1")"
contains "again: nothing added" "$(cat "$TMP/o1")" "added 0 sessions (0 updated), 0 messages"
eq "again: the same messages" "$(cat "$TMP/e2")" "$(cat "$TMP/e1")"
python3 "$D" "$TMP/two.db" > "$TMP/d3"
check "again: the rows unchanged" cmp -s "$TMP/d2" "$TMP/d3"

# A JSON array on stdin, through the thread, as one document.
python3 -c 'import json; print(json.dumps([{"id": "q%d" % i, "messages": [{"role": "user",
"content": "q %d" % i}]} for i in range(100)]))' > "$TMP/arr.json"
CAIRN_DB="$TMP/three.db" "$CAIRN" add - < "$TMP/arr.json" > "$TMP/o3" 2>&1
contains "an array of 100 sessions" "$(cat "$TMP/o3")" "added 100 sessions"
# Sessions of ~5 MB each (~30 MB prepared: token records, the parse): the
# queue between the threads holds at most 64 MB of them, not 8 sessions
# (~240 MB), so the two threads' peak RSS stays within ~100 MB of one
# thread's (the writer's session, the queue's 64 MB, the one being
# prepared). Before the bound: 190 MB more.
python3 -c 'import json, random
random.seed(3)
w = "alpha beta gamma delta websocket reconnect deploy token rotation fixed".split()
for i in range(12):
    print(json.dumps({"id": "h%d" % i, "messages": [{"role": "user" if k % 2 == 0 else "assistant",
        "content": " ".join(random.choice(w) + str(random.randrange(1000)) for _ in range(12000))}
        for k in range(40)]}))' > "$TMP/huge.jsonl"
rss() {
    CAIRN_DB="$TMP/huge$1.db" CAIRN_ADD_THREAD=$1 CAIRN_TIER_KEEP=0 python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$CAIRN" add "$TMP/huge.jsonl"
}
if t_sanitized; then
    # the peak RSS of a sanitizer build measures its quarantine, not the queue
    t_skip "peak memory of the queue: a sanitizer build (its quarantine holds freed memory)"
else
    one=$(rss 0)
    two=$(rss 1)
    check "huge sessions added on one thread and two ($one KB, $two KB)" [ -n "$one" -a -n "$two" ]
    check "huge sessions: two threads hold at most ~100 MB more ($one KB, $two KB)" \
        [ $((${two:-999999} - ${one:-0})) -lt 150000 ]
fi
rm -f "$TMP/huge.jsonl" "$TMP"/huge*.db*
t_done
