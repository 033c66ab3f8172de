# tests/web/lib.sh: what the `cairn web` tests share (sourced after
# tests/t/lib.sh): the made-up store and injection log, and a server.

# web_fixture: the store of web_fixture.py, one memory, and an injection
# log ($CAIRN_INJECT_LOG) with a decision that fired, a line that is not
# JSON, one with a hostile reason and, oldest, one about a prompt of a
# stored session (s-long's turn 62, a second before).
web_fixture() {
    python3 "$ROOT/tests/web/web_fixture.py" "$TMP/in.jsonl"
    "$CAIRN" add -q "$TMP/in.jsonl" || bad "add the fixture"
    "$CAIRN" remember "prefers <b>tabs</b>" > /dev/null || bad "remember"
    export CAIRN_INJECT_LOG="$TMP/inject.jsonl"
    printf '%s\n' '{"at":"2024-05-03T09:01:03Z","session":"s-long","prompt_chars":45,"fired":true,"why":"strong match","ms":2.0}' \
        '{"at":"2024-03-02T10:00:00Z","session":"cc-1","prompt_chars":40,"fired":false,"why":"<script>window.__pwned=4</script>","ms":3.1}' \
        'not json' \
        '{"at":"2024-03-03T10:00:00Z","session":"cc-1","prompt_chars":52,"fired":true,"why":"strong match","match":0.9,"match_weight":2.1,"items":2,"tokens":120,"dense":"off","ms":4.2}' \
        > "$CAIRN_INJECT_LOG"
}

# web_start NAME [ARGS...]: `cairn web ARGS` in the background; its pid in
# web_pid, the address it printed in web_url (empty after 5 s without).
web_start() {
    n=$1; shift
    "$CAIRN" web "$@" > "$TMP/$n.url" 2> "$TMP/$n.err" &
    web_pid=$!
    i=0
    while [ ! -s "$TMP/$n.url" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
    web_url=$(head -1 "$TMP/$n.url")
}

# web_counts FILE: adds the "N passed, N failed" of a driver's output to
# this test's, and repeats its FAIL lines on stderr.
web_counts() {
    sed -n 's/^FAIL: //p' "$1" | while read -r line; do echo "FAIL: $line" >&2; done
    p=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$1")
    f=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$1")
    [ -n "$p" ] || { bad "$(basename "$1") ended without its counts: $(tail -5 "$1")"; p=0; f=0; }
    T_PASS=$((T_PASS + p)); T_FAIL=$((T_FAIL + f))
}
