#!/bin/sh
# t0220-odd-input: no text is lost quietly on odd input (issue 12). A NUL
# ("\u0000" or a raw byte) and a lone UTF-16 surrogate ("\ud83d", half an
# emoji) in message text are stored as U+FFFD with the rest of the message
# and of the session, through every write path: cairn add, MCP
# save_conversation, the Stop hook (its stdin and the transcript), the
# ChatGPT and claude.ai importers. Numeric ids beyond 2^53 stay apart;
# repeated message ids with other text are refused with a message; MCP saves
# without a session id never merge two conversations that only open alike.
# Never skipped.
. "$(dirname "$0")/lib.sh"
python3 - "$CAIRN" "$TMP" <<'EOF'
import json, os, sqlite3, subprocess, sys
from mcp_client import Mcp
cairn, tmp = sys.argv[1], sys.argv[2]
passed = failed = 0
FFFD = "\ufffd"
# the odd texts, as Python strings that json.dumps writes as \u escapes
ODD = {"nul-escape": ("before\x00after", "before" + FFFD + "after"),
       "lone-high": ("cut emoji \ud83d here", "cut emoji " + FFFD + " here"),
       "lone-low": ("\ude00 low half", FFFD + " low half"),
       "pair-kept": ("whole \U0001F600 emoji", "whole \U0001F600 emoji")}

def check(cond, what, extra=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL: %s %s" % (what, str(extra)[:400]), file=sys.stderr)

def run(db, args, data=None):
    env = dict(os.environ, CAIRN_DB=db)
    p = subprocess.run([cairn] + args, input=data, capture_output=True, env=env)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")

def texts(db, sid=None):
    c = sqlite3.connect(db)
    q = "SELECT m.content FROM messages m JOIN sessions s ON m.session = s.id"
    rows = c.execute(q + (" WHERE s.ext_id = ?" if sid else "") + " ORDER BY s.id, m.position",
                     (sid,) if sid else ()).fetchall()
    c.close()
    return [r[0] for r in rows]

def nsessions(db):
    c = sqlite3.connect(db)
    n = c.execute("SELECT count(*) FROM sessions").fetchone()[0]
    c.close()
    return n

# ---- cairn add ----------------------------------------------------------
for name, (raw, want) in ODD.items():
    db = "%s/add-%s.db" % (tmp, name)
    doc = json.dumps({"id": "s", "messages": [{"role": "user", "content": raw},
                                              {"role": "assistant", "content": "after it"}]})
    rc, out, err = run(db, ["add", "-"], doc.encode())
    check(rc == 0, "add %s exits 0" % name, err)
    check(texts(db, "s") == [want, "after it"], "add %s stored" % name, texts(db, "s"))
# a raw NUL byte inside a string
db = tmp + "/add-rawnul.db"
rc, out, err = run(db, ["add", "-"],
                   b'{"id":"r","messages":[{"role":"user","content":"raw\x00nul"}]}')
check(rc == 0 and texts(db, "r") == ["raw" + FFFD + "nul"], "add raw NUL", (rc, err, texts(db, "r")))
# JSONL and an array of sessions take the same road
db = tmp + "/add-array.db"
arr = json.dumps([{"id": "a1", "messages": [{"role": "user", "content": "x\ud83d"}]},
                  {"id": 9007199254740993, "messages": [{"role": "user", "content": "one"}]},
                  {"id": 9007199254740992, "messages": [{"role": "user", "content": "two"}]}])
rc, out, err = run(db, ["add", "-"], arr.encode())
check(rc == 0 and "added 3 sessions (0 updated)" in out, "array of sessions", (out, err))
check(texts(db, "9007199254740993") == ["one"] and texts(db, "9007199254740992") == ["two"],
      "big ids in an array stay exact")

# numeric session ids beyond 2^53: two sessions, not one updated
db = tmp + "/add-bigid.db"
lines = "\n".join(json.dumps({"id": i, "messages": [{"role": "user", "content": t}]})
                  for i, t in ((12345678901234567891, "first"), (12345678901234567892, "second")))
rc, out, err = run(db, ["add", "-"], lines.encode())
check(rc == 0 and "added 2 sessions (0 updated), 2 messages" in out, "big ids: two sessions", out + err)
check(texts(db, "12345678901234567891") == ["first"] and texts(db, "12345678901234567892") == ["second"],
      "big ids kept as written")

# repeated message ids with other text: refused, said, nothing stored
db = tmp + "/add-dup.db"
doc = json.dumps({"id": "d", "messages": [{"id": "m", "role": "user", "content": "first"},
                                          {"id": "m", "role": "user", "content": "second"}]})
rc, out, err = run(db, ["add", "-"], doc.encode())
check(rc != 0 and "repeats the id" in err, "repeated id refused", (rc, out, err))
check(not os.path.exists(db) or nsessions(db) == 0, "repeated id: nothing stored")
# big numeric message ids that round alike are two ids
doc = json.dumps({"id": "d2", "messages": [{"id": 9007199254740993, "role": "user", "content": "a"},
                                           {"id": 9007199254740992, "role": "user", "content": "b"}]})
rc, out, err = run(db, ["add", "-"], doc.encode())
check(rc == 0 and texts(db, "d2") == ["a", "b"], "big message ids", (out, err, texts(db, "d2")))

# ---- MCP ------------------------------------------------------------------
db = tmp + "/mcp.db"
m = Mcp(cairn, env={"CAIRN_DB": db}, name="t0220")
for name, (raw, want) in ODD.items():
    err, t = m.call("save_conversation", {"session_id": "m-" + name, "messages": [
        {"role": "user", "content": raw}, {"role": "assistant", "content": "reply"}]})
    check(not err and texts(db, "m-" + name) == [want, "reply"], "mcp %s" % name, t)
# without a session id: two conversations that open alike, no dates
a = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "conversation A"}]
b = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "conversation B"}]
ids = []
for conv in (a, b, a + [{"role": "user", "content": "A goes on"}]):
    err, t = m.call("save_conversation", {"messages": conv})
    check(not err, "mcp save without id", t)
    ids.append(t.split('session "', 1)[-1].split('"', 1)[0])
check(ids[0] != ids[1], "two conversations, two sessions", ids)
check(ids[2] == ids[0], "a continuation finds its session", ids)
check(texts(db, ids[0]) == ["hello", "conversation A", "A goes on"], "A whole", texts(db, ids[0]))
check(texts(db, ids[1]) == ["hello", "conversation B"], "B whole", texts(db, ids[1]))
err, t = m.call("forget_session", {"session_id": ids[1]})
check(not err and texts(db, ids[0]) == ["hello", "conversation A", "A goes on"],
      "forgetting B leaves A", t)
m.close()

# ---- the Stop hook: odd stdin and an odd transcript ------------------------
for name, (raw, want) in ODD.items():
    db = "%s/hook-%s.db" % (tmp, name)
    tr = "%s/tr-%s.jsonl" % (tmp, name)
    rec = lambda t, u, parent, role, content: json.dumps({
        "type": t, "uuid": u, "parentUuid": parent, "sessionId": "h-" + name, "cwd": "/nowhere",
        "timestamp": "2026-01-01T10:00:0%dZ" % len(u), "isSidechain": False,
        "message": {"role": role, "content": content} if t == "user" else
                   {"role": role, "id": "msg-" + u, "content": [{"type": "text", "text": content}]}})
    with open(tr, "w") as f:
        f.write(rec("user", "u1", None, "user", raw) + "\n")
        f.write(rec("assistant", "a12", "u1", "assistant", "answer " + raw) + "\n")
    stdin = json.dumps({"session_id": "h-" + name, "transcript_path": tr, "cwd": "/nowhere",
                        "hook_event_name": "Stop", "stop_hook_active": False,
                        "last_assistant_message": "answer " + raw})
    rc, out, err = run(db, ["hook", "stop"], stdin.encode())
    check(rc == 0 and out == "", "hook %s exits 0 silently" % name, err)
    got = texts(db) if os.path.exists(db) else []
    check(got == [want, "answer " + want], "hook %s stored" % name, got)

# ---- ChatGPT and claude.ai exports ----------------------------------------
def chatgpt(raw):
    def node(i, role, text, parent, child):
        return {"id": i, "parent": parent, "children": [child] if child else [],
                "message": {"id": i, "author": {"role": role}, "create_time": 1760000000,
                            "content": {"content_type": "text", "parts": [text]}}}
    return [{"id": "cg", "conversation_id": "cg", "title": "t", "create_time": 1760000000,
             "current_node": "a", "mapping": {"u": node("u", "user", raw, None, "a"),
                                              "a": node("a", "assistant", "ok " + raw, "u", None)}},
            {"id": "cg2", "conversation_id": "cg2", "title": "t2", "create_time": 1760000000,
             "current_node": "x", "mapping": {"x": node("x", "user", "next one", None, None)}}]
def claude_ai(raw):
    return [{"uuid": "ca", "name": "t", "created_at": "2026-02-01T10:00:00Z",
             "chat_messages": [
                 {"uuid": "m1", "sender": "human", "created_at": "2026-02-01T10:00:00Z",
                  "content": [{"type": "text", "text": raw}]},
                 {"uuid": "m2", "parent_message_uuid": "m1", "sender": "assistant",
                  "created_at": "2026-02-01T10:00:01Z",
                  "content": [{"type": "text", "text": "ok " + raw}]}]},
            {"uuid": "ca2", "name": "t2", "created_at": "2026-02-01T10:00:00Z",
             "chat_messages": [{"uuid": "n1", "sender": "human", "created_at": "2026-02-01T10:00:00Z",
                                "content": [{"type": "text", "text": "next one"}]}]}]
for kind, make, sid in (("chatgpt", chatgpt, "cg"), ("claude-ai", claude_ai, "ca")):
    for name, (raw, want) in ODD.items():
        db = "%s/%s-%s.db" % (tmp, kind, name)
        f = "%s/%s-%s.json" % (tmp, kind, name)
        with open(f, "w") as fh:
            json.dump(make(raw), fh)
        rc, out, err = run(db, ["import", kind, f])
        check(rc == 0, "%s %s exits 0" % (kind, name), err)
        got = texts(db, sid) if os.path.exists(db) else []
        check(got == [want, "ok " + want], "%s %s stored" % (kind, name), (got, out, err))
        check(nsessions(db) == 2, "%s %s: the other conversation too" % (kind, name))

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
EOF
