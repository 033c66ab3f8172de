#!/usr/bin/env python3
"""bench_web.py: what `cairn web` spends on its pages, on a big store.

Starts `cairn web` on STORE and asks it, N times each, for a page of 50
sessions (offsets across the whole list), a filtered page (one project), a
session page (100 messages), a recall preview (budget 4000, explain on) and
the same preview with the prompt hook's flags (hook=1) and a search, with questions made of words from the store's own user turns
(seeded, so two runs ask the same). For each it reads the server's time
from the Server-Timing header (docs/WEB.md) and the round trip. Baseline,
in the same run: the CLI doing the same work as a whole process
(`cairn sessions --limit 50 --json`, `cairn recall Q --budget 4000
--json --explain`), which is what a page would cost without a server.
Prints `bench web.<what> ...` lines with medians and p95 in ms.

--cpu KIND (recall4000, recall4000_hook or search): only that request, n
times, and the server process's CPU time per request (user + system, from
/proc: steadier than wall time on a loaded machine); no CLI baseline.

usage: bench_web.py CAIRN STORE [--n 40] [--cpu KIND]
"""
import http.client
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
import urllib.parse


def opt(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]


def report(name, xs, extra=""):
    print("bench web.%s n=%d median_ms=%.2f p95_ms=%.2f%s" % (name, len(xs), statistics.median(xs),
                                                              pct(xs, 0.95), extra))


def server_cpu_ms(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) * 1e3 / os.sysconf("SC_CLK_TCK")


def cpu_only(pid, get, kind, questions):
    args = {"recall4000": ("recall", {"budget": 4000}),
            "recall4000_hook": ("recall", {"budget": 4000, "hook": 1}),
            "search": ("search", {})}
    if kind not in args:
        raise SystemExit("bench_web: --cpu is one of " + ", ".join(args))
    path, extra = args[kind]
    durs, c0 = [], server_cpu_ms(pid)
    for q in questions:
        durs.append(get(path, q=q, **extra)[1])
    cpu = (server_cpu_ms(pid) - c0) / len(questions)
    report(kind + ".server", durs, " server_cpu_ms_per_request=%.2f" % cpu)


def main():
    cairn, store = sys.argv[1:3]
    n = int(opt("--n", "40"))
    env = dict(os.environ, CAIRN_EMBED_MODEL=os.environ.get("CAIRN_EMBED_MODEL", "none"))
    srv = subprocess.Popen([cairn, "--db", store, "web"], stdout=subprocess.PIPE, env=env,
                           stderr=subprocess.DEVNULL, text=True)
    try:
        url = urllib.parse.urlsplit(srv.stdout.readline().strip())
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)

        def get(path, **q):
            t0 = time.perf_counter()
            conn.request("GET", url.path + "api/" + path + "?" + urllib.parse.urlencode(q))
            r = conn.getresponse()
            body = r.read()
            rt = (time.perf_counter() - t0) * 1e3
            if r.status != 200:
                raise SystemExit("bench_web: %s %s: %d %s" % (path, q, r.status, body[:200]))
            dur = float(re.search(r"dur=([0-9.]+)", r.getheader("Server-Timing")).group(1))
            return json.loads(body), dur, rt

        first, _, _ = get("sessions", limit=200)
        total = first["total"]
        project = max(first["projects"], key=lambda p: p[1])[0]
        rnd = random.Random(20261202)
        ids, questions = [], []
        while len(questions) < n:
            s = first["sessions"][rnd.randrange(len(first["sessions"]))]["id"]
            page, _, _ = get("session", id=s, count=4)
            words = [w for m in page["messages"] if m.get("role") == "user"
                     for w in re.findall(r"[A-Za-z_]{5,}", m.get("content", ""))]
            if len(words) >= 4:
                ids.append(s)
                questions.append(" ".join(rnd.sample(words, 4)))
        for q in questions[:3]:                      # warm the page cache
            get("recall", q=q, budget=4000)
        kind = opt("--cpu", None)
        if kind:
            return cpu_only(srv.pid, get, kind, questions)
        times = {k: ([], []) for k in ("sessions50", "sessions50_project", "session100", "recall4000",
                                       "recall4000_hook", "search")}
        for i in range(n):
            for k, (path, q) in {
                "sessions50": ("sessions", {"limit": 50, "offset": (i * 97) % max(1, total - 50)}),
                "sessions50_project": ("sessions", {"limit": 50, "project": project}),
                "session100": ("session", {"id": ids[i], "count": 100}),
                "recall4000": ("recall", {"q": questions[i], "budget": 4000}),
                "recall4000_hook": ("recall", {"q": questions[i], "budget": 4000, "hook": 1}),
                "search": ("search", {"q": questions[i]}),
            }.items():
                _, dur, rt = get(path, **q)
                times[k][0].append(dur)
                times[k][1].append(rt)
        cli = {"sessions50": [], "recall4000": [], "recall4000_hook": []}
        for i in range(max(5, n // 4)):
            for k, cmd in (("sessions50", [cairn, "--db", store, "sessions", "--limit", "50", "--json"]),
                           ("recall4000", [cairn, "--db", store, "recall", questions[i], "--budget", "4000",
                                           "--json", "--explain"]),
                           ("recall4000_hook", [cairn, "--db", store, "recall", questions[i], "--budget",
                                                "4000", "--json", "--explain", "--fast"])):
                t0 = time.perf_counter()
                subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
                cli[k].append((time.perf_counter() - t0) * 1e3)
        print("# store %s: %d sessions; %d questions; project %r" % (store, total, n, project))
        for k, (dur, rt) in times.items():
            extra = ""
            if k in cli:
                extra = " cli_process_median_ms=%.2f server_vs_cli=%.2f" % (
                    statistics.median(cli[k]), statistics.median(dur) / statistics.median(cli[k]))
            report(k + ".server", dur, extra)
            report(k + ".roundtrip", rt)
    finally:
        srv.terminate()
        srv.wait()


if __name__ == "__main__":
    main()
