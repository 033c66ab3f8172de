#!/bin/sh
# t0307-mcp-skill-agrees: the plugin's skill says what the server says
# (issue 17). The server is the source of truth: the skill's default and
# maximum `budget_tokens` must be the recall schema's, read from tools/list,
# and its advice on `date` must be the server instructions' clause, read
# from initialize. Never skipped.
. "$(dirname "$0")/lib.sh"
out=$(python3 - "$CAIRN" "$ROOT/plugin/skills/cairn/SKILL.md" <<'PY'
import re, sys
from mcp_client import Mcp
skill = " ".join(open(sys.argv[2], encoding="utf-8").read().split())
with Mcp(sys.argv[1], name="t0307") as m:
    instr = m.init["result"]["instructions"]
    tools = m.request("tools/list", {})["result"]["tools"]
bt = [t for t in tools if t["name"] == "recall"][0]["inputSchema"]["properties"]["budget_tokens"]
m = re.search(r"default budget is (\d+) tokens", skill)
print("default", bt["default"], m and int(m.group(1)))
m = re.search(r"`budget_tokens` up to (\d+)", skill)
print("maximum", bt["maximum"], m and int(m.group(1)))
# The clause of the instructions that mentions `date`, without the words
# before it in its sentence part ("...; leave out `date` ...: ...").
clause = re.search(r"[^.;]*`date`[^.;]*", instr).group(0).strip()
print("date clause in skill:", clause.lower() in skill.lower(), "|", clause)
PY
)
echo "$out" | sed 's/^/    /'
check "skill's default budget_tokens is the schema's" \
    sh -c 'echo "$1" | grep "^default" | awk "{exit !(\$2 == \$3)}"' - "$out"
check "skill's maximum budget_tokens is the schema's" \
    sh -c 'echo "$1" | grep "^maximum" | awk "{exit !(\$2 == \$3)}"' - "$out"
contains "skill gives the instructions' advice on date" "$out" "date clause in skill: True"
t_done
