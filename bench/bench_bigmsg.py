#!/usr/bin/env python3
"""bench_bigmsg.py: recall and the prompt hook on a store that holds one huge message.

A pasted log or a dumped file can make one turn tens of megabytes. Recall
cuts such a turn to an excerpt (src/recall/pack.c), and that must cost time
linear in the turn's length: the prompt hook gives up after 30 s.

For each size (1, 8 and 50 MB by default) a store is made with `cairn add`
from the first build given: a few ordinary sessions and one session whose
user turn is SIZE bytes of prose in which the question's words recur. Then
`cairn recall QUESTION --budget 2000` and `cairn hook prompt` run as whole
processes for every build, taking turns (each build on the same store), and
the median wall time per build, size and command is printed with its ratio
to the first build.

usage: bench_bigmsg.py NAME=CAIRN [NAME=CAIRN ...] [--sizes 1,8,50] [--runs N]
                       [--timeout S]
A run that exceeds --timeout (default 300 s) is killed and counted as that
many seconds (timeout=1 on its line). Prints `bench bigmsg.* key=value`.
"""
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

QUESTION = "what did the deploy script print about the database migration timeout?"

WORDS = ("the a of to and in that it for on with as was at by this from server request "
         "cache index build release branch commit worker queue retry latency memory disk "
         "socket thread config value error warning notice line file path module test "
         "deploy script database migration timeout print").split()


def big_text(size, rng):
    """About size bytes of sentences; one in eight mentions the question's words."""
    out, n = [], 0
    while n < size:
        k = rng.randint(8, 24)
        s = " ".join(rng.choice(WORDS[:-5]) for _ in range(k))
        if rng.random() < 0.125:
            s += " deploy script database migration timeout"
        s = s.capitalize() + (".\n" if rng.random() < 0.2 else ". ")
        out.append(s)
        n += len(s)
    return "".join(out)[:size]


def make_store(cairn, path, size_mb, tmp):
    rng = random.Random(20261201 + size_mb)
    sessions = []
    for i in range(20):
        msgs = []
        for j in range(10):
            role = "user" if j % 2 == 0 else "assistant"
            msgs.append({"role": role, "content": " ".join(rng.choice(WORDS)
                                                           for _ in range(rng.randint(10, 60)))})
        sessions.append({"id": "s%d" % i, "source": "bench", "started_at": 1700000000 + i * 86400,
                         "messages": msgs})
    sessions.append({"id": "big", "source": "bench", "started_at": 1700000000 + 30 * 86400,
                     "messages": [
                         {"role": "user", "content": big_text(size_mb << 20, rng)},
                         {"role": "assistant", "content": "Noted: the migration timed out."}]})
    jl = os.path.join(tmp, "big.jsonl")
    with open(jl, "w", encoding="utf-8") as f:
        for s in sessions:
            f.write(json.dumps(s) + "\n")
    subprocess.run([cairn, "--db", path, "add", "-q", jl], check=True)
    os.unlink(jl)


def timed(cmd, inp, env, timeout):
    a = time.perf_counter()
    try:
        p = subprocess.run(cmd, input=inp, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, timeout=timeout)
        return time.perf_counter() - a, len(p.stdout), False
    except subprocess.TimeoutExpired:
        return float(timeout), 0, True


def main():
    builds = [a.split("=", 1) for a in sys.argv[1:] if "=" in a and not a.startswith("--")]
    sizes = [1, 8, 50]
    runs, timeout = 5, 300.0
    argv = sys.argv
    if "--sizes" in argv:
        sizes = [int(x) for x in argv[argv.index("--sizes") + 1].split(",")]
    if "--runs" in argv:
        runs = int(argv[argv.index("--runs") + 1])
    if "--timeout" in argv:
        timeout = float(argv[argv.index("--timeout") + 1])
    if not builds:
        sys.exit(__doc__)
    tmp = tempfile.mkdtemp(prefix="cairn-bigmsg.")
    try:
        home = os.path.join(tmp, "home")
        os.mkdir(home)
        for mb in sizes:
            store = os.path.join(tmp, "big%d.db" % mb)
            make_store(builds[0][1], store, mb, tmp)
            env = dict(os.environ, HOME=home, CAIRN_DB=store)
            hook_in = json.dumps({"session_id": "bench", "prompt": QUESTION, "cwd": home,
                                  "hook_event_name": "UserPromptSubmit"}).encode()
            cmds = {"recall": (["recall", QUESTION, "--budget", "2000"], b""),
                    "hook": (["hook", "prompt"], hook_in)}
            res = {(b, c): [] for b, _ in builds for c in cmds}
            outs, tos = {}, {}
            for _ in range(runs):
                for c, (args, inp) in cmds.items():
                    for name, cairn in builds:
                        t, n, to = timed([cairn] + args, inp, env, timeout)
                        res[(name, c)].append(t)
                        outs[(name, c)] = n
                        tos[(name, c)] = tos.get((name, c), False) or to
            for c in cmds:
                base = statistics.median(res[(builds[0][0], c)])
                for name, _ in builds:
                    med = statistics.median(res[(name, c)])
                    print("bench bigmsg.%s build=%s mb=%d runs=%d median_s=%.3f ratio=%.4f "
                          "out_bytes=%d timeout=%d" % (c, name, mb, runs, med, med / base,
                                                       outs[(name, c)], tos[(name, c)]),
                          flush=True)
            os.unlink(store)
            for ext in ("-wal", "-shm", "-vec"):
                if os.path.exists(store + ext):
                    os.unlink(store + ext)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
