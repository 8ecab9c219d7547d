#!/usr/bin/env bash
# Shows that the packaged service serves Swagger UI in prod mode: starts target/quarkus-app/quarkus-run.jar
# in the prod profile against the machine's own PostgreSQL and Redis, waits until /q/openapi answers,
# takes a headless Chromium screenshot of /q/swagger-ui and stops the service again.
#
# Builds nothing: run `./mvnw package -DskipTests` first. Not part of CI.
#
#   src/test/swagger-ui/screenshot.sh                  # writes target/swagger-ui.png
#   src/test/swagger-ui/screenshot.sh /tmp/ui.png      # writes there
#
# Needs java, openssl, psql, curl and Debian's chromium (installed with apt-get when missing and run as
# root). PostgreSQL: 127.0.0.1:5432, user postgres, trust auth, an existing database `test` to connect to
# ($PGHOST/$PGPORT/$PGUSER override); a scratch database is created for the run and dropped afterwards.
# Redis: $REDIS_URL, default redis://127.0.0.1:6379. Prod refuses the checked-in dev JWT key, so a
# throwaway key pair is generated; no token is ever minted with it.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
jar="$root/target/quarkus-app/quarkus-run.jar"
out="$(realpath -m "${1:-$root/target/swagger-ui.png}")"
pg_host="${PGHOST:-127.0.0.1}"
pg_port="${PGPORT:-5432}"
pg_user="${PGUSER:-postgres}"
redis_url="${REDIS_URL:-redis://127.0.0.1:6379}"
database="ledgerline_ui_$$"

if [[ ! -f "$jar" ]]; then
    echo "screenshot.sh: $jar is missing; build it first with ./mvnw package -DskipTests" >&2
    exit 2
fi
for tool in java openssl psql curl python3; do
    command -v "$tool" >/dev/null 2>&1 || { echo "screenshot.sh: $tool is required" >&2; exit 2; }
done
if ! command -v chromium >/dev/null 2>&1; then
    if [[ "$(id -u)" == 0 ]]; then
        echo "screenshot.sh: installing Debian's chromium" >&2
        apt-get install -y -qq chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }
    else
        echo "screenshot.sh: chromium is required (apt-get install chromium)" >&2
        exit 2
    fi
fi

work="$(mktemp -d)"
service_pid=""
database_created=""
cleanup() {
    if [[ -n "$service_pid" ]] && kill -0 "$service_pid" 2>/dev/null; then
        kill "$service_pid" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$service_pid" 2>/dev/null || break; sleep 0.2; done
        kill -9 "$service_pid" 2>/dev/null || true
    fi
    if [[ -n "$database_created" ]]; then
        psql -h "$pg_host" -p "$pg_port" -U "$pg_user" -d test -qc "DROP DATABASE IF EXISTS $database WITH (FORCE)" >/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$work/jwt-private.pem" 2>/dev/null
openssl pkey -in "$work/jwt-private.pem" -pubout -out "$work/jwt-public.pem"

psql -h "$pg_host" -p "$pg_port" -U "$pg_user" -d test -qc "CREATE DATABASE $database" >/dev/null
database_created=yes

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
mport="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
# every page used here is under /q/: the management interface, on its own port
base="http://127.0.0.1:$mport"

QUARKUS_HTTP_PORT="$port" \
QUARKUS_HTTP_HOST=127.0.0.1 \
QUARKUS_MANAGEMENT_PORT="$mport" \
QUARKUS_MANAGEMENT_HOST=127.0.0.1 \
QUARKUS_DATASOURCE_REACTIVE_URL="postgresql://$pg_host:$pg_port/$database" \
QUARKUS_DATASOURCE_USERNAME="$pg_user" \
QUARKUS_REDIS_HOSTS="$redis_url" \
LEDGERLINE_IDEMPOTENCY_REFERENCE_SECRET=screenshot-reference-secret MP_JWT_VERIFY_PUBLICKEY="$(cat "$work/jwt-public.pem")" \
    java -jar "$jar" >"$work/service.log" 2>&1 &
service_pid=$!

echo "screenshot.sh: waiting for the service on $base (prod profile)" >&2
for _ in $(seq 1 120); do
    if ! kill -0 "$service_pid" 2>/dev/null; then
        echo "screenshot.sh: the service stopped during start-up:" >&2
        cat "$work/service.log" >&2
        exit 1
    fi
    if curl -sf -o /dev/null "$base/q/openapi"; then
        break
    fi
    sleep 0.5
done
curl -sf -o /dev/null "$base/q/openapi" || { echo "screenshot.sh: /q/openapi did not answer within 60 s" >&2; cat "$work/service.log" >&2; exit 1; }
curl -sf "$base/q/swagger-ui/" | grep -q "swagger-ui" || { echo "screenshot.sh: /q/swagger-ui/ is not Swagger UI" >&2; exit 1; }

mkdir -p "$(dirname "$out")"
rm -f "$out"
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/chromium" --window-size=1400,1600 --virtual-time-budget=10000 \
    --screenshot="$out" "$base/q/swagger-ui/" >"$work/chromium.log" 2>&1 || true
if [[ ! -s "$out" ]]; then
    echo "screenshot.sh: chromium wrote no screenshot:" >&2
    cat "$work/chromium.log" >&2
    exit 1
fi
echo "$out"
