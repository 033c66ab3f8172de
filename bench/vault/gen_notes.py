#!/usr/bin/env python3
"""gen_notes.py: a synthetic Obsidian-like vault for the vault benchmarks.

  gen_notes.py OUT [--notes 1000] [--seed S]

Writes OUT/ (a new or empty folder): NOTES Markdown notes shaped like a
personal vault, for latency, not for quality (bench/bench_vault.py; the
quality figures come from the real-text dev vault, scripts/vault-dev.sh):

- folders as people keep them: daily/ (titled by date), projects/,
  meetings/, areas/, people/, reference/, inbox/;
- YAML frontmatter on most notes (title, tags, aliases, created), none on
  some, as in real vaults;
- headings, bullet and task lists, wiki links to other notes ([[Page]],
  [[Page|alias]], [[Page#Heading]]), fenced code blocks, a table now and
  then, a few Chinese notes;
- sizes like a real vault: mostly 1-10 KB (lognormal, median about 3 KB),
  about 2% large (50-400 KB: pasted logs, long meeting notes);
- what a vault holds beside notes: .obsidian/ settings (JSON) and a few
  binary attachments, which an indexer must skip.

The prose comes from bench/gen_data.py's generator (Zipf-weighted words
with a long tail of rare identifiers), so notes cost what real text costs
to index. Deterministic: the same seed gives the same bytes. Python 3
standard library only; nothing is written into the repository.
"""
import argparse
import datetime
import json
import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gen_data import COMMON_WORDS, TECH_WORDS, TextGen  # noqa: E402

FOLDERS = [("daily", 0.28), ("projects", 0.18), ("meetings", 0.15), ("areas", 0.08),
           ("people", 0.07), ("reference", 0.17), ("inbox", 0.07)]
FIRST = """Alice Bruno Chen Dana Emeka Farah Goran Hana Ines Jonas Kenji Lena
Mateo Nadia Omar Priya Quinn Rosa Sven Tomas Uma Viktor Wen Yara Zoe""".split()
LAST = """Almeida Berg Costa Dubois Eriksen Fischer Garcia Haddad Ito Jansen
Kowalski Larsen Moreau Novak Okafor Petrov Quispe Rossi Sato Tanaka""".split()
# Distinctive names: the kind of word that can name a page alone.
NAMES = """Orbstack Tailscale Nostr Syncthing Grafana Caddy Restic Borg Zigbee
Matrix Forgejo Meilisearch Litestream Traefik Mosquitto Jellyfin Paperless
Immich Authelia Vaultwarden Wireguard Headscale Mastodon Miniflux Gitea""".split()


def title_for(rng, folder, i, day0):
    if folder == "daily":
        return (day0 + datetime.timedelta(days=i)).isoformat()
    if folder == "people":
        return "%s %s" % (rng.choice(FIRST), rng.choice(LAST))
    if folder == "meetings":
        return "%s %s sync" % ((day0 + datetime.timedelta(days=rng.randrange(700))).isoformat(),
                               rng.choice(COMMON_WORDS + NAMES))
    w = rng.choice(NAMES + TECH_WORDS) if rng.random() < 0.5 else rng.choice(COMMON_WORDS)
    tail = rng.choice(["notes", "plan", "migration", "setup", "design", "ideas", "checklist",
                       "howto", "log", "research", "decision", "retro", "budget", "benchmarks"])
    return "%s %s" % (w.capitalize(), tail)


def target_size(rng):
    """Bytes for one note: lognormal around 3 KB, about 2% large."""
    if rng.random() < 0.02:
        return rng.randint(50_000, 400_000)
    return int(min(40_000, max(300, rng.lognormvariate(math.log(3000), 0.75))))


def link(rng, titles):
    t = rng.choice(titles)
    k = rng.random()
    if k < 0.2:
        return "[[%s|%s]]" % (t, rng.choice(COMMON_WORDS))
    if k < 0.3:
        return "[[%s#%s]]" % (t, rng.choice(COMMON_WORDS).capitalize())
    return "[[%s]]" % t


def note(rng, gen, title, titles, folder, size, zh):
    out = []
    if rng.random() < 0.8:
        tags = sorted(set(rng.choices(COMMON_WORDS + TECH_WORDS, k=rng.randint(1, 4))))
        fm = ["---", "title: %s" % json.dumps(title, ensure_ascii=False),
              "tags: [%s]" % ", ".join(tags)]
        if rng.random() < 0.35:
            fm.append("aliases: [%s]" % ", ".join(
                json.dumps(rng.choice(NAMES + COMMON_WORDS).capitalize() + " " + rng.choice(COMMON_WORDS))
                for _ in range(rng.randint(1, 2))))
        fm.append("created: %s" % (datetime.date(2024, 1, 1)
                                   + datetime.timedelta(days=rng.randrange(700))).isoformat())
        fm.append("---")
        out.append("\n".join(fm))
    out.append("# %s" % title)
    heading = True
    while sum(len(p.encode()) + 2 for p in out) < size:
        k = rng.random()
        if not heading and k < 0.25:
            heading = True
            out.append("%s %s" % ("#" * rng.choice([2, 2, 2, 3]),
                                  " ".join(rng.choices(COMMON_WORDS + TECH_WORDS, k=rng.randint(1, 4))).capitalize()))
            continue
        heading = False
        if k < 0.45:
            items = []
            for _ in range(rng.randint(2, 7)):
                box = rng.choice(["", "", "[ ] ", "[x] "]) if folder in ("daily", "projects", "meetings") else ""
                text = gen.prose(rng.randint(4, 16), zh).replace("\n\n", " ")
                if rng.random() < 0.4:
                    text += " " + link(rng, titles)
                items.append("- %s%s" % (box, text))
            out.append("\n".join(items))
        elif k < 0.53:
            out.append(gen.code(rng.randint(3, 25)))
        elif k < 0.56:
            cols = rng.sample(COMMON_WORDS, 3)
            rows = ["| %s |" % " | ".join(cols), "|---|---|---|"]
            for _ in range(rng.randint(2, 8)):
                rows.append("| %s | %d | %s |" % (rng.choice(TECH_WORDS), rng.randint(0, 9999),
                                                  rng.choice(COMMON_WORDS)))
            out.append("\n".join(rows))
        else:
            p = gen.prose(rng.randint(30, 180), zh)
            if rng.random() < 0.5:
                p += " See " + link(rng, titles) + "."
            out.append(p)
    return "\n\n".join(out) + "\n"


def main():
    a = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    a.add_argument("out")
    a.add_argument("--notes", type=int, default=1000)
    a.add_argument("--seed", type=int, default=20261202)
    args = a.parse_args()
    if os.path.isdir(args.out) and os.listdir(args.out):
        sys.exit("gen_notes: %s exists and is not empty" % args.out)
    rng = random.Random(args.seed)
    gen = TextGen(random.Random(args.seed + 1))
    day0 = datetime.date(2024, 1, 1)
    counts = {}
    plan = []
    for i in range(args.notes):
        folder = rng.choices([f for f, _ in FOLDERS], weights=[w for _, w in FOLDERS])[0]
        counts[folder] = counts.get(folder, 0) + 1
        plan.append(folder)
    titles, seen = [], set()
    for folder in plan:
        t = title_for(rng, folder, counts[folder] - 1, day0)
        counts[folder] -= 1
        base, k = t, 2
        while t.lower() in seen:
            t = "%s %d" % (base, k)
            k += 1
        seen.add(t.lower())
        titles.append(t)
    sizes = []
    for folder, title in zip(plan, titles):
        zh = rng.random() < 0.03
        text = note(rng, gen, title, titles, folder, target_size(rng), zh)
        path = os.path.join(args.out, folder, title + ".md")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        sizes.append(len(text.encode()))
    # What else a vault holds: settings and attachments (not Markdown).
    os.makedirs(os.path.join(args.out, ".obsidian"), exist_ok=True)
    with open(os.path.join(args.out, ".obsidian", "app.json"), "w") as f:
        json.dump({"attachmentFolderPath": "attachments", "alwaysUpdateLinks": True}, f)
    with open(os.path.join(args.out, ".obsidian", "workspace.json"), "w") as f:
        json.dump({"lastOpenFiles": [p + "/" + t + ".md" for p, t in zip(plan[:20], titles[:20])]}, f)
    os.makedirs(os.path.join(args.out, "attachments"), exist_ok=True)
    for i in range(8):
        with open(os.path.join(args.out, "attachments", "image-%d.png" % i), "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n" + bytes(rng.getrandbits(8) for _ in range(rng.randint(2000, 60000))))
    sizes.sort()
    q = lambda p: sizes[min(len(sizes) - 1, int(p * len(sizes)))]
    print("gen_notes: %s: %d notes, %d bytes; note bytes p50 %d, p90 %d, max %d; %d over 50 KB"
          % (args.out, len(sizes), sum(sizes), q(0.5), q(0.9), sizes[-1],
             sum(s > 50_000 for s in sizes)))


if __name__ == "__main__":
    main()
