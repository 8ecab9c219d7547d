#!/usr/bin/env bash
# The guards A/B (bench/FT-AB.md): the Redis guard and the provider guards (hand-written) against the call unguarded;
# SmallRye Fault Tolerance's variants left with the dependency. Interleaved in one JVM, several rounds.
# Runs service/src/test/java/dev/ledgerline/transfers/redis/RedisGuardBench.java as a Quarkus test (its own embedded
# PostgreSQL and Redis; the machine's servers are not used) and prints target/ft-ab.md.
#
#     bench/ft-ab.sh                        # 7 rounds
#     ROUNDS=3 HTTP_PORT=18320 bench/ft-ab.sh
set -euo pipefail
cd "$(dirname "$0")/.."
HTTP_PORT=${HTTP_PORT:-18320}
ROUNDS=${ROUNDS:-7}
echo "uptime before: $(uptime)"
./mvnw -B -q test -Dclients.typescript.skip=true -Dtest=RedisGuardBench -Dsurefire.failIfNoSpecifiedTests=false \
  -Dab.rounds="$ROUNDS" -Dquarkus.http.test-port="$HTTP_PORT" -Dquarkus.management.test-port="$((HTTP_PORT + 1))"
echo "uptime after: $(uptime)"
cat service/target/ft-ab.md
