#!/usr/bin/env python3
"""Loopback mock of the Gemini API (generativelanguage v1beta) for the Gemini
CLI end-to-end test, t0401. Just enough of :streamGenerateContent (SSE) and
:generateContent to drive `gemini -p` offline:

  * the contents carry a functionResponse            -> a final text reply
  * the offered functions include one whose name
    ends in TOOL (first time)                        -> a functionCall of it
                                                        with {"query": QUERY},
                                                        plus wait_for_previous
                                                        when Gemini CLI added it
                                                        to the schema
  * otherwise (the CLI's own JSON side questions:
    next speaker, routing, loop checks)              -> a JSON text that answers
                                                        any of them

Every request is appended to LOG, one JSON object per line ({"path", "body"}),
so the test sees what the model would have seen. Only the standard library
(mock_http.py: logging, serving, exiting after 300 s).

usage: python3 mock_gemini.py PORT LOG TOOL QUERY
"""
import json
import sys
import threading

from mock_http import MockHandler, serve

PORT = int(sys.argv[1])
LOG = sys.argv[2]
TOOL = sys.argv[3]
QUERY = sys.argv[4]
FINAL = "Per your memory: the staging rotation day is recorded above. Done."
SIDE = json.dumps({"reasoning": "mock", "next_speaker": "user", "model_choice": "flash",
                   "complexity_reasoning": "mock", "complexity_score": 1,
                   "is_loop": False, "confidence": 0.0})
_lock = threading.Lock()
_called = {"n": 0}


def functions(body):
    for t in body.get("tools") or []:
        for f in (t or {}).get("functionDeclarations") or []:
            yield f


def has_response(body):
    return any("functionResponse" in p for c in body.get("contents") or []
               for p in c.get("parts") or [] if isinstance(p, dict))


def decide(body):
    """The parts of the model's answer."""
    if has_response(body):
        return [{"text": FINAL}]
    for f in functions(body):
        if f.get("name", "").endswith(TOOL):
            with _lock:
                first = _called["n"] == 0
                _called["n"] += 1
            if not first:
                break
            args = {"query": QUERY}
            # what a model does with the boolean Gemini CLI adds to every
            # tool's schema: it fills it in
            sc = f.get("parametersJsonSchema") or f.get("parameters") or {}
            if "wait_for_previous" in (sc.get("properties") or {}):
                args["wait_for_previous"] = False
            return [{"functionCall": {"name": f["name"], "args": args}}]
    if body.get("tools"):
        return [{"text": "ok"}]
    return [{"text": SIDE}]


def answer(parts):
    return {"candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                              "totalTokenCount": 15},
            "modelVersion": "mock"}


class Handler(MockHandler):
    log_path = LOG

    def answer(self, body):
        if ":countTokens" in self.path:
            return self.reply_json({"totalTokens": 42})
        if ":streamGenerateContent" in self.path:
            data = json.dumps(answer(decide(body))).encode()
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            self.wfile.write(b"data: " + data + b"\r\n\r\n")
            self.wfile.flush()
            return
        if ":generateContent" in self.path:
            return self.reply_json(answer(decide(body)))
        return self.reply_json({})


serve(PORT, Handler)
