#!/usr/bin/env python3
"""bench_add_builds.py: `cairn add` of two builds, taking turns.

Each round runs `cairn --db FRESH add -q FILE` with the old build and with
the new one, alternating which goes first, on the same input in two
shapes: the JSONL as given (one session a line) and the same sessions as
one JSON array (where `cairn add` used to parse every session three
times). Embedding is off (CAIRN_EMBED_MODEL=none), so the figures are the
parse, the cleaning and the inserts. Prints each build's median wall and
CPU (user + system, from wait4) per shape and the new/old ratio of the
medians. Every add must exit 0.

usage: bench_add_builds.py INPUT.jsonl RUNS OLD_CAIRN NEW_CAIRN
  (INPUT.jsonl from `gen_data.py ingest OUT --sessions N --messages M`)
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run(exe, db, path, env):
    for f in (db, db + "-wal", db + "-shm", db + "-vec"):
        if os.path.exists(f):
            os.remove(f)
    a = time.perf_counter()
    p = subprocess.Popen([exe, "--db", db, "add", "-q", path], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - a
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("%s add %s failed: %s" % (exe, path, err[:300]))
    return wall, ru.ru_utime + ru.ru_stime


def main():
    src, runs, old, new = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    tmp = tempfile.mkdtemp(prefix="cairn-add-builds.")
    arr = os.path.join(tmp, "sessions.json")
    with open(src, encoding="utf-8") as f, open(arr, "w", encoding="utf-8") as o:
        o.write("[\n" + ",\n".join(l.rstrip("\n") for l in f if l.strip()) + "\n]\n")
    env = dict(os.environ, CAIRN_EMBED_MODEL="none", HOME=tmp)
    builds = (("old", old), ("new", new))
    t = {}
    for i in range(runs):
        for shape, path in (("jsonl", src), ("array", arr)):
            order = builds if i % 2 == 0 else builds[::-1]
            for name, exe in order:
                wall, cpu = run(exe, os.path.join(tmp, name + ".db"), path, env)
                t.setdefault((shape, name), []).append((wall, cpu))
                print("bench add_builds.run shape=%s build=%s round=%d wall_s=%.3f cpu_s=%.3f"
                      % (shape, name, i, wall, cpu), file=sys.stderr)
    for shape in ("jsonl", "array"):
        med = {}
        for name, _ in builds:
            w = statistics.median(x[0] for x in t[(shape, name)])
            c = statistics.median(x[1] for x in t[(shape, name)])
            med[name] = (w, c)
            print("bench add_builds shape=%s build=%s runs=%d wall_s=%.3f cpu_s=%.3f"
                  % (shape, name, runs, w, c))
        print("# %s: new/old wall %.3f, CPU %.3f" % (
            shape, med["new"][0] / med["old"][0], med["new"][1] / med["old"][1]))
    for f in os.listdir(tmp):
        os.remove(os.path.join(tmp, f))
    os.rmdir(tmp)


if __name__ == "__main__":
    main()
