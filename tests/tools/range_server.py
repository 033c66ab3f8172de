#!/usr/bin/env python3
"""range_server.py: a loopback-only HTTP file server for the downloader tests.

Usage: range_server.py ROOT PORTFILE
Serves ROOT on 127.0.0.1 at a free port (written to PORTFILE). Supports
single Range requests (206). A path containing "cut" is answered with only
the first half of the requested bytes and the connection is then closed,
on the first request for that path only, to imitate a broken transfer.
"""
import http.server
import os
import sys

ROOT, PORTFILE = sys.argv[1], sys.argv[2]
cut_done = set()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        path = os.path.normpath(os.path.join(ROOT, self.path.split("?")[0].lstrip("/")))
        if not path.startswith(os.path.abspath(ROOT)) or not os.path.isfile(path):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        data = open(path, "rb").read()
        start, code = 0, 200
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes=") and rng.endswith("-"):
            start = int(rng[6:-1])
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            code = 206
        body = data[start:]
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        if code == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data)))
        self.end_headers()
        if "cut" in self.path and self.path not in cut_done:
            cut_done.add(self.path)
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return
        self.wfile.write(body)


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(PORTFILE + ".tmp", PORTFILE)
srv.serve_forever()
