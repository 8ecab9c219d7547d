# Sourced by bench/ab.sh and bench/peer.sh: what a same-run comparison of services needs, whatever it compares.
# The caller sets PFX (its file prefix in OUT: ab, peer) first, then calls stack_up and starts its services.
#
# - stack_up DB...: one private PostgreSQL 15 cluster (bench/private-pg.sh) with those databases, one private
#   redis-server on REDIS_PORT (neither is the machine's server), a throwaway RSA key pair, the zero-latency
#   provider stand-in, the static responder and one long-lived driver (`Driver serve`) that runs every load;
# - start_ledgerline K APP DB: a packaged Ledgerline (its quarkus-app directory) as service K, on HTTP_BASE + 10 K,
#   in database DB and Redis db K + 1, with the rate limits raised out of the way, logging to LOGS[K]; wait_ready K;
# - calibrate NAME [driver option ...]: the driver's own ceiling, closed loops at 32 and 4 connections against the
#   static responder with the same requests as the services get;
# - redis_floor: redis-benchmark's plain GETs of an entry-sized value at 32 and 4 connections, with Redis's CPU per GET:
#   what one round trip of the cheapest command costs this Redis on this machine;
# - prepare_ledgerline K: warm-up of new transfers, SEED seeded transfers that all reach `sent`;
# - window K SCENARIO CONNECTIONS ROUND: one measured closed-loop window of service K, appended to JSONL with the
#   CPU per answer of the service, Redis and PostgreSQL from /proc/<pid>/stat.
# Per service K the caller's arrays: NAMES (label), SVCS (pid), HTTP (port), DBS (database, empty: no PostgreSQL
# counts), LOGS (its log: ERROR lines are counted per window), READY (a URL that answers 2xx once it is up), REQ
# (the driver's request options: words without spaces).
# Env: ROUNDS (3) SECS (10) WARM_S (30) WARM_NEW_S (WARM_S: the new transfers' warm-up) SEED (2000) PORT (55434, PostgreSQL) REDIS_PORT (16479) HTTP_BASE (18400)
# OUT (bench/out) SVC_CPUS / AUX_CPUS (taskset lists: the services, and PostgreSQL + Redis + the driver + the
# stand-ins) HEAD_APP (this tree's service/target/quarkus-app) JAVA_HOME (OpenJDK 17) SVC_JVM (more JVM options of both
# services, words without spaces).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)
ROUNDS=${ROUNDS:-3}; SECS=${SECS:-10}; WARM_S=${WARM_S:-30}; WARM_NEW_S=${WARM_NEW_S:-$WARM_S}; SEED=${SEED:-2000}
PORT=${PORT:-55434}; REDIS_PORT=${REDIS_PORT:-16479}; HTTP_BASE=${HTTP_BASE:-18400}
OUT=${OUT:-$ROOT/bench/out}; mkdir -p "$OUT"
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
JSONL=$OUT/$PFX-$STAMP.jsonl; : > "$JSONL"
REPORT=$OUT/$PFX-$STAMP.md
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
SVC_PIN=(); AUX_PIN=()
[ -n "${SVC_CPUS:-}" ] && SVC_PIN=(taskset -c "$SVC_CPUS")
[ -n "${AUX_CPUS:-}" ] && AUX_PIN=(taskset -c "$AUX_CPUS")
HEAD_APP=${HEAD_APP:-$ROOT/service/target/quarkus-app}
KEYS=$OUT/$PFX-keys
DRIVER_CP="$ROOT/bench/driver/target/bench-driver.jar:$ROOT/bench/driver/target/lib/*"
LONG_JVM=("${AUX_PIN[@]}" "$JAVA_HOME/bin/java" -Xmx512m -XX:+UseSerialGC -cp "$DRIVER_CP" dev.ledgerline.bench.Driver)
SHORT_JVM=("$JAVA_HOME/bin/java" -XX:TieredStopAtLevel=1 -cp "$DRIVER_CP" dev.ledgerline.bench.Driver)
[ -f "$HEAD_APP/quarkus-run.jar" ] || { echo "no $HEAD_APP/quarkus-run.jar: ./mvnw -B -q package -DskipTests -pl service -am" >&2; exit 1; }
[ -f "$ROOT/bench/driver/target/bench-driver.jar" ] || { echo "no driver: ./mvnw -B -q -pl bench/driver package" >&2; exit 1; }

TMP=$(mktemp -d "/tmp/$PFX.XXXXXX")
DATA=$TMP/data
. bench/private-pg.sh
PIDS=()
cleanup() {
  set +e
  stop_processes "${PIDS[@]}"
  as_pg "$BIN/pg_ctl" -D "$DATA" -m fast stop >/dev/null 2>&1
  cp "$TMP/server.log" "$OUT/$PFX-postgres.log" 2>/dev/null
  [ -n "${BASE_TREE:-}" ] && git worktree remove --force "$BASE_TREE" >/dev/null 2>&1
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

PG="-h 127.0.0.1 -p $PORT -U postgres"
export PGOPTIONS="-c client_min_messages=warning"
q() { psql -X -q -t -A $PG -d "$1" -v ON_ERROR_STOP=1 -c "$2"; }
pg_ticks() { local t=0 p; for p in $PM $(pgrep -P "$PM"); do t=$(( t + $(awk '{print $14 + $15 + $16 + $17}' "/proc/$p/stat" 2>/dev/null || echo 0) )); done; echo "$t"; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
TICK=$(getconf CLK_TCK)
load1() { cut -d' ' -f1 /proc/loadavg; }
drive() { printf '%s\n' "$@" | curl -sS --fail-with-body --max-time 900 --data-binary @- "http://127.0.0.1:$(( HTTP_BASE + 92 ))/load"; }
NAMES=(); SVCS=(); HTTP=(); DBS=(); LOGS=(); READY=(); REQ=()

stack_up() { # DB...
  local db
  private_pg_init "$TMP" "$PORT" "max_connections = 200"
  as_pg "${AUX_PIN[@]}" "$BIN/pg_ctl" -D "$DATA" -l "$TMP/server.log" -w start >/dev/null
  for db in "$@"; do q postgres "CREATE DATABASE $db"; done
  PM=$(head -1 "$DATA/postmaster.pid")
  "${AUX_PIN[@]}" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no > "$OUT/$PFX-redis.log" 2>&1 & PIDS+=($!)
  REDIS_PID=$!
  for _ in $(seq 1 40); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.25; done
  "${SHORT_JVM[@]}" keys "$KEYS" >/dev/null
  "${LONG_JVM[@]}" provider $(( HTTP_BASE + 90 )) > "$OUT/$PFX-provider.log" 2>&1 & PIDS+=($!)
  "${LONG_JVM[@]}" static $(( HTTP_BASE + 91 )) seed- > "$OUT/$PFX-static.log" 2>&1 & PIDS+=($!)
  STATIC_PID=$!
  "${LONG_JVM[@]}" serve $(( HTTP_BASE + 92 )) > "$OUT/$PFX-driver.log" 2>&1 & PIDS+=($!)
  sleep 2
}

start_ledgerline() { # K APP DB; ENV_A / ENV_B (services 0 / 1): more NAME=VALUE settings, space-separated
  local k=$1 port=$(( HTTP_BASE + 10 * $1 )) extra
  if [ "$k" = 0 ]; then extra=${ENV_A:-}; else extra=${ENV_B:-}; fi
  # shellcheck disable=SC2086 # $extra is a list of NAME=VALUE words
  env -i PATH="$PATH" HOME="$HOME" QUARKUS_HTTP_PORT=$port QUARKUS_MANAGEMENT_PORT=$(( port + 1 )) $extra \
    QUARKUS_DATASOURCE_REACTIVE_URL="postgresql://127.0.0.1:$PORT/$3" QUARKUS_DATASOURCE_USERNAME=postgres \
    QUARKUS_REDIS_HOSTS="redis://127.0.0.1:$REDIS_PORT/$(( k + 1 ))" \
    LEDGERLINE_RATE_LIMIT_WRITES_PER_SECOND=1000000 LEDGERLINE_RATE_LIMIT_WRITES_BURST=1000000 \
    LEDGERLINE_RATE_LIMIT_READS_PER_SECOND=1000000 LEDGERLINE_RATE_LIMIT_READS_BURST=1000000 \
    LEDGERLINE_LEDGER_OPENING_BALANCE=100000000000000 \
    MP_JWT_VERIFY_PUBLICKEY_LOCATION="$KEYS/public.pem" LEDGERLINE_IDEMPOTENCY_REFERENCE_SECRET=bench-reference-secret \
    QUARKUS_REST_CLIENT_PROVIDER_URL="http://127.0.0.1:$(( HTTP_BASE + 90 ))/provider" \
    "${SVC_PIN[@]}" "$JAVA_HOME/bin/java" ${SVC_JVM:-} -jar "$2/quarkus-run.jar" > "${LOGS[$k]}" 2>&1 &
  PIDS+=($!); SVCS[$k]=$!; HTTP[$k]=$port; DBS[$k]=$3; REQ[$k]="--key=$KEYS/private.pk8"
  READY[$k]="http://127.0.0.1:$(( port + 1 ))/q/health/ready"
}

wait_ready() { # K: polls READY[K] for up to 2 minutes
  local k=$1
  for _ in $(seq 1 240); do curl -fsS "${READY[$k]}" >/dev/null 2>&1 && return 0; sleep 0.5; done
  echo "${NAMES[$k]} did not become ready" >&2; tail -20 "${LOGS[$k]}" >&2; exit 1
}

calibrate() { # NAME [driver option ...]: the same closed loops against the static responder
  # also the responder's own CPU per answer: what a bare Vert.x HTTP/1.1 server (one event loop, no routing, a fixed
  # answer of the service's size) spends per request on this machine, the floor under any service's figure
  local name=$1 c js s0 s1 t0 t1; shift
  for c in jit 32 4; do   # first one unrecorded window: the driver's JIT
    s0=$(ticks "$STATIC_PID"); t0=$(date +%s%N)
    js=$(drive --model=closed --url="http://127.0.0.1:$(( HTTP_BASE + 91 ))" --scenario=replay --seed-prefix=seed \
      --seed-count="$SEED" --duration="$SECS" --connections="${c/jit/32}" --label="$name-c$c" "$@")
    t1=$(date +%s%N); s1=$(ticks "$STATIC_PID")
    [ "$c" = jit ] && continue
    echo "$js" | jq -c --arg name "$name" --arg load "$(load1)" --argjson span "$(( (t1 - t0) / 1000000 ))" \
        --argjson st "$(( s1 - s0 ))" --argjson hz "$TICK" \
        '. + {name: $name, round: 0, scenario: "replay", load: $load,
              staticUs: ($st / $hz * 1e6 / (.achieved * $span / 1000))}' >> "$JSONL"
    tail -1 "$JSONL" | jq -r --arg pfx "$PFX" --arg name "$name" --arg c "$c" '"\($pfx): calibration \($name) c\($c): \(.achieved | round)/s, p99 \(.p99) ms, driver \(.driverUsPerRequest) µs/request, responder \(.staticUs * 10 | round / 10) µs/request"' >&2
  done
}

redis_floor() { # Redis's own CPU per plain GET of a value the size of a final entry, redis-benchmark at 32 and 4
  local c n=200000 r0 r1 t0 t1 rps
  for c in 32 4; do
    r0=$(ticks "$REDIS_PID"); t0=$(date +%s%N)
    rps=$("${AUX_PIN[@]}" redis-benchmark -p "$REDIS_PORT" -c "$c" -n "$n" -d 1800 -t get --csv 2>/dev/null \
      | awk -F'"' '/GET/ {print $4}')
    t1=$(date +%s%N); r1=$(ticks "$REDIS_PID")
    jq -nc --argjson c "$c" --argjson rps "${rps:-0}" --argjson redis "$(( r1 - r0 ))" --argjson hz "$TICK" \
      --argjson n "$n" --arg load "$(load1)" \
      '{name: "redis-get", round: 0, scenario: "get", connections: $c, achieved: $rps, load: $load,
        redisUs: ($redis / $hz * 1e6 / $n)}' >> "$JSONL"
    tail -1 "$JSONL" | jq -r --arg pfx "$PFX" '"\($pfx): calibration redis-benchmark GET c\(.connections): \(.achieved | round)/s, Redis \(.redisUs * 10 | round / 10) µs/GET"' >&2
  done
}

prepare_ledgerline() { # K: WARM_NEW_S s of new transfers, SEED transfers under keys seed-N, all of them `sent`
  local k=$1 url="http://127.0.0.1:${HTTP[$1]}"
  drive --model=closed --url="$url" --key="$KEYS/private.pk8" --scenario=new --duration="$WARM_NEW_S" --connections=8 \
    --prefix="warm-$STAMP-$k" --label=warm >/dev/null
  "${SHORT_JVM[@]}" seed --url="$url" --key="$KEYS/private.pk8" --count="$SEED" --prefix=seed --ids="$TMP/ids-$k" >/dev/null
  for _ in $(seq 1 120); do
    [ "$(q "${DBS[$k]}" "SELECT count(*) FROM transfers WHERE idempotency_key LIKE 'seed-%' AND status <> 'sent'")" = 0 ] && break; sleep 0.5
  done
}

warm_replays() { # K SECONDS [CONNECTIONS (32)]: replays of the seeded keys, not measured
  drive --model=closed --url="http://127.0.0.1:${HTTP[$1]}" ${REQ[$1]} --scenario=replay \
    --seed-prefix=seed --seed-count="$SEED" --duration="$2" --connections="${3:-32}" --label=warm >/dev/null
}

sent_total() { [ -z "$1" ] && echo 0 || q "$1" "SELECT count(*) FROM transfer_events WHERE to_status = 'sent'"; }
log_errors() { grep -cE ' ERROR |"level":"ERROR"' "$1" 2>/dev/null || true; }   # plain or JSON log lines
window() { # K SCENARIO CONNECTIONS ROUND [RATE: an open model at RATE requests/s over CONNECTIONS instead]
  local k=$1 scenario=$2 c=$3 round=$4 rate=${5:-} db=${DBS[$1]}
  local load=(--model=closed)
  [ -z "$rate" ] || load=(--model=open --rate="$rate")
  local n0 n1 s0 s1 r0 r1 p0 p1 t0 t1 i0 e0 e1 js jit gc
  # the second before the window: the service's own CPU while nothing is sent to it (what an earlier load left running)
  i0=$(ticks "${SVCS[$k]}"); sleep 1
  local before_threads; before_threads=$(mktemp)
  python3 bench/threads.py "${SVCS[$k]}" --save "$before_threads"
  n0=$(sent_total "$db"); s0=$(ticks "${SVCS[$k]}"); r0=$(ticks "$REDIS_PID"); p0=$(pg_ticks); e0=$(log_errors "${LOGS[$k]}"); t0=$(date +%s%N)
  js=$(drive "${load[@]}" --url="http://127.0.0.1:${HTTP[$k]}" ${REQ[$k]} --scenario="$scenario" \
    --seed-prefix=seed --seed-count="$SEED" --prefix="r$round-$c${rate:+-at$rate}-$STAMP" --duration="$SECS" --warmup=2 --connections="$c" \
    --label="${NAMES[$k]}")
  [ "$scenario" = new ] && sleep 2   # the window's last sends and fences
  t1=$(date +%s%N); s1=$(ticks "${SVCS[$k]}"); r1=$(ticks "$REDIS_PID"); p1=$(pg_ticks); n1=$(sent_total "$db"); e1=$(log_errors "${LOGS[$k]}")
  read -r jit gc _ < <(python3 bench/threads.py "${SVCS[$k]}" --since "$before_threads"); rm -f "$before_threads"
  # CPU over the whole span (warm-up seconds and the drain included) per answer over the same span: the window's
  # answers scaled by span / window
  echo "$js" | jq -c --arg name "${NAMES[$k]}" --arg scenario "$scenario" --argjson round "$round" \
      --argjson span "$(( (t1 - t0) / 1000000 ))" --argjson svc "$(( s1 - s0 ))" --argjson redis "$(( r1 - r0 ))" \
      --argjson pg "$(( p1 - p0 ))" --argjson sent "$(( n1 - n0 ))" --argjson hz "$TICK" --arg load "$(load1)" \
      --argjson idle "$(( s0 - i0 ))" --argjson logErrors "$(( e1 - e0 ))" --argjson jit "$jit" --argjson gc "$gc" \
      --arg rate "$rate" --argjson c "$c" \
      '. + {name: $name, scenario: $scenario, round: $round, spanMs: $span, sent: $sent, load: $load,
            connections: (.connections // $c), openRate: (if $rate == "" then null else ($rate | tonumber) end),
            svcUs: ($svc / $hz * 1e6 / (.achieved * $span / 1000)), redisUs: ($redis / $hz * 1e6 / (.achieved * $span / 1000)),
            pgUs: ($pg / $hz * 1e6 / (.achieved * $span / 1000)), svcCores: ($svc / $hz / ($span / 1000)),
            jitUs: ($jit / $hz * 1e6 / (.achieved * $span / 1000)), gcUs: ($gc / $hz * 1e6 / (.achieved * $span / 1000)),
            svcNoJitUs: (([$svc - $jit, 0] | max) / $hz * 1e6 / (.achieved * $span / 1000)),
            idleCoresBefore: ($idle / $hz), logErrors: $logErrors}' >> "$JSONL"
  tail -1 "$JSONL" | jq -r --arg pfx "$PFX" '"\($pfx): round \(.round) \(.name) \(.scenario) c\(.connections)\(if .openRate then " open at \(.openRate)/s" else "" end): \(.achieved | round)/s p50 \(.p50) p99 \(.p99) ms, service \(.svcUs | round) µs (JIT \(.jitUs | round), GC \(.gcUs | round)), redis \(.redisUs * 10 | round / 10) µs, errors \(.errors), idle before \(.idleCoresBefore) cores, load \(.load)"' >&2
}
