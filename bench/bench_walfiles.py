#!/usr/bin/env python3
"""bench_walfiles.py: what the prompt hook pays when the store's -wal and
-shm files are not there.

The prompt hook opens the store read-only: SQLite creates STORE-wal and
STORE-shm when they are missing and, as a reader, never checkpoints or
removes them. The last writer to close (`cairn add`, the Stop hook's
capture) checkpoints and removes both, so in a session the next prompt's
hook creates them again. This times `cairn hook prompt` as a whole
process with the two files removed just before it (as a writer's close
leaves them) against with them there, taking turns prompt by prompt, in
the same run. Prints wall and CPU (user + system, RUSAGE_CHILDREN) p50 of
each (and wall p10: on a loaded host the runs that found a core free) and
their ratios. The removal is not timed.

It removes STORE-wal and STORE-shm: give it a copy of a store that no
other process has open.

usage: bench_walfiles.py CAIRN STORE QUESTIONS.txt [--runs N]
"""
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    cairn, store, qfile = sys.argv[1:4]
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 100
    qs = [l.strip() for l in open(qfile, encoding="utf-8") if l.strip()]
    home = tempfile.mkdtemp(prefix="cairn-walfiles.")
    env = dict(os.environ, CAIRN_DB=store, HOME=home)
    env.setdefault("CAIRN_EMBED_MODEL", "none")
    wall = {"absent": [], "present": []}
    cpu = {"absent": [], "present": []}
    load0 = os.getloadavg()[0]
    for i in range(runs):
        q = qs[i % len(qs)]
        for name in ("absent", "present"):
            if name == "absent":
                for ext in ("-wal", "-shm"):
                    try:
                        os.unlink(store + ext)
                    except FileNotFoundError:
                        pass
            inp = json.dumps({"session_id": "walfiles-%s-%d" % (name, i), "prompt": q,
                              "cwd": home, "hook_event_name": "UserPromptSubmit"}).encode()
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            a = time.perf_counter()
            subprocess.run([cairn, "hook", "prompt"], input=inp, env=env, stdout=subprocess.PIPE)
            wall[name].append((time.perf_counter() - a) * 1e3)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append((r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) * 1e3)
    for name in ("absent", "present"):
        print("bench walfiles.%s runs=%d wall_p50_ms=%.2f wall_p10_ms=%.2f cpu_p50_ms=%.2f"
              % (name, runs, statistics.median(wall[name]),
                 statistics.quantiles(wall[name], n=10)[0], statistics.median(cpu[name])))
    print("bench walfiles.ratio wall_absent_vs_present=%.3f cpu_absent_vs_present=%.3f "
          "load_start=%.2f load_end=%.2f"
          % (statistics.median(wall["absent"]) / statistics.median(wall["present"]),
             statistics.median(cpu["absent"]) / statistics.median(cpu["present"]),
             load0, os.getloadavg()[0]))


if __name__ == "__main__":
    main()
