#!/usr/bin/env bash
# How fast one instance delivers webhooks, and what a delivery costs it:
#
#     bench/webhookrate.sh                  # N=2000 transfers, ENDPOINTS="1 4", ROUNDS=2
#
# One packaged instance (service/target/quarkus-app, prod profile, plain http to 127.0.0.1 allowed for the receiver) against
# a private PostgreSQL 15 cluster (bench/private-pg.sh, pg_stat_statements), a private Redis, the zero-latency
# provider stand-in and bench/WebhookReceiver.java, which answers every delivery 200 at once and counts them.
# First the receiver alone: curl sends it RECV_N requests, one at a time and CURL_PARALLEL side by side, so its own
# rate is known. Then, per round and per endpoint count E (interleaved: 1, 4, 1, 4 ...): E endpoints are
# registered (POST /v1/webhook-endpoints, scope webhooks.admin) and held back (next_attempt_at = 'infinity' in the
# database), N transfers are created (bench/driver seed) and left to reach sent (3 events each), then the endpoints
# are released at once and the instance drains E x 3N deliveries (after one such drain with one endpoint that warms
# the instance up and is not reported). Measured: deliveries/s from the first to the last
# arrival at the receiver (and from the release), the instance's, PostgreSQL's and the receiver's CPU per delivery
# (/proc), the statements of the drain (pg_stat_statements), the HTTP latency the instance recorded
# (webhook_deliveries.latency_ms), and the 1-minute load before and after.
# Env: N (2000) ENDPOINTS ("1 4") ROUNDS (2) RECV_N (5000) CURL_PARALLEL (4) DRAIN_TIMEOUT_S (600) APP OUT
# PG_PORT (55442) REDIS_PORT (56390) SVC_PORT (28080) MGMT_PORT (29000) PROVIDER_PORT (28090) RECEIVER_PORT (28091)
# RECEIVER_HOSTS (4: the receiver listens on RECEIVER_PORT and the next ports, endpoint i on port i mod 4, so that
# endpoints are on different addresses as they would be on different hosts; the service's HTTP client keeps at
# most 8 connections per address).
# Output: bench/out/webhookrate-<time>.{md,jsonl} and the table on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
N=${N:-2000}; ENDPOINTS=${ENDPOINTS:-"1 4"}; ROUNDS=${ROUNDS:-2}; RECV_N=${RECV_N:-5000}; CURL_PARALLEL=${CURL_PARALLEL:-4}
DRAIN_TIMEOUT_S=${DRAIN_TIMEOUT_S:-600}
PG_PORT=${PG_PORT:-55442}; REDIS_PORT=${REDIS_PORT:-56390}; SVC_PORT=${SVC_PORT:-28080}; MGMT_PORT=${MGMT_PORT:-29000}
PROVIDER_PORT=${PROVIDER_PORT:-28090}; RECEIVER_PORT=${RECEIVER_PORT:-28091}; RECEIVER_HOSTS=${RECEIVER_HOSTS:-4}
RECEIVER_PORTS=$(seq -s, "$RECEIVER_PORT" $(( RECEIVER_PORT + RECEIVER_HOSTS - 1 )))
APP=${APP:-$ROOT/service/target/quarkus-app}
OUT=${OUT:-$ROOT/bench/out}; mkdir -p "$OUT"
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
JSONL=$OUT/webhookrate-$STAMP.jsonl; MD=$OUT/webhookrate-$STAMP.md; : > "$JSONL"
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
JAVA=$JAVA_HOME/bin/java
BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
DRIVER=("$JAVA" -Xmx512m -XX:+UseSerialGC -cp "$ROOT/bench/driver/target/bench-driver.jar:$ROOT/bench/driver/target/lib/*" dev.ledgerline.bench.Driver)
TICK=$(getconf CLK_TCK)
[ -f "$APP/quarkus-run.jar" ] || { echo "no $APP/quarkus-run.jar: ./mvnw -B -q package -DskipTests" >&2; exit 1; }
[ -f "$ROOT/bench/driver/target/bench-driver.jar" ] || { echo "no driver: ./mvnw -B -q -pl bench/driver package" >&2; exit 1; }
for port in $PG_PORT $REDIS_PORT $SVC_PORT $MGMT_PORT $PROVIDER_PORT ${RECEIVER_PORTS//,/ }; do
  if (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then echo "port $port is in use" >&2; exit 1; fi
done
log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }
load_now() { cut -d' ' -f1-3 /proc/loadavg; }

# ---------------------------------------------------------------- private PostgreSQL and Redis
TMP=$(mktemp -d /tmp/webhookrate.XXXXXX)
DATA=$TMP/data
. bench/private-pg.sh
PIDS=()
cleanup() {
  set +e
  stop_processes "${PIDS[@]}"
  as_pg "$BIN/pg_ctl" -D "$DATA" -m fast stop >/dev/null 2>&1
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 143' TERM INT
private_pg_init "$TMP" "$PG_PORT" "pg_stat_statements.track = top" "max_connections = 100"
as_pg "$BIN/pg_ctl" -D "$DATA" -l "$TMP/server.log" -w start >/dev/null
PG="-h 127.0.0.1 -p $PG_PORT -U postgres"
export PGOPTIONS="-c client_min_messages=warning"
q() { psql -X -q -t -A $PG -d ledgerline -v ON_ERROR_STOP=1 -c "$1"; }
psql -X -q $PG -d postgres -c "CREATE DATABASE ledgerline"; q "CREATE EXTENSION pg_stat_statements"
PM=$(head -1 "$DATA/postmaster.pid")
pg_ticks() { local t=0 p; for p in $PM $(pgrep -P "$PM"); do t=$(( t + $(awk '{print $14 + $15 + $16 + $17}' "/proc/$p/stat" 2>/dev/null || echo 0) )); done; echo "$t"; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no > "$OUT/webhookrate-redis.log" 2>&1 & PIDS+=($!)

# ---------------------------------------------------------------- stand-in, receiver, instance
"${DRIVER[@]}" keys "$OUT/keys"
ADMIN=$("${DRIVER[@]}" token "$OUT/keys/private.pk8" bench-admin webhooks.admin)
"${DRIVER[@]}" provider "$PROVIDER_PORT" > "$OUT/webhookrate-provider.log" 2>&1 & PIDS+=($!)
"$JAVA" -XX:+UseSerialGC -Xmx256m "$ROOT/bench/WebhookReceiver.java" "$RECEIVER_PORTS" > "$OUT/webhookrate-receiver.log" 2>&1 &
RECV_PID=$!; PIDS+=($RECV_PID)
env -i PATH="$PATH" HOME="$HOME" QUARKUS_HTTP_PORT="$SVC_PORT" QUARKUS_MANAGEMENT_PORT="$MGMT_PORT" \
  QUARKUS_DATASOURCE_REACTIVE_URL="postgresql://127.0.0.1:$PG_PORT/ledgerline" QUARKUS_DATASOURCE_USERNAME=postgres \
  QUARKUS_REDIS_HOSTS="redis://127.0.0.1:$REDIS_PORT" \
  LEDGERLINE_RATE_LIMIT_WRITES_PER_SECOND=1000000 LEDGERLINE_RATE_LIMIT_WRITES_BURST=1000000 \
  MP_JWT_VERIFY_PUBLICKEY_LOCATION="$OUT/keys/public.pem" LEDGERLINE_IDEMPOTENCY_REFERENCE_SECRET=bench-reference-secret \
  QUARKUS_REST_CLIENT_PROVIDER_URL="http://127.0.0.1:$PROVIDER_PORT/provider" \
  LEDGERLINE_WEBHOOKS_ALLOW_HTTP=true LEDGERLINE_WEBHOOKS_ALLOW_PRIVATE_HOSTS=true \
  "$JAVA" -jar "$APP/quarkus-run.jar" > "$OUT/webhookrate-service.log" 2>&1 &
SVC_PID=$!; PIDS+=($SVC_PID)
for _ in $(seq 1 240); do
  curl -fsS "http://127.0.0.1:$MGMT_PORT/q/health/ready" >/dev/null 2>&1 && curl -fsS "http://127.0.0.1:$RECEIVER_PORT/count" >/dev/null 2>&1 && break
  kill -0 "$SVC_PID" 2>/dev/null || { tail -20 "$OUT/webhookrate-service.log" >&2; exit 1; }
  sleep 0.5
done
count() { curl -fsS "http://127.0.0.1:$RECEIVER_PORT/count"; }

# ---------------------------------------------------------------- the receiver alone
printf '%s' '{"id":"00000000-0000-0000-0000-000000000000.2","type":"transfer.sent","data":{"id":"00000000-0000-0000-0000-000000000000","status":"sent","amount":1250,"currency":"EUR"}}' > "$TMP/body.json"
for _ in $(seq 1 "$RECV_N"); do echo "url = \"http://127.0.0.1:$RECEIVER_PORT/hooks/direct\""; done > "$TMP/urls.cfg"
receiver_alone() { # parallel -> requests/s, receiver CPU µs per request
  curl -fsS -o /dev/null -X DELETE "http://127.0.0.1:$RECEIVER_PORT/count"
  local r0 t0 t1 r1 par=()
  [ "$1" -gt 1 ] && par=(-Z --parallel-max "$1")
  r0=$(ticks "$RECV_PID"); t0=$(date +%s%N)
  curl -sS "${par[@]}" -o /dev/null -H 'Content-Type: application/json' --data-binary @"$TMP/body.json" -K "$TMP/urls.cfg" 2>/dev/null
  t1=$(date +%s%N); r1=$(ticks "$RECV_PID")
  local got; got=$(count | jq .requests)
  echo "$got $(( (t1 - t0) / 1000000 )) $(( r1 - r0 ))" | awk -v hz="$TICK" -v p="$1" -v ld="$(load_now)" \
    '{printf "{\"kind\":\"receiver\",\"parallel\":%d,\"requests\":%d,\"ms\":%d,\"perSecond\":%.0f,\"receiverCpuUs\":%.1f,\"load\":\"%s\"}\n", p, $1, $2, $1 / $2 * 1000, $3 / hz * 1e6 / $1, ld}'
}
log "webhookrate: N=$N ENDPOINTS=\"$ENDPOINTS\" ROUNDS=$ROUNDS RECEIVER_HOSTS=$RECEIVER_HOSTS, load $(load_now)"
receiver_alone 1 > /dev/null   # its JIT first
for p in 1 "$CURL_PARALLEL"; do receiver_alone "$p" | tee -a "$JSONL" >&2; done

# ---------------------------------------------------------------- the drains
open_count() { q "SELECT count(*) FROM transfers WHERE status NOT IN ('sent', 'failed')"; }
drain() { # round endpoints
  local round=$1 e=$2 ids=() i id
  curl -fsS -o /dev/null -X DELETE "http://127.0.0.1:$RECEIVER_PORT/count"
  for i in $(seq 1 "$e"); do
    id=$(curl -fsS -X POST "http://127.0.0.1:$SVC_PORT/v1/webhook-endpoints" -H "Authorization: Bearer $ADMIN" \
      -H 'Content-Type: application/json' -d "{\"url\": \"http://127.0.0.1:$(( RECEIVER_PORT + (i - 1) % RECEIVER_HOSTS ))/hooks/r$round-e$e-$i\", \"description\": \"webhookrate\"}" | jq -r .id)
    ids+=("$id")
  done
  local list; list=$(printf "'%s'," "${ids[@]}"); list=${list%,}
  # held back: due never, and no lease in hand (a round that leased one meanwhile releases it with next_attempt_at = now())
  for _ in $(seq 1 50); do
    q "UPDATE webhook_endpoints SET next_attempt_at = 'infinity' WHERE id IN ($list) AND lease_token IS NULL" >/dev/null
    sleep 0.2
    [ "$(q "SELECT count(*) FROM webhook_endpoints WHERE id IN ($list) AND next_attempt_at = 'infinity' AND lease_token IS NULL")" = "$e" ] && break
  done
  local ev0 ev1; ev0=$(q "SELECT count(*) FROM transfer_events")
  "${DRIVER[@]}" seed --url="http://127.0.0.1:$SVC_PORT" --key="$OUT/keys/private.pk8" --count="$N" \
    --prefix="wh-$round-$e-$STAMP" --ids="$TMP/ids.txt" >/dev/null
  for _ in $(seq 1 600); do [ "$(open_count)" = 0 ] && break; sleep 0.5; done
  ev1=$(q "SELECT count(*) FROM transfer_events")
  local expected=$(( (ev1 - ev0) * e ))
  local i0 it0; i0=$(ticks "$SVC_PID"); it0=$(date +%s%3N)
  sleep 3   # the instance idle (endpoints held): its background CPU, for the baseline
  local idle=$(( $(ticks "$SVC_PID") - i0 )) it1; it1=$(date +%s%3N)
  q "SELECT pg_stat_statements_reset()" >/dev/null
  local load0 s0 c0 r0 t0 m0
  load0=$(load_now); s0=$(ticks "$SVC_PID"); c0=$(pg_ticks); r0=$(ticks "$RECV_PID"); t0=$(date +%s%3N)
  q "UPDATE webhook_endpoints SET next_attempt_at = now() WHERE id IN ($list)" >/dev/null
  local deadline=$(( $(date +%s) + DRAIN_TIMEOUT_S )) got=0
  while [ "$(date +%s)" -lt "$deadline" ]; do
    got=$(count | jq .requests); [ "$got" -ge "$expected" ] && break; sleep 0.2
  done
  local s1 c1 r1 t1; t1=$(date +%s%3N); s1=$(ticks "$SVC_PID"); c1=$(pg_ticks); r1=$(ticks "$RECV_PID")
  local c; c=$(count)
  local stats; stats=$(q "SELECT json_build_object(
      'latencyMs', (SELECT round(avg(latency_ms), 2) FROM webhook_deliveries WHERE endpoint_id IN ($list)),
      'latencyMsMax', (SELECT max(latency_ms) FROM webhook_deliveries WHERE endpoint_id IN ($list)),
      'statements', (SELECT sum(calls) FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat%'),
      'advances', (SELECT sum(calls) FROM pg_stat_statements WHERE query LIKE '%INSERT INTO webhook_deliveries%' AND query NOT LIKE '%attempts + 1%'),
      'advanceMs', (SELECT round((sum(total_exec_time) / sum(calls))::numeric, 3) FROM pg_stat_statements WHERE query LIKE '%INSERT INTO webhook_deliveries%' AND query NOT LIKE '%attempts + 1%'),
      'leases', (SELECT sum(calls) FROM pg_stat_statements WHERE query LIKE '%FOR UPDATE SKIP LOCKED%' AND query LIKE '%webhook_endpoints%'),
      'reads', (SELECT sum(calls) FROM pg_stat_statements WHERE query LIKE '%pg_snapshot_xmin%' AND query LIKE '%JOIN transfers%'),
      'top', (SELECT json_agg(t) FROM (SELECT calls, round(total_exec_time::numeric, 1) AS ms,
                 left(regexp_replace(query, '\s+', ' ', 'g'), 60) AS query FROM pg_stat_statements
               WHERE query NOT LIKE '%pg_stat%' ORDER BY calls DESC LIMIT 8) t))")
  for id in "${ids[@]}"; do
    curl -fsS -o /dev/null -X DELETE "http://127.0.0.1:$SVC_PORT/v1/webhook-endpoints/$id" -H "Authorization: Bearer $ADMIN"
  done
  jq -c -n --argjson round "$round" --argjson e "$e" --argjson n "$N" --argjson expected "$expected" --argjson c "$c" \
    --argjson t0 "$t0" --argjson t1 "$t1" --argjson svc "$(( s1 - s0 ))" --argjson idle "$idle" --argjson idlems "$(( it1 - it0 ))" --argjson pg "$(( c1 - c0 ))" --argjson recv "$(( r1 - r0 ))" \
    --argjson hz "$TICK" --argjson stats "$stats" --arg load0 "$load0" --arg load1 "$(load_now)" \
    '{kind: "drain", round: $round, endpoints: $e, transfers: $n, expected: $expected, delivered: $c.requests, distinct: $c.distinct,
      firstAfterReleaseMs: ($c.firstMs - $t0), drainMs: ($c.lastMs - $c.firstMs), releaseToLastMs: ($c.lastMs - $t0),
      perSecond: (if $c.lastMs > $c.firstMs then ($c.requests - 1) / ($c.lastMs - $c.firstMs) * 1000 else 0 end),
      perSecondFromRelease: ($c.requests / ($c.lastMs - $t0) * 1000),
      serviceCpuUs: ($svc / $hz * 1e6 / $c.requests), postgresCpuUs: ($pg / $hz * 1e6 / $c.requests),
      receiverCpuUs: ($recv / $hz * 1e6 / $c.requests),
      serviceCores: ($svc / $hz / (($t1 - $t0) / 1000)), serviceIdleCores: ($idle / $hz / ($idlems / 1000)), postgresCores: ($pg / $hz / (($t1 - $t0) / 1000)),
      statementsPerDelivery: ($stats.statements / $c.requests), advances: $stats.advances, advanceMs: $stats.advanceMs,
      leases: $stats.leases, reads: $stats.reads, latencyMs: $stats.latencyMs, latencyMsMax: $stats.latencyMsMax,
      loadBefore: $load0, loadAfter: $load1, top: $stats.top}' | tee -a "$JSONL" | jq -c 'del(.top)' >&2
}
drain 0 1 2>/dev/null   # a warm-up, not reported: the first drain after the start also compiles the delivery path
sed -i '/"round":0,/d' "$JSONL"
for round in $(seq 1 "$ROUNDS"); do
  for e in $ENDPOINTS; do drain "$round" "$e"; done
done

# ---------------------------------------------------------------- the acknowledgement alone
# What one ADVANCE costs in wall time where nothing else is on the path: pgbench sends the deliverer's statement
# (its text as in bench/dbcost/transfer-webhooks.pgbench) back to back, 1 client = one endpoint's serial chain without
# the HTTP part, 4 clients = four endpoints (their own rows, bench/dbcost/webhook-endpoint.sql), on the same cluster.
psql -X -q $PG -d postgres -c "CREATE DATABASE advance"
for f in $(ls service/src/main/resources/db/migration/V*__*.sql | sort -V); do psql -X -q $PG -d advance -v ON_ERROR_STOP=1 -f "$f" >/dev/null; done
psql -X -q $PG -d advance -v ON_ERROR_STOP=1 -f bench/dbcost/webhook-endpoint.sql >/dev/null
awk '/^-- the deliverer: each event acknowledged/{on=1; next} on && /^WITH w AS/{n++} on && n==1{print} on && n==1 && /FROM w;$/{exit}' \
  bench/dbcost/transfer-webhooks.pgbench | sed 's/:t1_id/gen_random_uuid()/; s/:t1_created_at/now()/' > "$TMP/advance.pgbench"
for c in 1 4; do
  pgbench -n -M prepared -c "$c" -j 1 -T 10 $PG -f "$TMP/advance.pgbench" advance > "$TMP/advance-$c.txt" 2>&1
  awk -v c="$c" -v ld="$(load_now)" '/^tps = /{tps = $3} /latency average/{lat = $4} /number of failed transactions: /{f = $5}
    END {printf "{\"kind\":\"advance\",\"clients\":%d,\"perSecond\":%.0f,\"latencyMs\":%s,\"failed\":%s,\"load\":\"%s\"}\n", c, tps, lat, f, ld}' \
    "$TMP/advance-$c.txt" | tee -a "$JSONL" >&2
done

# ---------------------------------------------------------------- the table
{
  echo "\`bench/webhookrate.sh\` — N=$N ENDPOINTS=\"$ENDPOINTS\" ROUNDS=$ROUNDS RECEIVER_HOSTS=$RECEIVER_HOSTS, one instance (prod profile), private PostgreSQL 15"
  echo "(fsync on), $(nproc) cores shared by everything; $(date -u +%Y-%m-%dT%H:%MZ)."
  echo
  echo "The receiver alone (curl, $RECV_N POSTs of a delivery-sized body over keep-alive):"
  echo
  jq -r 'select(.kind == "receiver") | "- \(.parallel) at a time: \(.perSecond) requests/s, receiver CPU \(.receiverCpuUs) µs per request, load \(.load)"' "$JSONL"
  echo
  echo "ADVANCE alone (pgbench -n -M prepared -T 10, the deliverer's acknowledgement back to back on the same cluster):"
  echo
  jq -r 'select(.kind == "advance") | "- \(.clients) client(s): \(.perSecond)/s, \(.latencyMs) ms each, load \(.load)"' "$JSONL"
  echo
  echo "| round | endpoints | deliveries | distinct events | deliveries/s (first to last arrival) | from release | per endpoint/s | HTTP ms (recorded) | ADVANCE ms | statements per delivery | service CPU µs | postgres CPU µs | receiver CPU µs | service cores (idle) | postgres cores | load before → after |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|"
  jq -r 'select(.kind == "drain") | "| \(.round) | \(.endpoints) | \(.delivered) of \(.expected) | \(.distinct) | \(.perSecond | round) | \(.perSecondFromRelease | round) | \(.perSecond / .endpoints | round) | \(.latencyMs) | \(.advanceMs) | \(.statementsPerDelivery * 100 | round / 100) | \(.serviceCpuUs | round) | \(.postgresCpuUs | round) | \(.receiverCpuUs | round) | \(.serviceCores * 100 | round / 100) (\(.serviceIdleCores * 100 | round / 100)) | \(.postgresCores * 100 | round / 100) | \(.loadBefore) → \(.loadAfter) |"' "$JSONL"
  echo
  echo "Statements of the last drain of each endpoint count (calls, ms, statement):"
  for e in $ENDPOINTS; do
    echo; echo "$e endpoint(s):"
    jq -r --argjson e "$e" 'select(.kind == "drain" and .endpoints == $e)' "$JSONL" | jq -s -r 'last | .top[] | "    \(.calls)  \(.ms) ms  \(.query)"'
  done
} | tee "$MD"
