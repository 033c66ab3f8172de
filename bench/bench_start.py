#!/usr/bin/env python3
"""bench_start.py: what a cairn process pays, build against build, taking turns.

  bench_start.py STORE RUNS NAME=CAIRN[;VAR=VALUE...] ... [--only version,hook,recall,recall-fast]

Runs, round by round and in alternating order, `/bin/true`, then for each
build `cairn --version`, `cairn hook prompt` (the hook's JSON on stdin) and
`cairn recall Q --budget 1000 --fast` on STORE (keyword only, HOME in a
fresh folder; the exact `cairn recall Q --budget 1000` too with --only recall), each under `perf stat`, and prints the medians of the
process's task-clock and of its page faults as perf counts them: the
traps into the kernel, not the pages `MADV_POPULATE_WRITE` faults in by a
call (those are in rusage's ru_minflt, so a build that populates its heap
shows more minor faults than it traps). A build may carry environment
variables after its path (NAME=CAIRN;CAIRN_RECALL_THREADS=1).
The questions are bench_big.py's. Needs perf (linux-perf) with
perf_event_paranoid allowing software events of one's own processes.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_big import QUESTIONS  # noqa: E402


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    store, runs = sys.argv[1], int(sys.argv[2])
    builds = [a.split("=", 1) for a in sys.argv[3:] if "=" in a and not a.startswith("--")]
    only = {"version", "hook", "recall-fast"}
    if "--only" in sys.argv:
        only = set(sys.argv[sys.argv.index("--only") + 1].split(","))
    home = tempfile.mkdtemp(prefix="cairn-start.")
    out = os.path.join(home, "perf.csv")
    res = {}

    def run(name, argv, env, inp=None):
        p = subprocess.Popen(["perf", "stat", "-x,", "-o", out, "-e", "task-clock,page-faults", "--"]
                             + argv, stdin=subprocess.PIPE if inp else subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        if inp:
            p.stdin.write(inp)
            p.stdin.close()
        p.wait()
        got = {}
        with open(out) as f:
            for line in f:
                v = line.strip().split(",")
                if len(v) > 2 and v[0] and v[0][0].isdigit():
                    got[v[2]] = float(v[0])
        r = res.setdefault(name, ([], []))
        r[0].append(got.get("task-clock", float("nan")))
        r[1].append(got.get("page-faults", float("nan")))

    for i in range(runs):
        q = QUESTIONS[i % len(QUESTIONS)]
        run("/bin/true", ["/bin/true"], dict(os.environ))
        for name, spec in (builds if i % 2 == 0 else builds[::-1]):
            cairn, *extra = spec.split(";")
            env = dict(os.environ, CAIRN_DB=store, HOME=home, CAIRN_EMBED_MODEL="none")
            env.update(kv.split("=", 1) for kv in extra)
            if "version" in only:
                run(name + " --version", [cairn, "--version"], env)
            if "hook" in only:
                inp = json.dumps({"session_id": "start-%d" % i, "prompt": q, "cwd": home,
                                  "hook_event_name": "UserPromptSubmit"}).encode()
                run(name + " hook", [cairn, "hook", "prompt"], env, inp)
            if "recall" in only:
                run(name + " recall", [cairn, "recall", q, "--budget", "1000"], env)
            if "recall-fast" in only:
                run(name + " recall-fast", [cairn, "recall", q, "--budget", "1000", "--fast"], env)
    for name, (tc, pf) in res.items():
        print("bench start %-28s task-clock p50=%7.2f ms  page-faults p50=%6d  n=%d"
              % (name, statistics.median(tc), statistics.median(pf), len(tc)))


if __name__ == "__main__":
    main()
