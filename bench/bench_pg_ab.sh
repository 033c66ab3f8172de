#!/bin/sh
# bench/bench_pg_ab.sh: recall on a PostgreSQL server store by two or more
# builds of cairn, against SQLite, on one server and one generated store
# (bench/gen_data.py, as bench_pg_recall.sh's), alternated question by
# question: SQLite (the first build), then each build's server read. Every
# answer is compared with SQLite's, byte for byte (a difference fails the
# bench). Two ways, each printing medians and ratios to SQLite:
#   bench pg_ab_proc  ...  a whole `cairn recall` process each (wall ms, and
#                          the client's CPU ms: user + system)
#   bench pg_ab_mcp   ...  the `recall` tool of one `cairn mcp` a build and
#                          store (the store opened by a first call, untimed)
#   bench pg_ab_server ... the server's time by build and way (its log of
#                          every statement during the timed questions,
#                          PGAPPNAME telling the builds apart): the sum, and
#                          the statements that took most, summed by kind
#   sh bench/bench_pg_ab.sh MESSAGES RUNS NAME=CAIRN[@V] [NAME=CAIRN[@V]...]
# The first build writes the stores (add, push), so the server is at its
# schema version. A build that knows an older version refuses a newer
# server: NAME=CAIRN@V reads it as version V (cairn.meta's schema_version
# set to V for that build's calls and its mcp's open, outside the timing,
# and set back after; the newer version's additions stay on the server,
# unread). Skips (says why) where no PostgreSQL 15 is installed.
set -u
M=$1 RUNS=$2
shift 2
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CAIRN=${1#*=}
. "$ROOT/tests/tools/pg.sh"
pg_bench_start pg_ab
export CAIRN_EMBED_MODEL=none
pg_login_roles alice || exit 1
ALICE=$(pg_url alice alice-pw)
A="$TMP/a.db"
python3 "$ROOT/bench/gen_data.py" ingest "$TMP/in.jsonl" --sessions $((M / 20)) --messages "$M" \
    --seed 11 >/dev/null 2>&1 || exit 1
"$CAIRN" --db "$A" add -q "$TMP/in.jsonl" || exit 1
"$CAIRN" --db "$A" sync --push -q --batch 2000 --server "$ALICE" || exit 1
pg_sql cairn_admin "$PG_ADMIN_PW" "VACUUM ANALYZE" >/dev/null
# every statement's duration, with the client's application name
pg_sql cairn_admin "$PG_ADMIN_PW" "ALTER SYSTEM SET log_min_duration_statement = 0" >/dev/null
pg_sql cairn_admin "$PG_ADMIN_PW" "ALTER SYSTEM SET log_line_prefix = '[%a] '" >/dev/null
pg_sql cairn_admin "$PG_ADMIN_PW" "SELECT pg_reload_conf()" >/dev/null
echo "# pg_ab: $M messages, server version" \
    "$(pg_sql cairn_admin "$PG_ADMIN_PW" "SELECT value FROM cairn.meta WHERE key = 'schema_version'")"

PG_VERSION_NOW=$(pg_sql cairn_admin "$PG_ADMIN_PW" "SELECT value FROM cairn.meta WHERE key = 'schema_version'")
export PG_SOCK PG_PORT PG_ADMIN_PW PG_VERSION_NOW
PYTHONPATH="$ROOT/tests/mcp" python3 - "$A" "$ALICE" "$RUNS" "$M" "$PG_DIR/server.log" "$@" <<'EOF' || exit 1
import collections, os, re, resource, subprocess, sys, time
from mcp_client import Mcp
db, url, runs, m, log = sys.argv[1:6]
builds, asver = [], {}
for a in sys.argv[6:]:
    n, b = a.split("=", 1)
    b, _, v = b.partition("@")
    builds.append((n, b))
    asver[n] = v

def version(v):
    # the schema version the next calls read the server as (untimed)
    subprocess.run(["psql", "-X", "-q", "-h", os.environ["PG_SOCK"], "-p", os.environ["PG_PORT"],
                    "-U", "cairn_admin", "-d", "postgres", "-c",
                    "UPDATE cairn.meta SET value = '%d' WHERE key = 'schema_version'" % int(v)],
                   check=True, capture_output=True,
                   env=dict(os.environ, PGPASSWORD=os.environ["PG_ADMIN_PW"]))
qs = ["how did we fix the connection timeout in the client",
      "what was the plan for the database migration",
      "request_address",
      "config.toml max_retries",
      "北京的服务器",
      "what did we discuss last March",
      "error in the parser when reading a large file",
      "which test failed on the build server"]
med = lambda v: sorted(v)[len(v) // 2] if len(v) % 2 else sum(sorted(v)[len(v) // 2 - 1:len(v) // 2 + 1]) / 2
names = ["sqlite"] + [n for n, _ in builds]

def proc(cairn, store, q, app):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    out = subprocess.run([cairn, "--db", store, "recall", q], capture_output=True,
                         env=dict(os.environ, PGAPPNAME=app)).stdout
    wall = (time.monotonic() - t0) * 1000
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1000
    return out, wall, cpu

wall = {n: [] for n in names}
cpu = {n: [] for n in names}
for _ in range(int(runs)):
    for q in qs:
        ref, w, c = proc(builds[0][1], db, q, "sqlite")
        wall["sqlite"].append(w); cpu["sqlite"].append(c)
        for n, b in builds:
            if asver[n]:
                version(asver[n])
            out, w, c = proc(b, url, q, n + "-proc")
            if asver[n]:
                version(os.environ["PG_VERSION_NOW"])
            if out != ref:
                sys.exit("# pg_ab: %s: \"%s\" differs from SQLite" % (n, q))
            wall[n].append(w); cpu[n].append(c)

def line(kind, t, extra=""):
    s = med(t["sqlite"])
    print("bench %s messages=%s runs=%s questions=%d %s %s%s" % (kind, m, runs, len(qs),
          " ".join("%s_p50_ms=%.0f" % (n, med(t[n])) for n in names),
          " ".join("%s_vs_sqlite=%.2f" % (n, med(t[n]) / s) for n in names[1:]), extra))

line("pg_ab_proc", wall, " cpu_p50_ms: " + " ".join("%s=%.0f" % (n, med(cpu[n])) for n in names))
t = {n: [] for n in names}
clients = [("sqlite", Mcp(builds[0][1], env={"CAIRN_DB": db}, name="bench"))] + \
          [(n, Mcp(b, env={"CAIRN_DB": url, "PGAPPNAME": n + "-mcp"}, name="bench"))
           for n, b in builds]
try:
    for n, c in clients:
        c.__enter__()
        if asver.get(n):
            version(asver[n])
        c.call("recall", {"query": qs[0]})          # the store opens on the first call
        if asver.get(n):
            version(os.environ["PG_VERSION_NOW"])
    for _ in range(int(runs)):
        for q in qs:
            ref = None
            for n, c in clients:
                t0 = time.monotonic()
                out = c.call("recall", {"query": q})
                t[n].append((time.monotonic() - t0) * 1000)
                if ref is None:
                    ref = out
                elif out != ref:
                    sys.exit("# pg_ab_mcp: %s: \"%s\" differs from SQLite" % (n, q))
finally:
    for _, c in clients:
        c.__exit__(None, None, None)
line("pg_ab_mcp", t)
# the server's log: "[app] LOG:  duration: 1.234 ms  statement: SELECT ..."
# (or "execute <unnamed>: SELECT ..."); the first words name the kind
tot, kinds = collections.Counter(), collections.defaultdict(collections.Counter)
pat = re.compile(r"^\[([^\]]*)\] LOG:  duration: ([0-9.]+) ms  (?:statement|execute [^:]*): (.*)")
for l in open(log, encoding="utf-8", errors="replace"):
    g = pat.match(l)
    if g and g.group(1).endswith(("-proc", "-mcp")):
        tot[g.group(1)] += float(g.group(2))
        kinds[g.group(1)][" ".join(g.group(3).split()[:6])[:60]] += float(g.group(2))
for app in sorted(tot):
    top = kinds[app].most_common(3)
    print("bench pg_ab_server messages=%s app=%s server_ms=%.0f top: %s" % (m, app, tot[app],
          "; ".join("%.0f ms %s" % (v, k) for k, v in top)))
EOF
