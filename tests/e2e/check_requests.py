#!/usr/bin/env python3
"""Reads the request bodies the mock Messages API logged (requests.jsonl) and
prints what the model would have seen, one "key=value" per line, for
tests/t/t0400-claude-code-e2e.sh to compare:

  requests            POSTs to /v1/messages
  tools               the cairn tools offered (short names, sorted, comma-separated)
  start_ctx           the SessionStart additionalContext names TITLE (yes/no)
  inject_requests     requests whose messages carry the UserPromptSubmit context
  inject_fences       <past-conversations> blocks in the first such request
  inject_fact         FACT is inside that fenced block (yes/no)
  inject_other        OTHER (an unrelated planted fact) is inside it (yes/no)
  mcp_hooks_note      the server instructions say the hooks save turns (yes/no)
  mcp_save_ask        they ask the model to call save_conversation itself (yes/no)
  tool_use            the mock's tool_use of the recall tool reached a later request (yes/no)
  tool_input          its input, as JSON
  tool_result_error   the tool_result came back with is_error (yes/no)
  tool_result_fact    FACT is in the tool_result text (yes/no)
  tool_result_json    the tool_result text is a JSON object, not readable text (yes/no)
  shapes              per request, its last two messages as role:block types (for a
                      failure's diagnosis: which turn carried the tool_result)

usage: check_requests.py LOG TOOL FACT TITLE OTHER
"""
import json
import sys

LOG, TOOL, FACT, TITLE, OTHER = sys.argv[1:6]
INJECT_TAG = "UserPromptSubmit hook additional context:"
START_TAG = "SessionStart hook additional context:"


def texts(content):
    """Every text string inside a message's content (str or block list)."""
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for b in content:
            if not isinstance(b, dict):
                continue
            if isinstance(b.get("text"), str):
                yield b["text"]
            if b.get("type") == "tool_result":
                yield from texts(b.get("content"))


def fenced(text):
    """The <past-conversations> blocks after the UserPromptSubmit tag."""
    at = text.find(INJECT_TAG)
    rest = text[at:] if at >= 0 else ""
    out = []
    while True:
        a = rest.find("<past-conversations>")
        b = rest.find("</past-conversations>", a + 1)
        if a < 0 or b < 0:
            return out
        out.append(rest[a:b])
        rest = rest[b + 1:]


bodies = []
with open(LOG) as f:
    for line in f:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("method") == "POST" and rec.get("path", "").startswith("/v1/messages") \
                and "count_tokens" not in rec.get("path", ""):
            bodies.append(rec.get("body") or {})

prefix = "mcp__plugin_cairn_cairn__"
tools = set()
start_ctx = False
inject_requests = 0
first_fences = None
tool_use_id = None
tool_input = None
tool_use_seen = False
result_error = result_fact = result_json = False
hooks_note = save_ask = False
shapes = []


def shape(m):
    c = m.get("content") if isinstance(m, dict) else None
    kinds = "str" if isinstance(c, str) else "+".join(
        b.get("type", "?") for b in c if isinstance(b, dict)) if isinstance(c, list) else "?"
    return "%s:%s" % (m.get("role", "?") if isinstance(m, dict) else "?", kinds)


for body in bodies:
    shapes.append(",".join(shape(m) for m in (body.get("messages") or [])[-2:]))
    for t in body.get("tools") or []:
        name = t.get("name", "") if isinstance(t, dict) else ""
        if name.startswith(prefix):
            tools.add(name[len(prefix):])
    msgs = body.get("messages") or []
    all_text = "\n".join(s for m in msgs if isinstance(m, dict) for s in texts(m.get("content")))
    if START_TAG in all_text and TITLE in all_text.split(START_TAG, 1)[1][:2000]:
        start_ctx = True
    if "## plugin:cairn:cairn" in all_text:
        mcp_text = all_text.split("## plugin:cairn:cairn", 1)[1][:3000]
        hooks_note = hooks_note or "saved automatically by cairn's hooks" in mcp_text
        save_ask = save_ask or "Nothing saves this conversation automatically" in mcp_text
    if INJECT_TAG in all_text:
        inject_requests += 1
        if first_fences is None:
            first_fences = fenced(all_text)
    for m in msgs:
        if not isinstance(m, dict) or not isinstance(m.get("content"), list):
            continue
        for b in m["content"]:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "tool_use" and b.get("name") == TOOL:
                tool_use_id, tool_input, tool_use_seen = b.get("id"), b.get("input"), True
            if b.get("type") == "tool_result" and tool_use_id and b.get("tool_use_id") == tool_use_id:
                text = "\n".join(texts(b.get("content")))
                result_error = bool(b.get("is_error"))
                result_fact = FACT in text
                result_json = text.lstrip().startswith("{")

yn = lambda v: "yes" if v else "no"
print("requests=%d" % len(bodies))
print("tools=%s" % ",".join(sorted(tools)))
print("start_ctx=%s" % yn(start_ctx))
print("inject_requests=%d" % inject_requests)
print("inject_fences=%d" % len(first_fences or []))
print("inject_fact=%s" % yn(any(FACT in b for b in first_fences or [])))
print("inject_other=%s" % yn(any(OTHER in b for b in first_fences or [])))
print("mcp_hooks_note=%s" % yn(hooks_note))
print("mcp_save_ask=%s" % yn(save_ask))
print("tool_use=%s" % yn(tool_use_seen))
print("tool_input=%s" % json.dumps(tool_input, sort_keys=True))
print("tool_result_error=%s" % yn(result_error))
print("tool_result_fact=%s" % yn(result_fact))
print("tool_result_json=%s" % yn(result_json))
print("shapes=%s" % " | ".join(shapes))
