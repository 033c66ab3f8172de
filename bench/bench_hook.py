#!/usr/bin/env python3
"""bench_hook.py: what Claude Code's UserPromptSubmit hook costs per prompt.

Times `cairn hook prompt` as a whole process (spawn, read the hook JSON,
open the store, recall, gate, print) on a store built from the dev data,
against /bin/true fed the same stdin, taking turns, in the same run.
Prompts are the datasets' questions. Prints `bench hook.* key=value` lines.

usage: bench_hook.py CAIRN STORE QUESTIONS.txt [--runs N]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    cairn, store, qfile = sys.argv[1:4]
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 100
    qs = [l.strip() for l in open(qfile, encoding="utf-8") if l.strip()]
    home = tempfile.mkdtemp(prefix="cairn-hook-bench.")
    env = dict(os.environ, CAIRN_DB=store, HOME=home)
    t_cairn, t_true, fired = [], [], 0
    for i in range(runs):
        q = qs[i % len(qs)]
        inp = json.dumps({"session_id": "bench-%d" % i, "prompt": q, "cwd": home,
                          "hook_event_name": "UserPromptSubmit"}).encode()
        a = time.perf_counter()
        out = subprocess.run([cairn, "hook", "prompt"], input=inp, env=env,
                             stdout=subprocess.PIPE).stdout
        t_cairn.append((time.perf_counter() - a) * 1e3)
        fired += bool(out.strip())
        a = time.perf_counter()
        subprocess.run(["/bin/true"], input=inp, env=env, stdout=subprocess.PIPE)
        t_true.append((time.perf_counter() - a) * 1e3)

    def q(v, p):
        return statistics.quantiles(v, n=100)[p - 1]
    c50, t50 = statistics.median(t_cairn), statistics.median(t_true)
    print("bench hook.prompt runs=%d p50_ms=%.2f p95_ms=%.2f fired=%d ratio_p50_vs_true=%.2f"
          % (runs, c50, q(t_cairn, 95), fired, c50 / t50))
    print("bench hook.true runs=%d p50_ms=%.2f p95_ms=%.2f" % (runs, t50, q(t_true, 95)))
    print("# hook prompt: p50 %.1f ms, p95 %.1f ms as a whole process (fired on %d of %d prompts);"
          " /bin/true %.1f ms the same way" % (c50, q(t_cairn, 95), fired, runs, t50))


if __name__ == "__main__":
    main()
