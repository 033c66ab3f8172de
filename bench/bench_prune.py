#!/usr/bin/env python3
"""bench_prune.py: how often pruned keyword recall differs from the exhaustive path.

For each prompt, `cairn recall --method keyword --json` at each budget with
CAIRN_RECALL_EXHAUSTIVE=0 and =1, and `cairn hook prompt` both ways (each
in its own hook session). Prints, per budget, how many results are
identical and the share of the exhaustive items the pruned result holds
(mean and min); for the hook, identical outputs and identical inject
decisions. Stores under 10,000 matching turns are never pruned, so this
means something on big stores only.

usage: bench_prune.py CAIRN STORE PROMPTS.txt [--n N] [--budgets 1000,4000] [--now DATE]
"""
import json
import os
import subprocess
import sys
import tempfile


def opt(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def run(cmd, env, inp=None):
    return subprocess.run(cmd, input=inp, env=env, stdout=subprocess.PIPE, check=True).stdout


def main():
    cairn, store, qfile = sys.argv[1:4]
    n = int(opt("--n", "100"))
    now = opt("--now", "2024-06-01")
    qs = [l.strip() for l in open(qfile, encoding="utf-8") if l.strip()][:n]
    home = tempfile.mkdtemp(prefix="cairn-prune.")
    envs = [dict(os.environ, CAIRN_DB=store, HOME=home, CAIRN_RECALL_EXHAUSTIVE=e)
            for e in ("0", "1")]
    for budget in opt("--budgets", "1000,4000").split(","):
        same, kept = 0, []
        for q in qs:
            o = [json.loads(run([cairn, "recall", "--fast", "--method", "keyword", "--json", q,
                                 "--budget", budget, "--now", now], env)) for env in envs]
            a = {(i["session"], i["message"]) for i in o[0]["items"]}
            b = {(i["session"], i["message"]) for i in o[1]["items"]}
            same += o[0] == o[1]
            kept.append(len(a & b) / len(b) if b else 1.0)
        print("bench prune.recall budget=%s n=%d identical=%d kept_mean=%.3f kept_min=%.3f" %
              (budget, len(qs), same, sum(kept) / len(kept), min(kept)))
    same = decision = fired = 0
    for i, q in enumerate(qs):
        o = [run([cairn, "hook", "prompt"], env,
                 json.dumps({"session_id": "p-%d-%d" % (i, k), "prompt": q, "cwd": home,
                             "hook_event_name": "UserPromptSubmit"}).encode())
             for k, env in enumerate(envs)]
        same += o[0] == o[1]
        decision += bool(o[0].strip()) == bool(o[1].strip())
        fired += bool(o[1].strip())
    print("bench prune.hook n=%d identical=%d same_decision=%d fired_exhaustive=%d" %
          (len(qs), same, decision, fired))


if __name__ == "__main__":
    main()
