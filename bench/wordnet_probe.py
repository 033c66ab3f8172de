#!/usr/bin/env python3
"""wordnet_probe.py: does a WordNet hyponym/part bridge mark LoCoMo's missed
evidence turns more often than the turns cairn packs instead?
(issue 16, branch rank32; measured before building anything)

A question's generic nouns ("activities", "pets", "meat", "France") can
match a turn's words that are their hyponyms or parts (swimming, a dog,
chicken, Paris). WordNet 3.0 (Debian's wordnet-base, /usr/share/wordnet,
plain text, read directly: no Python WordNet module) gives the links.

For each question: its content words (no stop word, not a speaker's name)
that are WordNet nouns (base form by noun.exc and the usual plural rules),
each of their noun senses (the first SENSES, WordNet orders them by
frequency) unless the sense is one of the very general synsets below, then
the closure of the senses down the hyponym (~, ~i) and part-meronym (%p)
links to DEPTH steps. The closure's lemmas, less the question's own words,
are the bridge words: a turn is "marked" when it holds one (a single word,
or a two- or three-word lemma as consecutive words).

Counted per category at one budget, from `cairn eval locomo FILE --budgets
B --method cairn --explain --out RUN.jsonl` (its `retrieved` and `missed`
ids): the evidence turns missed, the evidence turns found, the packed turns
that are no evidence, every turn of the person the question names, and
that person's turns neither packed nor evidence (what a bridge would lift
together with the missed evidence). The rate that matters is missed
evidence marked against packed non-evidence marked.

LANE=C1,C2,... (environment) also simulates the crudest use, per question
at that budget: the marked turns not packed (the named person's when the
question names one), rarest bridge word first (its count of turns, then
the turn's id), the first C of them put in the pack in place of the C
packed turns ranked lowest (a turn for a turn: lengths are ignored, so it
is a bound on what a lane could move, not a forecast), and the questions
whose "all evidence" changes are counted, better / worse, per category.

usage: wordnet_probe.py DATA.json RUN.jsonl BUDGET [DEPTH,SENSES ...]
       (default 1,1 2,1 3,1 4,1 6,1 2,3 4,3 6,99)
WORDNET=/usr/share/wordnet by default. RARE=F (environment): a bridge word
held by more than the fraction F of the conversation's turns is dropped
("game", "go", "make" match through a sense nobody meant).
"""
import collections
import json
import os
import re
import sys

sys.dont_write_bytecode = True   # no bench/__pycache__ left in the tree
import softmatch_probe   # noqa: E402 (bench/, beside this script)

# softmatch_probe's stop words (rank29), and the generic nouns that are no
# topic ("what kind of", "things"): bridging from them marks everything.
STOP = softmatch_probe.STOP | set("""kind kinds type types sort sorts way ways thing
things""".split())
# Senses too general to bridge from: everything is one of them.
GENERAL = set("""entity physical_entity abstraction abstract_entity object physical_object
thing whole unit matter substance psychological_feature event act deed human_action
human_activity group grouping attribute relation measure quantity amount
communication location cognition knowledge state content mental_object
part portion piece causal_agent cause person individual someone somebody
mortal soul artifact artefact""".split())
TOK = re.compile(r"[a-z]+(?:'[a-z]+)?")


class WordNet:
    def __init__(self, root):
        self.index = {}          # lemma -> [synset offsets], by frequency
        self.syn = {}            # offset -> (lemmas, [(symbol, offset)])
        for line in open(os.path.join(root, 'index.noun'), encoding='latin-1'):
            if line.startswith(' '):
                continue
            f = line.split()
            n_ptr = int(f[3])
            n_sense = int(f[2])
            self.index[f[0]] = f[6 + n_ptr:6 + n_ptr + n_sense]
        for line in open(os.path.join(root, 'data.noun'), encoding='latin-1'):
            if line.startswith(' '):
                continue
            f = line.split('|')[0].split()
            w_cnt = int(f[3], 16)
            lemmas = [f[4 + 2 * i].lower() for i in range(w_cnt)]
            lemmas = [re.sub(r'\(.*\)$', '', x) for x in lemmas]
            k = 4 + 2 * w_cnt
            p_cnt = int(f[k])
            ptrs = []
            for i in range(p_cnt):
                sym, off, pos = f[k + 1 + 4 * i], f[k + 2 + 4 * i], f[k + 3 + 4 * i]
                if pos == 'n' and sym in ('~', '~i', '%p'):
                    ptrs.append(off)
            self.syn[f[0]] = (lemmas, ptrs)
        self.exc = {}
        for line in open(os.path.join(root, 'noun.exc'), encoding='latin-1'):
            f = line.split()
            if len(f) >= 2:
                self.exc.setdefault(f[0], f[1])

    def base(self, w):
        """The noun lemma of a word, or None."""
        if w in self.exc:
            return self.exc[w]
        if w in self.index:
            return w
        for suf, rep in (('ies', 'y'), ('ses', 's'), ('xes', 'x'), ('ches', 'ch'),
                         ('shes', 'sh'), ('men', 'man'), ('s', '')):
            if w.endswith(suf) and w[:-len(suf)] + rep in self.index:
                return w[:-len(suf)] + rep
        return None

    def closure(self, lemma, depth, senses):
        out = set()
        for off in self.index.get(lemma, [])[:senses]:
            if any(x in GENERAL for x in self.syn[off][0]):
                continue
            seen = {off}
            frontier = [off]
            for _ in range(depth):
                nxt = []
                for o in frontier:
                    for p in self.syn[o][1]:
                        if p not in seen:
                            seen.add(p)
                            nxt.append(p)
                frontier = nxt
            seen.discard(off)
            for o in seen:
                out.update(self.syn[o][0])
        return out


def turn_grams(text, wn):
    """The lemmas a turn holds: words in base form, and 2-3 word runs."""
    ws = TOK.findall(text.lower())
    out = set()
    for w in ws:
        out.add(w)
        b = wn.base(w)
        if b:
            out.add(b)
    for n in (2, 3):
        for i in range(len(ws) - n + 1):
            run = ws[i:i + n]
            out.add('_'.join(run))
            b = wn.base(run[-1])
            if b:
                out.add('_'.join(run[:-1] + [b]))
    return out


def main():
    if len(sys.argv) < 4:
        sys.exit(next(p for p in __doc__.split('\n\n') if p.startswith('usage:')))
    data = json.load(open(sys.argv[1]))
    rows = [json.loads(line) for line in open(sys.argv[2])]
    budget = sys.argv[3]
    settings = [tuple(int(x) for x in s.split(',')) for s in sys.argv[4:]] or \
        [(1, 1), (2, 1), (3, 1), (4, 1), (6, 1), (2, 3), (4, 3), (6, 99)]
    wn = WordNet(os.environ.get('WORDNET', '/usr/share/wordnet'))

    convs = {}
    for c in data:
        conv = c['conversation']
        names = {conv['speaker_a'].lower(), conv['speaker_b'].lower()}
        turns = {}
        for k, v in conv.items():
            if re.fullmatch(r'session_\d+', k):
                for t in v:
                    txt = t.get('text', '') + ' ' + (t.get('blip_caption') or '')
                    turns[t['dia_id']] = (t['speaker'].lower(), turn_grams(txt, wn))
        df = collections.Counter(g for _, gs in turns.values() for g in gs)
        convs[c['sample_id']] = (names, turns, df)
    rare = float(os.environ.get('RARE', '1'))
    print('RARE=%g' % rare)

    lanes = [int(x) for x in os.environ.get('LANE', '').split(',') if x]
    for depth, senses in settings:
        lane = {c: collections.defaultdict(lambda: [0, 0]) for c in lanes}
        # per category: [marked, n] for each class of turn
        tab = collections.defaultdict(lambda: collections.defaultdict(lambda: [0, 0]))
        sizes = []
        for r in rows:
            names, turns, df = convs[r['conversation']]
            x = r['runs']['cairn'][budget]
            packed, missed = set(x['retrieved']), set(x['missed'])
            qw = [w for w in TOK.findall(r['question'].lower()) if w not in STOP]
            person = {n for n in names if n in qw or n + "'s" in qw}
            qw = [w.split("'")[0] for w in qw]
            qw = [w for w in qw if w not in names and len(w) > 2]
            own = set(qw) | {wn.base(w) for w in qw if wn.base(w)}
            bridge = set()
            for w in qw:
                b = wn.base(w)
                if b:
                    bridge |= wn.closure(b, depth, senses)
            bridge -= own
            bridge = {b for b in bridge if df[b] <= rare * len(turns)}
            sizes.append(len(bridge))
            cat = r['category'] + (' (apart)' if r.get('apart') else '')
            ev = set(e for e in r['evidence'] if e in turns)

            def add(cls, tid):
                cell = tab[cat][cls]
                cell[1] += 1
                cell[0] += bool(bridge & turns[tid][1])
            for e in ev:
                add('missed ev' if e in missed else 'found ev', e)
            for p in packed:
                if p not in ev and p in turns:
                    add('packed non-ev', p)
            for tid, (spk, _) in turns.items():
                if spk in person:
                    add('person all', tid)
                    if tid not in ev and tid not in packed:
                        add('person other', tid)
            if lanes:
                cand = sorted((min(df[b] for b in bridge & g), tid)
                              for tid, (spk, g) in turns.items()
                              if tid not in packed and (not person or spk in person)
                              and bridge & g)
                order = [t for _, t in sorted(zip(x['unit_ranks'], x['retrieved']))]
                before = ev <= packed
                for c in lanes:
                    ins = [t for _, t in cand[:c]]
                    kept = set(order[:len(order) - len(ins)]) if ins else set(order)
                    after = ev <= (kept | set(ins))
                    if after != before:
                        lane[c][cat][0 if after else 1] += 1
        sizes.sort()
        print('\ndepth %d, senses %d: bridge words per question median %d, 90th pct %d, max %d'
              % (depth, senses, sizes[len(sizes) // 2], sizes[int(len(sizes) * .9)], sizes[-1]))
        classes = ['missed ev', 'found ev', 'packed non-ev', 'person all', 'person other']
        print('| category | ' + ' | '.join(classes) + ' | missed / packed non-ev |')
        tot = collections.defaultdict(lambda: [0, 0])
        for cat in sorted(tab):
            cells = []
            for c in classes:
                m, n = tab[cat][c]
                tot[c][0] += m
                tot[c][1] += n
                cells.append('%d/%d %.1f%%' % (m, n, 100.0 * m / n if n else 0))
            a, b = tab[cat]['missed ev'], tab[cat]['packed non-ev']
            lift = (a[0] / a[1]) / (b[0] / b[1]) if a[1] and b[0] else float('nan')
            print('| %s | ' % cat + ' | '.join(cells) + ' | %.2f |' % lift)
        a, b = tot['missed ev'], tot['packed non-ev']
        lift = (a[0] / a[1]) / (b[0] / b[1]) if a[1] and b[0] else float('nan')
        print('| all | ' + ' | '.join('%d/%d %.1f%%' % (tot[c][0], tot[c][1],
                                                        100.0 * tot[c][0] / tot[c][1] if tot[c][1] else 0)
                                       for c in classes) + ' | %.2f |' % lift)
        for c in lanes:
            cells = ', '.join('%s +%d/-%d' % (cat.split(' ')[1], b, w)
                              for cat, (b, w) in sorted(lane[c].items()))
            b = sum(v[0] for v in lane[c].values())
            w = sum(v[1] for v in lane[c].values())
            print('lane %d: questions +%d/-%d (%s)' % (c, b, w, cells or 'none'))


if __name__ == '__main__':
    main()
