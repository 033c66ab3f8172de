#!/usr/bin/env python3
"""bench_big.py: whole processes on a big store (issue 23's rows), taking turns.

Times, run by run in turn: /bin/true; plain FTS5 bm25 top-50 by the sqlite3
shell on a copy of the store's text (unicode61; built once beside the store
as STORE.fts5.db); and for each cairn build given: `cairn stats`,
`cairn sessions --limit 50`, `cairn recall Q --budget 1000` (exact), the same
with --fast, and `cairn hook prompt`. Prints medians and p95 in ms of wall
time, and the median of each child's CPU time (user + system, wait4).
The builds take turns at running first after the FTS5 query, so RUNS a
multiple of the number of builds gives each the same share of that place.

The store is generated, never committed:
    python3 bench/gen_data.py ingest big.jsonl --sessions 50000 --messages 1000000
    CAIRN_EMBED_MODEL=none cairn --db big.db add big.jsonl      (keyword only)
A build that would migrate the store takes its own copy: NAME=CAIRN@STORE2
(the new build migrates it on first use; the old one refuses a newer schema).
A build run with variables of its own: NAME=CAIRN[@STORE]:VAR=VALUE[:VAR=VALUE]
(e.g. new=build/cairn:CAIRN_RECALL_UNITS=0, the unit rows off).

usage: bench_big.py STORE RUNS NAME=CAIRN[@STORE][:VAR=VALUE...] ... [--only stats,sessions,...]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

QUESTIONS = [
    "how did we fix the websocket reconnect bug",
    "what did we decide about the cache eviction policy",
    "which flag makes the build reproducible",
    "the migration that failed on the staging database",
    "why was the retry loop removed",
]


def fts_baseline(store):
    base = store + ".fts5.db"
    if not os.path.exists(base):
        sql = ("ATTACH '%s' AS s; CREATE VIRTUAL TABLE t USING fts5(content);"
               " INSERT INTO t(rowid, content) SELECT id, content FROM s.messages;" % store)
        subprocess.run(["sqlite3", base + ".tmp", sql], check=True)
        os.rename(base + ".tmp", base)
    return base


def fts_query(q):
    return " OR ".join('"%s"' % w for w in q.split())


def main():
    store, runs = sys.argv[1], int(sys.argv[2])
    builds = [a.split("=", 1) for a in sys.argv[3:] if "=" in a and not a.startswith("--")]
    only = None
    if "--only" in sys.argv:
        only = set(sys.argv[sys.argv.index("--only") + 1].split(","))
    base = fts_baseline(store)
    home = tempfile.mkdtemp(prefix="cairn-big.")
    env = dict(os.environ, CAIRN_DB=store, HOME=home, CAIRN_EMBED_MODEL="none")
    t, cpu = {}, {}

    def timed(name, argv, inp=None, e=None):
        # wall time, and the child's own CPU time (user + system, from
        # wait4): on 2 shared cores the wall clock mostly measures the wait
        # for a core, the CPU time what the process did
        a = time.perf_counter()
        pr = subprocess.Popen(argv, stdin=subprocess.PIPE if inp is not None else subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=e or env)
        if inp is not None:
            pr.stdin.write(inp)
            pr.stdin.close()
        _, _, ru = os.wait4(pr.pid, 0)
        pr.returncode = 0
        t.setdefault(name, []).append((time.perf_counter() - a) * 1e3)
        cpu.setdefault(name, []).append((ru.ru_utime + ru.ru_stime) * 1e3)

    for i in range(runs):
        q = QUESTIONS[i % len(QUESTIONS)]
        timed("/bin/true", ["/bin/true"])
        timed("fts5 bm25 top-50 (sqlite3 shell)", ["sqlite3", base,
              "SELECT rowid FROM t WHERE t MATCH '%s' ORDER BY bm25(t) LIMIT 50" % fts_query(q)])
        # the builds take turns at going first: the first follows the FTS5
        # query (a second of reads at a million), which costs whichever build
        # runs after it (exact51: 0.62-0.86 of main's CPU with main first,
        # 1.13 with it second); a multiple of the build count keeps it even
        k = i % len(builds)
        for name, spec in builds[k:] + builds[:k]:
            spec, *assigns = spec.split(":")
            cairn, _, own = spec.partition("@")
            e = dict(env, CAIRN_DB=own) if own else dict(env)
            e.update(a.split("=", 1) for a in assigns)
            rows = {
                "stats": [cairn, "stats"],
                "sessions": [cairn, "sessions", "--limit", "50"],
                "recall": [cairn, "recall", q, "--budget", "1000"],
                "recall-fast": [cairn, "recall", q, "--budget", "1000", "--fast"],
            }
            for row, argv in rows.items():
                if only is None or row in only:
                    timed("%s %s" % (name, row), argv, e=e)
            if only is None or "hook" in only:
                inp = json.dumps({"session_id": "big-%d" % i, "prompt": q, "cwd": home,
                                  "hook_event_name": "UserPromptSubmit"}).encode()
                timed("%s hook" % name, [cairn, "hook", "prompt"], inp, e)
    for name, v in t.items():
        v.sort()
        p95 = v[min(len(v) - 1, int(len(v) * 0.95))]
        print("bench big %-40s p50=%8.1f ms  p95=%8.1f ms  cpu_p50=%8.1f ms  n=%d"
              % (name, statistics.median(v), p95, statistics.median(cpu[name]), len(v)))


if __name__ == "__main__":
    main()
