#!/usr/bin/env bash
# What one transfer costs the database, measured on a PRIVATE PostgreSQL 15 cluster so the machine's
# server is never reconfigured: initdb into a temporary directory, its own port, pg_stat_statements preloaded,
# fsync and synchronous_commit on, autovacuum off (as on the machine's server; it also keeps the dead tuples
# countable), everything else at the machine's settings (shared_buffers 128MB, max_wal_size 1GB).
#
# Each variant is a schema and a pgbench script. They run interleaved, a -> b -> ... -> a -> b, ROUNDS times,
# each run on a fresh database after a CHECKPOINT and a reset of every statistic, at the service's pool size
# (-c 20). Per transfer (= one pgbench transaction = the three statements of the happy path):
#   statements      pg_stat_statements calls, top level, in the run's database
#   commits         pg_stat_database.xact_commit
#   WAL bytes/recs  pg_stat_wal (cluster-wide; nothing else runs on the private cluster)
#   rows written    n_tup_ins + n_tup_upd over the database's tables; HOT = n_tup_hot_upd
#   index entries   b-tree leaf insertions counted in the run's WAL by pg_waldump (INSERT_LEAF, INSERT_POST,
#                   SPLIT_L, SPLIT_R: each carries one new index tuple), i.e. measured, not estimated
#   row locks       Heap LOCK records in the WAL (the foreign key's FOR KEY SHARE, when it writes one)
#   dead tuples     n_dead_tup at the end of the run (no vacuum ran)
#   CPU             utime+stime of the postmaster, its live children and its reaped children (cutime+cstime),
#                   before and after: every postgres process's CPU, in ms per transfer
#
# Usage: bench/dbcost.sh [variant ...]      a variant is NAME=SCHEMA:SCRIPT; SCHEMA is a .sql file, or
#        "migrations" (every Flyway migration), or "migrations<=N" (V1..VN). Default: seed, before (V1-V4 with
#        its statements), each step to V5, V5 with fence batches of 1, 4 (bench/transfer.pgbench) and 8, and a
#        probe without the pg_notify trigger.
#        Parts of a SCHEMA join with '+' (e.g. "migrations<=4+bench/dbcost/drop-fk.sql").
#        bench/dbcost.sh --size N               inserts N transfers through the service's happy path and reports
#                                              table and index bytes, scaled to one million.
# Env: T (seconds per run, 20), ROUNDS (2), CLIENTS (20 = quarkus.datasource.reactive.max-size), JOBS (2),
#      PORT (55432). Output: bench/out/dbcost-<time>.{md,jsonl} and the table on stdout.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BIN=/usr/lib/postgresql/15/bin
T=${T:-20}; ROUNDS=${ROUNDS:-2}; CLIENTS=${CLIENTS:-20}; JOBS=${JOBS:-2}; PORT=${PORT:-55432}
OUT=$ROOT/bench/out; mkdir -p "$OUT"
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
JSONL=$OUT/dbcost-$STAMP.jsonl; MD=$OUT/dbcost-$STAMP.md
TICK=$(getconf CLK_TCK)

SIZE=""
if [ "${1:-}" = "--size" ]; then SIZE=${2:?"--size N"}; shift 2; fi
if [ $# -eq 0 ]; then   # the floor, then the service before V5 and each step to today's service
  set -- seed=bench/dbcost/seed.sql:bench/seed.pgbench \
         "v4=migrations<=4:bench/dbcost/before-v4.pgbench" \
         "v4-no-fk=migrations<=4+bench/dbcost/drop-fk.sql:bench/dbcost/before-v4.pgbench" \
         "v5-fence-1=migrations:bench/dbcost/transfer-1.pgbench" \
         "v5-fence-4=migrations:bench/transfer.pgbench" \
         "v5-fence-8=migrations:bench/dbcost/transfer-8.pgbench" \
         "probe-v5-fence-1-no-notify=migrations+bench/dbcost/no-notify.sql:bench/dbcost/transfer-1.pgbench"
fi

# ---------------------------------------------------------------- the private cluster
TMP=$(mktemp -d /tmp/dbcost.XXXXXX)
DATA=$TMP/data
. bench/private-pg.sh
cleanup() { as_pg "$BIN/pg_ctl" -D "$DATA" -m fast stop >/dev/null 2>&1 || true; rm -rf "$TMP"; }
trap cleanup EXIT
private_pg_init "$TMP" "$PORT" "autovacuum = off" "min_wal_size = 80MB" "wal_keep_size = 4GB" "max_connections = 100"
as_pg "$BIN/pg_ctl" -D "$DATA" -l "$TMP/server.log" -w start >/dev/null
PG="-h 127.0.0.1 -p $PORT -U postgres"
export PGOPTIONS="-c client_min_messages=warning"
q() { psql -X -q -t -A $PG -d "$1" -v ON_ERROR_STOP=1 -c "$2"; }
q postgres "CREATE EXTENSION pg_stat_statements" >/dev/null
q template1 "CREATE EXTENSION pg_stat_statements" >/dev/null   # in every run's database
PM=$(head -1 "$DATA/postmaster.pid")

cpu_ticks() { # every postgres process of the private cluster, live and reaped
  local total pid
  total=$(awk '{print $14+$15+$16+$17}' "/proc/$PM/stat")
  for pid in $(cat "/proc/$PM/task/$PM/children"); do
    total=$((total + $(awk '{print $14+$15}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
  done
  echo "$total"
}

schema() { # db spec: parts joined by '+', each "migrations", "migrations<=N" or a .sql file, applied in order
  local db=$1 part f v max
  q postgres "DROP DATABASE IF EXISTS $db" >/dev/null; q postgres "CREATE DATABASE $db" >/dev/null
  for part in ${2//+/ }; do
    case "$part" in
      migrations*)
        max=${part#migrations}; max=${max#<=}; [ -z "$max" ] && max=999
        for f in $(ls service/src/main/resources/db/migration/V*__*.sql | sort -V); do   # Flyway's order
          v=$(basename "$f"); v=${v#V}; v=${v%%__*}
          if [ "$v" -le "$max" ]; then psql -X -q $PG -d "$db" -v ON_ERROR_STOP=1 -f "$f" >/dev/null; fi
        done ;;
      *) psql -X -q $PG -d "$db" -v ON_ERROR_STOP=1 -f "$part" >/dev/null ;;
    esac
  done
}

waldump_counts() { # lsn0 lsn1 -> "index_entries heap_locks"
  as_pg "$BIN/pg_waldump" --stats=record -p "$DATA/pg_wal" -s "$1" -e "$2" 2>/dev/null | awk '
    $1 ~ /^Btree\/(INSERT_LEAF|INSERT_POST|SPLIT_L|SPLIT_R)$/ {idx += $2}
    $1 ~ /^Heap\/LOCK$/ {lock += $2}
    END {print idx+0, lock+0}'
}

run_one() { # name spec script round
  local name=$1 spec=$2 script=$3 round=$4 db
  db=bench_$(echo "$1" | tr -c "a-z0-9\n" "_")
  schema "$db" "$spec"
  q "$db" "CHECKPOINT" >/dev/null
  q "$db" "SELECT pg_stat_reset(), pg_stat_statements_reset(), pg_stat_reset_shared('wal')" >/dev/null
  local lsn0 cpu0 cpu1 lsn1 log=$OUT/dbcost-$STAMP-$name-$round.txt
  lsn0=$(q "$db" "SELECT pg_current_wal_lsn()"); cpu0=$(cpu_ticks)
  pgbench -n -M prepared -c "$CLIENTS" -j "$JOBS" -T "$T" $PG -f "$script" "$db" > "$log" 2>&1
  # the backends flush their statistics as they exit: wait until pgbench's are gone
  while [ "$(q "$db" "SELECT count(*) FROM pg_stat_activity WHERE datname = '$db' AND pid <> pg_backend_pid()")" != 0 ]; do sleep 0.2; done
  cpu1=$(cpu_ticks); lsn1=$(q "$db" "SELECT pg_current_wal_lsn()")
  local n tps lat per
  # a script may carry several transfers per pgbench transaction ("-- transfers-per-run: N")
  per=$(awk '/^-- transfers-per-run:/{print $3; exit}' "$script"); per=${per:-1}
  n=$(awk -v per="$per" '/number of transactions actually processed/{split($NF,a,"/"); print a[1] * per; exit}' "$log")
  tps=$(awk -v per="$per" '/^tps = /{print $3 * per; exit}' "$log"); lat=$(awk '/latency average/{print $4; exit}' "$log")
  grep -q "number of failed transactions: 0\b" "$log" || { echo "pgbench $name reported failures, see $log" >&2; exit 1; }
  read -r idx locks < <(waldump_counts "$lsn0" "$lsn1")
  q "$db" "
    SELECT json_build_object(
      'variant', '$name', 'round', $round, 'transfers', $n, 'tps', $tps, 'latency_ms', $lat,
      'statements', (SELECT coalesce(sum(calls), 0) FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
                      WHERE d.datname = '$db' AND s.toplevel AND s.query NOT LIKE '%pg_stat%' AND s.query NOT LIKE 'SELECT pg_current_wal_lsn%'),
      'commits', (SELECT xact_commit FROM pg_stat_database WHERE datname = '$db'),
      'wal_bytes', (SELECT wal_bytes FROM pg_stat_wal), 'wal_records', (SELECT wal_records FROM pg_stat_wal),
      'wal_lsn_bytes', pg_wal_lsn_diff('$lsn1', '$lsn0'),
      'rows_inserted', (SELECT sum(n_tup_ins) FROM pg_stat_user_tables),
      'rows_updated', (SELECT sum(n_tup_upd) FROM pg_stat_user_tables),
      'hot_updates', (SELECT sum(n_tup_hot_upd) FROM pg_stat_user_tables),
      'dead_tuples', (SELECT sum(n_dead_tup) FROM pg_stat_user_tables),
      'index_entries', $idx, 'row_locks', $locks, 'cpu_ms', ($cpu1 - $cpu0) * 1000.0 / $TICK,
      'indexes', (SELECT count(*) FROM pg_stat_user_indexes),
      'load', '$(cut -d' ' -f1 /proc/loadavg)')" >> "$JSONL"
  echo "  $name round $round: $tps transfers/s, load $(cut -d' ' -f1 /proc/loadavg)" >&2
  q postgres "DROP DATABASE $db" >/dev/null
}

size_run() { # N transfers through bench/transfer.pgbench, then bytes per table
  local n=$1 db=bench_size per runs
  schema "$db" migrations
  per=$(awk '/^-- transfers-per-run:/{print $3; exit}' bench/transfer.pgbench); per=${per:-1}
  runs=$(( (n + CLIENTS * per - 1) / (CLIENTS * per) ))
  pgbench -n -M prepared -c "$CLIENTS" -j "$JOBS" -t "$runs" $PG -f bench/transfer.pgbench "$db" > "$OUT/dbcost-$STAMP-size.txt" 2>&1
  per=$((runs * per))   # transfers per client
  q "$db" "VACUUM ANALYZE" >/dev/null
  sizes "$db" "$per" "$runs" "after VACUUM: the files as the run left them (autovacuum off: every row version got its own space)"
  q "$db" "VACUUM FULL ANALYZE" >/dev/null
  sizes "$db" "$per" "$runs" "after VACUUM FULL: the live rows alone, as a table whose freed space is reused holds them"
}

sizes() { # db transfers-per-client pgbench-runs-per-client label
  local db=$1 per=$2 runs=$3
  {
    echo
    echo "### $4"
    echo
    echo "Sizes after $((per * CLIENTS)) transfers, all sent (pgbench -t $runs -c $CLIENTS -f bench/transfer.pgbench), scaled to 1,000,000:"
    echo
    echo "| table | rows | heap MB/M | indexes MB/M | total MB/M (incl. TOAST, FSM, VM) | bytes per transfer |"
    echo "|---|---:|---:|---:|---:|---:|"
    q "$db" "
      SELECT format('| %s | %s | %s | %s | %s | %s |', c.relname, c.reltuples::bigint,
             round(pg_relation_size(c.oid) * 1e6 / ($per * $CLIENTS) / 1048576, 1),
             round(pg_indexes_size(c.oid) * 1e6 / ($per * $CLIENTS) / 1048576, 1),
             round(pg_total_relation_size(c.oid) * 1e6 / ($per * $CLIENTS) / 1048576, 1),
             round(pg_total_relation_size(c.oid)::numeric / ($per * $CLIENTS)))
        FROM pg_class c WHERE c.relname IN ('transfers', 'transfer_events') ORDER BY c.relname DESC"
    echo
    echo "| index | MB/M |"
    echo "|---|---:|"
    q "$db" "
      SELECT format('| %s | %s |', indexrelname, round(pg_relation_size(indexrelid) * 1e6 / ($per * $CLIENTS) / 1048576, 1))
        FROM pg_stat_user_indexes ORDER BY relname DESC, indexrelname"
  } | tee -a "$OUT/dbcost-$STAMP-size.md"
}

if [ -n "$SIZE" ]; then size_run "$SIZE"; exit 0; fi

echo "dbcost: $# variants, $ROUNDS rounds of $T s each, pgbench -n -M prepared -c $CLIENTS -j $JOBS, load $(cut -d' ' -f1 /proc/loadavg)" >&2
for round in $(seq 1 "$ROUNDS"); do
  for v in "$@"; do
    name=${v%%=*}; rest=${v#*=}; spec=${rest%%:*}; script=${rest#*:}
    run_one "$name" "$spec" "$script" "$round"
  done
done

# ---------------------------------------------------------------- the table: means over the rounds, per transfer
FIRST=${1%%=*}
{
  echo "pgbench -n -M prepared -c $CLIENTS -j $JOBS -T $T, $ROUNDS interleaved rounds, private PostgreSQL 15 (fsync on,"
  echo "synchronous_commit on), $(date -u +%Y-%m-%dT%H:%MZ); per transfer unless stated; ratio against \`$FIRST\`."
  echo
  echo "| variant | transfers/s | ratio | statements | commits | WAL bytes | WAL records | rows written | HOT updates | index entries | row locks | dead tuples | postgres CPU ms | indexes |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  jq -s -r --arg first "$FIRST" '
    group_by(.variant) as $g
    | ($g | map({key: .[0].variant, value: .}) | from_entries) as $by
    | def mean(f): (map(f) | add / length);
      def per(f): mean(f / .transfers);
      ($by[$first] | mean(.tps)) as $base
    | [ .[] | .variant ] | unique as $names
    | ($ARGS.positional) as $order
    | $order[] | . as $n | $by[$n]
    | "| \($n) | \(mean(.tps) | round) | \((mean(.tps) / $base * 100 | round))% | \(per(.statements) * 100 | round / 100)"
      + " | \(per(.commits) * 100 | round / 100) | \(per(.wal_bytes) | round) | \(per(.wal_records) * 10 | round / 10)"
      + " | \(per(.rows_inserted + .rows_updated) * 100 | round / 100) | \(per(.hot_updates) * 100 | round / 100)"
      + " | \(per(.index_entries) * 10 | round / 10) | \(per(.row_locks) * 100 | round / 100)"
      + " | \(per(.dead_tuples) * 100 | round / 100) | \(per(.cpu_ms) * 1000 | round / 1000) | \(.[0].indexes) |"' \
    "$JSONL" --args $(for v in "$@"; do echo "${v%%=*}"; done)
  echo
  echo "Runs (tps per round, 1-minute load at the end of each run):"
  jq -r '"- \(.variant) round \(.round): \(.tps | round)/s, \(.transfers) transfers, load \(.load)"' "$JSONL"
} | tee "$MD"
