#!/bin/sh
# t0101-eval-sessions: `cairn eval sessions DIR...`, the sessions+questions
# format a user writes for their own history (docs/EVAL.md), on a made-up
# folder (tests/data/eval/sessions-mini): loading (numeric ids, an id-less
# session, defaults for now and cat), the answer-span metric (white space
# and case normalised, Unicode case too, a span that is not there), its
# table, JSONL fields and chart line, eval inject on the format, and the
# errors malformed lines get (with their line numbers), --explain's ranks.
. "$(dirname "$0")/lib.sh"
export TZ=UTC
D="$ROOT/tests/data/eval/sessions-mini"

out=$("$CAIRN" eval sessions "$D/" --budgets 2000 --method keyword,raw-bm25 --out "$TMP/s.jsonl" \
      --md "$TMP/s.md" --svg "$TMP/s.svg" --quiet 2>"$TMP/err")
eq "sessions exit code" $? 0
eq "--quiet keeps stderr empty" "$(cat "$TMP/err")" ""
contains "counts: four sessions (one id-less, one numeric), seven messages" "$out" \
    "1 conversations, 4 sessions, 7 messages; 4 questions in the files, 4 scored."
contains "evidence ids counted" "$out" "Evidence ids: 6 read"
contains "spans counted" "$out" "Answer spans: 7, in 3 questions."
contains "span table" "$out" "### Answer spans present"
contains "span table: n = questions with spans" "$out" "| keyword | **all** | 3 | **66.7%** |"
contains "span table per category" "$out" "| keyword | decision | 1 | 0.0% |"
contains "evidence table beside it" "$out" "| keyword | **all** | 4 | **100.0%** |"
contains "raw-bm25 in the same run" "$out" "| raw-bm25 | **all** | 3 | **66.7%** |"
contains "detail table has a spans column" "$out" "| method | budget | all | strict | spans | any |"
contains "detail row" "$out" "| keyword | 2000 | 100.0% | 100.0% | 66.7% | 100.0% |"
contains "cat defaults to uncategorised" "$out" "| keyword | uncategorised | 1 | 100.0% |"
contains "evidence-role table" "$out" "### By where the evidence is"
contains "questions with evidence in a reply" "$out" "| keyword | evidence in a reply | 4 | 100.0% |"
contains "none with user-only evidence: no figure" "$out" "| keyword | evidence in user turns only | 0 | – |"
contains "spans by evidence role" "$out" "| raw-bm25 | evidence in a reply | 3 | 66.7% |"
eq "--md holds the same report" "$(cat "$TMP/s.md")" "$out"
eq "one JSONL line per question" "$(wc -l < "$TMP/s.jsonl")" 4

# the span metric: case (ASCII and accented) and white space normalised
line=$(grep '"question_id":"proj#1"' "$TMP/s.jsonl")
contains "spans across a line break, in other case, found" "$line" \
    '"keyword":{"2000":{"all":true,"strict":true,"any":true,"fraction":1,'
contains "all three spans present" "$line" '"spans":true,"spans_found":3'
contains "the JSONL says the evidence is in a reply" "$line" '"ev_in_reply":true'
contains "now as given" "$line" '"now":"2024-03-20T12:00:00"'
line=$(grep '"question_id":"proj#2"' "$TMP/s.jsonl")
contains "evidence found" "$line" '"all":true'
contains "a span that is not in the text fails the question" "$line" '"spans":false,"spans_found":1'
line=$(grep '"question_id":"proj#4"' "$TMP/s.jsonl")
contains "two pieces of evidence in two sessions" "$line" '"evidence":["proj/S2/2","proj/S1/2"]'
line=$(grep '"question_id":"3"' "$TMP/s.jsonl")
contains "numeric ids, repeats merged" "$line" '"evidence":["8"]'
contains "now defaults to the latest time in sessions.jsonl" "$line" '"now":"2024-03-09T16:00:00"'
lacks "no spans: no span fields" "$line" '"spans"'

# eval compare --spans pairs the questions that have spans, on that metric
out=$("$CAIRN" eval compare "$TMP/s.jsonl" "$TMP/s.jsonl" --method raw-bm25,keyword --spans)
contains "compare --spans leaves out the question without spans" "$out" "3 questions paired"
contains "compare --spans counts span hits" "$out" "| **all** | 3 | 66.7% | 66.7% | 0 | 0 | 3 | 1 |"
out=$("$CAIRN" eval compare "$TMP/s.jsonl" "$TMP/s.jsonl" --method raw-bm25,keyword)
contains "compare without --spans pairs them all" "$out" "4 questions paired"

# a budget too small for the evidence: spans absent with it
"$CAIRN" eval sessions "$D" --budgets 50 --method raw-bm25 --out "$TMP/t.jsonl" --quiet >/dev/null
line=$(grep '"question_id":"proj#1"' "$TMP/t.jsonl")
contains "evidence not packed at 50 tokens" "$line" '"all":false'
contains "so no span either" "$line" '"spans":false,"spans_found":0'

# --explain: each evidence turn's rank in the whole ranking, and the
# report's table of missed evidence by rank (proj#1..4 missed at 50
# tokens, their units ranked in the top 10: packing, not ranking)
out=$("$CAIRN" eval sessions "$D" --budgets 50,2000 --method raw-bm25 --explain \
      --out "$TMP/x.jsonl" --quiet)
contains "explain table" "$out" "### Missed evidence by rank (--explain)"
contains "5 evidence turns missed at 50 tokens, all ranked 1-10" "$out" \
    "| raw-bm25 | evidence in a reply | 50 | 5 | 0 | 0 | 0 | 0 |"
contains "none missed at 2000" "$out" "| raw-bm25 | evidence in a reply | 2000 | 0 | 0 | 0 | 0 | 0 |"
line=$(grep '"question_id":"proj#4"' "$TMP/x.jsonl")
contains "ranks per evidence turn, in evidence order; each its session's best (S2, S1)" "$line" \
    '"ranks":{"raw-bm25":[{"rank":1,"score":1.163,"in_session":1},{"rank":2,"score":0.94412,"in_session":1}]}'
line=$(grep '"question_id":"proj#4"' "$TMP/s.jsonl")
lacks "no ranks without --explain" "$line" '"ranks"'
lacks "no explain table without --explain" "$(cat "$TMP/s.md")" "Missed evidence by rank"
out=$("$CAIRN" eval compare "$TMP/x.jsonl" "$TMP/x.jsonl" --method raw-bm25 --budget 50)
contains "compare reads a run made with --explain" "$out" "4 questions paired"

# the chart: a dotted span line per method, said in the legend
eq "svg: three lines per method" "$(grep -c '<polyline' "$TMP/s.svg")" 6
contains "svg legend for spans" "$(cat "$TMP/s.svg")" ">dotted: answer spans</text>"

# without spans anywhere, the report has no span table (other datasets' reports stay as they were)
grep -v spans "$D/questions.jsonl" > "$TMP/q.jsonl"
mkdir -p "$TMP/nospans" && cp "$D/sessions.jsonl" "$TMP/nospans/" && cp "$TMP/q.jsonl" "$TMP/nospans/questions.jsonl"
out=$("$CAIRN" eval sessions "$TMP/nospans" --budgets 2000 --method keyword --svg "$TMP/n.svg" --quiet)
lacks "no span table without spans" "$out" "Answer spans"
eq "svg: two lines without spans" "$(grep -c '<polyline' "$TMP/n.svg")" 2

# --min-rel-score: the MCP server's cut, said in the report; a fraction only
out=$("$CAIRN" eval sessions "$D" --budgets 2000 --method keyword --min-rel-score 0.3 --quiet)
contains "the report says the cut was on" "$out" "relative score cut 0.3"
lacks "no cut, no such line" "$("$CAIRN" eval sessions "$D" --budgets 2000 --method keyword --quiet)" "relative score cut"
code=0; "$CAIRN" eval sessions "$D" --min-rel-score 1.5 --quiet >/dev/null 2>"$TMP/err" || code=$?
eq "--min-rel-score 1.5 refused (a usage error)" "$code" 2
contains "says why" "$(cat "$TMP/err")" "a fraction from 0 to 1"

# eval inject reads the format too (forgets and re-adds the evidence's sessions)
out=$("$CAIRN" eval inject sessions "$D" 2>&1)
eq "inject exit code" $? 0
contains "inject report" "$out" "## sessions: automatic injection (1000 tokens)"

# ---- bad input: one line naming the file and line, exit 1
bad_dir() {   # bad_dir NAME SESSIONS QUESTIONS: a folder with these two files
    mkdir -p "$TMP/$1"
    printf '%s\n' "$2" > "$TMP/$1/sessions.jsonl"
    printf '%s\n' "$3" > "$TMP/$1/questions.jsonl"
}
err() { "$CAIRN" eval sessions "$TMP/$1" --quiet 2>&1 >/dev/null; }
S='{"id":"s","messages":[{"id":"m1","role":"user","content":"hello there"},{"id":"m2","role":"assistant","content":"hi"}]}'
Q='{"id":"q","query":"hello?","ev":["m1"]}'
bad_dir good "$S" "$Q"
out=$("$CAIRN" eval sessions "$TMP/good" --budgets 1000 --quiet)
contains "the minimal folder loads" "$out" "1 sessions, 2 messages; 1 questions in the files, 1 scored."
bad_dir q-json "$S" "$Q
{\"id\":\"q2\",\"query\":"
contains "malformed question line, with its line" "$(err q-json)" "q-json/questions.jsonl:2: malformed JSON"
code=0; "$CAIRN" eval sessions "$TMP/q-json" --quiet >/dev/null 2>&1 || code=$?
eq "malformed input exits 1" "$code" 1
bad_dir q-two "$S" '{"id":"q","query":"a","ev":["m1"]} {"id":"r","query":"b","ev":["m1"]}'
contains "two objects on one line" "$(err q-two)" "questions.jsonl:1: one JSON object per line expected"
bad_dir q-noquery "$S" '{"id":"q","ev":["m1"]}'
contains "question without query" "$(err q-noquery)" "questions.jsonl:1: a question needs a \"query\""
bad_dir q-noid "$S" '{"query":"x","ev":["m1"]}'
contains "question without id" "$(err q-noid)" "questions.jsonl:1: a question needs an \"id\""
bad_dir q-dup "$S" "$Q
$Q"
contains "repeated question id" "$(err q-dup)" "questions.jsonl:2: question id \"q\" appears twice"
bad_dir q-noev "$S" '{"id":"q","query":"x","ev":[]}'
contains "empty ev" "$(err q-noev)" "questions.jsonl:1: \"ev\" must be a non-empty list of message ids"
bad_dir q-unknown "$S" "$Q
{\"id\":\"q2\",\"query\":\"x\",\"ev\":[\"m9\"]}"
contains "ev naming no message" "$(err q-unknown)" "questions.jsonl:2: ev \"m9\" is not the id of a message"
bad_dir q-spans "$S" '{"id":"q","query":"x","ev":["m1"],"spans":["ok",""]}'
contains "empty span" "$(err q-spans)" "questions.jsonl:1: \"spans\" must be a list of non-empty strings"
bad_dir q-spans2 "$S" '{"id":"q","query":"x","ev":["m1"],"spans":"hello"}'
contains "spans not a list" "$(err q-spans2)" "\"spans\" must be a list of non-empty strings"
bad_dir q-now "$S" '{"id":"q","query":"x","ev":["m1"],"now":"last tuesday"}'
contains "bad now" "$(err q-now)" "questions.jsonl:1: \"now\" must be an ISO 8601 date"
bad_dir q-cat "$S" '{"id":"q","query":"x","ev":["m1"],"cat":7}'
contains "bad cat" "$(err q-cat)" "questions.jsonl:1: \"cat\" must be a non-empty string"
bad_dir q-amb "$S
{\"id\":\"t\",\"messages\":[{\"id\":\"m1\",\"role\":\"user\",\"content\":\"again\"}]}" "$Q"
contains "ev in two sessions" "$(err q-amb)" "ev \"m1\" names messages in two sessions (sessions.jsonl lines 1 and 2)"
bad_dir s-json "$S
{\"id\":" "$Q"
contains "malformed session line" "$(err s-json)" "s-json/sessions.jsonl:2: malformed JSON"
bad_dir s-nomsgs "$S
{\"id\":\"t\"}" "$Q"
contains "session without messages" "$(err s-nomsgs)" "sessions.jsonl:2: a session needs a \"messages\" list"
bad_dir s-array "[$S]" "$Q"
contains "an array is not a session line" "$(err s-array)" "sessions.jsonl:1: one JSON object per line expected"
bad_dir s-date "{\"id\":\"s\",\"started_at\":\"soon\",\"messages\":[]}" "$Q"
contains "bad session date" "$(err s-date)" "sessions.jsonl:1: started_at and ended_at must be ISO 8601"
bad_dir s-msg "{\"id\":\"s\",\"messages\":[{\"id\":[1],\"role\":\"user\",\"content\":\"x\"}]}" "$Q"
contains "bad message id" "$(err s-msg)" "sessions.jsonl:1: message 1 must be an object"
bad_dir s-empty "" "$Q"
contains "no session at all" "$(err s-empty)" "s-empty/sessions.jsonl: no session"
# what only `cairn add` checks is refused when the store is loaded, with the line
bad_dir s-role "$S
{\"id\":\"t\",\"messages\":[{\"id\":\"x\",\"role\":\"robot\",\"content\":\"beep\"}]}" "$Q"
contains "cairn add's own refusal, with the line" "$(err s-role)" "sessions.jsonl:2: "
mkdir -p "$TMP/half" && printf '%s\n' "$S" > "$TMP/half/sessions.jsonl"
contains "a folder without questions.jsonl" "$(err half)" "is not a sessions+questions folder (needs sessions.jsonl and questions.jsonl)"
t_done
