#!/bin/sh
# scripts/vault-dev.sh: builds the DEVELOPMENT Markdown vault of issue 19
# by copying Markdown that anyone can get; nothing of it is committed.
#
#   sh scripts/vault-dev.sh OUT                  build the vault into OUT (a new
#                                                or empty folder); prints the
#                                                file count and bytes
#   sh scripts/vault-dev.sh --check QUERIES OUT  check a graded query file
#                                                (bench/vault/dev-queries.jsonl)
#                                                against a built vault
#
# This is the dev set: the ranking and the gate are tuned on it, so its
# figures say how well they fit it, not how they generalise. A held-out
# vault with its own queries exists elsewhere and is not in this
# repository (docs/VAULTS-EVAL.md).
#
# The sources, each under a stable relative path:
#   cairn/        this repository's README.md and docs/ (docs/results/ as
#                 cairn/results/), less docs/VAULTS-EVAL.md, which quotes
#                 the eval's own prompts
#   shared-docs/  ../shared/docs/*.md (../shared is $CAIRN_SHARED when set:
#                 a worktree elsewhere than beside it)
#   seeds/        ../shared/seeds/*.txt, as .md (they are READMEs in plain
#                 text, which Markdown reads as it is)
#   debian/PKG/   Markdown under /usr/share/doc/PKG of the packages listed
#                 in DEBIAN_PKGS (each installed by scripts/deps.sh, directly
#                 or as a dependency of one it names), .md.gz decompressed
# A missing source is an error naming it, never a smaller vault: the
# graded queries name pages of every source.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${CAIRN_SHARED:-$ROOT/../shared}
# Packages whose Debian documentation is the same on every Debian 12
# machine. Not nodejs: scripts/deps.sh accepts NodeSource's build, whose
# documentation differs from Debian's. manpages-fr alone of the manpages-*
# packages: their README.md is one file, repeated.
DEBIAN_PKGS="apt docker-doc libbenchmark-dev libcjson-dev libcrypt-dev libgnutls30 libidn2-0 \
libopenblas-dev libtasn1-6 libutf8proc2 manpages-fr openssl pkgconf-bin"

usage() {
    echo "usage: vault-dev.sh OUT | vault-dev.sh --check QUERIES OUT" >&2
    exit 2
}

# check QUERIES OUT: every line one JSON object with a unique id, a
# question, "fire" true or false; a firing one names pages that exist in
# the vault, a silent one none. Counts must reach 60 fire and 30 silent.
check() {
    python3 - "$1" "$2" <<'EOF'
import json, os, sys
qfile, vault = sys.argv[1], sys.argv[2]
errs, ids, fire, silent, srcs = [], set(), 0, 0, {}
with open(qfile, encoding="utf-8") as f:
    for n, line in enumerate(f, 1):
        if not line.strip():
            continue
        try:
            q = json.loads(line)
        except ValueError as e:
            errs.append("line %d: not JSON: %s" % (n, e))
            continue
        i = q.get("id")
        if not isinstance(i, str) or not i:
            errs.append("line %d: no id" % n)
        elif i in ids:
            errs.append("line %d: id %s repeated" % (n, i))
        ids.add(i)
        if not isinstance(q.get("question"), str) or not q["question"].strip():
            errs.append("line %d: no question" % n)
        if q.get("fire") is True:
            fire += 1
            pages = q.get("pages")
            if not isinstance(pages, list) or not pages:
                errs.append("line %d: fire:true without pages" % n)
                continue
            for p in pages:
                if not isinstance(p, str) or p.startswith("/") or ".." in p.split("/") \
                        or not os.path.isfile(os.path.join(vault, p)):
                    errs.append("line %d: page %r is not in the vault" % (n, p))
                else:
                    srcs[p.split("/")[0]] = srcs.get(p.split("/")[0], 0) + 1
        elif q.get("fire") is False:
            silent += 1
            if q.get("pages"):
                errs.append("line %d: fire:false names pages" % n)
        else:
            errs.append("line %d: fire is neither true nor false" % n)
for e in errs[:50]:
    print("vault-dev --check: " + e, file=sys.stderr)
if fire < 60:
    errs.append("only %d fire:true queries (at least 60)" % fire)
    print("vault-dev --check: " + errs[-1], file=sys.stderr)
if silent < 30:
    errs.append("only %d fire:false prompts (at least 30)" % silent)
    print("vault-dev --check: " + errs[-1], file=sys.stderr)
print("%s: %d fire, %d must not fire, pages by source: %s, %d problems"
      % (qfile, fire, silent, " ".join("%s=%d" % kv for kv in sorted(srcs.items())), len(errs)))
sys.exit(1 if errs else 0)
EOF
}

# put SRC REL: copy SRC to $OUT/REL (decompressing a .gz), refusing to
# overwrite: two sources landing on one path is a bug in this script.
put() {
    dst=$OUT/$2
    if [ -e "$dst" ]; then
        echo "vault-dev: two sources for $2" >&2
        exit 1
    fi
    mkdir -p "$(dirname "$dst")"
    case $1 in
        *.gz) gzip -dc "$1" > "$dst" ;;
        *) cat "$1" > "$dst" ;;
    esac
}

need_dir() {
    [ -d "$1" ] && return 0
    echo "vault-dev: $1 is missing ($2)" >&2
    exit 1
}

case ${1:-} in
    --check) [ $# -eq 3 ] || usage; check "$2" "$3"; exit ;;
    ''|-*) usage ;;
esac
[ $# -eq 1 ] || usage
OUT=$1
if [ -e "$OUT" ] && [ -n "$(ls -A "$OUT" 2>/dev/null)" ]; then
    echo "vault-dev: $OUT exists and is not empty" >&2
    exit 1
fi
mkdir -p "$OUT"
# The file order of find differs between machines; the copies do not
# depend on it, but the listing a caller sees should. The loops below split
# find's output at newlines only, and expand no wildcard in a name.
export LC_ALL=C
IFS='
'
set -f

put "$ROOT/README.md" cairn/README.md
for f in $(cd "$ROOT/docs" && find . -name '*.md' | sort); do
    case $f in ./VAULTS-EVAL.md) continue ;; esac
    put "$ROOT/docs/$f" "cairn/${f#./}"
done

need_dir "$SHARED/docs" "../shared beside the repository, or CAIRN_SHARED"
for f in $(cd "$SHARED/docs" && find . -name '*.md' | sort); do
    put "$SHARED/docs/$f" "shared-docs/${f#./}"
done
need_dir "$SHARED/seeds" "../shared beside the repository, or CAIRN_SHARED"
for f in $(cd "$SHARED/seeds" && find . -name '*.txt' | sort); do
    f=${f#./}
    put "$SHARED/seeds/$f" "seeds/${f%.txt}.md"
done

for p in $(printf %s "$DEBIAN_PKGS" | tr " " "\n"); do
    d=/usr/share/doc/$p
    need_dir "$d" "package $p: sh scripts/deps.sh installs it"
    n=0
    # -L: some packages' doc folders are symlinks to a sibling package's
    for f in $(cd "$d" && find -L . \( -name '*.md' -o -name '*.md.gz' \) -type f | sort); do
        rel=${f#./}
        put "$d/$rel" "debian/$p/${rel%.gz}"
        n=$((n + 1))
    done
    if [ "$n" -eq 0 ]; then
        echo "vault-dev: $d has no Markdown (documentation excluded by dpkg?)" >&2
        exit 1
    fi
done

files=$(find "$OUT" -type f | wc -l)
bytes=$(find "$OUT" -type f -exec cat {} + | wc -c)
echo "vault-dev: $OUT: $files files, $bytes bytes"
