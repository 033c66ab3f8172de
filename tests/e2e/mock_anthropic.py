#!/usr/bin/env python3
"""Loopback mock of the Anthropic Messages API for the cairn end-to-end test.

Adapted from ../shared/tools/claude-code-e2e/mock_anthropic.py. It is just
enough of POST /v1/messages (stream or not) to drive `claude -p` offline, so
the test can see what the model would have seen:

  * the user turns since the model's last carry a
    tool_result                                     -> a final text reply
  * the offered tools include TOOL (first time)      -> a tool_use of TOOL
                                                        with {"query": QUERY}
  * otherwise (titles, classifiers, ...)             -> a short text reply

Every request body is appended to LOG whole, one JSON object per line
({"path": ..., "body": ...}): the test greps it for the injected memory and
for the tool_result that `recall` returned. Only the standard library
(mock_http.py: logging, serving, exiting after 300 s).

usage: python3 mock_anthropic.py PORT LOG TOOL QUERY [INPUT]

INPUT, when given, is the tool call's input as JSON instead of {"query":
QUERY} (t0402 calls Bash with {"command": ...}).
"""
import json
import sys
import threading
import uuid

from mock_http import MockHandler, serve

PORT = int(sys.argv[1])
LOG = sys.argv[2]
TOOL = sys.argv[3]
QUERY = sys.argv[4]
INPUT = json.loads(sys.argv[5]) if len(sys.argv) > 5 else {"query": QUERY}
FINAL = "Per your memory: the staging rotation day is recorded above. Done."
_lock = threading.Lock()
_called = {"n": 0}


def has_tool_result(msg):
    content = msg.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def after_tool(msgs):
    """The user messages since the model's last turn carry a tool_result,
    not necessarily the last of them. Once, on a heavily loaded machine, the
    request after the tool ran was answered "ok" here (not reproduced since;
    check_requests.py now prints each request's last messages, "shapes",
    for the next time): which user message Claude Code sends last is not
    ours to assume."""
    for m in reversed(msgs):
        if m.get("role") != "user":
            return False
        if has_tool_result(m):
            return True
    return False


def decide(body):
    msgs = body.get("messages") or []
    tools = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
    if after_tool(msgs):
        return [{"type": "text", "text": FINAL}], "end_turn"
    if TOOL in tools:
        with _lock:
            first = _called["n"] == 0
            _called["n"] += 1
        if first:
            return [{"type": "text", "text": "Let me check your memory."},
                    {"type": "tool_use", "id": "toolu_mock_" + uuid.uuid4().hex[:12],
                     "name": TOOL, "input": INPUT}], "tool_use"
    return [{"type": "text", "text": "ok"}], "end_turn"


class Handler(MockHandler):
    log_path = LOG

    def answer(self, body):
        if "count_tokens" in self.path:
            return self.reply_json({"input_tokens": 42})
        if not self.path.startswith("/v1/messages"):
            return self.reply_json({})
        blocks, stop = decide(body)
        mid = "msg_mock_" + uuid.uuid4().hex[:16]
        usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        if not body.get("stream"):
            return self.reply_json({"id": mid, "type": "message", "role": "assistant",
                                    "model": body.get("model", "mock"), "content": blocks,
                                    "stop_reason": stop, "stop_sequence": None, "usage": usage})
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("request-id", "req_mock_" + uuid.uuid4().hex[:12])
        self.end_headers()

        def ev(name, data):
            self.wfile.write(("event: %s\ndata: %s\n\n" % (name, json.dumps(data))).encode())
            self.wfile.flush()

        ev("message_start", {"type": "message_start", "message": {
            "id": mid, "type": "message", "role": "assistant", "model": body.get("model", "mock"),
            "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}})
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                ev("content_block_start", {"type": "content_block_start", "index": i,
                                           "content_block": {"type": "text", "text": ""}})
                ev("content_block_delta", {"type": "content_block_delta", "index": i,
                                           "delta": {"type": "text_delta", "text": b["text"]}})
            else:
                ev("content_block_start", {"type": "content_block_start", "index": i,
                                           "content_block": {"type": "tool_use", "id": b["id"],
                                                             "name": b["name"], "input": {}}})
                ev("content_block_delta", {"type": "content_block_delta", "index": i,
                                           "delta": {"type": "input_json_delta",
                                                     "partial_json": json.dumps(b["input"])}})
            ev("content_block_stop", {"type": "content_block_stop", "index": i})
        ev("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                             "usage": {"output_tokens": 5}})
        ev("message_stop", {"type": "message_stop"})


serve(PORT, Handler)
