#!/usr/bin/env python3
"""bench_pretool.py: what the corrections cost the hooks, per call.

Times whole processes, taking turns call by call in the same run:
  pretool        `cairn hook pre-tool` on a store holding N corrections
                 (commands, globs, keywords; half of them global), for Bash
                 commands and file edits, half of which a correction applies to
                 (then it answers and counts through a second, writable handle);
                 pretool_answered and pretool_silent split its runs
  pretool_off    the same process with CAIRN_PRETOOL=0: spawn, read stdin, exit
  true           /bin/true fed the same stdin
  prompt_recog   `cairn hook prompt` with a correction-shaped prompt (keeps a
                 candidate), and prompt_plain with an ordinary one, both with
                 CAIRN_INJECT=0 so that only the recogniser's part is timed;
                 prompt_plain_off: the ordinary one with CAIRN_RECOGNISE=0
Prints `bench pretool.* key=value` lines: medians and p90 in ms, and ratios.

usage: bench_pretool.py CAIRN [--runs N] [--corrections N]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def arg(name, default):
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def main():
    cairn = sys.argv[1]
    runs, ncorr = arg("--runs", 200), arg("--corrections", 50)
    home = tempfile.mkdtemp(prefix="cairn-pretool-bench.")
    store = os.path.join(home, "bench.db")
    env = dict(os.environ, CAIRN_DB=store, HOME=home, CAIRN_PROJECT="bench",
               CAIRN_EMBED_MODEL="none")
    for i in range(ncorr):
        kind = i % 3
        opt = (["--when-command", "tool%d push --force" % i] if kind == 0 else
               ["--when-path", "*.gen%d" % i] if kind == 1 else ["--when-keyword", "word%d" % i])
        subprocess.run([cairn, "remember", "--type", "correction", "--severity", "p%d" % (i % 3),
                        "--scope", "bench" if i % 2 else ""] + opt + ["correction number %d" % i],
                       env=env, check=True, stdout=subprocess.DEVNULL)
    calls = [{"tool_name": "Bash", "tool_input": {"command": "ls -la && git status"}},
             {"tool_name": "Bash", "tool_input": {"command": "tool0 push origin main --force"}},
             {"tool_name": "Edit", "tool_input": {"file_path": "/src/app/main.c"}},
             {"tool_name": "Write", "tool_input": {"file_path": "/src/app/out.gen1", "content": "x"}}]
    prompts = ["no, never run tool3 push --force here", "how do I list the files in this folder?"]
    t = {k: [] for k in ("pretool", "pretool_off", "true", "prompt_recog", "prompt_plain",
                         "pretool_answered", "pretool_silent", "prompt_plain_off")}
    answered = 0

    def run(key, cmd, inp, extra=None):
        a = time.perf_counter()
        out = subprocess.run(cmd, input=inp, env=dict(env, **(extra or {})),
                             stdout=subprocess.PIPE).stdout
        t[key].append((time.perf_counter() - a) * 1e3)
        return out

    for i in range(runs):
        c = dict(calls[i % len(calls)], session_id="b", cwd=home, hook_event_name="PreToolUse")
        inp = json.dumps(c).encode()
        said = bool(run("pretool", [cairn, "hook", "pre-tool"], inp).strip())
        answered += said
        t["pretool_answered" if said else "pretool_silent"].append(t["pretool"][-1])
        run("pretool_off", [cairn, "hook", "pre-tool"], inp, {"CAIRN_PRETOOL": "0"})
        run("true", ["/bin/true"], inp)
        for key, p in (("prompt_recog", prompts[0]), ("prompt_plain", prompts[1])):
            inp = json.dumps({"session_id": "b", "prompt": p, "cwd": home,
                              "hook_event_name": "UserPromptSubmit"}).encode()
            run(key, [cairn, "hook", "prompt"], inp, {"CAIRN_INJECT": "0"})
        run("prompt_plain_off", [cairn, "hook", "prompt"], inp,
            {"CAIRN_INJECT": "0", "CAIRN_RECOGNISE": "0"})

    def q(v, f):
        return sorted(v)[int(f * (len(v) - 1))]

    med = {k: statistics.median(v) for k, v in t.items()}
    for k, v in t.items():
        print("bench pretool.%s runs=%d median_ms=%.2f p90_ms=%.2f" % (k, len(v), med[k], q(v, 0.9)))
    print("bench pretool.summary corrections=%d answered=%d/%d pretool_over_off=%.2f "
          "pretool_minus_off_ms=%.2f recog_over_plain=%.2f" % (
              ncorr, answered, runs, med["pretool"] / med["pretool_off"],
              med["pretool"] - med["pretool_off"], med["prompt_recog"] / med["prompt_plain"]))


main()
