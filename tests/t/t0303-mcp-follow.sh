#!/bin/sh
# t0303-mcp-follow: MCP answers a model can follow up. On a made-up coding
# history (tests/tools/coding_store.py: 150 sessions of common words, one
# that holds the fact), recall of a one-fact question comes best session
# first and spends under a quarter of its default budget (the relative
# cut); each session block's header names its session_id, and the footer
# gives, in the same order, each session_id with the positions shown;
# get_conversation reads the window those positions name, stops at its
# token budget and says the `from` to go on with; `cairn recall --json`
# gives the positions too. Never skipped.
. "$(dirname "$0")/lib.sh"
export CAIRN_EMBED_MODEL=none CAIRN_SESSION_ID=
python3 "$ROOT/tests/tools/coding_store.py" | "$CAIRN" add - >/dev/null
python3 - "$CAIRN" <<'PY'
import json, re, subprocess, sys
from mcp_client import Mcp
cairn = sys.argv[1]
passed = failed = 0

def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL: %s %s" % (what, str(detail)[:700]), file=sys.stderr)

with Mcp(cairn, name="t0303") as m:
    err, t = m.call("recall", {"query": "what did we change in tests/setup.js for ECONNRESET?"})
    check(not err and "keepAlive: false" in t, "recall finds the fact", t[:300])
    used = re.search(r"; (\d+) of (\d+) tokens", t)
    check(used and used.group(2) == "4000" and int(used.group(1)) < 1000,
          "a one-fact question spends under a quarter of the 4000-token default", t[-600:])
    fence = t.split("<past-conversations>\n", 1)[1].split("\n</past-conversations>", 1)[0]
    headers = re.findall(r'^\[[^\n]*· session_id "([^"]+)"\]$', fence, re.M)
    check(headers[:1] == ["econn"], "the best-matching session comes first", headers)
    footer = t.split("\n</past-conversations>\n", 1)[1]
    listed = re.findall(r'session_id "([^"]+)" messages? ([0-9, -]+)', footer)
    check([s for s, _ in listed] == headers and len(headers) >= 1,
          "the footer lists each block's session_id in the blocks' order", (headers, footer))
    pos = dict(listed).get("econn", "")
    check(re.fullmatch(r"0-[12]", pos) is not None, "the footer gives the positions shown", footer)
    # the window the positions name
    err, g = m.call("get_conversation", {"session_id": "econn", "from": 1, "to": 1})
    check(not err and "[#1 ·" in g and "keepAlive: false" in g and "[#2 ·" not in g,
          "get_conversation reads the position recall named", g[-300:])
    check("from=2 reads on" in g, "a window short of the end says how to read on", g[-200:])
    # a token budget: whole messages while they fit, then the next from
    err, g = m.call("get_conversation", {"session_id": "econn", "budget_tokens": 60})
    check(not err and "[#0 ·" in g and "[#1 ·" not in g and "call get_conversation with from=1" in g,
          "get_conversation stops at budget_tokens and gives the next from", g[-300:])
    err, g = m.call("get_conversation", {"session_id": "econn", "from": 1, "budget_tokens": 400})
    check(not err and "[#1 ·" in g and "[#2 ·" in g and "[End of the conversation.]" in g,
          "continuing from there reads to the end", g[-300:])
    err, g = m.call("get_conversation", {"session_id": "econn", "budget_tokens": 20})
    check(err and "from 50" in g, "budget_tokens below 50 is refused", g)

# the CLI: positions in --json, and the text stays oldest first without ids
out = subprocess.run([cairn, "recall", "what did we change in tests/setup.js for ECONNRESET?",
                      "--budget", "4000", "--json"], capture_output=True, text=True).stdout
r = json.loads(out)
econn = [i for i in r["items"] if i["session"] == "econn"]
check([i["position"] for i in econn][:2] == [0, 1], "recall --json gives each item's position", econn)
check("session_id" not in r["text"] and r["tokens"] > 2000,
      "the CLI's recall is unchanged: no ids, no cut", r["tokens"])
print("%d passed, %d failed, 0 skipped" % (passed, failed))
PY
