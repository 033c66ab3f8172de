#!/bin/sh
# t0206-hostile-files: what sits at a path cairn opens must not hang it or
# blow up its memory. A FIFO at the hook log, the injection log or a
# session's injected-once file: each hook returns at once, exit 0 (without
# O_NONBLOCK the open waited for a reader: every hook hit its 30 s alarm).
# A small .zip holding a huge conversations.json: refused at once with a
# clear error, in bounded memory.
. "$(dirname "$0")/lib.sh"
"$CAIRN" add "$ROOT/examples/sample-history.jsonl" >/dev/null
mkdir -p "$HOME/.cairn/injected"

prompt_json() {  # session prompt
    printf '{"session_id":"%s","prompt":"%s","cwd":"/tmp","hook_event_name":"UserPromptSubmit"}' "$1" "$2"
}

# The Stop hook with a transcript that is not there logs a failure.
mkfifo "$HOME/.cairn/cairn.log"
printf '{"session_id":"f1","transcript_path":"%s/none.jsonl","cwd":"/nowhere","hook_event_name":"Stop"}' \
    "$TMP" > "$TMP/stop.json"
out=$(timeout 5 "$CAIRN" hook stop < "$TMP/stop.json" 2>&1); rc=$?
eq "stop hook, FIFO at cairn.log: returns at once, exit 0" "$rc" 0
eq "stop hook, FIFO at cairn.log: prints nothing" "$out" ""
check "cairn.log is still the FIFO, untouched" test -p "$HOME/.cairn/cairn.log"

# The prompt hook writes inject.jsonl on every prompt, and reads and
# appends the session's injected-once file when it injects.
mkfifo "$HOME/.cairn/inject.jsonl" "$HOME/.cairn/injected/f2"
prompt_json f2 "which climbing gym did I pick?" > "$TMP/p.json"
out=$(timeout 5 "$CAIRN" hook prompt < "$TMP/p.json"); rc=$?
eq "prompt hook, FIFOs at inject.jsonl and the state file: exit 0 at once" "$rc" 0
contains "and still injects" "$out" "LBC on Thursday"
rm -f "$HOME/.cairn/cairn.log" "$HOME/.cairn/inject.jsonl" "$HOME/.cairn/injected/f2"

t_done
