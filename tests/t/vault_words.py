"""vault_words.py: the made-up words the vault gate tests (t0559, t0561,
t0564, t0565, t0566) build their pages from: everyday words that many pages hold,
so they weigh little, and padding that carries no topic. One list, so the
tests' pages stay alike and a change to the words is made once."""
EVERYDAY = "harbor lantern weather copper meadow river stone candle".split()
PAD = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike".split()


def filler(rng, n):
    """n words of padding, as one string."""
    return " ".join(rng.choice(PAD) for _ in range(n))


def filler_pages(root, rng, n=30, extra=None):
    """n pages of padding and four everyday words each (page00.md ...):
    each everyday word in about half of them, too common for the gate.
    extra: {word: k}, the word added to the first k pages."""
    for i in range(n):
        words = [rng.choice(PAD) for _ in range(60)] + rng.sample(EVERYDAY, 4)
        words += [w for w, k in (extra or {}).items() if i < k]
        rng.shuffle(words)
        with open(f"{root}/page{i:02d}.md", "w") as f:
            f.write(f"# Page {i}\n\n{' '.join(words)}\n")


def write_page(root, name, title, *sections):
    """root/name: "# title", then each section's words (a list), alone
    under the title, or under "## Part 0", "## Part 1"... when several."""
    with open(f"{root}/{name}", "w") as f:
        if len(sections) == 1:
            f.write(f"# {title}\n\n{' '.join(sections[0])}\n")
            return
        f.write(f"# {title}\n\n")
        for i, words in enumerate(sections):
            f.write(f"## Part {i}\n\n{' '.join(words)}\n\n")


def spaced_page(root, rng, name, title, words):
    """root/name: "# title", then words, each after ten words of padding
    (and ten after the last): one section, its words apart."""
    text = " ".join(filler(rng, 10) + " " + w for w in words)
    with open(f"{root}/{name}", "w") as f:
        f.write(f"# {title}\n\n{text} {filler(rng, 10)}\n")
