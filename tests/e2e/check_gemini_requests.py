#!/usr/bin/env python3
"""Reads the requests mock_gemini.py logged and prints what the model saw,
one key=value a line, for t0401:

  tools=             the cairn functions offered (mcp_cairn_*), sorted
  wait_declared=     yes if Gemini CLI added wait_for_previous to recall's schema
  call_args=         the args of the recall functionCall, as JSON (sorted keys)
  response_fact=     yes if recall's functionResponse holds FACT
  response_error=    yes if it reads as a failed call (bad/unknown argument, error)

usage: check_gemini_requests.py LOG FACT
"""
import json
import sys

log, fact = sys.argv[1], sys.argv[2]
reqs = []
for line in open(log, encoding="utf-8"):
    try:
        reqs.append(json.loads(line).get("body") or {})
    except ValueError:
        pass

tools, declared, args, resp = set(), "no", None, None
for b in reqs:
    for t in b.get("tools") or []:
        for f in t.get("functionDeclarations") or []:
            if f.get("name", "").startswith("mcp_cairn_"):
                tools.add(f["name"])
            if f.get("name") == "mcp_cairn_recall":
                sc = f.get("parametersJsonSchema") or f.get("parameters") or {}
                if "wait_for_previous" in (sc.get("properties") or {}):
                    declared = "yes"
    for c in b.get("contents") or []:
        for p in c.get("parts") or []:
            fc, fr = p.get("functionCall"), p.get("functionResponse")
            if fc and fc.get("name") == "mcp_cairn_recall":
                args = fc.get("args")
            if fr and fr.get("name") == "mcp_cairn_recall":
                resp = json.dumps(fr.get("response"), ensure_ascii=False)

print("tools=" + ",".join(sorted(tools)))
print("wait_declared=" + declared)
print("call_args=" + (json.dumps(args, sort_keys=True) if args is not None else "none"))
print("response_fact=" + ("yes" if resp and fact in resp else "no"))
bad = resp is None or any(w in resp for w in ("bad arguments", "unknown argument", '"error"'))
print("response_error=" + ("yes" if bad else "no"))
print("response=" + (resp or "none")[:600])
