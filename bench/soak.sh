#!/usr/bin/env bash
# Soak, not part of CI: mixed load for SOAK_S seconds (default 1800) with a fault every FAULT_EVERY
# seconds (default 300), cycling through: the provider answering 503 for 20 s, Redis paused (SIGSTOP) for 5 s,
# PostgreSQL restarted (pg_ctl restart -m fast). Then it waits until every transfer is final and compares what the
# service holds with what it held after the warm-up: heap after a full GC, PostgreSQL connections, Redis keys
# (and worker locks among them; the idempotency entries are kept 24 h by design, so the total grows with the
# transfers created), open file descriptors (listed with their targets and TCP peers in fds-<label>.txt, once more
# IDLE_S seconds after the end, when idle pooled connections have timed out). Prints one JSON summary;
# bench/out/soak/ (or OUT) keeps the rest.
#
#     bench/soak.sh                          # 30 minutes
#     SOAK_S=300 FAULT_EVERY=60 bench/soak.sh  # a short run
#
# The faults need servers of its own: a private PostgreSQL cluster (initdb in PG_DIR, default /tmp/ledgerline-soak-pg,
# port 15433; run as the postgres user when started as root, which initdb refuses) and a private Redis (port 16380),
# both stopped and deleted at the end; the machine's servers are never touched.
# Load: bench/driver's "soak" scenario (70 % new transfers, 15 % replays, 10 % polls, 5 % long polls with
# Prefer: wait=2) at SOAK_RATE/s, in runs of CHUNK_S seconds back to back.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT=${OUT:-$ROOT/bench/out/soak}
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
JAVA=$JAVA_HOME/bin/java
APP=${APP:-$ROOT/service/target/quarkus-app}   # the packaged service (a copy lets a build run meanwhile)
PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)}
PG_PORT=${PG_PORT:-15433}
PG_DIR=${PG_DIR:-/tmp/ledgerline-soak-pg}
REDIS_PORT=${REDIS_PORT:-16380}
SVC_PORT=${SVC_PORT:-18280}
PROVIDER_PORT=${PROVIDER_PORT:-18290}
MGMT_PORT=${MGMT_PORT:-18281}   # /q/* where a management interface serves them (QUARKUS_MANAGEMENT_PORT)
SOAK_S=${SOAK_S:-1800}
FAULT_EVERY=${FAULT_EVERY:-300}
SOAK_RATE=${SOAK_RATE:-150}
CHUNK_S=${CHUNK_S:-60}
WARM_S=${WARM_S:-60}
IDLE_S=${IDLE_S:-75}   # after the end snapshot, idle this long and list the fds again (pooled connections time out)

rm -rf "$OUT"; mkdir -p "$OUT"
PIDS=()
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$OUT/run.log"; }
psql_q() { psql -X -q -t -A -h 127.0.0.1 -p "$PG_PORT" -U postgres -d ledgerline -c "$1"; }
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pg_ctl_() { as_pg "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/postgres.log" -w -t 60 "$@" >/dev/null; }
cleanup() {
  set +e
  [ -n "${REDIS_PID:-}" ] && kill -CONT "$REDIS_PID" 2>/dev/null
  for pid in "${PIDS[@]}"; do
    kill "$pid" 2>/dev/null
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null
  done
  [ -d "$PG_DIR/data" ] && pg_ctl_ stop -m fast
  [ -f "$PG_DIR/postgres.log" ] && cp "$PG_DIR/postgres.log" "$OUT/postgres.log"
  rm -rf "$PG_DIR"
  log "cleaned up: processes stopped, private PostgreSQL and Redis gone"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

for port in $PG_PORT $REDIS_PORT $SVC_PORT $PROVIDER_PORT; do
  if (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then echo "port $port is in use" >&2; exit 1; fi
done
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  ./mvnw -B -q package -DskipTests
  ./mvnw -B -q -pl bench/driver package
fi
DRIVER=("$JAVA" -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$ROOT/bench/driver/target/bench-driver.jar:$ROOT/bench/driver/target/lib/*" dev.ledgerline.bench.Driver)
"${DRIVER[@]}" keys "$OUT/keys"

# private servers: the faults below would disturb anyone else's
rm -rf "$PG_DIR"; mkdir -p "$PG_DIR"; [ "$(id -u)" = 0 ] && chown postgres "$PG_DIR"
as_pg "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --auth=trust >/dev/null
pg_ctl_ start -o "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1 -c max_connections=100"
createdb -h 127.0.0.1 -p "$PG_PORT" -U postgres ledgerline
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no > "$OUT/redis.log" 2>&1 &
REDIS_PID=$!; PIDS+=($REDIS_PID)
"${DRIVER[@]}" provider "$PROVIDER_PORT" > "$OUT/provider.log" 2>&1 &
PIDS+=($!)
PROVIDER=http://127.0.0.1:$PROVIDER_PORT/provider

env -i PATH="$PATH" HOME="$HOME" QUARKUS_HTTP_PORT="$SVC_PORT" QUARKUS_MANAGEMENT_PORT="$MGMT_PORT" \
  QUARKUS_DATASOURCE_REACTIVE_URL="postgresql://127.0.0.1:$PG_PORT/ledgerline" QUARKUS_DATASOURCE_USERNAME=postgres \
  QUARKUS_REDIS_HOSTS="redis://127.0.0.1:$REDIS_PORT" MP_JWT_VERIFY_PUBLICKEY_LOCATION="$OUT/keys/public.pem" LEDGERLINE_IDEMPOTENCY_REFERENCE_SECRET=bench-reference-secret \
  QUARKUS_REST_CLIENT_PROVIDER_URL="$PROVIDER" \
  LEDGERLINE_RATE_LIMIT_WRITES_PER_SECOND=1000000 LEDGERLINE_RATE_LIMIT_WRITES_BURST=1000000 \
  LEDGERLINE_LEDGER_OPENING_BALANCE=100000000000000 \
  LEDGERLINE_RATE_LIMIT_READS_PER_SECOND=1000000 LEDGERLINE_RATE_LIMIT_READS_BURST=1000000 \
  "$JAVA" -Xmx512m -jar "$APP/quarkus-run.jar" > "$OUT/service.log" 2>&1 &
SVC_PID=$!; PIDS+=($SVC_PID)
q() { curl -fsS "http://127.0.0.1:$MGMT_PORT$1" 2>/dev/null || curl -fsS "http://127.0.0.1:$SVC_PORT$1"; }
for _ in $(seq 1 240); do
  q /q/health/ready >/dev/null 2>&1 && break
  kill -0 "$SVC_PID" 2>/dev/null || { tail -20 "$OUT/service.log" >&2; exit 1; }
  sleep 0.5
done

open_count() { psql_q "select count(*) from transfers where status not in ('sent','failed')" 2>/dev/null || echo -1; }
wait_all_final() { local deadline=$(( $(date +%s) + $1 )); while [ "$(open_count)" != 0 ] && [ "$(date +%s)" -lt "$deadline" ]; do sleep 1; done; }
fd_listing() { # label -> $OUT/fds-<label>.txt: every open fd with its target, then counts by kind and TCP peer
  local f=$OUT/fds-$1.txt
  ls -l "/proc/$SVC_PID/fd" | awk 'NR > 1 {print $9, $11}' | sort -n > "$f"
  { echo "## by kind"
    awk '{t = $2; sub(/:\[[0-9]+\]$/, "", t); sub(/\/[^/]*$/, "/", t); print t}' "$f" | sort | uniq -c | sort -rn
    echo "## TCP sockets by state and peer port (ss)"
    ss -tanp 2>/dev/null | awk -v p="pid=$SVC_PID," 'index($0, p) {n = split($5, a, ":"); print $1, "peer:" a[n]}' | sort | uniq -c | sort -rn
  } >> "$f"
}
snapshot() { # label -> one JSON line: heap used after a full GC (MiB), PostgreSQL connections, Redis keys and locks, fds
  fd_listing "$1"
  "$JAVA_HOME/bin/jcmd" "$SVC_PID" GC.run >/dev/null
  local heap
  heap=$("$JAVA_HOME/bin/jcmd" "$SVC_PID" GC.heap_info | awk '/garbage-first heap|def new generation|PSYoungGen|heap/ && /used/ {for (i = 1; i <= NF; i++) if ($i == "used") {v = $(i + 1); sub("K,?", "", v); print int(v / 1024); exit}}')
  echo "{\"label\":\"$1\",\"t\":$(date +%s),\"heapUsedMiBAfterGc\":${heap:-0},\"pgConnections\":$(psql_q "select count(*) from pg_stat_activity where datname = 'ledgerline' and pid <> pg_backend_pid()"),\"redisKeys\":$(redis-cli -p "$REDIS_PORT" dbsize),\"redisLocks\":$(redis-cli -p "$REDIS_PORT" --scan --pattern 'lock:*' | wc -l),\"fds\":$(ls "/proc/$SVC_PID/fd" | wc -l),\"threads\":$(ls "/proc/$SVC_PID/task" | wc -l)}" | tee -a "$OUT/snapshots.jsonl"
}

log "seeding 500 transfers for replays and polls, then ${WARM_S}s of warm-up"
"${DRIVER[@]}" seed --url="http://127.0.0.1:$SVC_PORT" --key="$OUT/keys/private.pk8" --count=500 --prefix=seed --ids="$OUT/seed-ids.txt"
wait_all_final 120
load() { # seconds label
  "${DRIVER[@]}" load --url="http://127.0.0.1:$SVC_PORT" --key="$OUT/keys/private.pk8" --scenario=soak --rate="$SOAK_RATE" \
    --duration="$1" --prefix="$2-$RANDOM$RANDOM" --seed-prefix=seed --seed-count=500 --ids="$OUT/seed-ids.txt" --label="$2"
}
load "$WARM_S" warm > "$OUT/warmup.json"
wait_all_final 300
START=$(snapshot start)
log "start: $START"

fault() { # n -> runs fault n mod 3
  case $(( $1 % 3 )) in
    0) log "fault: provider down for 20 s"; curl -fsS -X PUT "$PROVIDER/down" >/dev/null; sleep 20; curl -fsS -X DELETE "$PROVIDER/down" >/dev/null ;;
    1) log "fault: Redis paused for 5 s"; kill -STOP "$REDIS_PID"; sleep 5; kill -CONT "$REDIS_PID" ;;
    2) log "fault: PostgreSQL restarted"; pg_ctl_ restart -m fast ;;
  esac
}
(
  n=0
  while true; do sleep "$FAULT_EVERY"; fault $n; n=$(( n + 1 )); done
) &
FAULTS=$!; PIDS+=($FAULTS)
log "soak: ${SOAK_S}s of the soak mix at ${SOAK_RATE}/s, a fault every ${FAULT_EVERY}s"
END_AT=$(( $(date +%s) + SOAK_S ))
while [ "$(date +%s)" -lt "$END_AT" ]; do
  left=$(( END_AT - $(date +%s) )); [ "$left" -gt "$CHUNK_S" ] && left=$CHUNK_S
  [ "$left" -lt 5 ] && break
  load "$left" soak >> "$OUT/soak.jsonl" || log "a load run failed (the service was unreachable?)"
  log "  $(tail -1 "$OUT/soak.jsonl" | jq -c '{achieved, errors, p50, p99, errorKinds}') open $(open_count)"
done
kill "$FAULTS" 2>/dev/null; wait "$FAULTS" 2>/dev/null || true
kill -CONT "$REDIS_PID" 2>/dev/null; curl -fsS -X DELETE "$PROVIDER/down" >/dev/null || true
log "load over; waiting until every transfer is final"
wait_all_final 900
sleep 20 # let idle connections and in-flight markers reach their timeouts (in-flight TTL 10 s) before the last snapshot
END=$(snapshot end)
log "end: $END"
sleep "$IDLE_S"
IDLE=$(snapshot idle)
log "idle ${IDLE_S}s later: $IDLE (what each fd is: $OUT/fds-{start,end,idle}.txt)"
jq -n --argjson s "$START" --argjson e "$END" \
  --argjson open "$(open_count)" --argjson dups "$(curl -fsS "$PROVIDER/stats" | jq .duplicateExecutions)" \
  --argjson statuses "$(psql_q "select json_object_agg(status, n) from (select status, count(*) n from transfers group by status) s")" \
  --argjson idleFds "$(echo "$IDLE" | jq .fds)" \
  --argjson requests "$(jq -s 'map(.requests) | add' "$OUT/soak.jsonl")" --argjson errors "$(jq -s 'map(.errors) | add' "$OUT/soak.jsonl")" \
  '{seconds: ($e.t - $s.t), requests: $requests, errorsDuringFaults: $errors, statuses: $statuses, notFinal: $open, duplicateExecutions: $dups,
    heapMiB: [$s.heapUsedMiBAfterGc, $e.heapUsedMiBAfterGc], pgConnections: [$s.pgConnections, $e.pgConnections],
    redisLocks: [$s.redisLocks, $e.redisLocks],
    redisKeys: [$s.redisKeys, $e.redisKeys], fds: [$s.fds, $e.fds], fdsAfterIdle: $idleFds, threads: [$s.threads, $e.threads]}' | tee "$OUT/summary.json"
