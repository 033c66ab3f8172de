#!/bin/sh
# keep_same.sh OLD NEW [DIR]: do two cairn builds write the same store?
#
# The same adds with each build (generated chats: 12,000 messages, past the
# tier build's 10,000, then 2,000 more into the tiered store, a reply
# extended in its own group and again in a later add; and the 2,000 into
# an empty store), then the keepers' tables (tier_*, post_*), the messages,
# their totals and runs and FTS5's segments dumped sorted and compared.
# Build both with CFLAGS=-DADD_GROUP_MS=1000000 so that groups are cut by
# count alone (by time, the build's place and FTS5's segments depend on
# the machine's load). Exit 0: the same; 1: a difference (diff's head
# printed).
set -e
OLD=$1 NEW=$2 D=${3:-/tmp/keep_same}
[ -x "$OLD" ] && [ -x "$NEW" ] || { echo "usage: keep_same.sh OLD NEW [DIR]" >&2; exit 2; }
mkdir -p "$D"
HERE=$(cd "$(dirname "$0")" && pwd)
python3 "$HERE/gen_data.py" ingest "$D/base.jsonl" --sessions 600 --messages 12000 --seed 1 >/dev/null 2>&1
python3 "$HERE/gen_data.py" ingest "$D/tail0.jsonl" --sessions 100 --messages 2000 --seed 27 >/dev/null 2>&1
sed 's/"bench-/"tail-/g' "$D/tail0.jsonl" > "$D/tail.jsonl"
q='how do we fix the cache in the build'
a='the fix is to clear the cache and the build, then fix the test and the fix of the fix'
printf '%s\n' \
  "{\"id\": \"ext-1\", \"messages\": [{\"id\": \"m1\", \"role\": \"user\", \"content\": \"$q\"}, {\"id\": \"m2\", \"role\": \"assistant\", \"content\": \"the fix is to\"}]}" \
  "{\"id\": \"ext-1\", \"messages\": [{\"id\": \"m1\", \"role\": \"user\", \"content\": \"$q\"}, {\"id\": \"m2\", \"role\": \"assistant\", \"content\": \"$a\"}]}" \
  > "$D/ext.jsonl"
printf '%s\n' \
  "{\"id\": \"ext-1\", \"messages\": [{\"id\": \"m1\", \"role\": \"user\", \"content\": \"$q\"}, {\"id\": \"m2\", \"role\": \"assistant\", \"content\": \"$a; and the cache again\"}]}" \
  "{\"id\": \"tail-00003\", \"messages\": [{\"role\": \"user\", \"content\": \"the fix of the build and the cache, the test\"}]}" \
  > "$D/ext2.jsonl"
export CAIRN_EMBED_MODEL=none
for side in old new; do
  if [ $side = old ]; then B=$OLD; else B=$NEW; fi
  rm -f "$D/$side".s.db* "$D/$side".e.db*
  for f in base tail ext ext2; do "$B" --db "$D/$side.s.db" add -q "$D/$f.jsonl"; done
  "$B" --db "$D/$side.e.db" add -q "$D/tail.jsonl"
  for db in s e; do
    for t in "* FROM tier_state" "* FROM tier_terms" "* FROM tier_post" "* FROM post_state" \
             "* FROM post_terms" "term, lo, hi, n, hex(data) FROM post_blocks" "* FROM post_dirty" \
             "id, session, position, ntok, hash, content FROM messages" "* FROM session_stats" \
             "* FROM msg_runs" "id, hex(block) FROM messages_fts_data"; do
      echo "== $t"; sqlite3 "$D/$side.$db.db" "SELECT $t" | sort
    done > "$D/$side.$db.dump"
  done
done
rc=0
for db in s e; do
  if cmp -s "$D/old.$db.dump" "$D/new.$db.dump"; then
    echo "$db: the same ($(wc -l < "$D/new.$db.dump") lines; tier_post $(sqlite3 "$D/new.$db.db" "SELECT count(*) FROM tier_post") rows, post_blocks $(sqlite3 "$D/new.$db.db" "SELECT count(*) FROM post_blocks"))"
  else
    echo "$db: DIFFERENT"; diff "$D/old.$db.dump" "$D/new.$db.dump" | head -20; rc=1
  fi
done
exit $rc
