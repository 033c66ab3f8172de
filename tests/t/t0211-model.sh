#!/bin/sh
# t0211-model.sh: `cairn model` and `cairn embed` without the network: a
# loopback server (tests/tools/range_server.py) stands in for the Hugging
# Face endpoint and serves a corrupted config.json, which must be refused.
. "$(dirname "$0")/lib.sh"
export CAIRN_MODEL_DIR="$TMP/models"
unset CAIRN_HF_ENDPOINT HF_ENDPOINT CAIRN_EMBED_MODEL

out=$("$CAIRN" model list)
contains "list names the default" "$out" "multilingual-e5-small"
check "every built-in model is pinned" [ "$(printf '%s\n' "$out" | grep -c pinned)" -ge 5 ]
lacks "no unpinned model" "$out" "missing"
out=$("$CAIRN" embed "hello" 2>&1) && bad "embed without a model should fail" || ok
contains "embed says how to get a model" "$out" "cairn model pull"
# No endpoint set: the Hugging Face hub's public address, as huggingface_hub
# does. Asked in a network namespace of its own (no route anywhere), so the
# test never reaches the network: the error names the address it tried.
if unshare -rn true 2>/dev/null || unshare -n true 2>/dev/null; then
    ns="unshare -rn"; unshare -rn true 2>/dev/null || ns="unshare -n"
    out=$($ns "$CAIRN" model pull bge-small-en-v1.5 2>&1) && bad "pull offline should fail" || ok
    contains "the default endpoint is the hub (bge)" "$out" "cannot reach https://huggingface.co/BAAI/"
    out=$($ns "$CAIRN" model pull 2>&1) && bad "pull offline should fail" || ok
    contains "the default model from the hub" "$out" "cannot reach https://huggingface.co/intfloat/multilingual-e5-small/"
    check "nothing installed offline" [ ! -d "$CAIRN_MODEL_DIR/multilingual-e5-small" ]
    out=$(HF_ENDPOINT=http://127.0.0.1:9 $ns "$CAIRN" model pull 2>&1) && bad "pull offline should fail" || ok
    contains "HF_ENDPOINT replaces the hub" "$out" "cannot reach http://127.0.0.1:9/intfloat/"
    out=$(HF_ENDPOINT=http://127.0.0.1:9 CAIRN_HF_ENDPOINT=http://127.0.0.1:7 $ns "$CAIRN" model pull 2>&1) &&
        bad "pull offline should fail" || ok
    contains "CAIRN_HF_ENDPOINT comes first" "$out" "cannot reach http://127.0.0.1:7/intfloat/"
else
    t_skip "no network namespace (unshare -n): the default endpoint is not tried"
fi
out=$("$CAIRN" model pull no-such-model 2>&1) && bad "unknown model" || ok
contains "unknown model" "$out" "unknown model"

if command -v python3 >/dev/null 2>&1; then
    rev=614241f622f53c4eeff9890bdc4f31cfecc418b3
    mkdir -p "$TMP/srv/intfloat/multilingual-e5-small/resolve/$rev"
    echo '{"not": "the real config"}' > "$TMP/srv/intfloat/multilingual-e5-small/resolve/$rev/config.json"
    python3 "$ROOT/tests/tools/range_server.py" "$TMP/srv" "$TMP/port" &
    srv=$!
    # until the server wrote its port or died: python3 took over 5 s to
    # start beside a sanitizer build (the old cap); 120 s only ends a hang
    i=0; while [ ! -f "$TMP/port" ] && kill -0 "$srv" 2>/dev/null && [ $i -lt 2400 ]; do
        sleep 0.05; i=$((i + 1))
    done
    export CAIRN_HF_ENDPOINT="http://127.0.0.1:$(cat "$TMP/port")"
    out=$("$CAIRN" model pull multilingual-e5-small 2>&1) && bad "corrupted file accepted" || ok
    contains "checksum refusal" "$out" "checksum mismatch"
    check "nothing installed" [ ! -d "$CAIRN_MODEL_DIR/multilingual-e5-small" ]
    check "no partial config left" [ ! -f "$CAIRN_MODEL_DIR/.multilingual-e5-small.partial/config.json" ]
    kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null
    out=$("$CAIRN" model pull multilingual-e5-small 2>&1) && bad "offline pull" || ok
    contains "offline message" "$out" "offline"
fi
# A local folder works as --model; a bad one is refused cleanly.
mkdir -p "$TMP/notamodel"
out=$("$CAIRN" embed --model "$TMP/notamodel" "x" 2>&1) && bad "bad folder accepted" || ok
contains "load error" "$out" "cannot load"
t_done
