#!/bin/sh
# t0514-columns: no line of the C sources (src/, cli/, include/) is wider
# than 100 columns, the style limit (display width, tabs at 8: wc -L in a
# UTF-8 locale). Reads the source; runs nothing.
. "$(dirname "$0")/lib.sh"
n=0
wide=""
for f in $(cd "$ROOT" && ls src/*.c src/*/*.c src/*/*.h src/*.h cli/*.c cli/*/*.c cli/*.h \
               cli/*/*.h include/*.h 2>/dev/null); do
    n=$((n + 1))
    w=$(LC_ALL=C.UTF-8 wc -L < "$ROOT/$f")
    [ "$w" -gt 100 ] && wide="$wide $f($w)"
done
check "more than 100 files read ($n)" [ "$n" -gt 100 ]
eq "files with a line over 100 columns" "$wide" ""
# the check itself sees a wide line
printf '%0101d\n' 0 > "$TMP/wide.c"
eq "a 101-column line is seen" "$(LC_ALL=C.UTF-8 wc -L < "$TMP/wide.c")" 101
t_done
