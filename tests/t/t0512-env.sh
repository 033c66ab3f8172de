#!/bin/sh
# t0512-env: the library reads only the environment variables that
# docs/ARCHITECTURE.md lists (issue 14): every other setting reaches it
# through cairn_set, from the CLI's one reader cli/env.c. A getenv in
# src/ of a variable not in the list, or of a name the source does not
# spell out, fails. Reads the source; runs nothing.
. "$(dirname "$0")/lib.sh"

# The list: the backquoted names on the line of docs/ARCHITECTURE.md that
# begins "Environment variables the library reads:".
allowed() {
    sed -n 's/^Environment variables the library reads: //p' "$1" | grep -o '`[A-Z_][A-Z0-9_]*`' |
        tr -d '`' | sort -u
}

# reads DIR: one line per variable read under DIR (getenv, secure_getenv),
# "?FILE:LINE" for a read whose name is not a string literal
reads() {
    grep -rn --include='*.c' --include='*.h' -E '\b(secure_)?getenv[ ]*\(' "$1" |
        while IFS= read -r line; do
            names=$(printf '%s\n' "$line" | grep -oE '\b(secure_)?getenv[ ]*\("[A-Za-z0-9_]+"' |
                    sed 's/.*("//; s/"$//')
            calls=$(printf '%s\n' "$line" | grep -oE '\b(secure_)?getenv[ ]*\(' | wc -l)
            given=$(printf '%s' "$names" | grep -c . || true)
            [ -n "$names" ] && printf '%s\n' "$names"
            [ "$calls" -gt "$given" ] && printf '?%s\n' "$(printf '%s' "$line" | cut -d: -f1,2)"
        done | sort -u
}

# unlisted DIR DOC: the reads under DIR that DOC does not list
unlisted() {
    allowed "$2" > "$TMP/allowed"
    reads "$1" | grep -vxF -f "$TMP/allowed"
}

n=$(allowed "$ROOT/docs/ARCHITECTURE.md" | wc -l)
check "docs/ARCHITECTURE.md lists the variables ($n)" test "$n" -ge 1
check "src/ reads some variable (the scan finds getenv)" test -n "$(reads "$ROOT/src")"
eq "src/ reads only the listed variables" "$(unlisted "$ROOT/src" "$ROOT/docs/ARCHITECTURE.md")" ""

# The check itself can fail: a new variable, and a name it cannot see.
cp -r "$ROOT/src" "$TMP/src"
printf 'static const char *knob(void) { return getenv("CAIRN_NEW_KNOB"); }\n' >> "$TMP/src/api.c"
printf 'static const char *any(const char *n) { return getenv(n); }\n' >> "$TMP/src/store/tx.c"
out=$(unlisted "$TMP/src" "$ROOT/docs/ARCHITECTURE.md")
contains "an unlisted variable is found" "$out" "CAIRN_NEW_KNOB"
contains "a read of a computed name is found" "$out" "?$TMP/src/store/tx.c:"
t_done
