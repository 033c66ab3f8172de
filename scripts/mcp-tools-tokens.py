#!/usr/bin/env python3
"""What the MCP tool list costs a model: the tokens of the `tools` array that
`cairn mcp` answers tools/list with (compact JSON), whole and per tool,
counted with cairn's own budget counter (cairn_count_tokens, docs/TOKENS.md).
docs/MEMORIES.md quotes it.

    python3 scripts/mcp-tools-tokens.py [build/cairn] [build/libcairn.so]
"""
import ctypes
import json
import os
import subprocess
import sys
import tempfile

cairn = sys.argv[1] if len(sys.argv) > 1 else "build/cairn"
lib = sys.argv[2] if len(sys.argv) > 2 else "build/libcairn.so"
reqs = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "tokens", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]
with tempfile.TemporaryDirectory() as d:
    # the store opens on the first tool call: listing creates nothing
    env = dict(os.environ, CAIRN_DB=os.path.join(d, "none.db"))
    out = subprocess.run([cairn, "mcp"], input="".join(json.dumps(r) + "\n" for r in reqs),
                         capture_output=True, text=True, env=env, check=True).stdout
tools = next(m for m in map(json.loads, out.splitlines()) if m.get("id") == 2)["result"]["tools"]
count = ctypes.CDLL(lib).cairn_count_tokens
count.restype = ctypes.c_int


def tokens(o):
    b = json.dumps(o, separators=(",", ":"), ensure_ascii=False).encode()
    return count(b, len(b))


print("all %d tools: %d tokens" % (len(tools), tokens(tools)))
for t in tools:
    print("  %-18s %d" % (t["name"], tokens(t)))
