#!/usr/bin/env bash
# What one transfer costs PostgreSQL when the service itself writes it, beside what the same SQL costs
# in pgbench, on a private PostgreSQL 15 cluster with pg_stat_statements (the machine's server is not touched):
#
#     bench/servicecost.sh                                   # cached vs uncached prepared statements
#     bench/servicecost.sh NAME=ENV[,ENV...] NAME=...         # any other service settings, one variant each
#
# Every variant is a packaged instance (service/target/quarkus-app, prod profile) with its settings; all of them run at
# once against one database, Redis db 7 and a zero-latency provider stand-in, are warmed up together, and are
# then measured in turn (A, B, A, B ...) at the same offered rate: a window resets pg_stat_statements,
# pg_stat_database and pg_stat_wal, offers RATE new transfers/s for SECS s, and divides by the transfers that
# reached `sent` in it. The idle instances' sweepers run meanwhile and their few statements are counted too.
# Then pgbench runs bench/transfer.pgbench on the same cluster: the limit of the SQL alone, for the ratio.
# Env: RATE (600; a list steps through each rate in every round) SECS (20) ROUNDS (2) WARM_S (60) PORT (55433)
# APP (service/target/quarkus-app) and APP_<variant> (that variant's own build, e.g. an older commit's quarkus-app,
# for two builds side by side) OUT (bench/out). OWNERS (1: every transfer from one principal, so one account row
# that every hold and posting of the funds ledger takes; N spreads the transfers over N principals).
# PG_CPUS / SVC_CPUS (taskset lists, e.g. 0 and 1): PostgreSQL on its own
# core(s), the instances, the driver, the stand-in and pgbench's client on the other(s), so the service is measured
# against a database that does not share its CPU, as when instances run on other machines.
# Each window also records the cores busy in it: postgres, the instance, the driver with the stand-in (pinned, they
# share the instance's core(s)) and the machine's Redis, to tell a saturated core from a concurrency limit.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
RATE=${RATE:-600}; OWNERS=${OWNERS:-1}; SECS=${SECS:-20}; ROUNDS=${ROUNDS:-2}; WARM_S=${WARM_S:-60}; PORT=${PORT:-55433}
APP=${APP:-$ROOT/service/target/quarkus-app}
OUT=${OUT:-$ROOT/bench/out}; mkdir -p "$OUT"
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
REPORT=$OUT/servicecost-$STAMP.md
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
PG_PIN=(); SVC_PIN=()
[ -n "${PG_CPUS:-}" ] && PG_PIN=(taskset -c "$PG_CPUS")
[ -n "${SVC_CPUS:-}" ] && SVC_PIN=(taskset -c "$SVC_CPUS")
BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
DRIVER_CP="$ROOT/bench/driver/target/bench-driver.jar:$ROOT/bench/driver/target/lib/*"
LONG_JVM=("${SVC_PIN[@]}" "$JAVA_HOME/bin/java" -Xmx512m -XX:+UseSerialGC -cp "$DRIVER_CP" dev.ledgerline.bench.Driver)
[ -f "$APP/quarkus-run.jar" ] || { echo "no $APP/quarkus-run.jar: ./mvnw -B -q package -DskipTests -pl service -am" >&2; exit 1; }
[ -f "$ROOT/bench/driver/target/bench-driver.jar" ] || { echo "no driver: ./mvnw -B -q -pl bench/driver package" >&2; exit 1; }
if [ $# -eq 0 ]; then
  set -- uncached=QUARKUS_DATASOURCE_REACTIVE_CACHE_PREPARED_STATEMENTS=false \
         cached=QUARKUS_DATASOURCE_REACTIVE_CACHE_PREPARED_STATEMENTS=true
fi

# ---------------------------------------------------------------- the private cluster
TMP=$(mktemp -d /tmp/servicecost.XXXXXX)
DATA=$TMP/data
. bench/private-pg.sh
PIDS=()
cleanup() {
  set +e
  stop_processes "${PIDS[@]}"
  as_pg "$BIN/pg_ctl" -D "$DATA" -m fast stop >/dev/null 2>&1
  rm -rf "$TMP"
  redis-cli -n 7 FLUSHDB >/dev/null 2>&1
}
trap cleanup EXIT
trap 'exit 143' TERM INT
private_pg_init "$TMP" "$PORT" "pg_stat_statements.track = top" "max_connections = 200"
as_pg "${PG_PIN[@]}" "$BIN/pg_ctl" -D "$DATA" -l "$TMP/server.log" -w start >/dev/null   # backends inherit the pin
PG="-h 127.0.0.1 -p $PORT -U postgres"
export PGOPTIONS="-c client_min_messages=warning"
q() { psql -X -q -t -A $PG -d "$1" -v ON_ERROR_STOP=1 -c "$2"; }
q postgres "CREATE DATABASE ledgerline"; q ledgerline "CREATE EXTENSION pg_stat_statements"
PM=$(head -1 "$DATA/postmaster.pid")
# utime + stime of the postmaster and its children, with the reaped children's (cutime + cstime)
pg_ticks() { local t=0 p; for p in $PM $(pgrep -P "$PM"); do t=$(( t + $(awk '{print $14 + $15 + $16 + $17}' "/proc/$p/stat" 2>/dev/null || echo 0) )); done; echo "$t"; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
TICK=$(getconf CLK_TCK)

# ---------------------------------------------------------------- provider stand-in, driver, instances
redis-cli -n 7 FLUSHDB >/dev/null
"${LONG_JVM[@]}" keys "$OUT/keys" >/dev/null
"${LONG_JVM[@]}" provider 18290 > "$OUT/servicecost-provider.log" 2>&1 & PIDS+=($!); STAND_IN=$!
"${LONG_JVM[@]}" serve 18292 > "$OUT/servicecost-driver.log" 2>&1 & PIDS+=($!); DRIVER=$!
REDIS_PID=$(redis-cli info server | awk -F: '/^process_id:/{print $2+0}')
# the CPU of the processes that share the instances' core(s) when pinned: the driver and the stand-in
aux_ticks() { echo $(( $(ticks "$DRIVER") + $(ticks "$STAND_IN") )); }
drive() { printf '%s\n' "$@" | curl -sS --fail-with-body --max-time 900 --data-binary @- "http://127.0.0.1:18292/load"; }
: > "$OUT/servicecost-ids.txt"
NAMES=(); ENVS=(); SVCS=(); HTTP=()
# a variant runs APP, or the build APP_<name> names (two builds side by side: APP_base=<a quarkus-app of another commit>)
app_of() { local v="APP_$1"; echo "${!v:-$APP}"; }
i=0
for variant in "$@"; do
  name=${variant%%=*}; envs=${variant#*=}
  port=$(( 18200 + 10 * i ))
  IFS=, read -r -a extra <<< "$envs"
  env -i PATH="$PATH" HOME="$HOME" QUARKUS_HTTP_PORT=$port QUARKUS_MANAGEMENT_PORT=$(( port + 1 )) \
    QUARKUS_DATASOURCE_REACTIVE_URL="postgresql://127.0.0.1:$PORT/ledgerline" QUARKUS_DATASOURCE_USERNAME=postgres \
    QUARKUS_REDIS_HOSTS="redis://127.0.0.1:6379/7" \
    LEDGERLINE_RATE_LIMIT_WRITES_PER_SECOND=1000000 LEDGERLINE_RATE_LIMIT_WRITES_BURST=1000000 \
    LEDGERLINE_LEDGER_OPENING_BALANCE=100000000000000 \
    MP_JWT_VERIFY_PUBLICKEY_LOCATION="$OUT/keys/public.pem" LEDGERLINE_IDEMPOTENCY_REFERENCE_SECRET=bench-reference-secret \
    QUARKUS_REST_CLIENT_PROVIDER_URL="http://127.0.0.1:18290/provider" "${extra[@]}" \
    "${SVC_PIN[@]}" "$JAVA_HOME/bin/java" -jar "$(app_of "$name")/quarkus-run.jar" > "$OUT/servicecost-$name.log" 2>&1 &
  PIDS+=($!); NAMES+=("$name"); ENVS+=("$envs"); SVCS+=($!); HTTP+=($port)
  for _ in $(seq 1 240); do curl -fsS "http://127.0.0.1:$(( port + 1 ))/q/health/live" >/dev/null 2>&1 && break; sleep 0.5; done
  i=$(( i + 1 ))
done
echo "servicecost: ${NAMES[*]} at ${RATE// //s, }/s, pins: postgres ${PG_CPUS:-any}, the rest ${SVC_CPUS:-any}, $ROUNDS rounds of $SECS s, load $(cut -d' ' -f1 /proc/loadavg)" >&2
for k in "${!NAMES[@]}"; do   # warm-ups one after the other, so each JIT sees the same load
  drive --url="http://127.0.0.1:${HTTP[$k]}" --key="$OUT/keys/private.pk8" --scenario=new --rate=300 --duration="$WARM_S" \
    --prefix="warm-${NAMES[$k]}-$STAMP" --ids="$OUT/servicecost-ids.txt" --label=warm --connections=32 --owners="$OWNERS" >/dev/null
done
sleep 5

JSONL=$OUT/servicecost-$STAMP.jsonl; : > "$JSONL"
sent_total() { q ledgerline "SELECT count(*) FROM transfer_events WHERE to_status = 'sent'"; }
for round in $(seq 1 "$ROUNDS"); do
 for rate in $RATE; do
  for k in "${!NAMES[@]}"; do
    name=${NAMES[$k]}
    q ledgerline "SELECT pg_stat_statements_reset(); SELECT pg_stat_reset(); SELECT pg_stat_reset_shared('wal')" >/dev/null
    n0=$(sent_total); wal0=$(q ledgerline "SELECT wal_bytes FROM pg_stat_wal"); c0=$(pg_ticks); s0=$(ticks "${SVCS[$k]}"); x0=$(aux_ticks); r0=$(ticks "$REDIS_PID"); t0=$(date +%s%N)
    js=$(drive --url="http://127.0.0.1:${HTTP[$k]}" --key="$OUT/keys/private.pk8" --scenario=new --rate="$rate" --duration="$SECS" \
      --prefix="$name-$round-$rate-$STAMP" --ids="$OUT/servicecost-ids.txt" --label="$name" --connections=32 --owners="$OWNERS")
    sleep 2   # the last fences of the window
    t1=$(date +%s%N); s1=$(ticks "${SVCS[$k]}"); x1=$(aux_ticks); r1=$(ticks "$REDIS_PID"); c1=$(pg_ticks); n1=$(sent_total)
    wal1=$(q ledgerline "SELECT wal_bytes FROM pg_stat_wal")
    stats=$(q ledgerline "SELECT (SELECT sum(calls) FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat%' AND query NOT LIKE '%transfer_events WHERE to_status%'),
                                 (SELECT xact_commit FROM pg_stat_database WHERE datname = 'ledgerline'),
                                 (SELECT sum(n_tup_ins + n_tup_upd) FROM pg_stat_user_tables),
                                 (SELECT round(sum(total_exec_time)::numeric, 1) FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat%'),
                                 (SELECT round(sum(rows)::numeric / greatest(sum(calls), 1), 2) FROM pg_stat_statements
                                   WHERE query LIKE '%status = f.status%' AND query LIKE '%unnest%')" | tr '|' ' ')
    read -r calls commits rows exec_ms fence_batch <<< "$stats"
    top=$(q ledgerline "SELECT json_agg(t) FROM (SELECT calls, round(total_exec_time::numeric, 1) AS ms, rows,
                          left(regexp_replace(query, '\s+', ' ', 'g'), 70) AS query FROM pg_stat_statements
                          WHERE query NOT LIKE '%pg_stat%' ORDER BY total_exec_time DESC LIMIT 6) t")
    echo "$js" | jq -c --arg name "$name" --argjson round "$round" --argjson sent "$((n1 - n0))" \
      --argjson wall "$(( (t1 - t0) / 1000000 ))" --argjson calls "${calls:-0}" --argjson commits "$commits" \
      --argjson rows "${rows:-0}" --argjson wal "$(( ${wal1%.*} - ${wal0%.*} ))" --argjson exec "${exec_ms:-0}" --argjson fenceBatch "${fence_batch:-0}" \
      --argjson pg "$(( c1 - c0 ))" --argjson svc "$(( s1 - s0 ))" --argjson aux "$(( x1 - x0 ))" --argjson redis "$(( r1 - r0 ))" --argjson hz "$TICK" --argjson top "$top" \
      --arg load "$(cut -d' ' -f1 /proc/loadavg)" \
      '{name: $name, round: $round, offered, achieved, errors, errorKinds, byStatus, p50, p99, sent: $sent, wallMs: $wall,
        statements: ($calls / $sent), commits: ($commits / $sent), rows: ($rows / $sent), walBytes: ($wal / $sent),
        execMs: ($exec / $sent), fenceBatch: $fenceBatch, pgCpuUs: ($pg / $hz * 1e6 / $sent), serviceCpuUs: ($svc / $hz * 1e6 / $sent),
        pgCores: ($pg / $hz / ($wall / 1000)), serviceCores: ($svc / $hz / ($wall / 1000)),
        auxCores: ($aux / $hz / ($wall / 1000)), redisCores: ($redis / $hz / ($wall / 1000)), load: $load, top: $top}' >> "$JSONL"
    tail -1 "$JSONL" | jq -r '"\(.name) round \(.round): \(.sent) sent, \(.commits | . * 100 | round / 100) commits, \(.pgCpuUs | round) µs postgres CPU, \(.serviceCpuUs | round) µs service CPU per transfer; p99 \(.p99) ms"' >&2
  done
 done
done

# ---------------------------------------------------------------- the same SQL alone, on the same cluster
for k in "${!SVCS[@]}"; do kill "${SVCS[$k]}" 2>/dev/null || true; done
sleep 3
# the windows leave the service's database to autovacuum and a checkpoint to write: on a pinned core that work would
# run inside pgbench's window, taking the core from it and counting as its CPU. Let it finish first (at most 3 minutes).
q postgres "CHECKPOINT" >/dev/null
for _ in $(seq 1 180); do
  [ "$(q postgres "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'")" = 0 ] && break
  sleep 1
done
q postgres "CREATE DATABASE pgb"
for migration in $(ls service/src/main/resources/db/migration/V*__*.sql | sort -V); do
  psql -X -q $PG -d pgb -v ON_ERROR_STOP=1 -f "$migration" >/dev/null
done
per=$(awk '/^-- transfers-per-run:/{print $3; exit}' bench/transfer.pgbench); per=${per:-1}
c0=$(pg_ticks)
"${SVC_PIN[@]}" pgbench -n -M prepared -c 20 -j 2 -T "$SECS" $PG -f bench/transfer.pgbench pgb > "$OUT/servicecost-$STAMP-pgbench.txt" 2>&1
c1=$(pg_ticks)
pgb_tps=$(awk -v per="$per" '/^tps = /{printf "%.0f", $3 * per; exit}' "$OUT/servicecost-$STAMP-pgbench.txt")
pgb_runs=$(awk '/number of transactions actually processed/{print $NF; exit}' "$OUT/servicecost-$STAMP-pgbench.txt" | cut -d/ -f1)
pgb_cpu=$(echo "$c0 $c1 $pgb_runs $per $TICK" | awk '{printf "%.0f", ($2 - $1) / $5 * 1e6 / ($3 * $4)}')

{
  echo "# Service database cost, $STAMP"
  echo
  echo "\`bench/servicecost.sh $*\` — RATE=\"$RATE\" OWNERS=$OWNERS PG_CPUS=${PG_CPUS:-} SVC_CPUS=${SVC_CPUS:-} SECS=$SECS ROUNDS=$ROUNDS WARM_S=$WARM_S, private PostgreSQL 15"
  echo "(fsync on, pg_stat_statements track=top, autovacuum on), 1-minute load at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "Per transfer that reached \`sent\` in the window (mean over the rounds):"
  echo
  echo "| variant | settings | offered req/s | achieved req/s | sent/s ÷ pgbench | p50 ms | p99 ms | errors | statements | commits | fences per batch | rows written | WAL bytes | statement time ms | postgres CPU µs | service CPU µs | postgres cores | service cores |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for k in "${!NAMES[@]}"; do
   for rate in $RATE; do
    jq -s -r --arg n "${NAMES[$k]}" --arg e "${ENVS[$k]}" --argjson rate "$rate" --argjson pgb "$pgb_tps" \
      'map(select(.name == $n and .offered == $rate)) as $r | ($r | length) as $c
      | def m(f): ($r | map(f) | add / $c);
      "| \($n) | `\($e)` | \($rate) | \(m(.achieved) | round) | \(m(.sent / (.wallMs - 2000) * 1000) / $pgb * 100 | round) % | \(m(.p50) * 100 | round / 100) | \(m(.p99) * 100 | round / 100) | \(m(.errors)) | \(m(.statements) * 100 | round / 100) | \(m(.commits) * 100 | round / 100) | \(m(.fenceBatch) * 100 | round / 100) | \(m(.rows) * 100 | round / 100) | \(m(.walBytes) | round) | \(m(.execMs) * 1000 | round / 1000) | \(m(.pgCpuUs) | round) | \(m(.serviceCpuUs) | round) | \(m(.pgCores) * 100 | round / 100) | \(m(.serviceCores) * 100 | round / 100) |"' "$JSONL"
   done
  done
  echo
  echo "The same SQL alone: pgbench -n -M prepared -c 20 -j 2 -T $SECS -f bench/transfer.pgbench on the same cluster:"
  echo "**$pgb_tps transfers/s**, postgres CPU $pgb_cpu µs per transfer."
  echo
  echo "Rounds:"
  jq -r '"- \(.name) round \(.round) at \(.offered)/s: \(.sent) sent in \(.wallMs) ms, p99 \(.p99) ms, \(.errors) errors \(.errorKinds // {} | tojson), \(.commits * 100 | round / 100) commits, \(.pgCpuUs | round) µs postgres CPU; cores busy: postgres \(.pgCores * 100 | round / 100), the instance \(.serviceCores * 100 | round / 100), driver and stand-in \(.auxCores * 100 | round / 100), Redis \(.redisCores * 100 | round / 100); load \(.load)"' "$JSONL"
  echo
  echo "Heaviest statements by time, last round of each variant (calls, ms, rows, statement):"
  for n in "${NAMES[@]}"; do
    echo; echo "$n:"
    jq -r --arg n "$n" 'select(.name == $n)' "$JSONL" | jq -s -r 'last | .top[] | "    \(.calls)  \(.ms) ms  \(.rows) rows  \(.query)"'
  done
} > "$REPORT"
cat "$REPORT"
