#!/usr/bin/env python3
"""bench_query.py: a one-shot query's encoding as a whole process.

Times `cairn embed --query TEXT` (load the model, encode one question,
print its vector) for one or more cairn builds and /bin/true, taking
turns text by text in the same run, so a loaded machine slows all of them
alike: the ratio to the first build is what to read. Each run's user +
system CPU and minor page faults come from RUSAGE_CHILDREN around it
(a mapped model's cost is mostly faults on this kind of VM).

    python3 bench/bench_query.py old=/tmp/old/cairn new=build/cairn --runs 15

The model is CAIRN_EMBED_MODEL's (default use-lite-en); its folder's
pre-packed files are made by a first untimed run of each build. Texts: the
lines of --texts FILE, else a few coding and chat questions.
Prints `bench query.NAME key=value` lines and `ratio=` against the first.
"""
import os
import resource
import statistics
import subprocess
import sys
import time

TEXTS = [
    "how did we fix the websocket reconnect bug",
    "what did Caroline say about the adoption agency",
    "which command deploys the staging server",
    "why was the migration to schema 19 slow",
    "what is the name of Melanie's dog",
]


def run(argv, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = (time.perf_counter() - t0) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit("bench_query: %s failed: %s" % (argv[0], p.stderr.decode(errors="replace")[:300]))
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu, after.ru_minflt - before.ru_minflt


def main():
    args = sys.argv[1:]
    runs, texts, builds = 15, TEXTS, []
    i = 0
    while i < len(args):
        if args[i] == "--runs":
            runs = int(args[i + 1])
            i += 2
        elif args[i] == "--texts":
            texts = [l.strip() for l in open(args[i + 1], encoding="utf-8") if l.strip()]
            i += 2
        elif "=" in args[i]:
            builds.append(tuple(args[i].split("=", 1)))
            i += 1
        else:
            sys.exit(__doc__)
    if not builds or not texts:
        sys.exit(__doc__)
    env = dict(os.environ)
    env.setdefault("CAIRN_EMBED_MODEL", "use-lite-en")
    for _, b in builds:                     # the packed files, and the page cache warm
        run([b, "embed", "--query", texts[0]], env)
    res = {name: ([], [], []) for name, _ in builds + [("true", "/bin/true")]}
    for r in range(runs):
        q = texts[r % len(texts)]
        for name, b in [("true", "/bin/true")] + builds:
            argv = [b] if name == "true" else [b, "embed", "--query", q]
            for k, v in zip(res[name], run(argv, env)):
                k.append(v)
    first = None
    for name, _ in [("true", "/bin/true")] + builds:
        wall, cpu, flt = res[name]
        line = "bench query.%s runs=%d wall_p50_ms=%.1f cpu_p50_ms=%.1f minflt_p50=%d" % (
            name, runs, statistics.median(wall), statistics.median(cpu), statistics.median(flt))
        if name != "true":
            if first is None:
                first = statistics.median(cpu)
            line += " cpu_ratio=%.2f" % (statistics.median(cpu) / first)
        print(line)
    print("bench query.load load_avg=%.1f" % os.getloadavg()[0])


if __name__ == "__main__":
    main()
