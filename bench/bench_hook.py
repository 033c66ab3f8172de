#!/usr/bin/env python3
"""bench_hook.py: what Claude Code's UserPromptSubmit hook costs per prompt.

Times `cairn hook prompt` as a whole process (spawn, read the hook JSON,
open the store, recall, gate, print) against /bin/true fed the same stdin,
taking turns, in the same run. Prompts are the lines of QUESTIONS.txt.
Prints `bench hook.* key=value` lines (wall p50, p95 and p10: on a loaded
host the runs that found a core free); cpu_p50_ms is the process's user +
system CPU (all its threads), from RUSAGE_CHILDREN around each run, with
its p95 and the user and system parts' p50; the load average (1 min) at
the start and the end.

--variant NAME:K=V,K=V (repeatable) times several configurations in the
same run, taking turns prompt by prompt (e.g. keyword against hybrid,
with and without the vector cache file); without it, one variant
"prompt" with the environment as it is. A variant's BIN=PATH runs that
cairn instead of CAIRN (an older build against this one, same run). --recall times `cairn recall
PROMPT --budget 1000` instead of the hook.

usage: bench_hook.py CAIRN STORE QUESTIONS.txt [--runs N] [--variant ...] [--recall]
"""
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def variants(argv):
    out = []
    for i, a in enumerate(argv):
        if a == "--variant":
            name, _, kvs = argv[i + 1].partition(":")
            out.append((name, dict(kv.split("=", 1) for kv in kvs.split(",") if kv)))
    return out or [("prompt", {})]


def main():
    cairn, store, qfile = sys.argv[1:4]
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 100
    recall = "--recall" in sys.argv
    qs = [l.strip() for l in open(qfile, encoding="utf-8") if l.strip()]
    home = tempfile.mkdtemp(prefix="cairn-hook-bench.")
    env = dict(os.environ, CAIRN_DB=store, HOME=home)
    # the models stay where they are when HOME moves
    env.setdefault("CAIRN_MODEL_DIR", os.path.expanduser("~/.cairn/models"))
    vs = variants(sys.argv)
    times = {name: [] for name, _ in vs}
    cpus = {name: [] for name, _ in vs}
    users = {name: [] for name, _ in vs}
    syss = {name: [] for name, _ in vs}
    load0 = os.getloadavg()[0]
    fired = {name: 0 for name, _ in vs}
    t_true = []
    for i in range(runs):
        q = qs[i % len(qs)]
        # a session per variant: the injected-once list of one must not
        # silence another's answer (the same messages in both stores)
        def hook_in(name):
            return json.dumps({"session_id": "bench-%s-%d" % (name, i), "prompt": q,
                               "cwd": home, "hook_event_name": "UserPromptSubmit"}).encode()
        inp = hook_in("true")
        for name, extra in vs:
            extra = dict(extra)
            b = extra.pop("BIN", cairn)
            cmd = [b, "recall", q, "--budget", "1000"] if recall else [b, "hook", "prompt"]
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            a = time.perf_counter()
            out = subprocess.run(cmd, input=hook_in(name), env=dict(env, **extra),
                                 stdout=subprocess.PIPE).stdout
            times[name].append((time.perf_counter() - a) * 1e3)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus[name].append((r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) * 1e3)
            users[name].append((r1.ru_utime - r0.ru_utime) * 1e3)
            syss[name].append((r1.ru_stime - r0.ru_stime) * 1e3)
            fired[name] += bool(out.strip())
        a = time.perf_counter()
        subprocess.run(["/bin/true"], input=inp, env=env, stdout=subprocess.PIPE)
        t_true.append((time.perf_counter() - a) * 1e3)

    def q(v, p):
        return statistics.quantiles(v, n=100)[p - 1]
    t50 = statistics.median(t_true)
    what = "recall" if recall else "hook"
    for name, _ in vs:
        v = times[name]
        c50 = statistics.median(v)
        print("bench %s.%s runs=%d p50_ms=%.2f p95_ms=%.2f p10_ms=%.2f cpu_p50_ms=%.2f "
              "cpu_p95_ms=%.2f user_p50_ms=%.2f sys_p50_ms=%.2f %s=%d ratio_p50_vs_true=%.2f"
              % (what, name, runs, c50, q(v, 95), q(v, 10), statistics.median(cpus[name]),
                 q(cpus[name], 95), statistics.median(users[name]),
                 statistics.median(syss[name]), "answered" if recall else "fired",
                 fired[name], c50 / t50))
    print("bench %s.true runs=%d p50_ms=%.2f p95_ms=%.2f load_start=%.2f load_end=%.2f"
          % (what, runs, t50, q(t_true, 95), load0, os.getloadavg()[0]))
    for name, _ in vs:
        v = times[name]
        print("# %s %s: p50 %.1f ms, p95 %.1f ms as a whole process (%s %d of %d);"
              " /bin/true %.1f ms the same way"
              % ("recall" if recall else "hook prompt", name, statistics.median(v), q(v, 95),
                 "output on" if recall else "fired on", fired[name], runs, t50))


if __name__ == "__main__":
    main()
