#!/usr/bin/env python3
"""bench_vault.py: what a Markdown vault attached to the store costs (issue 19).

  bench_vault.py CAIRN VAULT [--runs N] [--add-runs K] [--reindex-runs K]
                 [--prompts FILE] [--sessions S --messages M] [--keep DIR]
                 [--baseline CAIRN0]

Makes a store of conversations (bench/gen_data.py ingest: S sessions, M
messages, seeded) and then, all as whole processes:

1. `cairn vault add VAULT` on K fresh copies of that store (wall time,
   median; the store's size before and after);
2. `cairn vault reindex` with nothing changed, K times (the incremental
   path: a stat of every file, no file read);
3. the prompt hook (`cairn hook prompt`) with the vault attached against
   the same store without it and `/bin/true`, taking turns prompt by
   prompt, N runs (bench/bench_hook.py, variants `vault` and `novault`):
   p50 and p95 of each, how often each fired. --baseline CAIRN0 adds
   CAIRN0's hook on the same two stores (variants `vault0`, `novault0`),
   taking turns with them: a before/after in one run.

The prompts are FILE's (one a line, or JSONL with a "question" field),
else half questions naming notes of VAULT by their title ("what did I
note about TITLE?"), half the prompts that must not fire of
bench/vault/dev-queries.jsonl, so both the firing and the silent paths are
timed. Use it on the 1,000-note vault of bench/vault/gen_notes.py for the
issue's goal (hook p50 <= 15 ms). CAIRN_EMBED_MODEL is `none` unless set
(keyword only, as the hook recalls by default).

Prints `bench vault.* key=value` lines (bench/README.md), then bench_hook's.
Exits 2 with "cairn has no vault command" when CAIRN has none.
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def q95(v):
    return statistics.quantiles(v, n=100)[94] if len(v) > 1 else v[0]


def timed(cmd, env):
    a = time.perf_counter()
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    ms = (time.perf_counter() - a) * 1e3
    if p.returncode != 0:
        sys.exit("bench vault: %s failed (%d): %s"
                 % (" ".join(cmd[:4]), p.returncode, p.stderr.decode(errors="replace")[-400:]))
    return ms


def store_bytes(db):
    return sum(os.path.getsize(db + s) for s in ("", "-wal") if os.path.exists(db + s))


def copy_store(src, dst):
    for s in ("", "-wal", "-shm"):
        if os.path.exists(src + s):
            shutil.copyfile(src + s, dst + s)


def read_prompts(path):
    """The prompts of a file: one a line, or JSONL with a "question" field."""
    out = []
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if line.startswith("{"):
            line = json.loads(line).get("question", "")
        if line:
            out.append(line)
    return out


def prompts(args):
    if args.prompts:
        return read_prompts(args.prompts)
    rng = random.Random(20261202)
    titles = sorted(os.path.splitext(f)[0] for _, _, fs in os.walk(args.vault)
                    for f in fs if f.endswith(".md"))
    named = ["what did I note about %s?" % t for t in rng.sample(titles, min(25, len(titles)))]
    silent = []
    with open(os.path.join(HERE, "vault", "dev-queries.jsonl"), encoding="utf-8") as f:
        for line in f:
            q = json.loads(line)
            if q.get("fire") is False:
                silent.append(q["question"])
    mixed = []
    for i in range(max(len(named), len(silent))):
        mixed += named[i:i + 1] + silent[i:i + 1]
    return mixed


def main():
    a = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    a.add_argument("cairn")
    a.add_argument("vault")
    a.add_argument("--runs", type=int, default=100)
    a.add_argument("--add-runs", type=int, default=3)
    a.add_argument("--reindex-runs", type=int, default=5)
    a.add_argument("--prompts")
    a.add_argument("--sessions", type=int, default=300)
    a.add_argument("--messages", type=int, default=6000)
    a.add_argument("--keep", help="keep the stores in this folder")
    a.add_argument("--baseline", help="another cairn whose hook takes turns with CAIRN's")
    args = a.parse_args()
    if args.add_runs < 1 or args.reindex_runs < 1 or args.runs < 2:
        a.error("--add-runs and --reindex-runs at least 1, --runs at least 2")
    env = dict(os.environ)
    env.setdefault("CAIRN_EMBED_MODEL", "none")
    tmp = args.keep or tempfile.mkdtemp(prefix="cairn-vault-bench.")
    os.makedirs(tmp, exist_ok=True)
    env["HOME"] = tmp
    try:
        h = subprocess.run([args.cairn, "vault", "--help"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if h.returncode != 0:
            print("bench vault: cairn has no vault command (%s: %s)"
                  % (args.cairn, h.stderr.decode(errors="replace").strip()), file=sys.stderr)
            return 2
        notes = sum(f.endswith(".md") for _, _, fs in os.walk(args.vault) for f in fs)
        vbytes = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(args.vault)
                     for f in fs if f.endswith(".md"))
        plain = os.path.join(tmp, "plain.db")
        hist = os.path.join(tmp, "history.jsonl")
        subprocess.run([sys.executable, os.path.join(HERE, "gen_data.py"), "ingest", hist,
                        "--sessions", str(args.sessions), "--messages", str(args.messages)],
                       check=True, stdout=subprocess.DEVNULL)
        timed([args.cairn, "--db", plain, "add", "-q", hist], env)
        before = store_bytes(plain)

        adds = []
        for r in range(args.add_runs):
            vdb = os.path.join(tmp, "vault-%d.db" % r)
            copy_store(plain, vdb)
            adds.append(timed([args.cairn, "--db", vdb, "vault", "add", args.vault], env))
            if r:
                for s in ("", "-wal", "-shm"):
                    if os.path.exists(last + s):
                        os.remove(last + s)
            last = vdb
        after = store_bytes(last)
        reidx = [timed([args.cairn, "--db", last, "vault", "reindex"], env)
              for _ in range(args.reindex_runs)]
        print("bench vault.add notes=%d md_bytes=%d runs=%d p50_ms=%.1f min_ms=%.1f"
              " store_bytes_before=%d store_bytes_after=%d"
              % (notes, vbytes, len(adds), statistics.median(adds), min(adds), before, after))
        print("bench vault.reindex_unchanged runs=%d p50_ms=%.1f p95_ms=%.1f"
              % (len(reidx), statistics.median(reidx), q95(reidx)))
        sys.stdout.flush()

        qfile = os.path.join(tmp, "prompts.txt")
        with open(qfile, "w", encoding="utf-8") as f:
            f.write("\n".join(prompts(args)) + "\n")
        hook = subprocess.run([sys.executable, os.path.join(HERE, "bench_hook.py"), args.cairn,
                               plain, qfile, "--runs", str(args.runs),
                               "--variant", "vault:CAIRN_DB=" + last,
                               "--variant", "novault:CAIRN_DB=" + plain]
                              + (["--variant", "vault0:BIN=%s,CAIRN_DB=%s" % (args.baseline, last),
                                  "--variant", "novault0:BIN=%s,CAIRN_DB=%s" % (args.baseline, plain)]
                                 if args.baseline else []),
                              env=env, stdout=subprocess.PIPE)
        sys.stdout.write(hook.stdout.decode())
        print("# vault add of %d notes (%.1f MB): %.0f ms (median of %d); re-index with nothing"
              " changed: %.0f ms; store %.1f -> %.1f MB"
              % (notes, vbytes / 1e6, statistics.median(adds), len(adds), statistics.median(reidx),
                 before / 1e6, after / 1e6))
        return hook.returncode
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
