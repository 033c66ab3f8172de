#!/bin/sh
# t0208-hostile-files: what sits at a path cairn opens must not hang it or
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

# 1.1 GB of JSON in a 5 MB zip (what a 4 MB zip holding a 4 GB file did:
# 37 s and 4.2 GB of memory before it was refused). Under a 512 MB address
# space limit the import must end at once with the cap's message, before
# reading (main ran out of memory reading it).
python3 - "$TMP/bomb.zip" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
    with z.open("export/conversations.json", "w", force_zip64=True) as f:
        f.write(b"[")
        chunk = b" " * (16 << 20)
        for _ in range(70):
            f.write(chunk)
        f.write(b"]")
PY
size=$(wc -c < "$TMP/bomb.zip")
check "the archive is small ($size bytes)" test "$size" -lt 10000000
if t_sanitized; then
    # AddressSanitizer maps terabytes of shadow: no address space limit;
    # the peak RSS is checked instead
    out=$(python3 -c 'import resource, subprocess, sys
p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
sys.stdout.write(p.stdout.decode())
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print("peak_rss_kb=%d" % rss)
sys.exit(p.returncode if rss < 524288 else 99)' "$CAIRN" --db "$TMP/bomb.db" import chatgpt "$TMP/bomb.zip"); rc=$?
else
    out=$( (ulimit -v 524288; timeout 20 "$CAIRN" --db "$TMP/bomb.db" import chatgpt "$TMP/bomb.zip") 2>&1); rc=$?
fi
eq "zip bomb: refused (exit 1, not killed)" "$rc" 1
contains "zip bomb: says how big and what the cap is" "$out" "conversations.json is 1120 MB, over the 1024 MB"
contains "zip bomb: says what to do" "$out" "unzip it and import the file"
rm -f "$TMP/bomb.zip"

t_done
