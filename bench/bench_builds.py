#!/usr/bin/env python3
"""bench_builds.py: two builds of cairn as whole processes, taking turns.

Times `cairn recall --method keyword PROMPT --budget 1000` and `cairn hook
prompt` for an old build on its store and a new build on its own (a store
of an older schema is migrated by the new build, so each gets a copy), and
the new build with CAIRN_RECALL_EXHAUSTIVE=1 (no pruning), prompt by prompt
in turn with /bin/true. Prints p50 and p95 in ms.

usage: bench_builds.py PROMPTS.txt RUNS OLD_CAIRN OLD_STORE NEW_CAIRN NEW_STORE
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    qfile, runs, old, db_old, new, db_new = sys.argv[1:7]
    qs = [l.strip() for l in open(qfile, encoding="utf-8") if l.strip()]
    home = tempfile.mkdtemp(prefix="cairn-builds.")
    cfg = [("old", old, db_old, {}), ("new", new, db_new, {}),
           ("new-exhaustive", new, db_new, {"CAIRN_RECALL_EXHAUSTIVE": "1"})]
    t = {}
    for i in range(int(runs)):
        q = qs[i % len(qs)]
        inp = json.dumps({"session_id": "b-%d" % i, "prompt": q, "cwd": home,
                          "hook_event_name": "UserPromptSubmit"}).encode()
        for name, exe, db, extra in cfg:
            for kind, cmd in (("recall", [exe, "--db", db, "recall", "--method", "keyword", q,
                                          "--budget", "1000"]),
                              ("hook", [exe, "hook", "prompt"])):
                env = dict(os.environ, CAIRN_DB=db, HOME=home, **extra)
                a = time.perf_counter()
                subprocess.run(cmd, input=inp, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
                t.setdefault((name, kind), []).append((time.perf_counter() - a) * 1e3)
        a = time.perf_counter()
        subprocess.run(["/bin/true"], input=inp)
        t.setdefault(("/bin/true", "-"), []).append((time.perf_counter() - a) * 1e3)
    for (name, kind), v in t.items():
        v.sort()
        print("bench builds.%s.%s n=%d p50_ms=%.1f p95_ms=%.1f" %
              (name, kind, len(v), statistics.median(v), v[int(0.95 * (len(v) - 1))]))


if __name__ == "__main__":
    main()
