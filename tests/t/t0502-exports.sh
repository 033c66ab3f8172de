#!/bin/sh
# t0502-exports: libcairn.so exports exactly the functions include/cairn.h
# marks CAIRN_API, nothing else. The library is built with
# -fvisibility=hidden (Makefile): before that it exported ~200 internals
# (gather, pack, pool_free, hash64, cairn__err...), which a program could
# link against by accident or clash with.
. "$(dirname "$0")/lib.sh"
lib="$(dirname "$CAIRN")/libcairn.so"
need_bin "$CAIRN"
[ -f "$lib" ] || { bad "$lib not built"; t_done; exit 1; }
command -v nm >/dev/null 2>&1 || t_skip_all "no nm (binutils)"

# Defined dynamic symbols of the library: T (code) and D/B/R (data).
nm -D --defined-only "$lib" | awk '{print $NF}' | sort -u > "$TMP/exported"
# The functions the header declares: one CAIRN_API declaration a function.
sed -n 's/^CAIRN_API .*[ *]\(cairn_[a-z0-9_]*\)(.*/\1/p' "$ROOT/include/cairn.h" | sort -u > "$TMP/declared"

check "nm listed the library's symbols" test -s "$TMP/exported"
# 52 functions today: the count guards the sed above against matching nothing
check "the header declares its functions CAIRN_API" test "$(wc -l < "$TMP/declared")" -ge 45

leaked=$(grep -v '^cairn_' "$TMP/exported" | head -20)
eq "only cairn_* symbols are exported" "$leaked" ""
extra=$(comm -23 "$TMP/exported" "$TMP/declared" | head -20)
eq "every exported symbol is declared in cairn.h" "$extra" ""
missing=$(comm -13 "$TMP/exported" "$TMP/declared")
eq "every CAIRN_API function is exported" "$missing" ""

# A program using only the header links against the shared library and runs.
cat > "$TMP/use.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cairn.h"
int main(void) {
    struct cairn *db = NULL;
    if (cairn_open(getenv("CAIRN_DB"), 0, &db) != CAIRN_OK) return 1;
    printf("%s %d\n", cairn_errstr(CAIRN_OK), cairn_count_tokens("hello world", strlen("hello world")) > 0);
    cairn_close(db);
    return 0;
}
C
# The sanitizer build's library needs its runtime in the program too.
san=
nm -D --undefined-only "$lib" | grep -q __asan_ && san="-fsanitize=address,undefined"
if command -v cc >/dev/null 2>&1; then
    if cc -std=c11 $san -I"$ROOT/include" -o "$TMP/use" "$TMP/use.c" \
            -L"$(dirname "$lib")" -lcairn -Wl,-rpath,"$(dirname "$lib")" 2> "$TMP/cc.err"; then
        ok
        out=$(LD_LIBRARY_PATH="$(dirname "$lib")" "$TMP/use" 2>&1)
        eq "a program on the header alone runs against libcairn.so" "$out" "ok 1"
    else
        bad "a program on the header alone links against libcairn.so: $(head -c 400 "$TMP/cc.err")"
    fi
else
    t_skip "no cc: the link against libcairn.so is not tried"
fi
t_done
