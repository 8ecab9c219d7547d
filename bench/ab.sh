#!/usr/bin/env bash
# Same-run A/B of two builds of the service: a base commit's packaged jar (A), built from this repository in a scratch
# git worktree, beside this tree's (B), run interleaved (A B, then B A, ...) against one private PostgreSQL 15 cluster and
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
# calibration: the same closed loops against the static responder, so the generator's own ceiling is on the page,
# with the responder's own CPU per answer: what a bare Vert.x HTTP/1.1 server spends on one request on this machine.
# Env: ENV_A / ENV_B (more settings for A / B alone, NAME=VALUE ...: one build, two settings) OPEN_RATE (per round one
# more replay window, an open model at this many requests/s over 32 connections, for tail latency at a set rate)
# OPEN_NEW_RATE (per round one more new-transfer window, an open model at this many transfers/s over 32 connections:
# both builds do the same work at the same rate, so their CPU per transfer compares where the closed loop's cannot, when
# PostgreSQL bounds both builds' rate and the cheaper one waits more and gathers less per wake-up) ROUNDS (3) SECS (10) WARM_S (30) SEED (2000) PORT (55434, PostgreSQL) REDIS_PORT (16479) HTTP_BASE (18400)
# MAVEN_ARGS (passed to the base's build) OUT (bench/out) SVC_CPUS / AUX_CPUS (taskset lists: the services, and
# PostgreSQL + Redis + the driver + the stand-ins). PROFILE=1: after the rounds, each build under JFR (sampling every
# 2 ms) for one more replay window and one more new-transfer window of PROFILE_S (20) s at 32 connections, summarised
# by bench/jfr_summary.py and drawn by bench/flame.py (OUT/ab-A-replay.svg, OUT/ab-A-new.svg...).
PFX=ab
. "$(dirname "$0")/ab-common.sh"
BASE=${BASE:-2a5bdee}

# ---------------------------------------------------------------- the base build, from this repository
# a base packaged elsewhere is named by its directory: BASE (the default commit) says nothing about it
[ -n "${BASE_APP:-}" ] && A_DESC=$BASE_APP
if [ -z "${BASE_APP:-}" ]; then
  BASE_TREE=$TMP/base
  git worktree add --detach "$BASE_TREE" "$BASE" >/dev/null
  echo "ab: building $BASE in $BASE_TREE" >&2
  (cd "$BASE_TREE" && ./mvnw -B -q package -DskipTests -pl service -am) >&2
  BASE_APP=$TMP/base-app
  cp -r "$BASE_TREE/service/target/quarkus-app" "$BASE_APP"
fi
A_DESC=${A_DESC:-"$BASE ($(git log -1 --format=%s "$BASE" 2>/dev/null | cut -c1-50))"}
if [ "$HEAD_APP" = "$ROOT/service/target/quarkus-app" ]; then
  B_DESC="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- service || echo '+dirty')"
else
  B_DESC=$HEAD_APP   # a jar packaged elsewhere: its directory names it, this tree's HEAD may not
fi

# ---------------------------------------------------------------- PostgreSQL, Redis, stand-ins, driver, both builds
stack_up ledgerline_a ledgerline_b
NAMES=(A B)
APPS=("$BASE_APP" "$HEAD_APP")
for k in 0 1; do LOGS[$k]=$OUT/ab-${NAMES[$k]}.log; start_ledgerline "$k" "${APPS[$k]}" "ledgerline_${NAMES[$k],,}"; done
for k in 0 1; do wait_ready "$k"; done
echo "ab: A = $A_DESC, B = $B_DESC; $ROUNDS rounds of $SECS s, load $(cut -d' ' -f1 /proc/loadavg)" >&2

# ---------------------------------------------------------------- calibration: the generator against a static answer
calibrate static --key="$KEYS/private.pk8"
redis_floor

# ---------------------------------------------------------------- warm-up and seeds, the same for both
for k in 0 1; do prepare_ledgerline "$k"; done
# replays of final transfers: every seeded one has reached `sent` before the replays are measured
for k in 0 1; do warm_replays "$k" "$WARM_S"; done

# ---------------------------------------------------------------- interleaved rounds
# A B in odd rounds, B A in even ones: a window runs on what the one before it left (a new-transfer window's dirty
# pages, autovacuum, a checkpoint in the shared PostgreSQL), so a fixed order would charge that to B every round
for round in $(seq 1 "$ROUNDS"); do
  if (( round % 2 )); then ORDER=(0 1); else ORDER=(1 0); fi
  for k in "${ORDER[@]}"; do window "$k" replay 32 "$round"; done
  for k in "${ORDER[@]}"; do window "$k" replay 4 "$round"; done
  for k in "${ORDER[@]}"; do window "$k" new 32 "$round"; done
  if [ -n "${OPEN_RATE:-}" ]; then
    for k in "${ORDER[@]}"; do window "$k" replay 32 "$round" "$OPEN_RATE"; done
  fi
  if [ -n "${OPEN_NEW_RATE:-}" ]; then
    for k in "${ORDER[@]}"; do window "$k" new 32 "$round" "$OPEN_NEW_RATE"; done
  fi
done

# ---------------------------------------------------------------- profiles: replays, then new transfers, at 32 connections under JFR
if [ -n "${PROFILE:-}" ]; then
  # JFR's profile settings, sampling every 2 ms instead of 20: enough samples in one window on a shared machine
  sed 's|<setting name="period" control="method-sampling-java-interval">[^<]*</setting>|<setting name="period" control="method-sampling-java-interval">2 ms</setting>|' \
    "$JAVA_HOME/lib/jfr/profile.jfc" > "$TMP/sampling.jfc"
  for scenario in replay new; do
    for k in 0 1; do
      n=${NAMES[$k]}
      "$JAVA_HOME/bin/jcmd" "${SVCS[$k]}" JFR.start name=ab settings="$TMP/sampling.jfc" filename="$OUT/ab-$n-$scenario.jfr" >/dev/null
      drive --model=closed --url="http://127.0.0.1:${HTTP[$k]}" --key="$KEYS/private.pk8" --scenario="$scenario" \
        --seed-prefix=seed --seed-count="$SEED" --prefix="profile-$STAMP-$k" --duration="${PROFILE_S:-20}" --connections=32 \
        --label="$n-profile" >/dev/null
      [ "$scenario" = new ] && sleep 2   # the last sends and fences
      "$JAVA_HOME/bin/jcmd" "${SVCS[$k]}" JFR.stop name=ab >/dev/null
      "$JAVA_HOME/bin/jfr" print --events jdk.ExecutionSample --stack-depth 96 "$OUT/ab-$n-$scenario.jfr" > "$OUT/ab-$n-$scenario-samples.txt"
      python3 bench/jfr_summary.py "$OUT/ab-$n-$scenario-samples.txt" > "$OUT/ab-$n-$scenario-profile.txt"
      python3 bench/flame.py "$OUT/ab-$n-$scenario-samples.txt" "$OUT/ab-$n-$scenario.svg" "$scenario, 32 connections: $n = ${APPS[$k]}"
      echo "ab: profile of $n, $scenario: $OUT/ab-$n-$scenario-profile.txt, $OUT/ab-$n-$scenario.svg" >&2
    done
  done
fi

# ---------------------------------------------------------------- report
python3 - "$JSONL" "bench/ab.sh ROUNDS=$ROUNDS SECS=$SECS SEED=$SEED SVC_CPUS=${SVC_CPUS:-} AUX_CPUS=${AUX_CPUS:-}" "$A_DESC" "$B_DESC" \
  "$(cut -d' ' -f1-3 /proc/loadavg)" "$STAMP" > "$REPORT" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
cmd, a_desc, b_desc, load, stamp = sys.argv[2:7]
print(f"# A/B, {stamp}\n\n`{cmd}`; A = {a_desc}, B = {b_desc}.")
print(f"Closed loops (`Driver load --model=closed`), and with OPEN_RATE / OPEN_NEW_RATE an open model at that rate; private PostgreSQL 15 and Redis; 1-minute load at the end: {load}.")
print("Each cell: min–max over the rounds; B/A: the ratio of the means over the rounds.\n")
print("| path | measure | A | B | B/A |\n|---|---|---:|---:|---:|")
measures = [("answers/s", "achieved", 0), ("p50 ms", "p50", 2), ("p99 ms", "p99", 2),
            ("service CPU µs/request", "svcUs", 0), ("of it the JIT compiler's", "jitUs", 0),
            ("service CPU µs/request without the JIT's", "svcNoJitUs", 0), ("Redis CPU µs/request", "redisUs", 1)]
def open_rates(scenario):
    return sorted({r["openRate"] for r in rows if r.get("openRate") and r["scenario"] == scenario})
for scenario, c, rate in ([("replay", 32, None), ("replay", 4, None), ("new", 32, None)]
                          + [("replay", 32, o) for o in open_rates("replay")] + [("new", 32, o) for o in open_rates("new")]):
    sel = [r for r in rows if r["scenario"] == scenario and r.get("connections") == c and r["round"] > 0
           and r.get("openRate") == rate]
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
        path = f"{scenario} c{c}" + (f" open at {rate:,}/s" if rate else "")
        print(f"| {path} | {label} | {ta} | {tb} | {ratio} |")
cal = [r for r in rows if r["name"] == "static"]
floor = [r for r in rows if r["name"] == "redis-get"]
print("\nCalibration, the driver against the static responder with the same requests: "
      + ", ".join(f"c{r['connections']} {round(r['achieved']):,}/s (p99 {r['p99']} ms, driver {r['driverUsPerRequest']} µs CPU/request, the responder's own {r.get('staticUs', 0):.1f} µs)" for r in cal) + ".")
if floor:
    print("Redis's floor in the same run, redis-benchmark's plain GET of a 1,800-byte value: "
          + ", ".join(f"c{r['connections']} {round(r['achieved']):,}/s, {r['redisUs']:.1f} µs of Redis CPU per GET" for r in floor) + ".")
print("\nWindows in order:")
for r in rows:
    if r["round"] > 0:
        opened = f" open at {r['openRate']:,}/s" if r.get("openRate") else ""
        print(f"- round {r['round']} {r['name']} {r['scenario']} c{r['connections']}{opened}: {round(r['achieved']):,}/s, p50 {r['p50']} ms, "
              f"p99 {r['p99']} ms, service {r['svcUs']:.0f} µs, Redis {r['redisUs']:.1f} µs, PostgreSQL {r['pgUs']:.0f} µs, "
              f"errors {r['errors']}, load {r['load']}")
PY
cat "$REPORT"
