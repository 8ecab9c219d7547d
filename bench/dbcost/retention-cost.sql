-- What removing one day of transfer_events costs: a DELETE of its rows against the retention job's detach and drop
-- (docs/capacity.md "Data lifecycle"). Run as a superuser on a scratch database with every migration applied:
--   psql -X -v ON_ERROR_STOP=1 -d <scratch> -f bench/dbcost/retention-cost.sql
-- It fills four past days with 21,600 sent transfers each (3 events per transfer, 64,800 a day), then, after a
-- CHECKPOINT each, deletes day 2's events and detaches day 1's partition, and prints the WAL each wrote, its time
-- and the dead tuples it left. Needs nothing of the service running.
\timing off
SELECT ledgerline_create_event_partitions(date_trunc('day', now(), 'UTC') - interval '5 days',
                                          date_trunc('day', now(), 'UTC') - interval '1 day', interval '1 day', 10,
                                          interval '1 second') AS partitions_created;
INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency, destination_iban,
                       destination_name, provider_reference, status, version, last_actor, created_at, updated_at, feed_xid)
SELECT gen_random_uuid(), 'user' || (i % 500), 'retention-cost-' || i, 'fp', 100, 'EUR', 'DE89370400440532013000', 'Ada',
       'll_retention_cost_' || i, 'sent', 2, 'bench',
       date_trunc('day', now(), 'UTC') - interval '5 days' + i * interval '4 seconds',
       date_trunc('day', now(), 'UTC') - interval '5 days' + i * interval '4 seconds', pg_current_xact_id()
  FROM generate_series(0, 86399) i;
INSERT INTO transfer_events (transfer_id, version, to_status, actor, at, feed_xid)
SELECT t.id, v, 'sent', 'bench', t.created_at + v * interval '50 milliseconds', t.feed_xid
  FROM transfers t, generate_series(0, 2) v WHERE t.idempotency_key LIKE 'retention-cost-%';
ANALYZE transfers, transfer_events;

\set day2_from '(date_trunc(''day'', now(), ''UTC'') - interval ''4 days'')'
CHECKPOINT;
SELECT pg_current_wal_insert_lsn() AS l0, clock_timestamp() AS t0 \gset
BEGIN;
SET LOCAL session_replication_role = replica;  -- the append-only trigger refuses a DELETE otherwise
DELETE FROM transfer_events WHERE at >= :day2_from AND at < :day2_from + interval '1 day';
COMMIT;
SELECT pg_current_wal_insert_lsn() AS l1, clock_timestamp() AS t1 \gset
SELECT pg_stat_force_next_flush();
SELECT 'delete' AS how, pg_wal_lsn_diff(:'l1', :'l0') AS wal_bytes,
       round(extract(epoch FROM :'t1'::timestamptz - :'t0'::timestamptz) * 1000) AS ms,
       (SELECT n_dead_tup FROM pg_stat_user_tables
         WHERE relname = 'transfer_events_' || to_char(:day2_from AT TIME ZONE 'UTC', 'YYYYMMDD"t"HH24MISS')) AS dead_tuples;

CHECKPOINT;
SELECT pg_current_wal_insert_lsn() AS l2, clock_timestamp() AS t2 \gset
SELECT name, outcome FROM ledgerline_detach_event_partitions(:day2_from, 1, false, interval '1 second');
SELECT pg_current_wal_insert_lsn() AS l3, clock_timestamp() AS t3 \gset
SELECT 'detach and drop' AS how, pg_wal_lsn_diff(:'l3', :'l2') AS wal_bytes,
       round(extract(epoch FROM :'t3'::timestamptz - :'t2'::timestamptz) * 1000) AS ms, 0 AS dead_tuples;
