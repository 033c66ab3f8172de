#!/bin/sh
# scripts/deps.sh: installs the Debian packages cairn builds and tests
# with, when any is missing; does nothing when all are there. Uses sudo
# when not root. Idempotent.
#   sh scripts/deps.sh --list   prints the packages, one a line, and exits
# (tests/t/t0501-deps.sh checks that every program and Python module the
# tests use comes from one of them; scripts/clean-env.sh runs the tests
# where nothing else is installed).
#
# libcurl4, libopenblas0, libzip4 and libmicrohttpd12 are the run-time
# libraries cairn dlopens on first use (not linked; the -dev packages give
# their headers),
# listed so they are there even if a -dev package stops depending on them.
# python3-protobuf: sentencepiece's model_pb2 (tests/tools/make_spm_unigram.py)
# needs it and it is not even a Recommends of python3-sentencepiece.
# nodejs, npm: the tests that check against npm packages (MCP clients,
# Claude Code, HF tokenizers, USE-lite); npm unless an npm not from
# Debian's package is on PATH (NodeSource's nodejs carries its own and
# conflicts with Debian's).
# ca-certificates: `cairn model install` fetches over https (libcurl
# only Recommends it, and recommends are not installed here).
# iproute2: `ip` brings loopback up in t0400's private network namespace.
# chromium: t0541 drives the `cairn web` page in it (playwright-core from npm);
# fonts-wqy-microhei: a CJK font, without which its Chinese screenshots are boxes.
# groff-base: t0533 renders the man page (docs/cairn.1) and checks it warns of nothing.
# postgresql-15, postgresql-server-dev-15, libpq-dev, libpq5: `cairn sync` loads
# libpq (libpq5) on first use, its headers from libpq-dev;
# the tests start a real PostgreSQL 15 (tests/tools/pg.sh) and build the
# pgvector extension against the server headers (below).
# manpages-fr, -de, -es, -pt-br, -pl, -ru, -ja and debian-faq-ko (Debian 12
# has no manpages-ko): real text in the languages the budget counter is
# measured on (tests/tools/tokcount-compare.sh, docs/TOKENS.md).
# docker-doc, libbenchmark-dev: Markdown documentation in /usr/share/doc,
# part of the development vault scripts/vault-dev.sh builds (docs/VAULTS-EVAL.md;
# docker-doc depends on nothing, libbenchmark-dev on its small library).
# wordnet-base: WordNet 3.0's plain-text database (/usr/share/wordnet), read by
# bench/wordnet_probe.py (issue 16's hypernym probe; no Python WordNet module).
set -e
PKGS="build-essential pkg-config libsqlite3-dev libcjson-dev libpcre2-dev libutf8proc-dev \
libstemmer-dev libopenblas-dev libcurl4-openssl-dev libmicrohttpd-dev libzip-dev sqlite3 valgrind python3 \
groff-base libcurl4 libopenblas0 libzip4 libmicrohttpd12 chromium fonts-wqy-microhei python3-sentencepiece python3-protobuf nodejs iproute2 ca-certificates \
manpages-fr manpages-de manpages-es manpages-pt-br manpages-pl manpages-ru manpages-ja debian-faq-ko \
docker-doc libbenchmark-dev wordnet-base \
postgresql-15 postgresql-server-dev-15 libpq-dev libpq5"
if ! command -v npm >/dev/null 2>&1 ||
   dpkg-query -W -f='${Status}' npm 2>/dev/null | grep -q "install ok installed"; then
    PKGS="$PKGS npm"
fi
if [ "${1:-}" = "--list" ]; then
    printf '%s\n' $PKGS
    exit 0
fi
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ -n "$missing" ]; then
    echo "installing:$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    # shellcheck disable=SC2086
    $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
# pgvector: Debian 12 packages none. The tests build it from the release
# source in ../shared/deps (never downloaded), once, when the extension is
# missing; users install it from their distribution (docs/POSTGRES.md).
# OPTFLAGS="": no -march=native, so the build runs on any x86-64.
PGV=pgvector-0.8.6
# (CAIRN_SHARED names another ../shared, e.g. from a git worktree.)
PGV_TGZ="${CAIRN_SHARED:-$(cd "$(dirname "$0")/.." && pwd)/../shared}/deps/$PGV.tar.gz"
PG_SHARE=$(/usr/lib/postgresql/15/bin/pg_config --sharedir 2>/dev/null || true)
if [ -n "$PG_SHARE" ] && [ ! -f "$PG_SHARE/extension/vector.control" ] && [ -f "$PGV_TGZ" ]; then
    echo "building $PGV" >&2
    d=$(mktemp -d)
    tar xzf "$PGV_TGZ" -C "$d"
    (cd "$d/$PGV" && make -s PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config OPTFLAGS="" >/dev/null &&
        $SUDO make -s PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config install >/dev/null)
    rm -rf "$d"
fi
