#!/bin/sh
# t0209-import-aider: `cairn import aider DIR` on a small made-up
# .aider.chat.history.md: sessions, turns, aider's "> " output and
# boilerplate left out, the project from the folder, a half-written last
# line left for later, and incremental re-imports that add nothing twice.
. "$(dirname "$0")/lib.sh"
P="$TMP/shop"
mkdir -p "$P"
H="$P/.aider.chat.history.md"
printf '%s\n' \
  '# aider chat started at 2026-02-01 09:00:00' '' \
  '> Aider v0.80.0' '> Added cart.py to the chat.' '' \
  '#### Why does the cart total go negative?' '' \
  'The discount is applied twice in cart.py.' '' \
  'Tokens: 1.2k sent, 80 received. Cost: $0.01 message, $0.02 session.' \
  'Applied edit to cart.py' 'Commit 1a2b3c4d fix: apply the discount once' '' \
  '# aider chat started at 2026-02-03 14:00:00' '' \
  '#### /add tax.py' '> Added tax.py to the chat' \
  '#### Round the VAT to cents' '' \
  'Use Decimal quantize in tax.py.' > "$H"
printf '#### And the shipping fee to' >> "$H"     # half-written: no newline yet

out=$("$CAIRN" import aider "$P")
contains "two sessions" "$out" "2 sessions (2 new"
contains "four turns" "$out" "4 messages added"
out=$("$CAIRN" import aider "$P")
contains "the same file again adds nothing" "$out" "0 messages added"
out=$("$CAIRN" sessions)
contains "source aider" "$out" "aider"
contains "project from the folder" "$out" "shop"
"$CAIRN" export --format jsonl > "$TMP/all.jsonl"
all=$(cat "$TMP/all.jsonl")
contains "reply kept verbatim" "$all" "The discount is applied twice in cart.py."
lacks "aider's > lines dropped" "$all" "Aider v0.80.0"
lacks "token report dropped" "$all" "Tokens: 1.2k"
lacks "applied-edit line dropped" "$all" "Applied edit"
lacks "commit line dropped" "$all" "1a2b3c4d"
lacks "pure slash command dropped" "$all" "/add tax.py"
lacks "half-written line waits" "$all" "shipping fee"

printf ' 50 cents\n\nDone: SHIPPING_FEE = Decimal("0.50").\n' >> "$H"
out=$("$CAIRN" import aider "$P")
contains "only the new turns" "$out" "1 session (0 new, 1 updated"
contains "two new messages" "$out" "2 messages added"
"$CAIRN" export --format jsonl > "$TMP/all.jsonl"
all=$(cat "$TMP/all.jsonl")
contains "completed line imported whole" "$all" "And the shipping fee to 50 cents"
out=$("$CAIRN" import aider --full "$H")
contains "--full re-reads and adds nothing" "$out" "0 messages added, 6 already present"
# an import while aider is still writing a reply: the lines so far are
# stored, and the whole reply replaces them later (one message, not two)
printf '\n#### Explain the fee\n\nThe fee is flat.\n' >> "$H"
"$CAIRN" import aider "$P" >/dev/null
printf 'It does not depend on weight.\n' >> "$H"
out=$("$CAIRN" import aider "$P")
contains "the grown reply adds no message" "$out" "0 messages added"
"$CAIRN" export --format jsonl > "$TMP/all.jsonl"
eq "the reply is stored once" "$(grep -o 'The fee is flat' "$TMP/all.jsonl" | wc -l | tr -d ' ')" 1
contains "the reply is whole" "$(cat "$TMP/all.jsonl")" 'The fee is flat.\nIt does not depend on weight.'
out=$("$CAIRN" import aider "$TMP" 2>&1); rc=$?
eq "a folder without a log fails" "$rc" 1
contains "says what is missing" "$out" "no .aider.chat.history.md"
t_done
