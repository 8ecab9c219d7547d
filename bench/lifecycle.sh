#!/usr/bin/env bash
# The data lifecycle at steady state, not part of CI: new transfers at a steady RATE/s for RUN_S seconds (default
# 1800) through the packaged service, with the retention policy in minutes instead of days, and the primary's sizes
# sampled every SAMPLE_S seconds. The hot tables must level off: transfers, their events and their keys leave a
# partition (or a batch of keys) at a time once past the policy, while the ledger, kept for ever by policy, grows.
#
#     bench/lifecycle.sh                                   # 30 minutes at 150 transfers/s
#     RUN_S=300 RATE=50 bench/lifecycle.sh                 # a short run
#
# The policy of the run (each a setting of the service, docs/configuration.md): partitions of a minute
# (events-partition-span, transfers-partition-span), five minutes of history and of ended transfers
# (ledgerline.events.retention, transfers-retention), keys for three minutes (key-window, with the provider's key
# window of three minutes under it), the job every 20 s. The database owner lowers the floors the retention functions
# keep whatever the service asks (retention_floors: an hour of history, a day of transfers and of keys) to a minute.
#
# Servers of its own: a private PostgreSQL cluster (initdb in PG_DIR, port PG_PORT; run as the postgres user when
# started as root) and a private Redis, both stopped and deleted at the end; the machine's servers are never touched.
# Writes bench/out/lifecycle/sizes.csv (one row per sample), summary.json, and the chart bench/out/lifecycle/sizes.svg
# (bench/sizes_chart.py).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT=${OUT:-$ROOT/bench/out/lifecycle}
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
JAVA=$JAVA_HOME/bin/java
APP=${APP:-$ROOT/service/target/quarkus-app}
PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)}
BIN=$PG_BIN
# as_pg, private_pg_init, stop_processes
. "$ROOT/bench/private-pg.sh"
PG_PORT=${PG_PORT:-15453}
PG_DIR=${PG_DIR:-/tmp/ledgerline-lifecycle-pg}
REDIS_PORT=${REDIS_PORT:-16390}
SVC_PORT=${SVC_PORT:-18380}
MGMT_PORT=${MGMT_PORT:-18381}
PROVIDER_PORT=${PROVIDER_PORT:-18390}
RUN_S=${RUN_S:-1800}
RATE=${RATE:-150}
SAMPLE_S=${SAMPLE_S:-30}
CHUNK_S=${CHUNK_S:-60}

rm -rf "$OUT"; mkdir -p "$OUT"
PIDS=()
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$OUT/run.log"; }
psql_q() { psql -X -q -t -A -F, -h 127.0.0.1 -p "$PG_PORT" -U postgres -d ledgerline -c "$1"; }
pg_ctl_() { as_pg "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/postgres.log" -w -t 60 "$@" >/dev/null; }
cleanup() {
  set +e
  stop_processes "${PIDS[@]}"
  [ -d "$PG_DIR/data" ] && pg_ctl_ stop -m fast
  [ -f "$PG_DIR/postgres.log" ] && cp "$PG_DIR/postgres.log" "$OUT/postgres.log"
  rm -rf "$PG_DIR"
  log "cleaned up: processes stopped, private PostgreSQL and Redis gone"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

for port in $PG_PORT $REDIS_PORT $SVC_PORT $MGMT_PORT $PROVIDER_PORT; do
  if (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then echo "port $port is in use" >&2; exit 1; fi
done
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  ./mvnw -B -q package -DskipTests
  ./mvnw -B -q -pl bench/driver package
fi
DRIVER=("$JAVA" -Xmx256m -XX:+UseSerialGC -cp "$ROOT/bench/driver/target/bench-driver.jar:$ROOT/bench/driver/target/lib/*" dev.ledgerline.bench.Driver)
"${DRIVER[@]}" keys "$OUT/keys"

rm -rf "$PG_DIR"; mkdir -p "$PG_DIR"
# autovacuum on, as a primary runs it: the sizes below include what it does and does not reclaim
private_pg_init "$PG_DIR" "$PG_PORT" "autovacuum = on" "max_connections = 100"
pg_ctl_ start
createdb -h 127.0.0.1 -p "$PG_PORT" -U postgres ledgerline
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no > "$OUT/redis.log" 2>&1 &
PIDS+=($!)
"${DRIVER[@]}" provider "$PROVIDER_PORT" > "$OUT/provider.log" 2>&1 &
PIDS+=($!)

env -i PATH="$PATH" HOME="$HOME" QUARKUS_HTTP_PORT="$SVC_PORT" QUARKUS_MANAGEMENT_PORT="$MGMT_PORT" \
  QUARKUS_DATASOURCE_REACTIVE_URL="postgresql://127.0.0.1:$PG_PORT/ledgerline" QUARKUS_DATASOURCE_USERNAME=postgres \
  QUARKUS_REDIS_HOSTS="redis://127.0.0.1:$REDIS_PORT" MP_JWT_VERIFY_PUBLICKEY_LOCATION="$OUT/keys/public.pem" \
  LEDGERLINE_IDEMPOTENCY_REFERENCE_SECRET=bench-reference-secret \
  QUARKUS_REST_CLIENT_PROVIDER_URL="http://127.0.0.1:$PROVIDER_PORT/provider" \
  LEDGERLINE_RATE_LIMIT_WRITES_PER_SECOND=1000000 LEDGERLINE_RATE_LIMIT_WRITES_BURST=1000000 \
  LEDGERLINE_LEDGER_OPENING_BALANCE=100000000000000 \
  LEDGERLINE_RETENTION_EVERY=20s \
  LEDGERLINE_RETENTION_EVENTS_PARTITION_SPAN=PT1M LEDGERLINE_RETENTION_EVENTS_PARTITIONS_AHEAD=PT5M LEDGERLINE_EVENTS_RETENTION=PT5M \
  LEDGERLINE_RETENTION_TRANSFERS_PARTITION_SPAN=PT1M LEDGERLINE_RETENTION_TRANSFERS_PARTITIONS_AHEAD=PT5M \
  LEDGERLINE_RETENTION_TRANSFERS_RETENTION=PT5M LEDGERLINE_RETENTION_KEY_WINDOW=PT3M \
  LEDGERLINE_PROVIDER_KEY_WINDOW=PT3M LEDGERLINE_PROVIDER_KEY_WINDOW_MARGIN=PT1M LEDGERLINE_IDEMPOTENCY_RETENTION=PT1M \
  "$JAVA" -Xmx512m -jar "$APP/quarkus-run.jar" > "$OUT/service.log" 2>&1 &
SVC_PID=$!; PIDS+=($SVC_PID)
for _ in $(seq 1 240); do
  curl -fsS "http://127.0.0.1:$MGMT_PORT/q/health/ready" >/dev/null 2>&1 && break
  kill -0 "$SVC_PID" 2>/dev/null || { tail -30 "$OUT/service.log" >&2; exit 1; }
  sleep 0.5
done
# the owner's floors (migration V19): a minute instead of an hour of history and a day of transfers and keys
psql_q "UPDATE retention_floors SET events = interval '1 minute', transfers = interval '1 minute', keys = interval '1 minute'" >/dev/null
# A fresh database's first partitions (transfers_initial, transfer_events_initial) reach to the next midnight UTC,
# which a run in minutes would not see pass; they are empty, and the owner drops them, so that the job's partitions
# of a minute start now. Nothing else of the service or the policy changes.
psql_q "ALTER TABLE transfers DETACH PARTITION transfers_initial; DROP TABLE transfers_initial;
        ALTER TABLE transfer_events DETACH PARTITION transfer_events_initial; DROP TABLE transfer_events_initial" >/dev/null
covered() { psql_q "SELECT count(*) FROM pg_partition_tree('transfers') p JOIN pg_partition_tree('transfer_events') e ON true
                    WHERE p.isleaf AND e.isleaf AND p.relid::text <> 'transfers_default' AND e.relid::text <> 'transfer_events_default'"; }
for _ in $(seq 1 120); do [ "$(covered)" -gt 0 ] && break; sleep 0.5; done
[ "$(covered)" -gt 0 ] || { echo "the retention job made no partitions" >&2; exit 1; }

# one sample: seconds since the start, then per table family bytes (heap + TOAST, indexes), rows and partitions
SIZES="
WITH parts AS (
  SELECT 'transfers' AS family, relid FROM pg_partition_tree('transfers') WHERE isleaf
  UNION ALL SELECT 'events', relid FROM pg_partition_tree('transfer_events') WHERE isleaf
  UNION ALL SELECT 'keys', 'transfer_keys'::regclass
  UNION ALL SELECT 'ledger', 'ledger_entries'::regclass)
SELECT string_agg(v::text, ',' ORDER BY o) FROM (
  SELECT 1 o, sum(pg_table_size(relid)) FILTER (WHERE family = 'transfers') v FROM parts
  UNION ALL SELECT 2, sum(pg_indexes_size(relid)) FILTER (WHERE family = 'transfers') FROM parts
  UNION ALL SELECT 3, sum(pg_table_size(relid)) FILTER (WHERE family = 'events') FROM parts
  UNION ALL SELECT 4, sum(pg_indexes_size(relid)) FILTER (WHERE family = 'events') FROM parts
  UNION ALL SELECT 5, sum(pg_total_relation_size(relid)) FILTER (WHERE family = 'keys') FROM parts
  UNION ALL SELECT 6, sum(pg_total_relation_size(relid)) FILTER (WHERE family = 'ledger') FROM parts
  UNION ALL SELECT 7, (SELECT count(*) FROM transfers)
  UNION ALL SELECT 8, (SELECT count(*) FROM transfer_events)
  UNION ALL SELECT 9, (SELECT count(*) FROM transfer_keys)
  UNION ALL SELECT 10, (SELECT count(*) FROM transfers WHERE status IN ('pending', 'processing', 'reconciling'))
  UNION ALL SELECT 11, count(*) FILTER (WHERE family = 'transfers') FROM parts
  UNION ALL SELECT 12, count(*) FILTER (WHERE family = 'events') FROM parts) s"
echo "t,transfers_heap,transfers_index,events_heap,events_index,keys_total,ledger_total,transfers_rows,events_rows,keys_rows,open_rows,transfer_partitions,event_partitions" > "$OUT/sizes.csv"
T0=$(date +%s)
(
  while true; do
    echo "$(( $(date +%s) - T0 )),$(psql_q "$SIZES")" >> "$OUT/sizes.csv"
    sleep "$SAMPLE_S"
  done
) &
SAMPLER=$!; PIDS+=($SAMPLER)

log "lifecycle: ${RUN_S}s of new transfers at ${RATE}/s, retention in minutes; sizes every ${SAMPLE_S}s"
END_AT=$(( T0 + RUN_S ))
while [ "$(date +%s)" -lt "$END_AT" ]; do
  left=$(( END_AT - $(date +%s) )); [ "$left" -gt "$CHUNK_S" ] && left=$CHUNK_S
  [ "$left" -lt 5 ] && break
  "${DRIVER[@]}" load --url="http://127.0.0.1:$SVC_PORT" --key="$OUT/keys/private.pk8" --scenario=new --rate="$RATE" \
    --duration="$left" --prefix="life-$RANDOM$RANDOM" --label=lifecycle >> "$OUT/load.jsonl" || log "a load run failed"
  log "  $(tail -1 "$OUT/load.jsonl" | jq -c '{achieved, errors, p50, p99}') $(tail -1 "$OUT/sizes.csv")"
done
sleep "$SAMPLE_S"
kill "$SAMPLER" 2>/dev/null; wait "$SAMPLER" 2>/dev/null || true
curl -fsS "http://127.0.0.1:$MGMT_PORT/q/metrics" | grep '^ledgerline_retention' > "$OUT/retention-metrics.txt" || true
jq -n --argjson sent "$(jq -s 'map(.requests - .errors) | add' "$OUT/load.jsonl")" \
  --argjson errors "$(jq -s 'map(.errors) | add' "$OUT/load.jsonl")" \
  --argjson dups "$(curl -fsS "http://127.0.0.1:$PROVIDER_PORT/provider/stats" | jq .duplicateExecutions)" \
  --arg last "$(tail -1 "$OUT/sizes.csv")" \
  '{accepted: $sent, errors: $errors, duplicateExecutions: $dups, lastSample: $last}' | tee "$OUT/summary.json"
python3 "$ROOT/bench/sizes_chart.py" "$OUT/sizes.csv" "$OUT/sizes.svg" \
  "Primary's size, ${RATE} transfers/s, retention in minutes" && log "chart: $OUT/sizes.svg"
