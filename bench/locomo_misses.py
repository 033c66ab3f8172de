#!/usr/bin/env python3
"""Why each LoCoMo evidence turn missed at one budget is out of the pack.

usage: locomo_misses.py LOCOMO.json RUN.jsonl BUDGET

RUN.jsonl is `cairn eval locomo LOCOMO.json --budgets BUDGET --method cairn
--explain --out RUN.jsonl` (not --lean: it needs `retrieved` and
`unit_ranks`). The explain recall ranks with a budget of 1,000,000 tokens,
so the passes gated on the budget (DENSE_PRF_MIN, LEN_DIALOG_MIN_BUDGET,
ENT_MIN in src/recall/policy.h) run there and not at 1k or 2k: for exact
ranks below 4k, run a throwaway build with those three raised past
1,000,000 (its packs at BUDGET are the shipped ones below all three gates;
the script checks that every packed evidence turn's explain rank is its
packed unit rank, and says how many disagree). docs/ARCHITECTURE.md,
"LoCoMo at 2k", has the figures this printed for issue 16.

Between people a unit is one turn, so the pack is the ranking cut where the
budget runs out. Each missed turn is classed by its unit's rank against the
first rank not packed (the cut): a rank under the last packed one is a turn
skipped for want of room as the budget ran out (a shorter one after it
fit); then 1-10 and 11-30 places past the cut, up to 100, past 100, and
unmatched (no word, no dense hit). A question is classed by its worst
missed turn. Also: whether another turn of the missed turn's session was
packed, or a turn within 2 of it (the windows' span), its rank among its
session's units, and the question's evidence count against the turns the
budget held.
"""
import collections
import json
import re
import statistics
import sys


def sess(d):
    return d.split(':')[0]


def pos(d):
    return int(d.split(':')[1])


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.split('\n\n')[1])
    data, run, budget = sys.argv[1], sys.argv[2], sys.argv[3]
    sessions = {}                      # (conversation, dia_id) -> session key
    for c in json.load(open(data)):
        for k, v in c['conversation'].items():
            if re.fullmatch(r'session_\d+', k):
                for t in v:
                    sessions[(c['sample_id'], t['dia_id'])] = k
    rows = [json.loads(line) for line in open(run)]
    agree = disagree = 0
    turns = collections.defaultdict(collections.Counter)
    questions = collections.defaultdict(collections.Counter)
    held_sess = held_near = 0
    in_sess = collections.Counter()
    held, missed_q = [], []
    for r in rows:
        x = r['runs']['cairn'][budget]
        ranks = r['ranks']['cairn']
        packed = dict(zip(x['retrieved'], x['unit_ranks']))
        for e, k in zip(r['evidence'], ranks):
            if e in packed and k:
                if packed[e] + 1 == k['rank']:
                    agree += 1
                else:
                    disagree += 1
        held.append(len(x['retrieved']))
        if x['all']:
            continue
        missed_q.append(r)
        got = set(u + 1 for u in x['unit_ranks'])   # 1-based, as explain's
        cut = 1
        while cut in got:
            cut += 1
        last = max(got) if got else 0
        worst = ''
        for e, k in zip(r['evidence'], ranks):
            if e not in x['missed']:
                continue
            if not k:
                c = '6 unmatched'
            elif k['rank'] < last:
                c = '1 skipped as the budget ran out'
            elif k['rank'] <= cut + 10:
                c = '2 1-10 past the cut'
            elif k['rank'] <= cut + 30:
                c = '3 11-30 past the cut'
            elif k['rank'] <= 100:
                c = '4 rank 31-100'
            else:
                c = '5 rank past 100'
            turns[r['category']][c] += 1
            worst = max(worst, c)
            same = [p for p in x['retrieved'] if sess(p) == sess(e)]
            held_sess += bool(same)
            held_near += any(abs(pos(p) - pos(e)) <= 2 for p in same)
            if k:
                i = k['in_session']
                in_sess['1' if i == 1 else '2-3' if i <= 3 else '4-10' if i <= 10 else '>10'] += 1
        questions[r['category']][worst] += 1
    print('budget %s: %d questions, %d miss evidence; packed evidence ranks: %d agree, '
          '%d disagree with the explain ranking' % (budget, len(rows), len(missed_q), agree, disagree))
    print('turns packed: median %g (min %d)' % (statistics.median(held), min(held)))
    for name, table in (('missed turns', turns), ('questions, by their worst missed turn', questions)):
        print('\n' + name)
        classes = sorted(set(c for t in table.values() for c in t))
        print('| category | ' + ' | '.join(c[2:] for c in classes) + ' |')
        for cat in sorted(table):
            print('| %s | ' % cat + ' | '.join(str(table[cat][c]) for c in classes) + ' |')
        print('| all | ' + ' | '.join(str(sum(t[c] for t in table.values())) for c in classes) + ' |')
    n = sum(sum(t.values()) for t in turns.values())
    print('\nof %d missed turns: another turn of the session packed %d, a turn within 2 packed %d'
          % (n, held_sess, held_near))
    print('their rank within their session: %s' % dict(sorted(in_sess.items())))
    ev = [len(r['evidence']) for r in missed_q]
    if ev:
        print('missed questions: evidence turns median %g, max %d; more evidence turns than '
              'the budget held: %d' % (statistics.median(ev), max(ev),
                                       sum(1 for r in missed_q if len(r['evidence']) >
                                           len(r['runs']['cairn'][budget]['retrieved']))))


if __name__ == '__main__':
    main()
