"""A minimal stdio MCP client for the black-box tests that drive `cairn mcp`
as one step among others (t0206, t0220, t0302). mcp_golden.py checks the
protocol itself; this only opens a session and calls tools.

    from mcp_client import Mcp
    with Mcp(cairn, env={"CAIRN_DB": db}, name="t0302") as m:
        is_error, text = m.call("save_conversation", {...})

tests/t/lib.sh puts this folder on PYTHONPATH. Standard library only.
"""
import json
import os
import subprocess
import sys


class Mcp:
    def __init__(self, cairn, env=None, name="test", protocol="2025-11-25", client_name=None):
        self.p = subprocess.Popen([cairn, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  env=dict(os.environ, **(env or {})))
        self.next_id = 0
        self.init = self.request("initialize", {"protocolVersion": protocol, "capabilities": {},
                                    "clientInfo": {"name": client_name or name, "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def request(self, method, params):
        """Sends a request and returns its answer (skipping other lines). A
        parse error (-32700) carries no id and is returned too."""
        i = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise EOFError("cairn mcp closed its stdout (answering %s)" % method)
            m = json.loads(line)
            if m.get("id") in (i, None):
                return m

    def call(self, name, args):
        """tools/call: (is_error, the first text block), or (True, "error ...")
        for a JSON-RPC error."""
        r = self.request("tools/call", {"name": name, "arguments": args})
        if "error" in r:
            return True, "error %s" % r["error"]
        r = r["result"]
        return r.get("isError", False), r["content"][0]["text"]

    def close(self):
        if self.p.stdin and not self.p.stdin.closed:
            self.p.stdin.close()
        return self.p.wait(10)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Checks:
    """Pass and fail counts of a test's python part: check(ok, what, detail)
    counts one, a failure says what and shows the start of detail on stderr;
    done() prints the counts and exits non-zero after a failure."""

    def __init__(self):
        self.passed = self.failed = 0

    def __call__(self, ok, what, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL: %s %s" % (what, str(detail)[:700]), file=sys.stderr)

    def done(self):
        print("%d passed, %d failed, 0 skipped" % (self.passed, self.failed))
        sys.exit(1 if self.failed else 0)
