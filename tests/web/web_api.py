#!/usr/bin/env python3
"""web_api.py URL STORE CAIRN: black-box checks of `cairn web`'s guard and
JSON API (tests/t/t0540-web.sh starts the server on the store of
web_fixture.py). Prints one line per failure and ends with
"N passed, N failed"."""
import http.client
import json
import os
import socket
import subprocess
import sys
import time
import urllib.parse

URL, STORE, CAIRN = sys.argv[1:4]
u = urllib.parse.urlsplit(URL)
HOST, PORT, BASE = u.hostname, u.port, u.path          # BASE: "/TOKEN/"
TOKEN = BASE.strip("/")
passed = failed = 0


def check(what, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL: %s %s" % (what, str(detail)[:300]))


def req(path, method="GET", body=None, headers=None, raw_path=False):
    """(status, headers dict, body bytes) of one request."""
    c = http.client.HTTPConnection(HOST, PORT, timeout=20)
    h = {"Host": "%s:%d" % (HOST, PORT)}
    h.update(headers or {})
    c.putrequest(method, path if raw_path else BASE + path, skip_host=True,
                 skip_accept_encoding=True)
    for k, v in h.items():
        if v is not None:
            c.putheader(k, v)
    data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
    if data is not None:
        c.putheader("Content-Type", "application/json")
        c.putheader("Content-Length", str(len(data)))
    c.endheaders(data)
    r = c.getresponse()
    out = (r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    c.close()
    return out


def api(path, **params):
    q = urllib.parse.urlencode(params)
    st, hd, b = req("api/" + path + ("?" + q if q else ""))
    try:
        j = json.loads(b)
    except ValueError:
        j = None
    return st, hd, j


def post(path, body):
    st, hd, b = req("api/" + path, "POST", body)
    try:
        return st, json.loads(b)
    except ValueError:
        return st, None


# ---- the guard: token, Host, Origin; no CORS ----
st, hd, b = req(BASE, raw_path=True)
check("the page is served with the token", st == 200 and b"<script src=\"app.js\"" in b, st)
check("the page's CSP allows only its own script", "script-src 'self'" in hd.get("content-security-policy", ""), hd)
check("answers are not cached", hd.get("cache-control") == "no-store", hd)
check("no sniffing", hd.get("x-content-type-options") == "nosniff", hd)
check("no referrer (the token is in the path)", hd.get("referrer-policy") == "no-referrer", hd)
for path in ["/", "/api/sessions", "/" + TOKEN[:-1] + "/api/sessions", "/" + TOKEN + "x/api/sessions",
             "/" + "0" * 32 + "/api/sessions", "/" + TOKEN.upper() + "/api/sessions"]:
    st, hd, b = req(path, raw_path=True)
    check("no token, no answer: %s" % path, st == 403 and b"sessions" not in b, (st, b))
for host in ["evil.example", "evil.example:%d" % PORT, "127.0.0.1:%d" % (PORT + 1), "127.0.0.1",
             "localhost.evil.example:%d" % PORT, "127.0.0.2:%d" % PORT, "", None]:
    st, hd, b = req("api/stats", headers={"Host": host})
    check("Host %r refused (DNS rebinding)" % host, st in (400, 403) and b"messages" not in b, (st, b))
for host in ["localhost:%d" % PORT, "LOCALHOST:%d" % PORT, "[::1]:%d" % PORT]:
    st, hd, b = req("api/stats", headers={"Host": host})
    check("Host %r accepted" % host, st == 200, (st, b))
for origin in ["http://evil.example", "null", "https://127.0.0.1:%d" % PORT,
               "http://127.0.0.1:%d.evil.example" % PORT, "http://127.0.0.1:%d" % (PORT + 1)]:
    st, hd, b = req("api/stats", headers={"Origin": origin})
    check("Origin %r refused" % origin, st == 403 and b"messages" not in b, (st, b))
    check("no CORS header for %r" % origin, not any(k.startswith("access-control") for k in hd), hd)
st, hd, b = req("api/stats", headers={"Origin": "http://127.0.0.1:%d" % PORT})
check("the page's own origin is accepted", st == 200, (st, b))
st, hd, b = req("api/stats", "OPTIONS", headers={"Origin": "http://evil.example",
                                                 "Access-Control-Request-Method": "POST"})
check("no CORS preflight", st in (403, 405) and not any(k.startswith("access-control") for k in hd), (st, hd))
st, hd, b = req("api/forget", "POST", {"session": "s-zh", "confirm": "s-zh"},
                headers={"Origin": "http://evil.example"})
check("a forget from another origin is refused", st == 403, st)

# ---- caps ----
st, hd, j = api("search", q="x" * 5000)
check("a huge query is refused with a message", st == 413 and j and "longer than" in j["error"], (st, j))
st, hd, j = api("recall", q="q " * 3000)
check("a huge recall question is refused", st == 413 and j and "q" in j["error"], (st, j))
st, hd, b = req("api/sessions?text=" + "y" * 200000)
check("a URL over the header cap is refused", st in (413, 414, 431), st)
st, j = post("forget", {"session": "s-zh", "confirm": "s-zh", "pad": "z" * 70000})
check("a POST body over 64 KiB is refused", st == 413, (st, j))
st, hd, j = api("sessions", limit=100000)
check("a page is at most 200 sessions", st == 400, (st, j))
# 16 idle connections hold the cap: a 17th is not read until one closes.
socks = [socket.create_connection((HOST, PORT), timeout=5) for _ in range(16)]
time.sleep(0.3)
late = socket.create_connection((HOST, PORT), timeout=5)
late.sendall(("GET %sapi/stats HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n\r\n"
              % (BASE, HOST, PORT)).encode())
late.settimeout(1)
try:
    early = late.recv(12)
except socket.timeout:
    early = b""
check("a connection over the cap waits", early == b"", early)
for s in socks:
    s.close()
late.settimeout(5)
try:
    after = late.recv(12)
except socket.timeout:
    after = b""
check("and is answered once the cap frees", after.startswith(b"HTTP/1.1 200"), after)
late.close()
st, hd, j = api("stats")
check("the server answers again after the flood", st == 200, st)

# ---- every endpoint, hostile content as JSON strings ----
st, hd, j = api("sessions")
check("sessions", st == 200 and j["total"] == 4 and j["messages"] == 406, j)
check("sessions are JSON", hd.get("content-type", "").startswith("application/json"), hd)
titles = [s.get("title") for s in j["sessions"]]
check("a <script> title comes back as the exact string",
      "<script>window.__pwned=1</script> deploy notes" in titles, titles)
check("newest first", [s["id"] for s in j["sessions"]] == ["s-big", "s-long", "s-zh", "s-hostile"], titles)
check("counts per project", ["gamma", 2] in j["projects"], j["projects"])
st, hd, j = api("sessions", project="beta")
check("filter by project", j["total"] == 1 and j["sessions"][0]["id"] == "s-zh", j)
st, hd, j = api("sessions", source="chatgpt")
check("filter by client", j["total"] == 1 and j["sessions"][0]["id"] == "s-big", j)
st, hd, j = api("sessions", **{"from": "2024-04-01", "to": "2024-05-03"})
check("filter by dates (to includes its day)", [s["id"] for s in j["sessions"]] == ["s-long", "s-zh"], j)
st, hd, j = api("sessions", text="缓存")
check("filter by text (Chinese)", j["total"] == 1, j)
st, hd, j = api("sessions", limit=2, offset=2)
check("pages of sessions", [s["id"] for s in j["sessions"]] == ["s-zh", "s-hostile"] and j["total"] == 4, j)

st, hd, j = api("session", id="s-long", **{"from": 350, "count": 100})
pos = [m["position"] for m in j["messages"]]
check("a 400-turn session, one page", st == 200 and pos == list(range(350, 400)), pos[:3])
check("the session header", j["session"]["messages"] == 400, j["session"])
st, hd, j = api("session", id="s-big")
big = j["messages"][1]
check("a 1 MB message is cut in the page", big["truncated"] and big["content_len"] == 1 << 20
      and len(big["content"].encode()) <= 32768, (big["content_len"], len(big["content"])))
st, hd, j = api("message", session="s-big", position=1)
check("and given whole when asked", st == 200 and len(j["messages"][0]["content"]) == 1 << 20, st)
st, hd, j = api("session", id="s-hostile")
m0 = j["messages"][0]["content"]
check("hostile message text comes back verbatim", "<img src=x onerror=" in m0, m0)
check("secrets are shown masked", "[REDACTED" in m0 and "AAAAAAAAAAAAAAAAAAAA" not in m0, m0)
st, hd, j = api("session", id="nope")
check("an unknown session is 404", st == 404, st)

st, hd, j = api("search", q="Postgres migration")
check("search finds the message", st == 200 and any(r["session"] == "s-hostile" for r in j["results"]), j)
check("search results carry dates and titles", j["results"] and "at" in j["results"][0] and "title" in j["results"][0], j)
st, hd, j = api("search", q="缓存策略")
check("search in Chinese", any(r["session"] == "s-zh" for r in j["results"]), j)
st, hd, b = req("api/search?q=Postgres&download=1")
check("search results export as a download", st == 200 and "attachment" in hd.get("content-disposition", ""), hd)

st, hd, j = api("recall", q="where did the database move?", budget=500, now="2024-07-01", project="alpha")
check("recall preview", st == 200 and "Postgres" in j["text"] and j["tokens"] <= 500 and j["budget"] == 500, j)
check("recall explains each item", j["items"] and all("why" in i and "score" in i for i in j["items"]), j)
check("the recall text is the exact packed text (a JSON string)", "<script>window.__pwned=1</script>" in j["text"], j["text"][:200])
out = subprocess.run([CAIRN, "--db", STORE, "recall", "where did the database move?", "--budget", "500",
                      "--now", "2024-07-01", "--project", "alpha"], capture_output=True, text=True).stdout
check("the preview is what cairn recall gives", out.rstrip("\n") == j["text"].rstrip("\n"), (out[:200], j["text"][:200]))
st, hd, j = api("recall", q="where did the database move?", budget=500, now="2024-07-01", project="alpha", hook=1)
check("hook=1 previews with the hook's flags", st == 200 and "Postgres" in j["text"] and "gate" in j, j)
st, hd, j = api("recall", q="x", budget=10)
check("a budget under 50 is refused", st == 400, st)

st, hd, j = api("stats")
check("stats", st == 200 and j["sessions"] == 4 and j["messages"] == 406, j)
check("messages per month", ["2024-05", 400] in j["months"], j["months"])
st, hd, j = api("injections")
check("the injection log, newest first", st == 200 and len(j["entries"]) == 3 and j["entries"][0]["fired"] is True, j)
check("a hostile log line is a JSON string", "<script>" in j["entries"][1]["why"], j)
check("a session not stored: no prompt", "prompt" not in j["entries"][0] and "position" not in j["entries"][0], j["entries"][0])
e = j["entries"][2]
check("the log's prompt found in its saved session", e.get("prompt") == "turn 62 about the marmalade pipeline, step 62"
      and e.get("position") == 62, e)
st, hd, j = api("recall", q=e["prompt"], budget=1000, now="2024-05-03T09:01", hook=1, exclude="s-long")
check("the preview of that prompt leaves its session out, as the hook does",
      st == 200 and "marmalade" not in j["text"], (st, j.get("text", "")[:200]))
st, hd, j = api("recall", q=e["prompt"], budget=1000, now="2024-05-03T09:01", hook=1)
check("without exclude the session is found", st == 200 and "marmalade" in j["text"], (st, j.get("text", "")[:200]))
st, hd, j = api("memories")
check("memories", st == 200 and len(j["memories"]) == 1 and j["memories"][0]["text"] == "prefers <b>tabs</b>", j)
mid = j["memories"][0]["id"]
st, j = post("memory/edit", {"id": mid, "text": "prefers spaces"})
check("edit a memory", st == 200, (st, j))
st, hd, j = api("memories")
check("the edit shows", j["memories"][0]["text"] == "prefers spaces", j)
st, j = post("memory/supersede", {"id": mid, "text": "prefers two spaces"})
check("supersede a memory", st == 200 and j["superseded"] == mid, (st, j))
st, hd, j = api("memories")
check("only the new one is listed", [m["text"] for m in j["memories"]] == ["prefers two spaces"], j)
st, j = post("memory/rm", {"id": j["memories"][0]["id"], "confirm": j["memories"][0]["id"]})
check("delete the new one", st == 200, (st, j))
st, hd, j = api("memories")
check("the superseded one is live again", [m["text"] for m in j["memories"]] == ["prefers spaces"], j)
st, j = post("memory/rm", {"id": mid})
check("delete needs its confirmation", st == 400, (st, j))
st, j = post("memory/rm", {"id": mid, "confirm": mid})
check("delete a memory", st == 200, (st, j))
st, hd, j = api("memories")
check("the memory is gone", j["memories"] == [], j)
st, hd, b = req("api/export?session=s-zh")
check("export a session as cairn add JSONL", st == 200 and json.loads(b)["id"] == "s-zh"
      and "attachment" in hd.get("content-disposition", ""), (st, b[:100]))

# ---- forget, then absent everywhere ----
st, hd, j = api("forget", session="s-hostile", confirm="s-hostile")
check("forget is POST only", st == 405, st)
st, j = post("forget", {"session": "s-hostile"})
check("forget needs its confirmation", st == 400, (st, j))
st, j = post("forget", {"session": "s-hostile", "confirm": "s-hostile"})
check("forget", st == 200 and j["forgotten"], (st, j))
st, hd, j = api("sessions")
check("forgotten: not in sessions", j["total"] == 3 and all(s["id"] != "s-hostile" for s in j["sessions"]), j)
st, hd, j = api("sessions", project="alpha")
check("forgotten: not in its project", j["total"] == 0, j)
st, hd, j = api("session", id="s-hostile")
check("forgotten: no session page", st == 404, st)
st, hd, j = api("message", session="s-hostile", position=0)
check("forgotten: no message", st in (404,), st)
st, hd, j = api("search", q="Postgres migration")
check("forgotten: not found by search", st == 200 and not j["results"], j)
st, hd, j = api("recall", q="where did the database move?", budget=4000)
check("forgotten: not in the recall preview", "Postgres" not in j["text"], j["text"][:300])
st, hd, b = req("api/export?session=s-hostile")
check("forgotten: no export", st == 404, st)
st, hd, j = api("stats")
check("forgotten: stats", j["sessions"] == 3, j)
out = subprocess.run([CAIRN, "--db", STORE, "recall", "Postgres database"], capture_output=True, text=True)
check("forgotten: not in cairn recall", "Postgres" not in out.stdout, out.stdout[:200])
st, j = post("forget", {"session": "s-hostile", "confirm": "s-hostile"})
check("forget twice: 404", st == 404, (st, j))

# A session another process adds shows at once (the server's list of
# sessions is read again when the store's files change).
new = json.dumps({"id": "s-new", "source": "codex", "project": "delta", "title": "added while serving",
                  "messages": [{"role": "user", "content": "a quince tart", "at": "2024-08-01T10:00:00Z"}]})
st, hd, j = api("stats")
check("no vectors yet", j["vectors"] == [], j["vectors"])
# embedded as it is added (the test model), so the stats count one message with a vector
tiny = os.path.join(os.environ["CAIRN_TEST_ROOT"], "tests", "data", "embed", "tiny-bert")
subprocess.run([CAIRN, "--db", STORE, "add", "-q", "-"], input=new, text=True, check=True,
               env=dict(os.environ, CAIRN_EMBED_MODEL=tiny))
st, hd, j = api("sessions")
check("a session added meanwhile is listed", j["total"] == 4 and j["sessions"][0]["id"] == "s-new", j)
st, hd, j = api("stats")
check("and counted", j["sessions"] == 4 and ["delta", 1] in j["projects"], j)
check("vector coverage per model", len(j["vectors"]) == 1 and j["vectors"][0][1] == 1, j["vectors"])

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
