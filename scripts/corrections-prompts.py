#!/usr/bin/env python3
"""corrections-prompts.py: the user prompts of ../shared/data that the
correction recogniser is measured on (scripts/corrections-eval.sh), each with
a reference that names it without quoting it: FILE#ID, FILE relative to the
data folder. Prints one JSON object a line: {"ref": ..., "text": ...}.

Sources: devmem-dev (aider sessions: message ids), beam-100k-dev (chat
message ids), the Claude Code transcripts (record uuids) and madial-dev/zh
(dialogue id:turn). The text is third-party and is never written to the
repository: the labels (tests/data/corrections-labels.tsv) hold references.
"""
import glob, json, os, sys

def devmem(root):
    for f in sorted(glob.glob(os.path.join(root, "devmem-dev/*/sessions.jsonl"))):
        rel = os.path.relpath(f, root)
        for line in open(f, encoding="utf-8"):
            s = json.loads(line)
            for m in s["messages"]:
                if m["role"] == "user":
                    yield rel + "#" + m["id"], m["content"]

def beam(root):
    for f in sorted(glob.glob(os.path.join(root, "beam-100k-dev/*/chat.json"))):
        rel = os.path.relpath(f, root)
        for batch in json.load(open(f, encoding="utf-8")):
            for turn in batch["turns"]:
                for m in turn:
                    if m.get("role") == "user":
                        yield rel + "#" + str(m["id"]), m["content"]

def claude_code(root):
    for f in sorted(glob.glob(os.path.join(root, "transcripts/claude-code*/**/*.jsonl"), recursive=True)):
        rel = os.path.relpath(f, root)
        for line in open(f, encoding="utf-8", errors="replace"):
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if not isinstance(r, dict) or r.get("type") != "user" or "uuid" not in r:
                continue
            msg = r.get("message")
            c = msg.get("content") if isinstance(msg, dict) else None
            if isinstance(c, list):
                c = "\n".join(p.get("text", "") for p in c if isinstance(p, dict) and p.get("type") == "text")
            if isinstance(c, str) and c.strip():
                yield rel + "#" + r["uuid"], c

def madial(root):
    for f in sorted(glob.glob(os.path.join(root, "madial-dev/zh/*dialog*"))):
        rel = os.path.relpath(f, root)
        for line in open(f, encoding="utf-8"):
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if "dialogue" not in d:
                continue
            for i, t in enumerate(d["dialogue"]):
                # '<Name>:"text"': the user is whoever is not <Assistant>
                if not isinstance(t, str) or not t.startswith("<") or ">:" not in t:
                    continue
                if t.startswith("<Assistant>"):
                    continue
                text = t.split(">:", 1)[1].strip().strip('"')
                yield "%s#%s:%d" % (rel, d.get("id"), i), text

def prompts(root):
    for src in (devmem, beam, claude_code, madial):
        seen = set()
        for ref, text in src(root):
            if ref not in seen:
                seen.add(ref)
                yield ref, text

if __name__ == "__main__":
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../../shared/data")
    for ref, text in prompts(root):
        print(json.dumps({"ref": ref, "text": text}, ensure_ascii=False))
