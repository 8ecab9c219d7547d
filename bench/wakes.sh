#!/usr/bin/env bash
# System calls and context switches per request of two packaged builds, side by side: what a request costs the kernel,
# which JFR's profiles do not show. Both builds run against one private PostgreSQL and one private Redis (as in
# bench/ab.sh), warm up as there, then per round and build a 10 s closed-loop window at 32 connections of new transfers
# and one of replays, `perf stat -p <service>` counting over 5 s inside each window:
#
#     APP_A=<dir> APP_B=<dir> bench/wakes.sh      # two quarkus-app directories
#
# Printed per window, each divided by the requests answered in the 5 s: `write` (all of the service's are 8-byte
# `eventfd` writes, one thread waking another's event loop), `futex` (parking and unparking threads), `epoll_pwait2`,
# `sendto`, `recvfrom`, and context switches. The counting itself slows both builds; compare them, not the rates.
# Needs `perf` with access to the syscall tracepoints (root, or kernel.perf_event_paranoid <= -1).
# STACKS=1: after the rounds, per build one more new-transfer window in which `perf record` takes the stack of every
# `eventfd` write, folded by bench/wake_stacks.py into the Java frames that asked for the wake-up (both services then
# run with -XX:+PreserveFramePointer, and jcmd writes their perf maps).
# Env: ROUNDS (2) WARM_NEW_S (90) and those of bench/ab-common.sh.
PFX=wakes
WARM_NEW_S=${WARM_NEW_S:-90}
[ "${STACKS:-0}" = 1 ] && SVC_JVM="${SVC_JVM:-} -XX:+PreserveFramePointer"
. "$(dirname "$0")/ab-common.sh"
: "${APP_A:?APP_A: the first build's quarkus-app directory}" "${APP_B:?APP_B: the second build's quarkus-app directory}"
command -v perf >/dev/null || { echo "no perf: apt-get install linux-perf" >&2; exit 1; }
EVENTS=syscalls:sys_enter_write,syscalls:sys_enter_futex,syscalls:sys_enter_epoll_pwait2,syscalls:sys_enter_sendto,syscalls:sys_enter_recvfrom,context-switches
stack_up lla llb
NAMES=(A B); LOGS=("$OUT/wakes-A.log" "$OUT/wakes-B.log")
start_ledgerline 0 "$APP_A" lla
start_ledgerline 1 "$APP_B" llb
wait_ready 0; wait_ready 1
prepare_ledgerline 0; prepare_ledgerline 1
warm_replays 0 20; warm_replays 1 20
wakes_window() { # K SCENARIO PREFIX: a 10 s closed-loop window at 32 connections; prints the driver's JSON
  drive --model=closed --url="http://127.0.0.1:${HTTP[$1]}" ${REQ[$1]} --scenario="$2" --seed-prefix=seed \
    --seed-count="$SEED" --prefix="$3-$1-$STAMP" --duration=10 --warmup=0 --connections=32 --label="${NAMES[$1]}"
}
for round in $(seq 1 "${ROUNDS:-2}"); do
  for k in 0 1; do
    for scenario in new replay; do
      counts="$TMP/perf-$k-$scenario.csv"
      ( sleep 3; perf stat -x, -e "$EVENTS" -p "${SVCS[$k]}" -- sleep 5 2> "$counts" ) & counting=$!
      js=$(wakes_window "$k" "$scenario" "w$round")
      wait "$counting"
      rate=$(echo "$js" | jq .achieved)
      line="round $round ${NAMES[$k]} $scenario c32 $rate/s:"
      while IFS=, read -r value _ event _; do
        line="$line ${event#syscalls:sys_enter_}=$(echo "scale=2; $value / ($rate * 5)" | bc)"
      done < <(grep -v '^#' "$counts" | grep -v '^$')
      echo "$line" | tee -a "$OUT/wakes-$STAMP.txt" >&2
    done
  done
done
[ "${STACKS:-0}" = 1 ] || exit 0
for k in 0 1; do
  data="$TMP/wakes-$k.data"
  ( sleep 3; perf record -q -e syscalls:sys_enter_write -g -p "${SVCS[$k]}" -o "$data" -- sleep 5 >/dev/null 2>&1 ) &
  recording=$!
  wakes_window "$k" new stacks >/dev/null
  wait "$recording"
  "$JAVA_HOME/bin/jcmd" "${SVCS[$k]}" Compiler.perfmap >/dev/null   # the methods compiled by now, for perf script
  echo "stacks of ${NAMES[$k]}'s eventfd writes, new transfers at 32 connections:" | tee -a "$OUT/wakes-$STAMP.txt" >&2
  perf script -i "$data" 2>/dev/null | python3 "$ROOT/bench/wake_stacks.py" | tee -a "$OUT/wakes-$STAMP.txt" >&2
done
