#!/bin/sh
# t0530-cli-help: every command of the table (cli/main.c), as `cairn --help`
# lists it, answers `--help`, `-h` and `cairn help COMMAND` with its usage
# on stdout and exit 0, and runs nothing: a new command without a usage
# text fails here. Before this, `add|recall|sessions|show|export|setup
# --help` said "unknown option" (exit 2), `forget --help` looked for a
# session "--help", and `doctor --help`, `stats --help` ran the command.
. "$(dirname "$0")/lib.sh"
cmds=$("$CAIRN" --help | sed -n '/^commands:/,/^$/p' | awk 'NF && !/^commands:/ {print $1}')
n=$(printf '%s\n' "$cmds" | grep -c .)
check "cairn --help lists the commands ($n)" [ "$n" -ge 17 ]
contains "the table has doctor" "$cmds" "doctor"
for c in $cmds; do
    for form in "$c --help" "$c -h" "help $c"; do
        # shellcheck disable=SC2086
        out=$(timeout 10 "$CAIRN" $form </dev/null 2>"$TMP/err"); rc=$?
        eq "cairn $form: exit 0" "$rc" 0
        case "$out" in
            "usage: cairn $c"*|"usage: cairn [--db PATH] $c"*) ok ;;
            *) bad "cairn $form: stdout is not its usage: $(printf %s "$out" | head -c 200)" ;;
        esac
        eq "cairn $form: nothing on stderr" "$(cat "$TMP/err")" ""
    done
done
# --help after other arguments is still help, and runs nothing
out=$("$CAIRN" forget some-session --help); rc=$?
eq "forget SESSION --help: exit 0" "$rc" 0
contains "forget SESSION --help: usage" "$out" "usage: cairn forget"
check "no store was created by any of it" [ ! -e "$CAIRN_DB" ]
# help for what is not a command is a usage error
"$CAIRN" help no-such-command >/dev/null 2>&1; rc=$?
eq "help for an unknown command: exit 2" "$rc" 2
t_done
