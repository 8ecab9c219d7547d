#!/usr/bin/env bash
# Recovery benchmark, one run, ratios rather than absolute times:
#
#     bench/recovery.sh             # ~8 min: steady state, an outage and its drain, an overload at 2x, recovery
#     QUICK=1 bench/recovery.sh     # smoke test: tiny rates and short phases
#
# One packaged instance (prod profile) on the MACHINE's PostgreSQL (scratch database ledgerline_recovery) and Redis
# (logical db 6 only: FLUSHDB 6, never FLUSHALL), the zero-latency provider stand-in of bench/driver, which can be
# switched down (PUT /provider/down: every send and lookup answers 503). Phases, all at the same offered RATE:
#   1. steady state: new transfers at RATE for STEADY_S; sent/s and accepted->sent p50/p99;
#   2. outage: the provider down for OUTAGE_S while new transfers keep arriving at RATE, so a backlog piles up;
#   3. drain: the provider back, new transfers at RATE/10 meanwhile; the backlog's sent/s (from its first sent to its
#      last) against phase 1, and accepted->sent of the transfers accepted during the drain;
#   4. overload: new transfers at 2 x RATE for OVERLOAD_S with ledgerline.overload.max-pending=MAX_PENDING; refusals
#      (503) and their latency against accepts (201), the backlog and the Redis breaker sampled every second;
#   5. recovery: from the end of the overload until the backlog is drained, then RATE again for STEADY_S.
# Results: bench/out/recovery/*.json(l) and a summary on stdout (copy it into bench/RECOVERY.md by hand).
# Always cleans up: stops what it started, drops the scratch database, FLUSHDB 6.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT=${OUT:-$ROOT/bench/out/recovery}
QUICK=${QUICK:-0}
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
JAVA=$JAVA_HOME/bin/java
APP=${APP:-$ROOT/service/target/quarkus-app}   # the packaged service (a copy lets a build run meanwhile)
PGHOST=127.0.0.1; PGPORT=5432; PGUSER=postgres
export PGHOST PGPORT PGUSER
DB=${DB:-ledgerline_recovery}       # scratch database (dropped at the end)
REDIS_DB=${REDIS_DB:-6}                  # Redis logical db (FLUSHDB at the end)
SVC_PORT=${SVC_PORT:-18180}
PROVIDER_PORT=${PROVIDER_PORT:-18190}
MGMT_PORT=${MGMT_PORT:-18181}   # /q/* where a management interface serves them (QUARKUS_MANAGEMENT_PORT)
if [ "$QUICK" = 1 ]; then
  RATE=${RATE:-50}; WARM_S=${WARM_S:-5}; STEADY_S=${STEADY_S:-5}; OUTAGE_S=${OUTAGE_S:-5}; OVERLOAD_S=${OVERLOAD_S:-5}; MAX_PENDING=${MAX_PENDING:-100}
else
  # 450/s keeps a busy machine within capacity; a quiet one holds about 1,300-1,450/s (bench/RECOVERY.md): set
  # RATE to the highest rate whose steady phase keeps up to measure the drain against a steady state at capacity
  RATE=${RATE:-450}; WARM_S=${WARM_S:-60}; STEADY_S=${STEADY_S:-30}; OUTAGE_S=${OUTAGE_S:-20}; OVERLOAD_S=${OVERLOAD_S:-60}; MAX_PENDING=${MAX_PENDING:-8000}
fi

rm -rf "$OUT"; mkdir -p "$OUT"
PIDS=()
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$OUT/run.log"; }
load_now() { cut -d' ' -f1-3 /proc/loadavg; }
psql_q() { psql -X -q -t -A -d "$DB" -c "$1"; }
cleanup() {
  set +e
  for pid in "${PIDS[@]}"; do
    kill "$pid" 2>/dev/null
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null
  done
  dropdb --if-exists "$DB" 2>/dev/null
  redis-cli -h 127.0.0.1 -p 6379 -n "$REDIS_DB" FLUSHDB >/dev/null 2>&1
  log "cleaned up: processes stopped, $DB dropped, redis db $REDIS_DB flushed"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

for port in $SVC_PORT $PROVIDER_PORT; do
  if (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then echo "port $port is in use" >&2; exit 1; fi
done
log "machine: $(nproc) cores, load $(load_now); RATE=$RATE/s, outage ${OUTAGE_S}s, overload 2x for ${OVERLOAD_S}s, max-pending $MAX_PENDING"

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  ./mvnw -B -q package -DskipTests
  ./mvnw -B -q -pl bench/driver package
fi
DRIVER=("$JAVA" -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$ROOT/bench/driver/target/bench-driver.jar:$ROOT/bench/driver/target/lib/*" dev.ledgerline.bench.Driver)
"${DRIVER[@]}" keys "$OUT/keys"

redis-cli -h 127.0.0.1 -p 6379 -n "$REDIS_DB" FLUSHDB >/dev/null
dropdb --if-exists "$DB"; createdb "$DB"

"${DRIVER[@]}" provider "$PROVIDER_PORT" > "$OUT/provider.log" 2>&1 &
PIDS+=($!)
PROVIDER=http://127.0.0.1:$PROVIDER_PORT/provider
env -i PATH="$PATH" HOME="$HOME" QUARKUS_HTTP_PORT="$SVC_PORT" QUARKUS_MANAGEMENT_PORT="$MGMT_PORT" \
  QUARKUS_DATASOURCE_REACTIVE_URL="postgresql://127.0.0.1:5432/$DB" QUARKUS_DATASOURCE_USERNAME=postgres \
  QUARKUS_REDIS_HOSTS="redis://127.0.0.1:6379/$REDIS_DB" MP_JWT_VERIFY_PUBLICKEY_LOCATION="$OUT/keys/public.pem" LEDGERLINE_IDEMPOTENCY_REFERENCE_SECRET=bench-reference-secret \
  QUARKUS_REST_CLIENT_PROVIDER_URL="$PROVIDER" \
  LEDGERLINE_RATE_LIMIT_WRITES_PER_SECOND=1000000 LEDGERLINE_RATE_LIMIT_WRITES_BURST=1000000 \
  LEDGERLINE_LEDGER_OPENING_BALANCE=100000000000000 \
  LEDGERLINE_RATE_LIMIT_READS_PER_SECOND=1000000 LEDGERLINE_RATE_LIMIT_READS_BURST=1000000 \
  LEDGERLINE_OVERLOAD_MAX_PENDING="$MAX_PENDING" \
  "$JAVA" -jar "$APP/quarkus-run.jar" > "$OUT/service.log" 2>&1 &
SVC_PID=$!
PIDS+=($SVC_PID)
q() { curl -fsS "http://127.0.0.1:$MGMT_PORT$1" 2>/dev/null || curl -fsS "http://127.0.0.1:$SVC_PORT$1"; }
for _ in $(seq 1 240); do
  q /q/health/ready >/dev/null 2>&1 && break
  kill -0 "$SVC_PID" 2>/dev/null || { tail -20 "$OUT/service.log" >&2; exit 1; }
  sleep 0.5
done

load() { # rate seconds label -> one JSON line (the driver's) on stdout
  "${DRIVER[@]}" load --url="http://127.0.0.1:$SVC_PORT" --key="$OUT/keys/private.pk8" --scenario=new \
    --rate="$1" --duration="$2" --prefix="$3-$RANDOM$RANDOM" --label="$3"
}
open_count() { psql_q "select count(*) from transfers where status not in ('sent','failed')"; }
wait_all_final() { # seconds -> epoch ms when nothing was open any more (or the deadline)
  local deadline=$(( $(date +%s) + $1 ))
  while [ "$(open_count)" != 0 ] && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.2; done
  date +%s%3N
}
# accepted (row created) -> sent, for transfers created in [from, to) epoch ms: {"n","p50","p99"} in ms
to_sent() {
  psql_q "select json_build_object('n', count(*),
            'p50', round((percentile_cont(0.5) within group (order by ms))::numeric, 1),
            'p99', round((percentile_cont(0.99) within group (order by ms))::numeric, 1))
          from (select extract(epoch from e.at - t.created_at) * 1000 as ms from transfers t
                  join transfer_events e on e.transfer_id = t.id and e.to_status = 'sent'
                 where t.created_at >= to_timestamp($1 / 1000.0) and t.created_at < to_timestamp($2 / 1000.0)) x"
}
sent_between() { psql_q "select count(*) from transfer_events where to_status = 'sent' and at >= to_timestamp($1 / 1000.0) and at < to_timestamp($2 / 1000.0)"; }
metric() { q /q/metrics | awk -v m="$1" 'index($0, m) == 1 {s += $NF} END {print s + 0}'; }
sample_metrics() { # every second until the file $1 is removed: pending, refusing, redis breaker, redis timeouts/late
  while [ -e "$1" ]; do
    echo "{\"t\":$(date +%s%3N),\"pending\":$(metric ledgerline_overload_pending),\"refusing\":$(metric ledgerline_overload_refusing),\"redisBreakerOpen\":$(metric ledgerline_redis_breaker_open),\"redisTimedOut\":$(metric 'ledgerline_redis_commands_total{result="timed_out"'),\"redisLate\":$(metric 'ledgerline_redis_commands_total{result="late"'),\"open\":$(open_count),\"load\":\"$(load_now)\"}" >> "$OUT/samples.jsonl"
    sleep 1
  done
}

log "warm-up: ${WARM_S}s of new transfers at $(( RATE * 2 / 3 ))/s"
load $(( RATE * 2 / 3 )) "$WARM_S" warm > "$OUT/warmup.json"
wait_all_final 120 > /dev/null

log "1. steady state: $RATE/s for ${STEADY_S}s (load $(load_now))"
STEADY=$(load "$RATE" "$STEADY_S" steady)
S_FROM=$(echo "$STEADY" | jq .startEpochMs); S_TO=$(echo "$STEADY" | jq .endEpochMs)
STEADY_SENT=$(sent_between "$S_FROM" "$S_TO")
wait_all_final 120 > /dev/null
STEADY_RATE=$(echo "$STEADY_SENT $S_FROM $S_TO" | awk '{printf "%.1f", $1 / (($3 - $2) / 1000)}')
STEADY_LAT=$(to_sent "$S_FROM" "$S_TO")
echo "$STEADY" | jq -c --argjson sent "$STEADY_SENT" --argjson lat "$STEADY_LAT" '. + {sent: $sent, toSent: $lat}' > "$OUT/steady.json"
log "   steady: accepted $(echo "$STEADY" | jq .achieved)/s, sent ${STEADY_RATE}/s, accepted->sent $STEADY_LAT"

log "2. outage: provider down, $RATE/s for ${OUTAGE_S}s"
curl -fsS -X PUT "$PROVIDER/down" > /dev/null
OUTAGE=$(load "$RATE" "$OUTAGE_S" outage)
echo "$OUTAGE" > "$OUT/outage.json"
BACKLOG=$(open_count)
UP_MS=$(date +%s%3N)
log "   backlog when the provider comes back: $BACKLOG open ($(psql_q "select string_agg(status || '=' || n, ', ') from (select status, count(*) n from transfers where status not in ('sent','failed') group by status) s")); accepted during the outage: $(echo "$OUTAGE" | jq -c '{achieved, errors, byStatus}')"

log "3. drain: provider back; new transfers at $(( RATE / 10 ))/s meanwhile"
curl -fsS -X DELETE "$PROVIDER/down" > /dev/null
touch "$OUT/sampling"; sample_metrics "$OUT/sampling" & SAMPLER=$!
load $(( RATE / 10 )) "$STEADY_S" during-drain > "$OUT/during-drain.json" &
DURING=$!
DRAINED_MS=$(wait_all_final 900)
wait "$DURING"
DD_FROM=$(jq .startEpochMs "$OUT/during-drain.json"); DD_TO=$(jq .endEpochMs "$OUT/during-drain.json")
# the backlog's own drain: rows created before the provider came back, from their first sent until 99 % of them
# were sent (the last percent are reconciling rows waiting out their back-off, reported apart as the tail)
read -r FIRST_MS P99_MS LAST_MS BACKLOG_SENT < <(psql_q "select (extract(epoch from min(e.at)) * 1000)::bigint,
          (extract(epoch from percentile_disc(0.99) within group (order by e.at)) * 1000)::bigint,
          (extract(epoch from max(e.at)) * 1000)::bigint, count(*)
     from transfers t join transfer_events e on e.transfer_id = t.id and e.to_status = 'sent'
    where t.created_at < to_timestamp($UP_MS / 1000.0) and e.at >= to_timestamp($UP_MS / 1000.0)" | tr '|' ' ')
DRAIN_RATE=$(echo "$BACKLOG_SENT $FIRST_MS $P99_MS" | awk '{printf "%.1f", 0.99 * $1 / (($3 - $2) / 1000)}')
ALL_SENT_DRAIN=$(sent_between "$FIRST_MS" "$P99_MS")
ALL_RATE=$(echo "$ALL_SENT_DRAIN $FIRST_MS $P99_MS" | awk '{printf "%.1f", $1 / (($3 - $2) / 1000)}')
DURING_LAT=$(to_sent "$DD_FROM" "$DD_TO")
RATIO=$(echo "$ALL_RATE $STEADY_RATE" | awk '{printf "%.2f", $1 / $2}')
jq -n --argjson backlog "$BACKLOG" --argjson firstAfterMs "$(( FIRST_MS - UP_MS ))" \
  --argjson drain99S "$(echo "$FIRST_MS $P99_MS" | awk '{printf "%.1f", ($2 - $1) / 1000}')" \
  --argjson tailS "$(echo "$P99_MS $LAST_MS" | awk '{printf "%.1f", ($2 - $1) / 1000}')" \
  --argjson backlogPerS "$DRAIN_RATE" --argjson allSentPerS "$ALL_RATE" --argjson steadySentPerS "$STEADY_RATE" --argjson ratio "$RATIO" \
  --argjson during "$DURING_LAT" --argjson allDoneMs "$(( DRAINED_MS - UP_MS ))" \
  '{backlog: $backlog, firstSentAfterProviderBackMs: $firstAfterMs, drain99PercentSeconds: $drain99S, lastPercentTailSeconds: $tailS,
    backlogSentPerS: $backlogPerS, allSentPerSDuringDrain: $allSentPerS, steadySentPerS: $steadySentPerS, ratioToSteady: $ratio,
    acceptedToSentDuringDrain: $during, allFinalAfterProviderBackMs: $allDoneMs}' > "$OUT/drain.json"
log "   drain: $(jq -c . "$OUT/drain.json")"

log "4. overload: $(( RATE * 2 ))/s for ${OVERLOAD_S}s, max-pending $MAX_PENDING (load $(load_now))"
OV=$(load $(( RATE * 2 )) "$OVERLOAD_S" overload)
OV_END=$(date +%s%3N)
echo "$OV" > "$OUT/overload.json"
log "   overload: $(echo "$OV" | jq -c '{offered, achieved, errors, p50, p99, byStatus, errorKinds}')"

log "5. recovery: until the backlog is drained, then $RATE/s for ${STEADY_S}s"
RECOVERED_MS=$(wait_all_final 900)
AFTER=$(load "$RATE" "$STEADY_S" after)
A_FROM=$(echo "$AFTER" | jq .startEpochMs); A_TO=$(echo "$AFTER" | jq .endEpochMs)
AFTER_SENT=$(sent_between "$A_FROM" "$A_TO")
wait_all_final 120 > /dev/null
rm -f "$OUT/sampling"; wait "$SAMPLER" 2>/dev/null || true
AFTER_RATE=$(echo "$AFTER_SENT $A_FROM $A_TO" | awk '{printf "%.1f", $1 / (($3 - $2) / 1000)}')
jq -n --argjson recoveredMs "$(( RECOVERED_MS - OV_END ))" --argjson afterSentPerS "$AFTER_RATE" --argjson steadySentPerS "$STEADY_RATE" \
  --argjson toSent "$(to_sent "$A_FROM" "$A_TO")" --argjson accepted "$(echo "$AFTER" | jq -c '{achieved, errors, p50, p99}')" \
  --argjson breakerOpenSamples "$(jq -s '[.[] | select(.redisBreakerOpen > 0)] | length' "$OUT/samples.jsonl")" \
  --argjson maxPending "$(jq -s 'map(.pending) | max' "$OUT/samples.jsonl")" \
  --argjson refusingSamples "$(jq -s '[.[] | select(.refusing > 0)] | length' "$OUT/samples.jsonl")" \
  --argjson redisTimedOut "$(metric 'ledgerline_redis_commands_total{result="timed_out"')" --argjson redisLate "$(metric 'ledgerline_redis_commands_total{result="late"')" \
  --argjson dups "$(curl -fsS "$PROVIDER/stats" | jq .duplicateExecutions)" \
  '{backlogDrainedAfterOverloadMs: $recoveredMs, afterSentPerS: $afterSentPerS, steadySentPerS: $steadySentPerS,
    afterToSent: $toSent, afterAccepted: $accepted, secondsWithRedisBreakerOpen: $breakerOpenSamples,
    maxPendingSeen: $maxPending, secondsRefusing: $refusingSamples, redisTimedOut: $redisTimedOut, redisLate: $redisLate,
    duplicateExecutions: $dups}' > "$OUT/recovery.json"
log "   recovery: $(jq -c . "$OUT/recovery.json")"
log "totals: $(psql_q "select string_agg(status || '=' || n, ', ') from (select status, count(*) n from transfers group by status) s"); load $(load_now)"
