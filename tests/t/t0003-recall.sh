#!/bin/sh
# t0003-recall: what `cairn recall` returns, through the binary.
. "$(dirname "$0")/lib.sh"
"$CAIRN" add "$ROOT/examples/sample-history.jsonl" >/dev/null
NOW=--now=2026-05-10T12:00:00

out=$("$CAIRN" recall "北京" $NOW --budget 300)
contains "2-character Chinese query finds its message" "$out" "我下个月要去北京出差"
out=$("$CAIRN" recall "烤鸭" $NOW --budget 300)
contains "Chinese word inside a sentence" "$out" "烤鸭店"
out=$("$CAIRN" recall "bouldering gym" $NOW --budget 300)
contains "English stemming (gym/boulder)" "$out" "LBC"
out=$("$CAIRN" recall "fold_token crash" $NOW --budget 300)
contains "identifier" "$out" "fold_token() copies"
out=$("$CAIRN" recall "tokenize.c" $NOW --budget 300)
contains "file name" "$out" "src/text/tokenize.c"
out=$("$CAIRN" recall "what did I do last week?" --now 2026-04-30 --budget 400)
contains "a question about a period lists it" "$out" "四季民福"
lacks "outside the period is left out" "$out" "Lisbon"
out=$("$CAIRN" recall "上周我做了什么" --now 2026-04-30 --budget 400)
contains "the same in Chinese" "$out" "四季民福"
out=$("$CAIRN" recall "zzz nothing matches" $NOW --budget 300)
eq "no match, small budget: empty" "$out" ""
# a budget as large as the store returns everything verbatim
out=$("$CAIRN" recall "zzz nothing matches" $NOW --budget 20000 --json)
contains "everything fits: JSON with its token count" "$out" '"tokens":'
n=$(printf '%s' "$out" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))')
eq "everything fits: item count" "$n" 19
contains "secret stays masked in recall" "$out" "[REDACTED:openai]"
# JSON shape and the budget as a hard limit
out=$("$CAIRN" recall "climbing gym" $NOW --budget 60 --json)
t=$(printf '%s' "$out" | python3 -c 'import json,sys; o=json.load(sys.stdin); print(o["tokens"] <= o["budget"] and all(k in o for k in ("query","budget","tokens","items","text")))')
eq "json has the fields and respects the budget" "$t" True
# excluding a session, scoping a project
out=$("$CAIRN" recall "climbing gym" $NOW --session-exclude demo/2026-03-20-climbing)
lacks "excluded session" "$out" "LBC"
out=$("$CAIRN" recall "Lisbon" $NOW --project cairn)
lacks "other project" "$out" "Alcântara"
# explain and batch
out=$("$CAIRN" recall "climbing gym" $NOW --json --explain)
contains "explain gives a rank" "$out" '"why":"rank 1'
out=$(printf '%s\n%s\n' '{"id":"a","query":"北京","budgets":[100,300]}' '{"id":"b"}' | "$CAIRN" recall --batch)
eq "batch: one line per question and budget, an error line for a bad one" "$(printf '%s\n' "$out" | wc -l)" 3
contains "batch error names the id" "$out" '"id":"b","error"'
# batch budgets follow --budget's rule (50 to 1000000 tokens): each bad one
# is an error line, never a silent default, an empty answer or an overflow
for b in 0 -5 '"x"' 1e12 10 100.5 null; do
    out=$(printf '{"id":"q","query":"climbing gym","budgets":[%s]}\n' "$b" | "$CAIRN" recall --batch)
    rc=$?
    eq "batch budget $b: exit status 1" "$rc" 1
    contains "batch budget $b: an error line" "$out" '"line":1,"id":"q","error":"budget 1 of the list is not a number of tokens from 50 to 1000000"'
    lacks "batch budget $b: no recall" "$out" '"items"'
done
out=$(printf '%s\n' '{"id":"m","query":"climbing gym","budgets":[100,1e12,300]}' | "$CAIRN" recall --batch)
eq "batch: good budgets answered around a bad one" "$(printf '%s\n' "$out" | grep -c '"items"')" 2
contains "batch: the bad one named by its place" "$out" '"error":"budget 2 of the list'
out=$(printf '%s\n' '{"id":"n","query":"climbing gym","budgets":300}' | "$CAIRN" recall --batch)
contains "batch: budgets must be a list" "$out" '"error":"\"budgets\" must be a list'
out=$(printf '%s\n' '{"id":"s","query":"climbing gym","budget":200,"ev":["x"]}' | "$CAIRN" recall --batch)
contains "batch: \"budget\": N is one budget (other fields ignored)" "$out" '"budget":200,'
out=$(printf '%s\n' '{"id":"t","query":"climbing gym","budget":200,"budgets":[300]}' | "$CAIRN" recall --batch)
contains "batch: budget and budgets together is an error" "$out" '"error":"give \"budget\" or \"budgets\", not both"'
out=$(printf '%s\n' '{"id":"u","query":"climbing gym","budget":"lots"}' | "$CAIRN" recall --batch)
contains "batch: a bad budget is an error" "$out" '"error":"\"budget\" is not a number of tokens'
out=$(printf '%s\n' '{"id":"o","query":"climbing gym","budgets":[50,1000000]}' | "$CAIRN" recall --batch)
eq "batch: the bounds are accepted" "$(printf '%s\n' "$out" | grep -c '"items"')" 2
out=$("$CAIRN" recall "climbing gym" $NOW --method raw-bm25)
contains "baseline method" "$out" "LBC"
check_fails "unknown method" "$CAIRN" recall x --method nope
check_fails "budget too small" "$CAIRN" recall x --budget 3
t_done
