#!/bin/sh
# t0302-forget-scrub: forget leaves no recoverable byte. After `cairn forget`,
# after MCP forget_session with the server still running, and after `cairn
# redact`, the raw bytes of the store, its -wal and its -vec file hold none
# of the forgotten text's markers (an SSN, unique words, the title) nor the
# masked secret; each marker is found before, so the scan can fail.
# Never skipped.
. "$(dirname "$0")/lib.sh"
S="$ROOT/examples/sample-history.jsonl"
export CAIRN_EMBED_MODEL=none
# The text as said, so the SSN and the token are stored until forgotten.
export CAIRN_REDACT=0
# Word tails: FTS5 stores an index term after the prefix it shares with the
# term before it, so a term is found by its end.
MARKS="078-05-1120 jvwkplorbat mbrixagond rtitlemarker"
TOKEN=ghp_Zq7XwVb3Lr9TnPk2Hs8Dy4Fm6Jc1Gu5Ae0Qo

victim() {  # victim ID: a session with the markers, as cairn add JSON
    printf '{"id":"%s","title":"Qzvrtitlemarker","messages":[%s,%s]}\n' "$1" \
        '{"role":"user","content":"My SSN is 078-05-1120 and the word is zqxjvwkplorbat, remember flumbrixagond."}' \
        '{"role":"assistant","content":"Noted: zqxjvwkplorbat and flumbrixagond and SSN 078-05-1120."}'
}
# found MARK: the files of the store holding MARK's bytes (none: empty)
found() {
    for f in "$CAIRN_DB" "$CAIRN_DB-wal" "$CAIRN_DB-vec"; do
        [ -f "$f" ] && grep -q -a -F -- "$1" "$f" && printf '%s ' "${f##*/}"
    done
    return 0
}

# 1. cairn forget: the victim first, then sessions enough for FTS5 to merge
# its segment with theirs (a forget's tombstone then sits apart from it)
victim victim | "$CAIRN" add -q -
"$CAIRN" add -q "$S"
for m in $MARKS; do check "before forget: $m is in the store" test -n "$(found "$m")"; done
out=$("$CAIRN" forget victim)
contains "forget says so" "$out" "forgot victim"
for m in $MARKS; do eq "after cairn forget: $m in no file" "$(found "$m")" ""; done
eq "the WAL is empty" "$(stat -c %s "$CAIRN_DB-wal" 2>/dev/null || echo 0)" 0
out=$("$CAIRN" recall "climbing gym" --budget 300)
contains "the rest is still recalled" "$out" "climbing"
out=$("$CAIRN" forget --scrub)
contains "forget --scrub" "$out" "scrubbed"
check_fails "forget of a missing session fails" "$CAIRN" forget victim
check_fails "forget with an unknown option fails" "$CAIRN" forget --bogus

# 2. MCP: saved and forgotten through a server that stays open
rm -f "$CAIRN_DB" "$CAIRN_DB-wal" "$CAIRN_DB-shm" "$CAIRN_DB-vec"
"$CAIRN" add -q "$S"
out=$(python3 - "$CAIRN" "$CAIRN_DB" $MARKS <<'EOF'
import subprocess, sys
from mcp_client import Mcp
cairn, db, marks = sys.argv[1], sys.argv[2], sys.argv[3:]
srv = Mcp(cairn, name="t0302")
def found(mark):
    out = []
    for f in (db, db + "-wal", db + "-vec"):
        try:
            if mark.encode() in open(f, "rb").read():
                out.append(f.rsplit("/", 1)[-1])
        except FileNotFoundError:
            pass
    return out
msgs = [{"role": "user", "content": "My SSN is 078-05-1120 and the word is zqxjvwkplorbat, "
         "remember flumbrixagond."},
        {"role": "assistant", "content": "Noted: zqxjvwkplorbat and flumbrixagond and SSN "
         "078-05-1120."}]
err, t = srv.call("save_conversation", {"messages": msgs, "session_id": "mcp-victim",
                                       "title": "Qzvrtitlemarker"})
print("saved:", not err)
print("before:", all(found(m) for m in marks))
err, t = srv.call("forget_session", {"session_id": "mcp-victim"})
print("forget ok:", not err, "wiped" in t)
# the server is still running, its store still open
print("after:", " ".join("%s=%s" % (m, ",".join(found(m)) or "none") for m in marks))
err, t = srv.call("recall", {"query": "zqxjvwkplorbat flumbrixagond"})
print("recalled:", "zqxjvwkplorbat" in t)
# cairn forget on the command line while the server keeps the store open
err, t = srv.call("save_conversation", {"messages": msgs, "session_id": "cli-victim",
                                       "title": "Qzvrtitlemarker"})
f = subprocess.run([cairn, "forget", "cli-victim"], capture_output=True, text=True)
print("cli forget:", f.returncode, f.stdout.strip())
print("cli after:", " ".join("%s=%s" % (m, ",".join(found(m)) or "none") for m in marks))
srv.close()
EOF
)
contains "MCP save" "$out" "saved: True"
contains "MCP: the markers were in the files before" "$out" "before: True"
contains "MCP forget_session succeeds and says the text is wiped" "$out" "forget ok: True True"
after=$(printf '%s\n' "$out" | grep '^after:')
for m in $MARKS; do contains "MCP forget, server open: $m in no file" "$after" "$m=none"; done
contains "MCP: not recalled after" "$out" "recalled: False"
contains "cairn forget while the server runs" "$out" "cli forget: 0 forgot cli-victim"
after=$(printf '%s\n' "$out" | grep '^cli after:')
for m in $MARKS; do contains "cairn forget, server open: $m in no file" "$after" "$m=none"; done

# 3. cairn redact: the secret is masked and its bytes gone
rm -f "$CAIRN_DB" "$CAIRN_DB-wal" "$CAIRN_DB-shm" "$CAIRN_DB-vec"
"$CAIRN" add -q "$S"
printf '{"id":"leak","messages":[{"role":"user","content":"my token is %s ok"}]}\n' "$TOKEN" |
    "$CAIRN" add -q -
check "before redact: the token is stored" test -n "$(found "${TOKEN#ghp_}")"
out=$("$CAIRN" redact)
contains "redact masked the token" "$out" "github         1"
eq "after redact: the token in no file" "$(found "${TOKEN#ghp_}")" ""
out=$("$CAIRN" show leak)
contains "the rest of the message is kept" "$out" "ok"
t_done
