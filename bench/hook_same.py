#!/usr/bin/env python3
"""hook_same.py: two builds' prompt hooks give the same output.

  hook_same.py OLD_CAIRN NEW_CAIRN STORE PROMPTS [--runs N]

A build given as CAIRN@OTHER_STORE reads OTHER_STORE instead (the same
history written another way: hook54's copy in pages of 16 KB).

Feeds every prompt of PROMPTS (one a line, or JSONL with a "question"
field) to `cairn hook prompt` of both builds on STORE, each as a whole
process (HOME in a fresh folder, keyword only unless CAIRN_EMBED_MODEL is
set, the injected-once list off so runs are independent), taking turns,
and compares:

- stdout, byte for byte (what Claude Code receives);
- each decision's log line (~/.cairn/inject.jsonl) without its time
  fields: fired, why, the gate's figures, items and tokens.

Prints one line per difference and a summary with the page faults and
CPU (user+sys) medians of each build, from os.wait4 (bench/README.md
"Page faults"). Exits 1 when any stdout differs, else 0 (log lines that
differ are reported, not an error: a build may log more or less).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_vault import read_prompts  # noqa: E402


def main():
    a = sys.argv[1:]
    runs = 1
    if "--runs" in a:
        i = a.index("--runs")
        runs = int(a[i + 1])
        del a[i:i + 2]
    if len(a) != 4:
        sys.exit(__doc__.split("\n\n")[1])
    bins, store, qs = a[:2], a[2], read_prompts(a[3])
    stores = [b.partition("@")[2] or store for b in bins]
    bins = [b.partition("@")[0] for b in bins]
    home = tempfile.mkdtemp(prefix="cairn-hook-same.")
    # the injected-once list off: under a regular file, no folder can be
    # made, so neither build writes one (else the first build's injection
    # would silence the second's)
    open(os.path.join(home, "file"), "w").close()
    base = dict(os.environ, CAIRN_DB=store, HOME=home,
                CAIRN_INJECT_STATE=os.path.join(home, "file", "injected"))
    base.setdefault("CAIRN_EMBED_MODEL", "none")
    logs = [os.path.join(home, "inject-%d.jsonl" % k) for k in range(2)]
    cpu = [[], []]
    flt = [[], []]
    differ = 0
    for r in range(runs):
        for i, q in enumerate(qs):
            inp = json.dumps({"session_id": "same-%d-%d" % (r, i), "prompt": q, "cwd": home,
                              "hook_event_name": "UserPromptSubmit"}).encode()
            outs = [None, None]
            for k in ((0, 1) if (r + i) % 2 == 0 else (1, 0)):
                env = dict(base, CAIRN_INJECT_LOG=logs[k], CAIRN_DB=stores[k])
                p = subprocess.Popen([bins[k], "hook", "prompt"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env)
                p.stdin.write(inp)
                p.stdin.close()
                outs[k] = p.stdout.read()
                _, _, ru = os.wait4(p.pid, 0)
                cpu[k].append((ru.ru_utime + ru.ru_stime) * 1e3)
                flt[k].append(ru.ru_minflt)
            if outs[0] != outs[1]:
                differ += 1
                print("stdout differs: %r" % q[:80])
    lines = []
    for k in range(2):
        with open(logs[k], encoding="utf-8") as f:
            lines.append([{x: v for x, v in json.loads(l).items() if x not in ("at", "ms")}
                          for l in f])
    log_differ = 0
    fields = {}
    for i, (x, y) in enumerate(zip(*lines)):
        if x != y:
            log_differ += 1
            for f in sorted(set(x) | set(y)):
                if x.get(f) != y.get(f):
                    fields[f] = fields.get(f, 0) + 1
            print("log differs: %r: %s -> %s" % (qs[i % len(qs)][:60],
                  json.dumps(x, sort_keys=True), json.dumps(y, sort_keys=True)))
    fired = sum(1 for x in lines[1] if x.get("fired"))
    print("hook_same: %d prompts x %d runs: stdout differs on %d, log line on %d (%s); fired %d"
          % (len(qs), runs, differ, log_differ,
             ", ".join("%s %d" % kv for kv in sorted(fields.items())) or "no field", fired))
    for k in range(2):
        print("hook_same: %s: page faults p50 %d, CPU p50 %.1f ms"
              % (bins[k], statistics.median(flt[k]), statistics.median(cpu[k])))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
