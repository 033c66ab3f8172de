#!/bin/sh
# t0232-mcp-memory: the MCP `memory` tool (docs/MEMORIES.md) and memories in
# the MCP `recall` answer: remember with type, scope, tags, ttl and replaces
# (provenance: the client's session), list as Markdown inside the fence
# (superseded ones left out, contradictions marked), update, forget; bad
# arguments are tool errors that say what to fix; recall shows a kept
# memory first inside the fence and its footer names it apart from the
# sessions; `cairn memories export --markdown` prints the same view.
# Never skipped.
. "$(dirname "$0")/lib.sh"
export CAIRN_EMBED_MODEL=none CAIRN_SESSION_ID=sess-mcp-1
"$CAIRN" add "$ROOT/examples/sample-history.jsonl" >/dev/null
python3 - "$CAIRN" <<'PY'
import re, sys
from mcp_client import Mcp, Checks
cairn = sys.argv[1]
check = Checks()

with Mcp(cairn, name="t0232") as m:
    err, t = m.call("memory", {"action": "remember", "type": "preference", "scope": "garden",
                               "tags": "style", "text": "water the basil at dawn"})
    check(not err and t.startswith("Remembered as #1 (preference, project \"garden\")"), "remember", t)
    err, t = m.call("memory", {"action": "remember", "text": "water the basil at dusk",
                               "scope": "garden", "replaces": 1})
    check(not err and "#2" in t and "replaces #1" in t, "remember with replaces", t)
    err, t = m.call("memory", {"action": "remember", "text": "the climbing gym opens at noon on Sundays",
                               "ttl": "7d"})
    check(not err and "#3" in t and "every project" in t, "remember with a ttl, global", t)
    err, t = m.call("memory", {"action": "remember", "text": "x", "ttl": "soon"})
    check(err and '"ttl"' in t, "a bad ttl is a tool error", t)
    err, t = m.call("memory", {"action": "remember"})
    check(err and '"text"' in t, "remember without text is a tool error", t)
    err, t = m.call("memory", {"action": "recollect"})
    check(err and "must be one of" in t, "an unknown action is refused by the schema", t)
    err, t = m.call("memory", {"action": "remember", "type": "opinion", "text": "x"})
    check(err and "must be one of" in t, "an unknown type is refused by the schema", t)

    err, t = m.call("memory", {"action": "list"})
    check(not err and "<past-conversations>" in t and "</past-conversations>" in t, "list is fenced", t)
    check("## Project garden" in t and "### Preferences" not in t and "### Facts" in t,
          "list groups by scope and type (the replacement is a fact)", t)
    check("at dusk" in t and "at dawn" not in t, "a superseded memory is left out", t)
    check(re.search(r"- #3 · \d{4}-\d\d-\d\d the climbing gym", t), "ids and dates", t)

    err, t = m.call("memory", {"action": "update", "id": 3, "text": "the climbing gym opens at ten on Sundays"})
    check(not err and t.startswith("Updated #3"), "update", t)
    err, t = m.call("memory", {"action": "update", "id": 99, "text": "nothing"})
    check(err and "no memory #99" in t, "update of a missing id", t)
    err, t = m.call("memory", {"action": "forget"})
    check(err and '"id"' in t, "forget without an id", t)

    err, t = m.call("recall", {"query": "climbing gym Sundays", "date": "2026-05-10"})
    check(not err and t.startswith("Kept memories and past conversations"), "recall's intro names memories", t[:200])
    a, b = t.find("<past-conversations>"), t.find("</past-conversations>")
    mem = t.find("[memory #3 · fact · ")
    check(a < mem < b and "opens at ten on Sundays" in t[mem:b], "the memory is inside the fence, first", t[:400])
    check(a >= 0 and t[a + len("<past-conversations>\n"):].startswith("[memory #3 "), "first line of the fence", t[:300])
    check("(1 kept memory, by id" in t and 'session_id ""' not in t, "the footer names the memory apart", t[-400:])

    err, t = m.call("memory", {"action": "forget", "id": 3})
    check(not err and t.startswith("Forgot #3"), "forget", t)
    err, t = m.call("memory", {"action": "list", "scope": "other"})
    check(not err and "climbing gym" not in t and "at dusk" not in t, "forgotten, and another project's left out", t)

    # corrections: severity and when_* reach the pre-tool hook (checked below)
    err, t = m.call("memory", {"action": "remember", "type": "correction", "scope": "garden",
                               "severity": "p0", "when_commands": ["git push --force"],
                               "when_paths": ["*.lock"], "text": "never force push the garden repo"})
    check(not err and t.startswith('Remembered as #4 (correction, project "garden", p0)'), "remember a correction", t)
    err, t = m.call("memory", {"action": "remember", "severity": "p2", "when_keywords": ["deploy"],
                               "text": "ask before deploying"})
    check(not err and t.startswith("Remembered as #5 (correction, every project, p2)"), "severity alone makes a correction", t)
    err, t = m.call("memory", {"action": "remember", "type": "correction", "text": "be terse",
                               "when_paths": []})
    check(not err and "no when_* to match" in t, "a correction without when_* says it matches no tool call", t)
    err, t = m.call("memory", {"action": "remember", "type": "fact", "severity": "p0", "text": "x"})
    check(err and "for type" in t, "severity on a fact is a tool error", t)
    err, t = m.call("memory", {"action": "remember", "severity": "p3", "text": "x"})
    check(err and "must be one of" in t, "an unknown severity is refused by the schema", t)
    err, t = m.call("memory", {"action": "remember", "when_commands": "git push", "text": "x"})
    check(err and "must be an array" in t, "when_commands is an array", t)
    err, t = m.call("memory", {"action": "remember", "when_commands": ["git\npush"], "text": "x"})
    check(err and "one line" in t, "an item on two lines is a tool error", t)
    err, t = m.call("memory", {"action": "update", "id": 5, "severity": "p1", "when_keywords": [],
                               "when_commands": ["kubectl apply"]})
    check(not err and t.startswith("Updated correction #5"), "update a correction's fields without its text", t)
    err, t = m.call("memory", {"action": "update", "id": 2, "severity": "p0"})
    check(err and "no live correction #2" in t, "correction fields on a fact are refused", t)
    err, t = m.call("memory", {"action": "update", "id": 5})
    check(err and '"text"' in t, "update with nothing to change", t)

check.done()
PY
rc=$?
[ $rc -eq 0 ] && ok || bad "the MCP checks"

# what the tool stored is what the pre-tool hook matches
bash_call() { printf '{"tool_name":"Bash","tool_input":{"command":"%s"}}' "$1" |
              CAIRN_PROJECT=garden "$CAIRN" hook pre-tool; }
out=$(bash_call 'git push origin main --force')
contains "a p0 correction from MCP denies" "$out" '"permissionDecision":"deny"'
contains "... naming it" "$out" 'cairn correction 4 (p0)'
out=$(bash_call 'kubectl apply -f garden.yaml')
contains "an updated correction asks at its new severity" "$out" 'cairn correction 5 (p1)'
eq "update emptied its keywords" "$(bash_call 'sh deploy now')" ""
out=$(printf '{"tool_name":"Edit","tool_input":{"file_path":"/g/Cargo.lock"}}' | CAIRN_PROJECT=garden "$CAIRN" hook pre-tool)
contains "when_paths match a file" "$out" 'cairn correction 4 (p0)'

# provenance: the client's session; and the CLI prints the same Markdown view
contains "provenance is the session" "$("$CAIRN" memories show 2)" "sess-mcp-1"
out=$("$CAIRN" memories export --markdown)
contains "export --markdown: a heading" "$out" "# Memories"
contains "export --markdown: the project" "$out" "## Project garden"
lacks "export --markdown: no superseded memory" "$out" "at dawn"
"$CAIRN" remember --contradicts 2 "never water the basil" >/dev/null
contains "export --markdown marks a contradiction" "$("$CAIRN" memories export --markdown)" "**contradicts #2** never water"
check_fails "export with an unknown option is a usage error" "$CAIRN" memories export --html
t_done
