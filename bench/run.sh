#!/usr/bin/env bash
# Ledgerline Transfers benchmark: one command, from the repository root:
#
#     bench/run.sh            # full run (~25 min), rewrites BENCHMARKS.md and bench/latency.png
#     QUICK=1 bench/run.sh    # smoke test: tiny rates and 2 s steps, writes bench/out/ only
#
# What it does: packages the service, builds bench/driver, calibrates the load generator against a static
# responder (its own limit, so that no service figure near it is taken for the service's), starts a private
# PostgreSQL 15 cluster (bench/private-pg.sh: its own port and directory, fsync and synchronous_commit on, autovacuum
# ON as on any primary) with the scratch databases ledgerline_bench (service) and ledgerline_bench_pg (pgbench),
# uses the MACHINE's Redis (127.0.0.1:6379) in logical db 5 only (FLUSHDB 5, never FLUSHALL), measures the
# database limit with pgbench (the service's own INSERT / CLAIM / FENCE with the schema's triggers), starts
# the packaged service in prod mode against a zero-latency provider stand-in, warms it up, searches each
# scenario's sustainable rate with an open-model driver and measures it at that rate and at 50 % of it,
# profiles scenario 1 once with JFR, then runs scenario 5 on a second instance pointed at a Redis port where
# nothing listens (the database-only path; the machine's Redis is never stopped). Always cleans up: stops
# every process it started, stops and deletes the private cluster, FLUSHDB 5. Scenario 2 is cross-checked with wrk and set
# against redis-benchmark GET throughput on the same Redis in the same run.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT=$ROOT/bench/out
QUICK=${QUICK:-0}
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
JAVA=$JAVA_HOME/bin/java
JFR_TOOL=${JFR_TOOL:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/jfr}   # 'jfr view' needs JDK 21+
# the private cluster's port; the machine's own server (5432) is not used: it runs without autovacuum, which no primary
# does, and with it off every periodic scan of the open transfers' partial indexes reads each entry ever made there
PGHOST=127.0.0.1; PGPORT=${BENCH_PG_PORT:-55440}; PGUSER=postgres
export PGHOST PGPORT PGUSER
BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PG_TMP=
DB=${BENCH_DB:-ledgerline_bench}
PGB_DB=${BENCH_PG_DB:-ledgerline_bench_pg}
REDIS_DB=${BENCH_REDIS_DB:-5}
SVC_PORT=${SVC_PORT:-18080}
SVC2_PORT=${SVC2_PORT:-18081}
PROVIDER_PORT=${PROVIDER_PORT:-18090}
STATIC_PORT=${STATIC_PORT:-18091}    # the calibration target (Driver static)
DRIVER_PORT=${DRIVER_PORT:-18092}    # the long-lived driver's control port (Driver serve)
DEAD_REDIS_PORT=${DEAD_REDIS_PORT:-16399}
# keep-alive connections the driver may open; wrk and redis-benchmark use the same number (-c)
CONNS=${CONNS:-32}
POOL=20   # quarkus.datasource.reactive.max-size (application.properties): pgbench runs at the same concurrency

if [ "$QUICK" = 1 ]; then
  STEP_S=2; MEASURE_S=3; PGB_S=3; WARM_S=3; SEED=200; PROFILE_S=3; WRK_S=3; REDIS_N=50000
  RATES_NEW="50 100"; RATES_REPLAY="100 200"; RATES_POLL="100 200"; RATES_MIX="50 100"
  RATES_CAL="1000 3000 6000"
else
  STEP_S=6; MEASURE_S=15; PGB_S=20; WARM_S=20; SEED=2000; PROFILE_S=15; WRK_S=15; REDIS_N=500000
  RATES_NEW="100 200 300 450 600 750 900 1100 1300 1500 1700 2000 2500"
  RATES_REPLAY="500 1000 2000 3000 4000 5000 6500 8000 10000 12000 14000 17000 20000 25000"
  RATES_POLL="500 1000 2000 3000 4000 5000 6500 8000 10000 12000 14000 17000 20000 25000"
  RATES_MIX="100 200 300 450 600 750 900 1100 1300 1500 1700 2000 2500"
  RATES_CAL="2000 4000 6000 8000 10000 13000 16000 20000 25000 30000 40000"
fi

mkdir -p "$OUT"
rm -f "$OUT"/*.hgrm "$OUT"/*.jsonl "$OUT"/*.json "$OUT"/*.log "$OUT"/*.jfr "$OUT"/*.txt
LOAD_LOG=$OUT/load.txt; : > "$LOAD_LOG"
PIDS=()
EXTRA_ENV=()

log() { echo "[$(date +%H:%M:%S)] $*" | tee -a "$OUT/run.log"; }
load_now() { cut -d' ' -f1-3 /proc/loadavg; }
sample_load() { echo "$(date +%H:%M:%S) $1 $(load_now)" >> "$LOAD_LOG"; }

cleanup() {
  set +e
  for pid in "${PIDS[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null
      for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
      kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
    fi
  done
  if [ -n "$PG_TMP" ]; then
    as_pg "$BIN/pg_ctl" -D "$PG_TMP/data" -m fast stop >/dev/null 2>&1
    rm -rf "$PG_TMP"
  fi
  redis-cli -h 127.0.0.1 -p 6379 -n "$REDIS_DB" FLUSHDB >/dev/null 2>&1
  log "cleaned up: processes stopped, the private PostgreSQL cluster stopped and deleted, redis db $REDIS_DB flushed"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

for port in $SVC_PORT $SVC2_PORT $PROVIDER_PORT $STATIC_PORT $DRIVER_PORT $DEAD_REDIS_PORT $PGPORT; do
  if (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then
    echo "port $port is in use; set SVC_PORT/SVC2_PORT/PROVIDER_PORT/STATIC_PORT/DRIVER_PORT/DEAD_REDIS_PORT/BENCH_PG_PORT" >&2; exit 1
  fi
done

log "machine: $(nproc) cores, $(free -m | awk '/Mem:/{print $2}') MiB, load $(load_now)"
sample_load start

# ---------------------------------------------------------------- build
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  log "packaging the service: ./mvnw -B -q package -DskipTests"
  ./mvnw -B -q package -DskipTests
  log "building the driver: ./mvnw -B -q -pl bench/driver package"
  ./mvnw -B -q -pl bench/driver package
fi
command -v wrk >/dev/null || { echo "wrk is missing (Debian: apt-get install -y wrk); the cross-check needs it" >&2; exit 1; }
command -v redis-benchmark >/dev/null || { echo "redis-benchmark is missing (Debian: redis-tools)" >&2; exit 1; }
DRIVER_CP="$ROOT/bench/driver/target/bench-driver.jar:$ROOT/bench/driver/target/lib/*"
# C1 only for the short-lived helpers (keys, token, seed, chart): they run once and C2 would only cost CPU
DRIVER=("$JAVA" -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$DRIVER_CP" dev.ledgerline.bench.Driver)
# the load generator, the provider stand-in and the static responder live through the run: C2 compiles their hot
# paths once. A fresh C1-only driver JVM per step spent 300-400 µs of CPU per request at 1,000/s against the static
# responder; the long-lived one spends well under 100 (the calibration steps report driverUsPerRequest)
LONG_JVM=("$JAVA" -Xmx512m -XX:+UseSerialGC -cp "$DRIVER_CP" dev.ledgerline.bench.Driver)
"${DRIVER[@]}" keys "$OUT/keys"

# ---------------------------------------------------------------- a quiet machine first
# The build above and anything else running push the load average up; wait (at most QUIET_WAIT_S) until the
# 1-minute load is below 1 so that the sample the report calls "before the run" says what else was running.
QUIET_WAIT_S=${QUIET_WAIT_S:-240}
[ "$QUICK" = 1 ] && QUIET_WAIT_S=0
for _ in $(seq 1 $(( QUIET_WAIT_S / 5 ))); do
  awk '{exit !($1 < 1.0)}' /proc/loadavg && break
  sleep 5
done
log "1-minute load before the measurements: $(load_now)"
sample_load quiet-check

# ---------------------------------------------------------------- servers
redis-cli -h 127.0.0.1 -p 6379 -n "$REDIS_DB" FLUSHDB >/dev/null
. bench/private-pg.sh
PG_TMP=$(mktemp -d /tmp/bench-pg.XXXXXX)
private_pg_init "$PG_TMP" "$PGPORT" "autovacuum = on" "max_connections = 100"
as_pg "$BIN/pg_ctl" -D "$PG_TMP/data" -l "$PG_TMP/server.log" -w start >/dev/null
PG_MASTER=$(head -1 "$PG_TMP/data/postmaster.pid")
psql -X -q -t -A -d postgres -c "select name || '=' || setting from pg_settings where name in
  ('server_version', 'fsync', 'synchronous_commit', 'autovacuum', 'shared_buffers', 'max_wal_size') order by 1" > "$OUT/pg-settings.txt"
log "private PostgreSQL on 127.0.0.1:$PGPORT: $(tr '\n' ' ' < "$OUT/pg-settings.txt")"
createdb "$DB"
createdb "$PGB_DB"

psql_q() { psql -X -q -t -A -d "$DB" -c "$1"; }

# ---------------------------------------------------------------- database limit (pgbench), before anything of ours runs
pgbench_limit() { # label -> appends {"label","tps","latency_ms"} to pgbench.jsonl; a fresh scratch database each time
  dropdb --if-exists "$PGB_DB"; createdb "$PGB_DB"
  local migration
  for migration in $(ls service/src/main/resources/db/migration/V*__*.sql | sort -V); do   # every migration, in Flyway's order
    psql -X -q -d "$PGB_DB" -v ON_ERROR_STOP=1 -f "$migration" >/dev/null
  done
  [ -n "${2:-}" ] && psql -X -q -d "$PGB_DB" -c "$2" >/dev/null
  sample_load "pgbench-$1"
  pgbench -n -M prepared -c "$POOL" -j 2 -T "$PGB_S" -f bench/transfer.pgbench "$PGB_DB" > "$OUT/pgbench-$1.txt" 2>&1
  local tps lat per
  # bench/transfer.pgbench runs a fence batch of several transfers per pgbench transaction (bench/DBCOST.md)
  per=$(awk '/^-- transfers-per-run:/{print $3; exit}' bench/transfer.pgbench); per=${per:-1}
  tps=$(awk -v per="$per" '/^tps = /{print $3 * per; exit}' "$OUT/pgbench-$1.txt")
  lat=$(awk '/latency average/{print $4; exit}' "$OUT/pgbench-$1.txt")
  log "pgbench $1: $tps transfers/s ($per per pgbench transaction), avg latency $lat ms, load $(load_now)"
  echo "{\"label\":\"$1\",\"tps\":$tps,\"latency_ms\":$lat,\"loadavg\":\"$(load_now)\"}" >> "$OUT/pgbench.jsonl"
  dropdb "$PGB_DB"
}
log "database limit: pgbench -n -M prepared -c $POOL -j 2 -T $PGB_S -f bench/transfer.pgbench (the service's INSERT/CLAIM/FENCE with its triggers)"
rm -f "$OUT/pgbench.jsonl"
pgbench_limit start
PGB_TPS=$(jq -r .tps "$OUT/pgbench.jsonl")

# ---------------------------------------------------------------- provider stand-in, load generator and service
"${LONG_JVM[@]}" provider "$PROVIDER_PORT" > "$OUT/provider.log" 2>&1 &
PROVIDER_PID=$!
PIDS+=($PROVIDER_PID)
"${LONG_JVM[@]}" serve "$DRIVER_PORT" > "$OUT/driver.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 120); do
  (exec 3<>/dev/tcp/127.0.0.1/$DRIVER_PORT) 2>/dev/null && (exec 3<>/dev/tcp/127.0.0.1/$PROVIDER_PORT) 2>/dev/null && break
  sleep 0.5
done

start_service() { # port redis-url log [extra jvm args...]
  local port=$1 redis=$2 logf=$3; shift 3
  env -i PATH="$PATH" HOME="$HOME" \
    QUARKUS_HTTP_PORT="$port" \
    QUARKUS_MANAGEMENT_PORT="$((port + 1))" \
    QUARKUS_DATASOURCE_REACTIVE_URL="postgresql://127.0.0.1:$PGPORT/$DB" \
    QUARKUS_DATASOURCE_USERNAME=postgres \
    QUARKUS_REDIS_HOSTS="$redis" "${EXTRA_ENV[@]}" \
    LEDGERLINE_RATE_LIMIT_WRITES_PER_SECOND=1000000 LEDGERLINE_RATE_LIMIT_WRITES_BURST=1000000 \
    LEDGERLINE_LEDGER_OPENING_BALANCE=100000000000000 \
    LEDGERLINE_RATE_LIMIT_READS_PER_SECOND=1000000 LEDGERLINE_RATE_LIMIT_READS_BURST=1000000 \
    MP_JWT_VERIFY_PUBLICKEY_LOCATION="$OUT/keys/public.pem" LEDGERLINE_IDEMPOTENCY_REFERENCE_SECRET=bench-reference-secret \
    QUARKUS_REST_CLIENT_PROVIDER_URL="http://127.0.0.1:$PROVIDER_PORT/provider" \
    "$JAVA" "$@" -jar "$ROOT/service/target/quarkus-app/quarkus-run.jar" > "$logf" 2>&1 &
  SVC_PID=$!
  PIDS+=($SVC_PID)
  for _ in $(seq 1 240); do
    # /q/* is on the management interface: the API port + 1 here
    if curl -fsS "http://127.0.0.1:$((port + 1))/q/health/live" >/dev/null 2>&1; then return 0; fi
    kill -0 "$SVC_PID" 2>/dev/null || { echo "service exited; see $logf" >&2; tail -20 "$logf" >&2; exit 1; }
    sleep 0.5
  done
  echo "service did not come up on $port; see $logf" >&2; exit 1
}

stop_pid() {
  kill "$1" 2>/dev/null || true
  for _ in $(seq 1 40); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.5; done
  kill -9 "$1" 2>/dev/null || true
}

provider_dups() { curl -fsS "http://127.0.0.1:$PROVIDER_PORT/provider/stats" | jq -r .duplicateExecutions; }

# load SCENARIO RATE SECONDS LABEL PORT [hgrm] -> one JSON line on stdout (with sent/s and duplicates added)
# CPU accounting around each load (jiffies from /proc): the service's JVM, every postgres process, the Redis server,
# the provider stand-in and the whole machine's busy time, over the load's whole call (its 2 s unrecorded warm-up and
# the measured window); the driver reports its own process CPU over the measured window; "other" is the machine's
# busy time minus all of those (other helpers' builds, the kernel's share not charged to a process).
CLK_TCK=$(getconf CLK_TCK)
REDIS_PID=$(pgrep -x redis-server | head -1 || true)
proc_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
# the private cluster's processes: its postmaster and every process it started
pg_pids() { echo "$PG_MASTER"; pgrep -P "$PG_MASTER"; }
pg_ticks() { local t=0 p; for p in $(pg_pids); do t=$(( t + $(proc_ticks "$p") )); done; echo "$t"; }
# the part of pg_ticks that is not a client's backend: the postmasters, checkpointers, WAL and background writers,
# launchers and autovacuum (by their titles, as ps shows them)
pg_background_ticks() {
  local t=0 p
  for p in $(pg_pids); do
    tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | grep -Eq '(checkpointer|writer|launcher|archiver|stats)[[:space:]]*$|autovacuum|bin/postgres ' \
      && t=$(( t + $(proc_ticks "$p") ))
  done
  echo "$t"
}
busy_ticks() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }
cpu_snapshot() { echo "$(proc_ticks "${SVC_PID:-0}") $(pg_ticks) $(proc_ticks "${REDIS_PID:-0}") $(busy_ticks) $(date +%s%N) $(proc_ticks "$PROVIDER_PID") $(pg_background_ticks)"; }

# drive OPTION... -> one load by the long-lived driver (Driver serve), its JSON line on stdout
drive() {
  printf '%s\n' "$@" | curl -sS --fail-with-body --max-time 900 --data-binary @- "http://127.0.0.1:$DRIVER_PORT/load"
}

run_load() {
  local scenario=$1 rate=$2 secs=$3 label=$4 port=$5 hgrm=${6:-}
  local json sent cpu_before cpu_after
  cpu_before=$(cpu_snapshot)
  json=$(drive --url="http://127.0.0.1:$port" --key="$OUT/keys/private.pk8" --scenario="$scenario" \
    --rate="$rate" --duration="$secs" --prefix="$label-$rate-$RANDOM$RANDOM" --seed-prefix=seed --seed-count="$SEED" \
    --ids="${IDS_FILE:-$OUT/seed-ids.txt}" --label="$label" --connections="$CONNS" ${hgrm:+--hgrm="$hgrm"})
  cpu_after=$(cpu_snapshot)
  json=$(echo "$json" | jq -c --arg b "$cpu_before" --arg a "$cpu_after" --argjson hz "$CLK_TCK" '
    ($b | split(" ") | map(tonumber)) as $x | ($a | split(" ") | map(tonumber)) as $y |
    (($y[4] - $x[4]) / 1e9) as $wall | (.requests + .warmup * .offered) as $sentReqs |
    . + {cpu: {wallS: $wall, service: (($y[0] - $x[0]) / $hz / $wall), postgres: (($y[1] - $x[1]) / $hz / $wall),
               postgresBackground: (($y[6] - $x[6]) / $hz / $wall),
               redis: (($y[2] - $x[2]) / $hz / $wall), machine: (($y[3] - $x[3]) / $hz / $wall),
               provider: (($y[5] - $x[5]) / $hz / $wall), driver: .driverCores,
               serviceUsPerRequest: (($y[0] - $x[0]) / $hz * 1e6 / $sentReqs),
               postgresUsPerRequest: (($y[1] - $x[1]) / $hz * 1e6 / $sentReqs)}}
    | .cpu.other = (.cpu.machine - .cpu.service - .cpu.postgres - .cpu.redis - .cpu.provider - .cpu.driver)')
  # the window is the driver's own: from its first scheduled request to its last answer (the driver's JVM
  # start-up is outside it), with the transfers that reached 'sent' in it counted by PostgreSQL
  local start_ms end_ms window
  start_ms=$(echo "$json" | jq -r .startEpochMs); end_ms=$(echo "$json" | jq -r .endEpochMs)
  sent=0   # the static responder (calibration) creates nothing, and the service's schema may not exist yet
  [ "$port" = "$STATIC_PORT" ] || sent=$(psql_q "select count(*) from transfer_events where to_status = 'sent'
                   and at >= to_timestamp($start_ms / 1000.0) and at < to_timestamp($end_ms / 1000.0)")
  window=$(echo "$start_ms $end_ms" | awk '{printf "%.3f", ($2 - $1) / 1000}')
  echo "$json" | jq -c --argjson sent "$sent" --argjson window "$window" --argjson dups "$(provider_dups)" \
    --arg load "$(load_now)" --argjson pgb "$PGB_TPS" \
    '. + {sent: $sent, sentPerSec: ($sent / $window), duplicates: $dups, loadavg: $load,
          ratioToPgbench: (($sent / $window) / $pgb)}'
}

# A step held when: no errors, >= 97 % of the offered rate achieved, p50 <= 50 ms and p99 <= 1 s (an overloaded
# open-model step queues, so its median climbs; the p99 bound is loose because a shared, busy machine adds
# scheduling spikes of hundreds of ms that are not the service's capacity), and for new transfers sent/s keeps up
# (not asked of the calibration, whose responder sends nothing anywhere).
sustainable() {
  echo "$1" | jq -e '(.errors == 0) and (.achieved >= 0.97 * .offered) and (.p50 <= 50) and (.p99 <= 1000)
                     and (if .scenario == "new" and (.label | startswith("step-cal") | not)
                          then .sentPerSec >= 0.9 * .achieved else true end)' >/dev/null
}

# search SCENARIO "RATES" PORT NAME -> sets BEST, CAL_TOP=true when even the last rate held, and FIRST_ACHIEVED
# (the first step's achieved rate)
search() {
  local scenario=$1 rates=$2 port=$3 name=$4 json
  BEST=0; CAL_TOP=false; FIRST_ACHIEVED=
  for rate in $rates; do
    json=$(run_load "$scenario" "$rate" "$STEP_S" "step-$name" "$port")
    echo "$json" | jq -c --arg n "$name" '. + {name: $n, phase: "step"}' >> "$OUT/steps.jsonl"
    log "  step $name @ $rate/s: $(echo "$json" | jq -c '{achieved, errors, p50, p99, sentPerSec, loadavg, cpu}')"
    [ -n "$FIRST_ACHIEVED" ] || FIRST_ACHIEVED=$(echo "$json" | jq -r '.achieved | floor')
    if sustainable "$json"; then BEST=$rate; else break; fi
    sleep 1
  done
  [ "$BEST" = "$(echo "$rates" | awk '{print $NF}')" ] && CAL_TOP=true
  if [ "$BEST" = 0 ]; then BEST=$(echo "$rates" | awk '{print $1}'); log "  $name: even the first step failed; measuring at $BEST/s anyway"; fi
}

# A measured window starts with no backlog: a search's last step was more than the service could send, and the
# transfers it left pending would otherwise be sent (and their statements paid) inside the next window.
measure() { # scenario port name
  local scenario=$1 port=$2 name=$3 half json
  drained "$scenario"
  sample_load "$name-peak"
  json=$(run_load "$scenario" "$BEST" "$MEASURE_S" "$name" "$port" "$OUT/$name-peak.hgrm")
  echo "$json" | jq -c --arg n "$name" '. + {name: $n, phase: "sustainable"}' >> "$OUT/results.jsonl"
  log "  $name @ $BEST/s (sustainable): $(echo "$json" | jq -c '{achieved, errors, p50, p99, p999, sentPerSec, duplicates, loadavg}')"
  sleep 2
  drained "$scenario"
  half=$(( BEST / 2 ))
  sample_load "$name-half"
  json=$(run_load "$scenario" "$half" "$MEASURE_S" "$name" "$port" "$OUT/$name-half.hgrm")
  echo "$json" | jq -c --arg n "$name" '. + {name: $n, phase: "half"}' >> "$OUT/results.jsonl"
  log "  $name @ $half/s (50 %): $(echo "$json" | jq -c '{achieved, errors, p50, p99, p999, sentPerSec, duplicates, loadavg}')"
  sleep 2
}

# wrk_run LABEL URL -> OUT/wrk-LABEL.json: wrk (closed loop, one thread, CONNS connections, WRK_S s) sending the
# driver's replay requests (OUT/replay.lua), with the CPU of the service, PostgreSQL, Redis and wrk itself
wrk_run() {
  local label=$1 url=$2 before after wrk_cpu
  sample_load "wrk-$label"
  before=$(cpu_snapshot)
  /usr/bin/time -f '%U %S' -o "$OUT/wrk-$label.time" \
    wrk -t1 -c"$CONNS" -d"${WRK_S}s" --timeout 10s -s "$OUT/replay.lua" "$url" > "$OUT/wrk-$label.txt" 2>&1
  after=$(cpu_snapshot)
  wrk_cpu=$(awk '{print $1 + $2}' "$OUT/wrk-$label.time")
  grep '^WRKJSON ' "$OUT/wrk-$label.txt" | cut -d' ' -f2- | jq -c --arg b "$before" --arg a "$after" --argjson hz "$CLK_TCK" \
    --arg l "$label" --argjson wc "$wrk_cpu" --argjson c "$CONNS" --arg load "$(load_now)" '
    ($b | split(" ") | map(tonumber)) as $x | ($a | split(" ") | map(tonumber)) as $y | (($y[4] - $x[4]) / 1e9) as $wall |
    . + {label: $l, connections: $c, loadavg: $load, cpu: {wrk: ($wc / $wall), service: (($y[0] - $x[0]) / $hz / $wall),
         redis: (($y[2] - $x[2]) / $hz / $wall), machine: (($y[3] - $x[3]) / $hz / $wall),
         wrkUsPerRequest: ($wc * 1e6 / .requests), serviceUsPerRequest: (($y[0] - $x[0]) / $hz * 1e6 / .requests)}}' \
    > "$OUT/wrk-$label.json"
  log "  wrk $label: $(jq -c '{rps, p50, p99, socketErrors, non2xx3xx, cpu}' "$OUT/wrk-$label.json")"
}

# redis_get_limit -> OUT/redis-benchmark.json: GET throughput of the machine's Redis, in the service's logical db,
# CONNS connections, no pipelining, values the size of the service's completed idempotency entries
redis_get_limit() {
  local size
  size=$(redis-cli -n "$REDIS_DB" scan 0 match 'idem:v1:*' count 1000 | tail -n +2 | sed -n 1,50p \
    | while read -r k; do redis-cli -n "$REDIS_DB" strlen "$k"; done | awk '{t += $1; n++} END {print n ? int(t / n) : 3}')
  sample_load redis-benchmark
  redis-benchmark -h 127.0.0.1 -p 6379 --dbnum "$REDIS_DB" -t set,get -d "$size" -c "$CONNS" -P 1 -n "$REDIS_N" --csv \
    > "$OUT/redis-benchmark.csv" 2>&1
  redis-cli -n "$REDIS_DB" unlink key:__rand_int__ >/dev/null   # redis-benchmark's own key; nothing of the service's
  awk -F, -v size="$size" -v c="$CONNS" -v db="$REDIS_DB" -v ld="$(load_now)" '/^"GET/ {gsub(/"/, "");
    print "{\"rps\":" $2 ",\"p50\":" $5 ",\"p99\":" $7 ",\"valueBytes\":" size ",\"connections\":" c ",\"db\":" db ",\"loadavg\":\"" ld "\"}"}' \
    "$OUT/redis-benchmark.csv" > "$OUT/redis-benchmark.json"
  log "  redis-benchmark GET (-c $CONNS -P 1 -d $size, db $REDIS_DB): $(cat "$OUT/redis-benchmark.json")"
}

drained() { # scenario: the scenarios that create transfers wait until every one of them is final
  case $1 in new|mix) wait_all_final 120 ;; esac
}

wait_all_final() { # seconds: until no transfer is pending/processing/reconciling
  for _ in $(seq 1 $(( $1 * 2 ))); do
    [ "$(psql_q "select count(*) from transfers where status not in ('sent','failed')")" = 0 ] && return 0
    sleep 0.5
  done
  log "  warning: $(psql_q "select count(*) from transfers where status not in ('sent','failed')") transfers not final yet"
}

# ---------------------------------------------------------------- calibration: the load generator's own limit
# The same driver, the same requests (POST with the JSON body, bearer token and an Idempotency-Key; GET by id), the
# same keep-alive connections, against a responder that answers a fixed transfer at once. Its sustainable rate
# (the criterion of every scenario) is the most the driver can claim for anything on this machine; a service result
# above a third of it is marked driver-bound in the report.
"${LONG_JVM[@]}" static "$STATIC_PORT" seed- > "$OUT/static.log" 2>&1 &
STATIC_PID=$!
PIDS+=($STATIC_PID)
for _ in $(seq 1 120); do (exec 3<>/dev/tcp/127.0.0.1/$STATIC_PORT) 2>/dev/null && break; sleep 0.5; done
echo 00000000-0000-4000-8000-000000000000 > "$OUT/calibration-ids.txt"
log "calibration: the driver's own limit against a static responder on $STATIC_PORT (fixed $(curl -fsS -X POST \
  "http://127.0.0.1:$STATIC_PORT/v1/transfers" | wc -c)-byte transfer, $CONNS connections)"
# the driver's JVM compiles its hot path here, before anything is measured
run_load new "$(echo "$RATES_CAL" | awk '{print $2}')" $(( WARM_S / 2 + 2 )) warm-driver "$STATIC_PORT" >> "$OUT/warmup.jsonl"
IDS_FILE=$OUT/calibration-ids.txt
# when even the first step fails, what it achieved is the honest figure (search's fallback is for the scenarios)
calibrate() { # scenario name -> sets CAL, CAL_AT_TOP
  search "$1" "$RATES_CAL" "$STATIC_PORT" "$2"
  CAL=$BEST; CAL_AT_TOP=$CAL_TOP
  local first
  first=$(jq -s -c --arg n "$2" '[.[] | select(.name == $n)][0]' "$OUT/steps.jsonl")
  [ "$(echo "$first" | jq -r '.offered | floor')" = "$BEST" ] && ! sustainable "$first" && CAL=$FIRST_ACHIEVED
  return 0
}
calibrate new cal-post; CAL_POST=$CAL; CAL_POST_TOP=$CAL_AT_TOP
calibrate poll cal-get; CAL_GET=$CAL; CAL_GET_TOP=$CAL_AT_TOP
unset IDS_FILE
"${DRIVER[@]}" wrk-script "$OUT/keys/private.pk8" "$OUT/replay.lua" seed "$SEED"
wrk_run static "http://127.0.0.1:$STATIC_PORT"
stop_pid "$STATIC_PID"
echo "{\"post\":$CAL_POST,\"postAtTop\":$CAL_POST_TOP,\"get\":$CAL_GET,\"getAtTop\":$CAL_GET_TOP,\"connections\":$CONNS}" > "$OUT/calibration.json"
log "calibration: POST $CAL_POST/s, GET $CAL_GET/s sustained (highest step tried: $(echo "$RATES_CAL" | awk '{print $NF}')/s); wrk POST (closed loop): $(jq -r .rps "$OUT/wrk-static.json")/s"

log "starting the packaged service (prod profile) on $SVC_PORT, Redis db $REDIS_DB, provider stand-in on $PROVIDER_PORT"
start_service "$SVC_PORT" "redis://127.0.0.1:6379/$REDIS_DB" "$OUT/service.log"
SVC1=$SVC_PID

log "warm-up ($(( WARM_S * 3 )) s of new transfers at 300/s, then seeding $SEED transfers for replays and polls)"
# the service's JIT needs a minute of real traffic on 2 shared cores before its numbers settle: a probe after
# 20 s of warm-up held 450 new transfers/s, after 60 s at 300/s it held 750/s (bench/FINDINGS.md)
run_load new 300 $(( WARM_S * 3 )) warm "$SVC_PORT" >> "$OUT/warmup.jsonl"
"${DRIVER[@]}" seed --url="http://127.0.0.1:$SVC_PORT" --key="$OUT/keys/private.pk8" --count="$SEED" --prefix=seed --ids="$OUT/seed-ids.txt"
wait_all_final 60
run_load replay 1500 "$WARM_S" warm "$SVC_PORT" >> "$OUT/warmup.jsonl"
run_load poll 1500 "$WARM_S" warm "$SVC_PORT" >> "$OUT/warmup.jsonl"
log "  redis db $REDIS_DB holds $(redis-cli -n $REDIS_DB dbsize) keys (the service writes only there)"

log "scenario 1: new transfers, unique keys"
search new "$RATES_NEW" "$SVC_PORT" s1-new; measure new "$SVC_PORT" s1-new; wait_all_final 30
log "scenario 2: replays of completed keys"
search replay "$RATES_REPLAY" "$SVC_PORT" s2-replay; measure replay "$SVC_PORT" s2-replay
log "scenario 2 cross-checks: the same replays with wrk, and redis-benchmark GET on the same Redis"
wrk_run replay "http://127.0.0.1:$SVC_PORT"
redis_get_limit
log "scenario 3: mix 80 % new / 15 % replays / 5 % polls"
search mix "$RATES_MIX" "$SVC_PORT" s3-mix; measure mix "$SVC_PORT" s3-mix; wait_all_final 30
log "scenario 4: status polling"
search poll "$RATES_POLL" "$SVC_PORT" s4-poll; measure poll "$SVC_PORT" s4-poll

S1_RATE=$(jq -r 'select(.name=="s1-new" and .phase=="sustainable") | .offered' "$OUT/results.jsonl" | cut -d. -f1)
log "profile: JFR (settings=profile) on scenario 1 at $S1_RATE/s for $PROFILE_S s"
jcmd_bin=$JAVA_HOME/bin/jcmd
"$jcmd_bin" "$SVC1" JFR.start name=bench settings=profile filename="$OUT/scenario1.jfr" >/dev/null
run_load new "$S1_RATE" "$PROFILE_S" profile "$SVC_PORT" > "$OUT/profile-run.json"
"$jcmd_bin" "$SVC1" JFR.stop name=bench >/dev/null
wait_all_final 30

# what the first instance counted: token-cache hits, idempotency paths, lock results (the report quotes them)
curl -fsS "http://127.0.0.1:$((SVC_PORT + 1))/q/metrics" | grep -E '^ledgerline_(auth_token_cache|idempotency|lock_acquire|dispatch|claim|pipeline_passes)_total' \
  > "$OUT/metrics-svc1.txt" || true
stop_pid "$SVC1"

# A/B in the same run: the verified-token cache (security/VerifiedTokens) off, everything else equal, replays at
# scenario 2's two measured rates. Same seed data, a fresh instance warmed the same way.
S2_RATE=$(jq -r 'select(.name=="s2-replay" and .phase=="sustainable") | .offered' "$OUT/results.jsonl" | cut -d. -f1)
log "A/B: scenario 2 at $S2_RATE/s and $(( S2_RATE / 2 ))/s on an instance with LEDGERLINE_TOKEN_CACHE_MAX_ENTRIES=0"
EXTRA_ENV=(LEDGERLINE_TOKEN_CACHE_MAX_ENTRIES=0)
start_service "$SVC2_PORT" "redis://127.0.0.1:6379/$REDIS_DB" "$OUT/service-nocache.log"
EXTRA_ENV=()
run_load replay 1500 "$WARM_S" warm-nocache "$SVC2_PORT" >> "$OUT/warmup.jsonl"
BEST=$S2_RATE; measure replay "$SVC2_PORT" ab-no-token-cache
stop_pid "$SVC_PID"

log "scenario 5: scenario 1 with Redis unreachable: a second instance with QUARKUS_REDIS_HOSTS=redis://127.0.0.1:$DEAD_REDIS_PORT (nothing listens)"
start_service "$SVC2_PORT" "redis://127.0.0.1:$DEAD_REDIS_PORT/$REDIS_DB" "$OUT/service-noredis.log"
SVC2=$SVC_PID
run_load new 300 $(( WARM_S * 3 )) warm5 "$SVC2_PORT" >> "$OUT/warmup.jsonl"
search new "$RATES_NEW" "$SVC2_PORT" s5-noredis; measure new "$SVC2_PORT" s5-noredis; wait_all_final 30
stop_pid "$SVC2"

log "database limit again, after the scenarios (the machine's background load drifts), and two what-ifs"
pgbench_limit end
pgbench_limit no-notify "DROP TRIGGER transfers_notify ON transfers"
PGOPTIONS="-c synchronous_commit=off" pgbench_limit sync-commit-off
# the limit the ratios use: the mean of the two runs on the service's real schema
PGB_TPS=$(jq -s '[.[] | select(.label=="start" or .label=="end") | .tps] | add / length' "$OUT/pgbench.jsonl")
echo "{\"pgbench_tps\":$PGB_TPS}" > "$OUT/pgbench.json"
log "database limit used for ratios: $PGB_TPS transfers/s (mean of start and end)"
for f in "$OUT/results.jsonl" "$OUT/steps.jsonl"; do
  jq -c --argjson pgb "$PGB_TPS" '. + {ratioToPgbench: (.sentPerSec / $pgb)}' "$f" > "$f.tmp" && mv "$f.tmp" "$f"
done

# ---------------------------------------------------------------- totals, chart, report
FINAL_DUPS=$(provider_dups)
STATUS=$(psql_q "select string_agg(status || '=' || n, ', ' order by status) from (select status, count(*) n from transfers group by status) s")
REPLAYED_PER_REF=$(psql_q "select count(*) from (select transfer_id from transfer_events where to_status='processing' group by transfer_id having count(*) > 1) x")
curl -fsS "http://127.0.0.1:$PROVIDER_PORT/provider/stats" > "$OUT/provider-stats.json"
echo "{\"duplicates\":$FINAL_DUPS,\"statuses\":\"$STATUS\",\"claimedTwice\":$REPLAYED_PER_REF}" > "$OUT/totals.json"
log "totals: provider duplicates=$FINAL_DUPS; transfers by status: $STATUS; claimed more than once: $REPLAYED_PER_REF"
sample_load end

CHART_ARGS=()
for f in s1-new s2-replay s3-mix s4-poll s5-noredis ab-no-token-cache; do
  r=$(jq -r --arg n "$f" 'select(.name==$n and .phase=="sustainable") | .offered' "$OUT/results.jsonl" | cut -d. -f1)
  h=$(jq -r --arg n "$f" 'select(.name==$n and .phase=="half") | .offered' "$OUT/results.jsonl" | cut -d. -f1)
  CHART_ARGS+=("$f @ $r/s=$OUT/$f-peak.hgrm" "$f @ $h/s (50%)=$OUT/$f-half.hgrm")
done
PNG=$OUT/latency.png
[ "$QUICK" = 1 ] || PNG=$ROOT/bench/latency.png
"${DRIVER[@]}" chart "$PNG" "Ledgerline Transfers: latency by percentile ($(nproc) cores, open model)" "${CHART_ARGS[@]}"

if [ -x "$JFR_TOOL" ]; then
  "$JFR_TOOL" view --width 200 hot-methods "$OUT/scenario1.jfr" > "$OUT/jfr-hot-methods.txt" 2>&1 || true
  "$JFR_TOOL" view --width 200 allocation-by-class "$OUT/scenario1.jfr" > "$OUT/jfr-allocation.txt" 2>&1 || true
fi
"$JAVA_HOME/bin/jfr" print --events jdk.ExecutionSample --stack-depth 64 "$OUT/scenario1.jfr" > "$OUT/jfr-samples.txt" 2>/dev/null || true
python3 bench/jfr_summary.py "$OUT/jfr-samples.txt" > "$OUT/jfr-summary.txt" || true

REPORT=$OUT/BENCHMARKS.md
[ "$QUICK" = 1 ] || REPORT=$ROOT/BENCHMARKS.md
python3 bench/report.py "$OUT" "$REPORT" "$QUICK"
log "report: $REPORT, chart: $PNG"
