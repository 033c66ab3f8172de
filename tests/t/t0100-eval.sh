#!/bin/sh
# t0100-eval: `cairn eval` on small fixtures in each dataset's exact shape
# (tests/data/eval/): loading and the documented repairs and counts, the
# metric, the outputs (Markdown, JSONL, SVG), `eval compare` with its sign
# test on a hand-made pair of runs, and the errors bad input must get.
. "$(dirname "$0")/lib.sh"
D="$ROOT/tests/data/eval"

# ---- LoCoMo: counts, repairs, photo captions, adversarial apart
out=$("$CAIRN" eval locomo "$D/locomo-mini.json" --budgets 1000 --out "$TMP/l.jsonl" \
      --md "$TMP/l.md" --svg "$TMP/l.svg" --quiet 2>"$TMP/err")
eq "locomo exit code" $? 0
contains "locomo counts" "$out" "2 conversations, 3 sessions, 9 messages; 8 questions in the files, 6 scored."
contains "locomo repaired and unresolved ids counted" "$out" "Evidence ids: 10 read, 1 repaired (malformed, mapped by the documented rule), 2 unresolved (dropped)"
contains "locomo questions with no evidence counted" "$out" "Questions left with no evidence: 2 (not scored)"
contains "locomo photo turns counted" "$out" "Photo turns indexed with their caption: 1."
contains "locomo all row excludes adversarial" "$out" "| cairn | **all** | 5 |"
contains "locomo adversarial reported apart" "$out" "| cairn | 5 adversarial (apart) | 1 |"
contains "locomo baseline in the same run" "$out" "| raw-bm25 | **all** | 5 |"
eq "--quiet keeps stderr empty" "$(cat "$TMP/err")" ""
eq "one JSONL line per scored question" "$(wc -l < "$TMP/l.jsonl")" 6
eq "--md holds the same report" "$(cat "$TMP/l.md")" "$out"
line=$(grep '"question_id":"conv-a/q1"' "$TMP/l.jsonl")
contains "malformed D:2:01 repaired to D2:1" "$line" '"evidence":["D2:1"]'
contains "now is the last session's date" "$line" '"now":"2023-06-20T10:05:00"'
line=$(grep '"question_id":"conv-a/q3"' "$TMP/l.jsonl")
contains "'D2:1; D2:3' split into two ids" "$line" '"evidence":["D2:1","D2:3"]'
line=$(grep '"question_id":"conv-a/q2"' "$TMP/l.jsonl")
contains "photo caption is searchable" "$line" '"cairn":{"1000":{"all":true'
line=$(grep '"question_id":"conv-a/q5"' "$TMP/l.jsonl")
contains "adversarial marked apart" "$line" '"apart":true'
contains "unresolvable 'D' dropped, D1:1 kept" "$line" '"evidence":["D1:1"]'
lacks "question with unresolvable evidence not scored" "$(cat "$TMP/l.jsonl")" '"conv-a/q4"'
lacks "question with empty evidence not scored" "$(cat "$TMP/l.jsonl")" '"conv-b/q1"'
for k in dataset conversation question_id category question evidence tokens excerpt_hits ms fraction retrieved unit_ranks; do
    contains "JSONL has $k" "$(head -1 "$TMP/l.jsonl")" "\"$k\""
done
# one rank per item retrieved, each a unit rank (0 = best)
check "unit_ranks: one per retrieved item" python3 -c '
import json, sys
for line in open(sys.argv[1]):
    for m in json.loads(line)["runs"].values():
        for r in m.values():
            assert len(r["unit_ranks"]) == len(r["retrieved"])
            assert all(isinstance(x, int) and x >= 0 for x in r["unit_ranks"])' "$TMP/l.jsonl"
# the SVG: self-contained, one polyline per method, axes and legend
svg=$(cat "$TMP/l.svg")
contains "svg root" "$svg" '<svg xmlns="http://www.w3.org/2000/svg"'
eq "svg has two polylines per method (all, strict)" "$(grep -c '<polyline' "$TMP/l.svg")" 4
contains "svg says which line is strict" "$svg" ">dashed: strict</text>"
contains "svg legend" "$svg" ">raw-bm25</text>"
lacks "svg has no script" "$svg" "<script"
lacks "svg loads nothing" "$svg" "href"

# the report names the ranking policy it ran and whether the data is a dev set
hash=$("$CAIRN" --version | sed -n 's/.*(ranking policy \([0-9a-f]\{16\}\))$/\1/p')
eq "--version prints the policy hash" "${#hash}" 16
contains "report prints the policy hash" "$out" "Ranking policy $hash"
contains "not marked a development set" "$out" "not marked as a development set"
out=$("$CAIRN" eval locomo "$D/locomo-mini.json" --budgets 1000 --dev --quiet)
contains "--dev: says so" "$out" "a **development set**"

# strict: a turn packed only as an excerpt is found ("all") but not whole
python3 -c '
import json, sys
long = " ".join("line %d of the long ledger about harbour cranes and the tide tables." % i
                for i in range(400))
d = [{"sample_id": "s", "conversation": {"speaker_a": "A", "speaker_b": "B",
      "session_1_date_time": "1:00 pm on 1 May, 2023",
      "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "The ferry to the island leaves at noon."},
                    {"speaker": "B", "dia_id": "D1:2", "text": "Kiwi is the parrot. " + long}]},
      "qa": [{"question": "When does the ferry leave?", "evidence": ["D1:1"], "category": 4},
             {"question": "What is the parrot called?", "evidence": ["D1:2"], "category": 4}]}]
json.dump(d, open(sys.argv[1], "w"))' "$TMP/strict.json"
out=$("$CAIRN" eval locomo "$TMP/strict.json" --budgets 500 --method cairn --out "$TMP/s.jsonl" --quiet)
line=$(grep '"question_id":"s/q1"' "$TMP/s.jsonl")
contains "an excerpt counts as found" "$line" '"all":true,"strict":false'
contains "and is counted as an excerpt hit" "$line" '"excerpt_hits":1'
line=$(grep '"question_id":"s/q0"' "$TMP/s.jsonl")
contains "a whole turn is strict" "$line" '"all":true,"strict":true'
contains "strict table" "$out" "### Strict: all their evidence packed whole"
contains "both in the all row" "$out" "| cairn | 500 | 100.0% | 50.0% |"
out=$("$CAIRN" eval compare "$TMP/s.jsonl" "$TMP/s.jsonl" --strict)
contains "compare --strict counts strict hits" "$out" "| **all** | 2 | 50.0% | 50.0% | 0 | 0 | 2 | 1 |"
out=$("$CAIRN" eval compare "$D/compare-a.jsonl" "$D/compare-b.jsonl" --strict 2>&1)
contains "compare --strict on a run without the field" "$out" 'no "strict" result'

# eval inject runs the prompt hook's own decision: a question the hook
# skips (a slash command) never fires, whatever recall would find
out=$("$CAIRN" eval inject locomo "$D/locomo-mini.json")
contains "inject: the policy hash" "$out" "Ranking policy $hash"
contains "inject fires on the plain questions" "$out" "| 5 | 20.0% | 0.0% | 100.0% | 100.0% | 100.0% |"
# --out: one line a question, whose decisions add up to the table's
out=$("$CAIRN" eval inject locomo "$D/locomo-mini.json" --out "$TMP/inject.jsonl")
contains "inject --out: the same table" "$out" "| 5 | 20.0% | 0.0% | 100.0% | 100.0% | 100.0% |"
sum=$(python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
fw = sum(r["with_fired"] for r in rows)
fo = sum(r["without_fired"] for r in rows)
ok = all(r["ev_found"] == r["n_ev"] for r in rows if r["with_fired"])
keys = all("with_match" in r and "with_cos_z" in r and "with_why" in r for r in rows)
print(len(rows), fw, fo, ok, keys)' "$TMP/inject.jsonl" 2>&1)
eq "inject --out: 5 questions, 1 fired with memory, all its evidence" "$sum" "5 1 0 True True"
out=$("$CAIRN" eval inject locomo "$D/locomo-mini.json" --out "$TMP/no/such/dir/x.jsonl" 2>&1)
check "inject --out to an unwritable path fails" [ $? -ne 0 ]
contains "inject --out: the error names the file" "$out" "cannot write $TMP/no/such/dir/x.jsonl"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for s in d:
    for q in s["qa"]:
        q["question"] = "/" + q["question"]
json.dump(d, open(sys.argv[2], "w"))' "$D/locomo-mini.json" "$TMP/slash.json"
out=$("$CAIRN" eval inject locomo "$TMP/slash.json")
contains "inject: slash commands are skipped, as by the hook" "$out" "| 5 | 0.0% | 0.0% |"

# methods side by side, budgets sorted, --lean, --limit
out=$("$CAIRN" eval locomo "$D/locomo-mini.json" --budgets 2000,500 --method keyword,no-time,cairn \
      --out "$TMP/l2.jsonl" --lean --limit 3 --quiet)
contains "budgets sorted" "$out" "| method | category | n | 500 | 2k |"
contains "keyword method" "$out" "| keyword | **all** |"
contains "no-time method" "$out" "| no-time | **all** |"
eq "--limit 3" "$(wc -l < "$TMP/l2.jsonl")" 3
lacks "--lean drops retrieved ids" "$(cat "$TMP/l2.jsonl")" '"retrieved"'
lacks "--lean drops unit_ranks" "$(cat "$TMP/l2.jsonl")" '"unit_ranks"'
lacks "--lean drops question text" "$(cat "$TMP/l2.jsonl")" '"question"'

# ---- BEAM: dict / nested / missing evidence, anchors on messages
out=$("$CAIRN" eval beam "$D/beam-mini/" --budgets 1000 --out "$TMP/b.jsonl" --quiet)
contains "beam counts" "$out" "1 conversations, 2 sessions, 8 messages; 5 questions in the files, 4 scored."
contains "beam unresolved id counted" "$out" "Evidence ids: 8 read, 0 repaired (malformed, mapped by the documented rule), 1 unresolved (dropped)"
contains "beam abstention without evidence counted" "$out" "1 of them abstention questions"
line=$(grep '"beam-mini/event_ordering/0"' "$TMP/b.jsonl")
contains "beam nested ids flattened" "$line" '"evidence":["1","4","5"]'
line=$(grep '"beam-mini/knowledge_update/0"' "$TMP/b.jsonl")
contains "beam dict evidence, duplicates merged" "$line" '"evidence":["6"]'
contains "beam now = last batch anchor" "$line" '"now":"2024-04-05T00:00:00"'

# ---- MADial: query before the first test-turn, unknown relevant id counted
out=$("$CAIRN" eval madial "$D/madial-memory.json" "$D/madial-dialogue.json" --budgets 1000 \
      --out "$TMP/m.jsonl" --quiet)
contains "madial counts" "$out" "3 sessions, 3 messages; 2 questions in the files, 2 scored."
contains "madial unresolved id" "$out" "1 unresolved (dropped)"
line=$(grep '"question_id":"2"' "$TMP/m.jsonl")
contains "madial query = user turns before the first test-turn" "$line" '"question":"Lisa: It is so hot today, I want ice cream.\nLisa: Something fruity, maybe mango."'
contains "madial now = latest memory" "$line" '"now":"2024-02-01T00:00:00"'

# ---- LongMemEval: has_answer, fallback, abstention apart, a miss
out=$("$CAIRN" eval longmemeval "$D/longmemeval-mini.json" --budgets 1000 --out "$TMP/x.jsonl" --quiet)
contains "lme counts" "$out" "4 conversations, 8 sessions, 16 messages; 4 questions in the files, 4 scored."
contains "lme fallback counted" "$out" "Answer sessions with no has_answer turn (all their user turns taken as evidence): 2, in 1 questions."
contains "lme missing answer session counted" "$out" "1 unresolved (dropped)"
contains "lme abstention apart" "$out" "| cairn | abstention (apart) | 1 |"
line=$(grep '"question_id":"q-one"' "$TMP/x.jsonl")
contains "lme evidence = has_answer turn" "$line" '"evidence":["answer_a1#0"]'
contains "lme now = question_date" "$line" '"now":"2023-05-30T10:00:00"'
line=$(grep '"question_id":"q-two"' "$TMP/x.jsonl")
contains "lme fallback = user turns" "$line" '"evidence":["answer_b1#0","answer_b2#0"]'
line=$(grep '"question_id":"q-four"' "$TMP/x.jsonl")
contains "a miss is a miss (no shared word)" "$line" '"raw-bm25":{"1000":{"all":false,"strict":false,"any":false,"fraction":0,'
contains "a miss lists what was missed" "$line" '"missed":["answer_d2#0"]'

# ---- compare: hand-made runs with known counts
out=$("$CAIRN" eval compare "$D/compare-a.jsonl" "$D/compare-b.jsonl" --budget 2000)
contains "compare pairs and reports unpaired" "$out" "19 questions paired, 1 only in A, 0 only in B."
contains "compare 9 better 1 worse: p = 0.021484375" "$out" "| x | 12 | 25.0% | 91.7% | 9 | 1 | 2 | 0.021484375 |"
contains "compare 5 better 0 worse: p = 0.0625" "$out" "| y | 6 | 0.0% | 83.3% | 5 | 0 | 1 | 0.0625 |"
contains "compare overall 14/1: p = 2*16/2^15" "$out" "| **all** | 18 | 16.7% | 88.9% | 14 | 1 | 3 | 0.0009765625 |"
contains "compare apart category" "$out" "| z (apart) | 1 | 100.0% | 0.0% | 0 | 1 | 0 | 1 |"
out=$("$CAIRN" eval compare "$D/compare-a.jsonl" "$D/compare-b.jsonl")
contains "compare default budget = largest" "$out" "budget 8000"
contains "compare no change: p = 1" "$out" "| **all** | 18 | 100.0% | 100.0% | 0 | 0 | 18 | 1 |"
out=$("$CAIRN" eval compare "$TMP/l.jsonl" "$TMP/l.jsonl" --method raw-bm25,cairn)
contains "compare two methods of one run" "$out" "(method raw-bm25)"
out=$("$CAIRN" eval compare "$TMP/l.jsonl" "$TMP/l.jsonl" --method nope 2>&1)
contains "compare unknown method refused" "$out" "has no runs for method nope"
out=$("$CAIRN" eval compare "$D/compare-a.jsonl" "$D/compare-b.jsonl" --budget 4000 2>&1)
contains "compare missing budget refused" "$out" "no result for method (first) at budget 4000"
out=$("$CAIRN" eval compare "$D/compare-a.jsonl" "$D/locomo-mini.json" 2>&1)
contains "compare refuses a non-run file" "$out" "not a line of \`cairn eval --out\`"

# ---- bad input gets a clear message and a non-zero exit
err() { "$CAIRN" eval "$@" --quiet 2>&1 >/dev/null; }
check_fails "missing file fails" "$CAIRN" eval locomo "$TMP/nope.json" --quiet
contains "missing file message" "$(err locomo "$TMP/nope.json")" "cannot open"
contains "beam file given as locomo" "$(err locomo "$D/beam-mini/chat.json")" "is not a LoCoMo sample"
contains "locomo file given as longmemeval" "$(err longmemeval "$D/locomo-mini.json")" "has no question_id (is this a LongMemEval file?)"
contains "madial jsonl given as locomo" "$(err locomo "$D/madial-memory.json")" "not a JSON array"
contains "file given as beam folder" "$(err beam "$D/locomo-mini.json")" "is not a BEAM chat folder"
contains "dialogue given as memory" "$(err madial "$D/madial-dialogue.json" "$D/madial-memory.json")" "is this the memory archive?"
contains "madial takes two files" "$(err madial "$D/madial-memory.json")" "madial takes two files"
contains "unknown dataset" "$(err bogus "$D/locomo-mini.json")" "unknown dataset bogus"
contains "unknown method" "$(err locomo "$D/locomo-mini.json" --method cairn,fast)" "unknown method fast"
contains "bad budgets" "$(err locomo "$D/locomo-mini.json" --budgets 1000,x)" "--budgets takes numbers"
head -c 300 "$D/locomo-mini.json" > "$TMP/trunc.json"
contains "truncated file" "$(err locomo "$TMP/trunc.json")" "truncated"
sed 's/"10:05 am on 20 June, 2023"/"sometime in June"/' "$D/locomo-mini.json" > "$TMP/baddate.json"
contains "bad LoCoMo date" "$(err locomo "$TMP/baddate.json")" "session_2_date_time is missing or not a date"
sed 's/"question_date": "2023\/05\/30 (Tue) 10:00",//' "$D/longmemeval-mini.json" > "$TMP/nodate.json"
contains "missing LongMemEval field" "$(err longmemeval "$TMP/nodate.json")" "has no question_date"
printf '[{"sample_id":"s","conversation":{"session_1":[{"speaker":"A","dia_id":"D1:1","text":"x"}],"session_1_date_time":"1:00 pm on 1 May, 2023"},"qa":[{"question":"q","evidence":["D1:1"],"category":9}]}]' > "$TMP/badcat.json"
contains "bad category" "$(err locomo "$TMP/badcat.json")" "needs a question and a category 1-5"
printf '[{"sample_id":"s","conversation":{},"qa":[]}]' > "$TMP/nosess.json"
contains "no sessions" "$(err locomo "$TMP/nosess.json")" "has no session_<N> lists"
printf '\000\377garbage' > "$TMP/garbage.json"
check_fails "garbage fails" "$CAIRN" eval longmemeval "$TMP/garbage.json" --quiet
code=0; "$CAIRN" eval >/dev/null 2>&1 || code=$?
eq "no arguments is a usage error" "$code" 2
contains "--help" "$("$CAIRN" eval --help)" "cairn eval compare A.jsonl B.jsonl"
t_done
