#!/usr/bin/env bash
# The replay path beside the public Quarkus idempotency peer, in one run: the peer's integration-test app
# (`POST /payments/charge`, its Redis store) and this tree's packaged service, in turn (peer, ours, peer, ours ...),
# each started fresh for its slot and stopped after it, against one private Redis (each in its own db) and, for
# ours, one private PostgreSQL 15 cluster (bench/ab-common.sh, as bench/ab.sh runs them):
#
#     PEER_APP=<the peer's integration-tests/target/quarkus-app> bench/peer.sh
#
# This script neither fetches nor builds the peer: how it was built is in bench/PEER.md.
# A slot is one service, one concurrency, one round: start the service, wait until it answers, replays at 4
# connections to warm it (unmeasured: WARM_S s for ours, PEER_WARM_S s for the peer), one measured window of replays
# at 32 or at 4 connections (2 s unrecorded, SECS s measured, closed loops), then AFTER_S s with nothing sent, in
# which its CPU is measured. Per window: answers/s, p50/p99, CPU per answer of the service and of Redis, errors, the
# ERROR lines its log gained, and the service's CPU in the second before it.
# The peer is unstable: after some 10-15 s of replays (at 4 connections as at 32) its worker threads start to keep
# 0.8-2 cores busy with nothing sent, and in every slot watched this did not stop until it was stopped. Its
# warm-up is therefore short, so that a window can start before that, and a peer window is clean when the service
# used less than CLEAN_IDLE (0.25) cores both in the second before it and in the AFTER_S s after it (so not during
# it either) and under 1 % of its answers were errors; "clean at the start" when only the second before was quiet.
# Before the rounds: a calibration with each service's request against the static responder; ours is warmed with
# new transfers and SEED transfers are seeded (all `sent`), the peer's SEED keys are executed once (its first pass
# over them); each then stops.
# Env: PEER_APP (required) PEER_JAVA_HOME (Temurin 25: the peer's build targets Java 21) PEER_WARM_S (5) AFTER_S (5)
# CLEAN_IDLE (0.25) and ab-common.sh's: ROUNDS (3) SECS (10) WARM_S (20 here) SEED (2000) PORT REDIS_PORT HTTP_BASE OUT
# SVC_CPUS AUX_CPUS HEAD_APP.
PFX=peer
WARM_S=${WARM_S:-20}
. "$(dirname "$0")/ab-common.sh"
PEER_APP=${PEER_APP:?PEER_APP: the quarkus-app directory of the peer integration-tests app}
PEER_JAVA_HOME=${PEER_JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
PEER_WARM_S=${PEER_WARM_S:-5}; AFTER_S=${AFTER_S:-5}; CLEAN_IDLE=${CLEAN_IDLE:-0.25}
[ -f "$PEER_APP/quarkus-run.jar" ] || { echo "no $PEER_APP/quarkus-run.jar" >&2; exit 1; }
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
PEER_DESC=$PEER_APP
PEER_REV=$(git -C "$PEER_APP" rev-parse HEAD 2>/dev/null || true)
[ -n "$PEER_REV" ] && PEER_DESC="$PEER_REV$(git -C "$PEER_APP" diff --quiet HEAD 2>/dev/null || echo ' with local changes')"
OURS_DESC="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- service || echo '+dirty')"

PEER_REQ='--path=/payments/charge --body={"amount":500}'   # the request its IdempotencyTest replays
# the peer as its integration tests run it, on its Redis store, with the Redis pool ours has (32 connections, 1,024
# waiting: its PERFORMANCE.md asks for a pool at least as large as the concurrency; its default of 6 + 24 waiting
# answers 500 at 32 connections)
start_peer() { # K
  local k=$1 port=$(( HTTP_BASE + 10 * $1 ))
  env -i PATH="$PATH" HOME="$HOME" QUARKUS_HTTP_HOST=127.0.0.1 QUARKUS_HTTP_PORT=$port \
    QUARKUS_IDEMPOTENCY_STORE=redis QUARKUS_REDIS_HOSTS="redis://127.0.0.1:$REDIS_PORT/$(( k + 1 ))" \
    QUARKUS_REDIS_MAX_POOL_SIZE=32 QUARKUS_REDIS_MAX_POOL_WAITING=1024 \
    "${SVC_PIN[@]}" "$PEER_JAVA_HOME/bin/java" -jar "$PEER_APP/quarkus-run.jar" > "${LOGS[$k]}" 2>&1 &
  PIDS+=($!); SVCS[$k]=$!; HTTP[$k]=$port; DBS[$k]=""; READY[$k]="http://127.0.0.1:$port/payments/count"
  REQ[$k]=$PEER_REQ
}
start() { # K LOG
  LOGS[$1]=$2
  if [ "$1" = 0 ]; then start_peer 0; else start_ledgerline 1 "$HEAD_APP" ledgerline; fi
  wait_ready "$1"
}
stop() { stop_processes "${SVCS[$1]}" || true; }   # its last kill -9 fails once the service has stopped

stack_up ledgerline
NAMES=(peer ours)
echo "peer: peer = $PEER_DESC, ours = $OURS_DESC; $ROUNDS rounds of $SECS s, load $LOAD_START" >&2
calibrate static --key="$KEYS/private.pk8"
calibrate static-peer $PEER_REQ
redis_floor

# ---------------------------------------------------------------- seeds: SEED final entries in each service
start 1 "$OUT/peer-ours-prepare.log"; prepare_ledgerline 1; stop 1
start 0 "$OUT/peer-peer-prepare.log"; warm_replays 0 "$WARM_S" 4; stop 0
seeded=$(redis-cli -p "$REDIS_PORT" -n 1 dbsize)
[ "$seeded" = "$SEED" ] || { echo "the peer holds $seeded keys, not $SEED" >&2; exit 1; }

# ---------------------------------------------------------------- slots: peer, ours, peer, ours ...
slot() { # K CONNECTIONS ROUND
  local k=$1 c=$2 round=$3 a0 a1 e
  start "$k" "$OUT/peer-${NAMES[$k]}-c$c-r$round.log"
  warm_replays "$k" "$([ "$k" = 0 ] && echo "$PEER_WARM_S" || echo "$WARM_S")" 4
  window "$k" replay "$c" "$round"
  a0=$(ticks "${SVCS[$k]}"); sleep "$AFTER_S"; a1=$(ticks "${SVCS[$k]}"); e=$(log_errors "${LOGS[$k]}")
  jq -nc --arg name "${NAMES[$k]}" --argjson round "$round" --argjson c "$c" --arg load "$(load1)" \
    --argjson cores "$(( a1 - a0 ))" --argjson hz "$TICK" --argjson s "$AFTER_S" --argjson logErrors "$e" \
    '{name: $name, scenario: "after", round: $round, connections: $c, afterCores: ($cores / $hz / $s),
      slotLogErrors: $logErrors, load: $load}' >> "$JSONL"
  tail -1 "$JSONL" | jq -r '"peer: round \(.round) \(.name) c\(.connections): \(.afterCores) cores in the '"$AFTER_S"' s after, \(.slotLogErrors) ERROR lines in the slot"' >&2
  stop "$k"
}
for round in $(seq 1 "$ROUNDS"); do
  for c in 32 4; do
    for k in 0 1; do slot "$k" "$c" "$round"; done
  done
done

# ---------------------------------------------------------------- report
python3 bench/peer_report.py "$JSONL" "PEER_APP=$PEER_APP bench/peer.sh ROUNDS=$ROUNDS SECS=$SECS WARM_S=$WARM_S PEER_WARM_S=$PEER_WARM_S AFTER_S=$AFTER_S SEED=$SEED" \
  "$PEER_DESC" "$OURS_DESC" "$LOAD_START" "$(cut -d' ' -f1-3 /proc/loadavg)" "$CLEAN_IDLE" > "$REPORT"
cat "$REPORT"
