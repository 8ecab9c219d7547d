#!/usr/bin/env bash
# Same-run A/B of two builds of the service: a base commit's packaged jar (A), built from this repository in a scratch
# git worktree, beside this tree's (B), run interleaved (A B A B ...) against one private PostgreSQL 15 cluster and
# one private Redis (neither is the machine's server), each build in its own database and Redis db:
#
#     bench/ab.sh                    # A = main's tip 2a5bdee, B = this tree's service/target/quarkus-app
#     BASE=<commit> bench/ab.sh      # another base
#     BASE_APP=<dir> bench/ab.sh     # a base already packaged (its quarkus-app directory): no build
#
# Per window and build: answers/s, p50/p99 latency, and CPU per answered request of the service and of Redis (from
# /proc/<pid>/stat utime+stime deltas over the window), for replays at 32 and at 4 connections and for new transfers at
# 32 connections (there also PostgreSQL's CPU and the transfers that reached `sent`). Loads are closed loops (each
# connection sends its next request when its answer arrives, as wrk does: `Driver load --model=closed`). First a
# calibration: the same closed loops against the static responder, so the generator's own ceiling is on the page.
# Env: ROUNDS (3) SECS (10) WARM_S (30) SEED (2000) PORT (55434, PostgreSQL) REDIS_PORT (16479) HTTP_BASE (18400)
# MAVEN_ARGS (passed to the base's build) OUT (bench/out) SVC_CPUS / AUX_CPUS (taskset lists: the services, and
# PostgreSQL + Redis + the driver + the stand-ins). PROFILE=1: after the rounds, each build under JFR (sampling every
# 2 ms) for one more replay window of PROFILE_S (20) s at 32 connections, summarised by bench/jfr_summary.py and drawn by bench/flame.py (OUT/ab-A-replay.svg...).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BASE=${BASE:-2a5bdee}
ROUNDS=${ROUNDS:-3}; SECS=${SECS:-10}; WARM_S=${WARM_S:-30}; SEED=${SEED:-2000}
PORT=${PORT:-55434}; REDIS_PORT=${REDIS_PORT:-16479}; HTTP_BASE=${HTTP_BASE:-18400}
OUT=${OUT:-$ROOT/bench/out}; mkdir -p "$OUT"
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
JSONL=$OUT/ab-$STAMP.jsonl; : > "$JSONL"
REPORT=$OUT/ab-$STAMP.md
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
SVC_PIN=(); AUX_PIN=()
[ -n "${SVC_CPUS:-}" ] && SVC_PIN=(taskset -c "$SVC_CPUS")
[ -n "${AUX_CPUS:-}" ] && AUX_PIN=(taskset -c "$AUX_CPUS")
HEAD_APP=${HEAD_APP:-$ROOT/service/target/quarkus-app}
DRIVER_CP="$ROOT/bench/driver/target/bench-driver.jar:$ROOT/bench/driver/target/lib/*"
LONG_JVM=("${AUX_PIN[@]}" "$JAVA_HOME/bin/java" -Xmx512m -XX:+UseSerialGC -cp "$DRIVER_CP" dev.ledgerline.bench.Driver)
SHORT_JVM=("$JAVA_HOME/bin/java" -XX:TieredStopAtLevel=1 -cp "$DRIVER_CP" dev.ledgerline.bench.Driver)
[ -f "$HEAD_APP/quarkus-run.jar" ] || { echo "no $HEAD_APP/quarkus-run.jar: ./mvnw -B -q package -DskipTests -pl service -am" >&2; exit 1; }
[ -f "$ROOT/bench/driver/target/bench-driver.jar" ] || { echo "no driver: ./mvnw -B -q -pl bench/driver package" >&2; exit 1; }

TMP=$(mktemp -d /tmp/ab.XXXXXX)
DATA=$TMP/data
. bench/private-pg.sh
PIDS=()
cleanup() {
  set +e
  stop_processes "${PIDS[@]}"
  as_pg "$BIN/pg_ctl" -D "$DATA" -m fast stop >/dev/null 2>&1
  cp "$TMP/server.log" "$OUT/ab-postgres.log" 2>/dev/null
  [ -n "${BASE_TREE:-}" ] && git worktree remove --force "$BASE_TREE" >/dev/null 2>&1
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# ---------------------------------------------------------------- the base build, from this repository
if [ -z "${BASE_APP:-}" ]; then
  BASE_TREE=$TMP/base
  git worktree add --detach "$BASE_TREE" "$BASE" >/dev/null
  echo "ab: building $BASE in $BASE_TREE" >&2
  (cd "$BASE_TREE" && ./mvnw -B -q package -DskipTests -pl service -am) >&2
  BASE_APP=$TMP/base-app
  cp -r "$BASE_TREE/service/target/quarkus-app" "$BASE_APP"
fi
A_DESC="$BASE ($(git log -1 --format=%s "$BASE" 2>/dev/null | cut -c1-50))"
if [ "$HEAD_APP" = "$ROOT/service/target/quarkus-app" ]; then
  B_DESC="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- service || echo '+dirty')"
else
  B_DESC=$HEAD_APP   # a jar packaged elsewhere: its directory names it, this tree's HEAD may not
fi

# ---------------------------------------------------------------- PostgreSQL, Redis, stand-ins, driver
private_pg_init "$TMP" "$PORT" "max_connections = 200"
as_pg "${AUX_PIN[@]}" "$BIN/pg_ctl" -D "$DATA" -l "$TMP/server.log" -w start >/dev/null
PG="-h 127.0.0.1 -p $PORT -U postgres"
export PGOPTIONS="-c client_min_messages=warning"
q() { psql -X -q -t -A $PG -d "$1" -v ON_ERROR_STOP=1 -c "$2"; }
q postgres "CREATE DATABASE ledgerline_a"; q postgres "CREATE DATABASE ledgerline_b"
PM=$(head -1 "$DATA/postmaster.pid")
"${AUX_PIN[@]}" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no > "$OUT/ab-redis.log" 2>&1 & PIDS+=($!)
REDIS_PID=$!
for _ in $(seq 1 40); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.25; done

pg_ticks() { local t=0 p; for p in $PM $(pgrep -P "$PM"); do t=$(( t + $(awk '{print $14 + $15 + $16 + $17}' "/proc/$p/stat" 2>/dev/null || echo 0) )); done; echo "$t"; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
TICK=$(getconf CLK_TCK)

"${SHORT_JVM[@]}" keys "$OUT/ab-keys" >/dev/null
"${LONG_JVM[@]}" provider $(( HTTP_BASE + 90 )) > "$OUT/ab-provider.log" 2>&1 & PIDS+=($!)
"${LONG_JVM[@]}" static $(( HTTP_BASE + 91 )) seed- > "$OUT/ab-static.log" 2>&1 & PIDS+=($!)
"${LONG_JVM[@]}" serve $(( HTTP_BASE + 92 )) > "$OUT/ab-driver.log" 2>&1 & PIDS+=($!)
sleep 2
drive() { printf '%s\n' "$@" | curl -sS --fail-with-body --max-time 900 --data-binary @- "http://127.0.0.1:$(( HTTP_BASE + 92 ))/load"; }

NAMES=(A B); APPS=("$BASE_APP" "$HEAD_APP"); DBS=(ledgerline_a ledgerline_b); SVCS=(); HTTP=()
for k in 0 1; do
  port=$(( HTTP_BASE + 10 * k ))
  env -i PATH="$PATH" HOME="$HOME" QUARKUS_HTTP_PORT=$port QUARKUS_MANAGEMENT_PORT=$(( port + 1 )) \
    QUARKUS_DATASOURCE_REACTIVE_URL="postgresql://127.0.0.1:$PORT/${DBS[$k]}" QUARKUS_DATASOURCE_USERNAME=postgres \
    QUARKUS_REDIS_HOSTS="redis://127.0.0.1:$REDIS_PORT/$(( k + 1 ))" \
    LEDGERLINE_RATE_LIMIT_WRITES_PER_SECOND=1000000 LEDGERLINE_RATE_LIMIT_WRITES_BURST=1000000 \
    LEDGERLINE_RATE_LIMIT_READS_PER_SECOND=1000000 LEDGERLINE_RATE_LIMIT_READS_BURST=1000000 \
    LEDGERLINE_LEDGER_OPENING_BALANCE=100000000000000 \
    MP_JWT_VERIFY_PUBLICKEY_LOCATION="$OUT/ab-keys/public.pem" LEDGERLINE_IDEMPOTENCY_REFERENCE_SECRET=bench-reference-secret \
    QUARKUS_REST_CLIENT_PROVIDER_URL="http://127.0.0.1:$(( HTTP_BASE + 90 ))/provider" \
    "${SVC_PIN[@]}" "$JAVA_HOME/bin/java" -jar "${APPS[$k]}/quarkus-run.jar" > "$OUT/ab-${NAMES[$k]}.log" 2>&1 &
  PIDS+=($!); SVCS+=($!); HTTP+=($port)
done
for k in 0 1; do
  for _ in $(seq 1 240); do curl -fsS "http://127.0.0.1:$(( HTTP[k] + 1 ))/q/health/ready" >/dev/null 2>&1 && break; sleep 0.5; done
  curl -fsS "http://127.0.0.1:$(( HTTP[k] + 1 ))/q/health/ready" >/dev/null || { echo "${NAMES[$k]} did not become ready" >&2; tail -20 "$OUT/ab-${NAMES[$k]}.log" >&2; exit 1; }
done
echo "ab: A = $A_DESC, B = $B_DESC; $ROUNDS rounds of $SECS s, load $(cut -d' ' -f1 /proc/loadavg)" >&2

# ---------------------------------------------------------------- calibration: the generator against a static answer
calib() {
  drive --model=closed --url="http://127.0.0.1:$(( HTTP_BASE + 91 ))" --key="$OUT/ab-keys/private.pk8" --scenario=replay \
    --seed-prefix=seed --seed-count="$SEED" --duration="$SECS" --connections="$1" --label="static-c$1"
}
calib 32 >/dev/null   # the driver's JIT
for c in 32 4; do
  js=$(calib $c)
  echo "$js" | jq -c --arg name static --arg load "$(cut -d' ' -f1 /proc/loadavg)" '. + {name: $name, round: 0, scenario: "replay", load: $load}' >> "$JSONL"
  echo "ab: calibration c$c: $(echo "$js" | jq -r '"\(.achieved | round)/s, p99 \(.p99) ms, driver \(.driverUsPerRequest) µs/request"')" >&2
done

# ---------------------------------------------------------------- warm-up and seeds, the same for both
for k in 0 1; do
  url="http://127.0.0.1:${HTTP[$k]}"
  drive --model=closed --url="$url" --key="$OUT/ab-keys/private.pk8" --scenario=new --duration="$WARM_S" --connections=8 \
    --prefix="warm-$STAMP" --label=warm >/dev/null
  "${SHORT_JVM[@]}" seed --url="$url" --key="$OUT/ab-keys/private.pk8" --count="$SEED" --prefix=seed --ids="$TMP/ids-$k" >/dev/null
done
# replays of final transfers: every seeded one has reached `sent` before the replays are measured
for k in 0 1; do
  for _ in $(seq 1 120); do
    [ "$(q "${DBS[$k]}" "SELECT count(*) FROM transfers WHERE idempotency_key LIKE 'seed-%' AND status <> 'sent'")" = 0 ] && break; sleep 0.5
  done
  drive --model=closed --url="http://127.0.0.1:${HTTP[$k]}" --key="$OUT/ab-keys/private.pk8" --scenario=replay \
    --seed-prefix=seed --seed-count="$SEED" --duration="$WARM_S" --connections=32 --label=warm >/dev/null
done

# ---------------------------------------------------------------- interleaved rounds
sent_total() { q "$1" "SELECT count(*) FROM transfer_events WHERE to_status = 'sent'"; }
window() { # k scenario connections round
  local k=$1 scenario=$2 c=$3 round=$4 db=${DBS[$1]}
  local n0 n1 s0 s1 r0 r1 p0 p1 t0 t1 js
  sleep 1
  n0=$(sent_total "$db"); s0=$(ticks "${SVCS[$k]}"); r0=$(ticks "$REDIS_PID"); p0=$(pg_ticks); t0=$(date +%s%N)
  js=$(drive --model=closed --url="http://127.0.0.1:${HTTP[$k]}" --key="$OUT/ab-keys/private.pk8" --scenario="$scenario" \
    --seed-prefix=seed --seed-count="$SEED" --prefix="r$round-$c-$STAMP" --duration="$SECS" --warmup=2 --connections="$c" \
    --label="${NAMES[$k]}")
  [ "$scenario" = new ] && sleep 2   # the window's last sends and fences
  t1=$(date +%s%N); s1=$(ticks "${SVCS[$k]}"); r1=$(ticks "$REDIS_PID"); p1=$(pg_ticks); n1=$(sent_total "$db")
  # CPU over the whole span (warm-up seconds and the drain included) per answer over the same span: the window's
  # answers scaled by span / window
  echo "$js" | jq -c --arg name "${NAMES[$k]}" --arg scenario "$scenario" --argjson round "$round" \
      --argjson span "$(( (t1 - t0) / 1000000 ))" --argjson svc "$(( s1 - s0 ))" --argjson redis "$(( r1 - r0 ))" \
      --argjson pg "$(( p1 - p0 ))" --argjson sent "$(( n1 - n0 ))" --argjson hz "$TICK" --arg load "$(cut -d' ' -f1 /proc/loadavg)" \
      '. + {name: $name, scenario: $scenario, round: $round, spanMs: $span, sent: $sent, load: $load,
            svcUs: ($svc / $hz * 1e6 / (.achieved * $span / 1000)), redisUs: ($redis / $hz * 1e6 / (.achieved * $span / 1000)),
            pgUs: ($pg / $hz * 1e6 / (.achieved * $span / 1000)), svcCores: ($svc / $hz / ($span / 1000))}' >> "$JSONL"
  tail -1 "$JSONL" | jq -r '"ab: round \(.round) \(.name) \(.scenario) c\(.connections): \(.achieved | round)/s p50 \(.p50) p99 \(.p99) ms, service \(.svcUs | round) µs, redis \(.redisUs * 10 | round / 10) µs, errors \(.errors), load \(.load)"' >&2
}
for round in $(seq 1 "$ROUNDS"); do
  for k in 0 1; do window "$k" replay 32 "$round"; done
  for k in 0 1; do window "$k" replay 4 "$round"; done
  for k in 0 1; do window "$k" new 32 "$round"; done
done

# ---------------------------------------------------------------- profiles: replays at 32 connections under JFR
if [ -n "${PROFILE:-}" ]; then
  # JFR's profile settings, sampling every 2 ms instead of 20: enough samples in one window on a shared machine
  sed 's|<setting name="period" control="method-sampling-java-interval">[^<]*</setting>|<setting name="period" control="method-sampling-java-interval">2 ms</setting>|' \
    "$JAVA_HOME/lib/jfr/profile.jfc" > "$TMP/sampling.jfc"
  for k in 0 1; do
    n=${NAMES[$k]}
    "$JAVA_HOME/bin/jcmd" "${SVCS[$k]}" JFR.start name=ab settings="$TMP/sampling.jfc" filename="$OUT/ab-$n-replay.jfr" >/dev/null
    drive --model=closed --url="http://127.0.0.1:${HTTP[$k]}" --key="$OUT/ab-keys/private.pk8" --scenario=replay \
      --seed-prefix=seed --seed-count="$SEED" --duration="${PROFILE_S:-20}" --connections=32 --label="$n-profile" >/dev/null
    "$JAVA_HOME/bin/jcmd" "${SVCS[$k]}" JFR.stop name=ab >/dev/null
    "$JAVA_HOME/bin/jfr" print --events jdk.ExecutionSample --stack-depth 96 "$OUT/ab-$n-replay.jfr" > "$OUT/ab-$n-samples.txt"
    python3 bench/jfr_summary.py "$OUT/ab-$n-samples.txt" > "$OUT/ab-$n-profile.txt"
    python3 bench/flame.py "$OUT/ab-$n-samples.txt" "$OUT/ab-$n-replay.svg" "replays, 32 connections: $n = ${APPS[$k]}"
    echo "ab: profile of $n: $OUT/ab-$n-profile.txt, $OUT/ab-$n-replay.svg" >&2
  done
fi

# ---------------------------------------------------------------- report
python3 - "$JSONL" "bench/ab.sh ROUNDS=$ROUNDS SECS=$SECS SEED=$SEED SVC_CPUS=${SVC_CPUS:-} AUX_CPUS=${AUX_CPUS:-}" "$A_DESC" "$B_DESC" \
  "$(cut -d' ' -f1-3 /proc/loadavg)" "$STAMP" > "$REPORT" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
cmd, a_desc, b_desc, load, stamp = sys.argv[2:7]
print(f"# A/B, {stamp}\n\n`{cmd}`; A = {a_desc}, B = {b_desc}.")
print(f"Closed loops (`Driver load --model=closed`), private PostgreSQL 15 and Redis; 1-minute load at the end: {load}.")
print("Each cell: min–max over the rounds; B/A: the ratio of the means over the rounds.\n")
print("| path | measure | A | B | B/A |\n|---|---|---:|---:|---:|")
measures = [("answers/s", "achieved", 0), ("p50 ms", "p50", 2), ("p99 ms", "p99", 2),
            ("service CPU µs/request", "svcUs", 0), ("Redis CPU µs/request", "redisUs", 1)]
for scenario, c in (("replay", 32), ("replay", 4), ("new", 32)):
    sel = [r for r in rows if r["scenario"] == scenario and r.get("connections") == c and r["round"] > 0]
    extra = [("PostgreSQL CPU µs/request", "pgUs", 0), ("reached sent in the window", "sent", 0)] if scenario == "new" else []
    for label, field, digits in measures + extra:
        def cell(name):
            v = [r[field] for r in sel if r["name"] == name]
            if not v:
                return "–", None
            lo, hi = round(min(v), digits), round(max(v), digits)
            if digits == 0:
                lo, hi = int(lo), int(hi)
            return (f"{lo:,}" if lo == hi else f"{lo:,}–{hi:,}"), sum(v) / len(v)
        (ta, ma), (tb, mb) = cell("A"), cell("B")
        ratio = f"{mb / ma:.2f}" if ma and mb is not None else "–"
        print(f"| {scenario} c{c} | {label} | {ta} | {tb} | {ratio} |")
cal = [r for r in rows if r["name"] == "static"]
print("\nCalibration, the driver against the static responder with the same requests: "
      + ", ".join(f"c{r['connections']} {round(r['achieved']):,}/s (p99 {r['p99']} ms, driver {r['driverUsPerRequest']} µs CPU/request)" for r in cal) + ".")
print("\nWindows in order:")
for r in rows:
    if r["round"] > 0:
        print(f"- round {r['round']} {r['name']} {r['scenario']} c{r['connections']}: {round(r['achieved']):,}/s, p50 {r['p50']} ms, "
              f"p99 {r['p99']} ms, service {r['svcUs']:.0f} µs, Redis {r['redisUs']:.1f} µs, PostgreSQL {r['pgUs']:.0f} µs, "
              f"errors {r['errors']}, load {r['load']}")
PY
cat "$REPORT"
