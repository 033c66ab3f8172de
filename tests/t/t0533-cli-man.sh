#!/bin/sh
# t0533-cli-man: the man page cairn(1) (docs/cairn.1) renders without a
# warning and documents every command of the table (cli/main.c, as
# `cairn --help` lists them) and the exit codes; the bash and zsh
# completions (completions/) offer every command, and bash's completes
# session ids and project names from the store; `make install` puts all
# three where man, bash-completion and zsh look.
. "$(dirname "$0")/lib.sh"
MAN="$ROOT/docs/cairn.1"
cmds=$("$CAIRN" --help | sed -n '/^commands:/,/^$/p' | awk 'NF && !/^commands:/ {print $1}')
check "cairn --help lists the commands" [ "$(printf '%s\n' "$cmds" | grep -c .)" -ge 17 ]

if command -v groff >/dev/null 2>&1; then
    warn=$(groff -man -Tutf8 -ww -z "$MAN" 2>&1)
    eq "groff renders cairn.1 without a warning" "$warn" ""
    text=$(groff -man -Tascii -P-cbou "$MAN" 2>&1)
    contains "the rendered page has its exit codes" "$text" "EXIT STATUS"
    contains "the rendered page has its environment" "$text" "ENVIRONMENT"
else
    t_skip "no groff to render the man page (scripts/deps.sh installs groff-base)"
fi
for c in $cmds; do
    check "the man page documents $c" grep -Eq "^\.B[IR]? \"?$c( |\"|$)" "$MAN"
done
for code in 0 1 2 3; do
    check "the man page has exit code $code" grep -qx "\.B $code" "$MAN"
done
contains "the README has the exit codes" "$(cat "$ROOT/README.md")" "3 nothing found"

# zsh: every command is in the list it offers
for c in $cmds; do
    check "zsh completion offers $c" grep -q "^        '$c:" "$ROOT/completions/_cairn"
done

# bash: run the completion function as bash would
"$CAIRN" add -q - <<'J'
{"id":"alpha-1","project":"garden","messages":[{"role":"user","content":"seeds"}]}
{"id":"beta-2","project":"attic","messages":[{"role":"user","content":"boxes"}]}
J
cat > "$TMP/comp.bash" <<'B'
. "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
_cairn
printf '%s\n' "${COMPREPLY[@]}"
B
comp() { PATH="$(dirname "$CAIRN"):$PATH" bash "$TMP/comp.bash" "$ROOT/completions/cairn.bash" "$@"; }
out=$(comp cairn "")
for c in $cmds; do
    check "bash completion offers $c" printf '%s\n' "$out" | grep -qx "$c"
done
eq "bash: a prefix completes" "$(comp cairn sess)" "sessions"
eq "bash: session ids for show" "$(comp cairn show "" | sort | tr '\n' ' ')" "alpha-1 beta-2 "
eq "bash: projects for --project" "$(comp cairn sessions --project "" | sort | tr '\n' ' ')" "attic garden "
eq "bash: the --db store is read" "$(comp cairn --db "$TMP/other.db" show "")" ""
contains "bash: options of a command" "$(comp cairn recall --ex)" "--explain"

# make install puts them in place (the binaries already built: -o all)
BUILD_DIR=$(dirname "$CAIRN")
if make -s -C "$ROOT" install -o all BUILD="$BUILD_DIR" DESTDIR="$TMP/inst" PREFIX=/usr \
        >"$TMP/install.out" 2>&1; then
    for f in share/man/man1/cairn.1 share/bash-completion/completions/cairn share/zsh/site-functions/_cairn; do
        check "make install: /usr/$f" [ -f "$TMP/inst/usr/$f" ]
    done
else
    bad "make install failed: $(head -c 400 "$TMP/install.out")"
fi
t_done
