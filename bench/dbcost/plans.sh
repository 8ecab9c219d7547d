#!/usr/bin/env bash
# The plans of the hot queries on partitioned transfers (docs/capacity.md "Plans on the hot partitions"): a private
# PostgreSQL 15 cluster (bench/private-pg.sh) on PORT (55733), every migration applied, then
# bench/dbcost/plans-partitioned.sql. Usage: PORT=55733 bench/dbcost/plans.sh > bench/out/plans.txt
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
BIN=/usr/lib/postgresql/15/bin
PORT=${PORT:-55733}
TMP=$(mktemp -d /tmp/plans.XXXXXX)
DATA=$TMP/data
. bench/private-pg.sh
cleanup() { as_pg "$BIN/pg_ctl" -D "$DATA" -m fast stop >/dev/null 2>&1 || true; rm -rf "$TMP"; }
trap cleanup EXIT
private_pg_init "$TMP" "$PORT"
as_pg "$BIN/pg_ctl" -D "$DATA" -l "$TMP/server.log" -w start >/dev/null
PSQL=(psql -X -q -h 127.0.0.1 -p "$PORT" -U postgres -v ON_ERROR_STOP=1)
"${PSQL[@]}" -c "CREATE DATABASE plans" >/dev/null
for f in $(ls service/src/main/resources/db/migration/V*__*.sql | sort -V); do
  "${PSQL[@]}" -d plans -f "$f" >/dev/null
done
"${PSQL[@]}" -d plans -f bench/dbcost/plans-partitioned.sql
