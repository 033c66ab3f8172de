#!/bin/sh
# t0300-mcp: golden JSON-RPC exchanges with `cairn mcp` (both protocol eras,
# every tool, bad input, cancellation, 5 MB and 64 MB lines, EOF), driven by
# tests/mcp/mcp_golden.py over real pipes. Never skipped.
. "$(dirname "$0")/lib.sh"
python3 "$ROOT/tests/mcp/mcp_golden.py" "$CAIRN"
