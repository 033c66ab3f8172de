#!/bin/sh
# bench/run.sh: runs cairn's benchmarks, each against a baseline measured in
# the same run, and prints their `bench <name> key=value ...` lines and a
# short human summary (lines starting with "#"). See bench/README.md.
#
#   make bench                       (builds everything, then runs this)
#   BUILD=/tmp/b sh bench/run.sh     (binaries already built into /tmp/b)
#
# Environment:
#   BUILD          build folder holding cairn and bench/ (default: build)
#   BENCH_ONLY     space-separated subset of: ingest recall cold hook capture embed rss forget fence
#                  redact json tokcount pretool memories vault sync (vault: not in the
#                  default run until cairn has a vault command, bench/README.md; sync: not
#                  by default, it starts a PostgreSQL 15, bench/bench_sync.sh)
#   BENCH_STORE    forget: a keyword-only store to copy (default: one made from
#                  gen_data.py ingest, about 40 s)
#   BENCH_QUICK=1  a smoke run: 10k-message ingest, 1 round, 60 questions,
#                  20 cold runs, 1 RSS round (figures not comparable with full runs)
#   BENCH_DATA     dev data folder (default: ../shared/data from the repo)
#   BENCH_KEEP=1   keep the temporary folder (its path is printed)
#
# Input data is generated into a temporary folder at run time (never into
# the repo) and removed at the end. A full run takes 70-90 s, plus 2-5 min
# for rss.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
CAIRN=$BUILD/cairn
BIN=$BUILD/bench
ONLY=${BENCH_ONLY:-ingest recall cold hook capture embed rss forget fence redact json tokcount pretool}
DATA=${BENCH_DATA:-$ROOT/../shared/data}
PY=${PYTHON:-python3}

if [ "${BENCH_QUICK:-0}" = 1 ]; then
    SESSIONS=500 MESSAGES=10000 RUNS=1 NQ=60 COLD=20 RSS_ROUNDS=1 FORGET_RUNS=1
else
    SESSIONS=5000 MESSAGES=100000 RUNS=3 NQ=300 COLD=50 RSS_ROUNDS=3 FORGET_RUNS=3
fi

if [ ! -x "$CAIRN" ]; then
    echo "bench: $CAIRN not built (make all BUILD=...)" >&2
    exit 2
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cairn-bench.XXXXXX")
if [ "${BENCH_KEEP:-0}" = 1 ]; then
    echo "# bench: keeping $TMP"
else
    trap 'rm -rf "$TMP"' EXIT
    trap 'rm -rf "$TMP"; exit 130' INT TERM
fi

want() {
    case " $ONLY " in *" $1 "*) return 0 ;; esac
    return 1
}
need_bin() {
    [ -x "$BIN/$1" ] && return 0
    echo "bench: $BIN/$1 not built: skipped" >&2
    return 1
}

status=0
t0=$(date +%s)
echo "# cairn bench: $(uname -srm), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)," \
     "sqlite $(pkg-config --modversion sqlite3 2>/dev/null || echo '?'), $(date -u +%Y-%m-%dT%H:%MZ)"

# 1. Ingest: synthetic history, cairn add vs a plain SQLite + FTS5 loop.
if want ingest && need_bin bench_ingest; then
    "$PY" bench/gen_data.py ingest "$TMP/ingest.jsonl" --sessions "$SESSIONS" \
        --messages "$MESSAGES"
    "$BIN/bench_ingest" "$CAIRN" "$TMP/ingest.jsonl" "$TMP" --runs "$RUNS" || status=1
    rm -f "$TMP/ingest.jsonl"
fi

# 2 and 3. Recall: a store built from the dev data, the datasets' questions.
if want recall || want cold || want hook; then
    if [ -f "$DATA/locomo-dev/locomo10-dev.json" ]; then
        "$PY" bench/gen_data.py dev "$DATA" "$TMP/dev.jsonl" "$TMP/questions.txt" \
            --questions "$NQ"
        "$CAIRN" --db "$TMP/dev.db" add -q "$TMP/dev.jsonl"
        if want recall && need_bin bench_recall; then
            "$BIN/bench_recall" "$TMP/dev.db" "$TMP/questions.txt" "$TMP" || status=1
        fi
        if want cold && need_bin bench_cold; then
            "$BIN/bench_cold" "$CAIRN" "$TMP/dev.db" "$TMP/questions.txt" --runs "$COLD" \
                || status=1
        fi
        # 3b. The UserPromptSubmit hook, a whole process per prompt.
        if want hook; then
            "$PY" bench/bench_hook.py "$CAIRN" "$TMP/dev.db" "$TMP/questions.txt" \
                --runs "$((COLD * 2))" || status=1
        fi
    else
        echo "# recall, cold: skipped: no dev data at $DATA (set BENCH_DATA)"
    fi
fi

# 3c. The corrections in the hooks: the pre-tool hook against the same
# process turned off and /bin/true, the prompt hook's candidate.
if want pretool; then
    "$PY" bench/bench_pretool.py "$CAIRN" --runs "$((COLD * 4))" || status=1
fi

# 5. The Stop hook on a 5 MB transcript, and import speed (bench/capture.sh).
if want capture && [ -x "$BIN/bench_capture" ]; then
    BUILD=$BUILD CAPTURE_MB=${CAPTURE_MB:-256} sh bench/capture.sh || status=1
fi

# The encoder's own benchmark, when it is built.
if want embed && [ -x "$BIN/bench_embed" ]; then
    "$BIN/bench_embed" --quick || status=1
fi

# Peak RSS with multilingual-e5-small's 470 MB of weights mmapped
# (bench/bench_rss.sh; writes a model of that shape, ~0.5 GB, into TMPDIR).
if want rss && need_bin bench_rss; then
    BUILD=$BUILD ROUNDS=$RSS_ROUNDS sh bench/bench_rss.sh || status=1
fi

# 6. Forgetting one session on the 100k store, against the plain delete.
if want forget && need_bin bench_forget; then
    store=${BENCH_STORE:-}
    if [ -z "$store" ]; then
        store=$TMP/forget-src.db
        "$PY" bench/gen_data.py ingest "$TMP/forget.jsonl" --sessions "$SESSIONS" \
            --messages "$MESSAGES"
        CAIRN_EMBED_MODEL=none "$CAIRN" --db "$store" add -q "$TMP/forget.jsonl"
        rm -f "$TMP/forget.jsonl"
    fi
    "$BIN/bench_forget" "$store" "$TMP" --runs "$FORGET_RUNS" || status=1
fi

# 7. The fence around memory handed to a model, against copying the text.
if want fence && need_bin bench_fence; then
    "$BIN/bench_fence" || status=1
fi

# 8. Secret masking, this build against main's redact.c in turn (bench/bench_redact.sh).
if want redact; then
    sh bench/bench_redact.sh main "$RUNS" 5 || status=1
fi

# 9. The write paths' JSON reader against cJSON's parser, on a 45 MB transcript.
if want json && need_bin bench_json; then
    "$BIN/bench_json" - "$RUNS" || status=1
fi

# 10. The budget token counter, this build against main's tokcount.c in turn.
if want tokcount; then
    sh bench/bench_tokcount.sh main "$RUNS" 5 || status=1
fi

# 11. Explicit memories in recall: none (baseline) against 200 and 2,000.
if want memories && need_bin bench_memories; then
    "$BIN/bench_memories" "$TMP" --reps "$RUNS" || status=1
fi

# 12. A Markdown vault of 1,000 generated notes: vault add, re-index with
# nothing changed, and the prompt hook with it against the same store
# without it and /bin/true (bench/bench_vault.py).
if want vault; then
    "$PY" bench/vault/gen_notes.py "$TMP/vault" --notes 1000 >/dev/null
    "$PY" bench/bench_vault.py "$CAIRN" "$TMP/vault" --runs "$((COLD * 2))" || status=1
fi

# 13. cairn sync against a real PostgreSQL 15 (bench/bench_sync.sh), cairn
# add of the same sessions as the baseline; then what 1,000 memories add
# (bench/bench_sync_memories.sh). Not in the default set: it
# starts a server. A tenth of the ingest size.
if want sync; then
    "$PY" bench/gen_data.py ingest "$TMP/sync.jsonl" --sessions $((SESSIONS / 10)) \
        --messages $((MESSAGES / 10))
    sh bench/bench_sync.sh "$CAIRN" "$TMP/sync.jsonl" $((MESSAGES / 10)) "$RUNS" || status=1
    # and 1,000 explicit memories on top of the same history, against it
    sh bench/bench_sync_memories.sh "$CAIRN" "$TMP/sync.jsonl" 1000 "$RUNS" || status=1
    rm -f "$TMP/sync.jsonl"
fi

echo "# bench: done in $(( $(date +%s) - t0 )) s$( [ $status = 0 ] || echo '; SOME CHECKS FAILED')"
exit $status
