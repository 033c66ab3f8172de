#!/bin/sh
# scripts/test.sh: the README's second command. Installs what is missing,
# builds, and runs every test (unit, black-box, and the same under
# AddressSanitizer + UndefinedBehaviorSanitizer). Ends with the list of
# skips and the line "N passed, N failed, N skipped" of the last run.
set -e
cd "$(dirname "$0")/.."
sh scripts/deps.sh
make -j2 all >/dev/null
make -j2 test
make -j2 check
