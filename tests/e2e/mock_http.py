"""The HTTP part shared by the loopback API mocks of the end-to-end tests
(mock_anthropic.py for Claude Code, mock_gemini.py for Gemini CLI): a
handler that logs every request whole to a JSONL file and hands the
decoded JSON body of a POST to the mock's own answer, and a server that
exits by itself after LIFETIME seconds, so a test killed half-way never
leaves it running. Only the standard library."""
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LIFETIME = 300
_lock = threading.Lock()


class MockHandler(BaseHTTPRequestHandler):
    """Subclasses set log_path and define answer(body) for POSTs."""
    log_path = None

    def log_message(self, *a):
        pass

    def log(self, obj):
        with _lock, open(self.log_path, "a") as f:
            f.write(json.dumps(obj) + "\n")

    def reply_json(self, obj):
        data = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.log({"method": "GET", "path": self.path})
        self.send_response(404)
        self.end_headers()

    def do_HEAD(self):
        self.send_response(200)
        self.end_headers()

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        self.log({"method": "POST", "path": self.path, "body": body})
        self.answer(body)


def serve(port, handler):
    watchdog = threading.Timer(LIFETIME, lambda: os._exit(0))
    watchdog.daemon = True
    watchdog.start()
    ThreadingHTTPServer(("127.0.0.1", port), handler).serve_forever()
