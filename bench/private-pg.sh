# Sourced by bench/dbcost.sh, bench/servicecost.sh, bench/webhookrate.sh, bench/ab-common.sh (bench/ab.sh, bench/peer.sh) and bench/lifecycle.sh: a private PostgreSQL 15 cluster in a temporary directory, on
# its own port, so that the machine's own server is never reconfigured. Needs BIN (PostgreSQL's binaries).

# Runs a PostgreSQL binary as the postgres user when this script runs as root (initdb refuses root).
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

# private_pg_init DIR PORT [postgresql.conf line ...]: initdb into DIR/data, listening on 127.0.0.1:PORT and a socket
# in DIR, pg_stat_statements preloaded, fsync and synchronous_commit on, autovacuum on (as on any primary: without it
# no table is ever analyzed, and a generic plan the service's connections cached while a partition was empty keeps
# reading it whole however large it grows; docs/capacity.md, "Plans on the hot partitions"), shared_buffers and
# max_wal_size as on the machine's server; then the extra lines (a later line wins: "autovacuum = off" to keep dead
# tuples countable).
private_pg_init() {
  local dir=$1 port=$2
  shift 2
  chmod 755 "$dir"
  [ "$(id -u)" = 0 ] && chown postgres "$dir"
  as_pg "$BIN/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
  {
    cat <<CONF
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
shared_preload_libraries = 'pg_stat_statements'
fsync = on
synchronous_commit = on
autovacuum = on
shared_buffers = 128MB
max_wal_size = 1GB
CONF
    printf '%s\n' "$@"
  } >> "$dir/data/postgresql.conf"
}

# stop_processes PID...: asks each process to stop, waits up to 20 s for each, then kills what is left.
stop_processes() {
  local p
  for p in "$@"; do kill "$p" 2>/dev/null; done
  for p in "$@"; do
    for _ in $(seq 1 40); do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$p" 2>/dev/null
  done
}
