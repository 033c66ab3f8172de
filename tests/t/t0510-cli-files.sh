#!/bin/sh
# t0510-cli-files: one command a file under cli/, named after it (issue
# 14): every command of the table in cli/main.c has cli/cmd_<name>.c that
# defines cmd_<name>, and no cli/cmd_*.c defines another command's entry
# point. Helpers several commands share live in common.c or a small shared
# file (backfill.c), declared in cli/cli.h. Reads the source; runs nothing.
. "$(dirname "$0")/lib.sh"

# layout DIR: one line "BAD: ..." for each break of the rule; none if kept
layout() {
    names=$(sed -n 's/^    { "\([a-z-]*\)", *cmd_[a-z_]*,.*/\1/p' "$1/main.c")
    [ -n "$names" ] || echo "BAD: no command table in $1/main.c"
    for n in $names; do
        f="$1/cmd_$n.c"
        [ -f "$f" ] || { echo "BAD: command $n has no cmd_$n.c"; continue; }
        grep -q "^int cmd_$n(" "$f" || echo "BAD: cmd_$n.c does not define cmd_$n"
    done
    for f in "$1"/cmd_*.c; do
        b=$(basename "$f" .c)
        grep -o '^int cmd_[a-z_]*(' "$f" | sed 's/^int //; s/($//' | while read -r fn; do
            [ "$fn" = "$b" ] || echo "BAD: $b.c defines $fn"
        done
    done
}

out=$(layout "$ROOT/cli")
eq "every command in its own cli/cmd_<name>.c" "$out" ""
n=$(sed -n 's/^    { "\([a-z-]*\)", *cmd_.*/\1/p' "$ROOT/cli/main.c" | wc -l)
check "the table was read ($n commands)" test "$n" -ge 15

# The check itself can fail: two commands in one file, a command with no
# file of its own.
cp -r "$ROOT/cli" "$TMP/cli"
printf 'int cmd_extra(int argc, char **argv, struct cli_ctx *ctx);\nint cmd_extra(int argc, char **argv, struct cli_ctx *ctx) { return 0; }\n' >> "$TMP/cli/cmd_stats.c"
rm "$TMP/cli/cmd_show.c"
out=$(layout "$TMP/cli")
contains "a second command in a file is found" "$out" "cmd_stats.c defines cmd_extra"
contains "a command with no file is found" "$out" "command show has no cmd_show.c"
t_done
