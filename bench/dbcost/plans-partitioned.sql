-- Plans of the hot queries on transfers partitioned by day (migration V17), on a scratch database with every migration
-- applied: bench/dbcost/plans.sh runs it on a private cluster. 200,000 transfers over ten days (1,000 pending, 200
-- reconciling, 100 processing, the rest sent), their keys, partitions ten days back and a week ahead, statistics
-- analysed. Ids carry their creation time as the service's do (V18). Each query is TransferSql's text with the service's default values, prepared; the writes run inside a
-- transaction that is rolled back.
\set ON_ERROR_STOP on
SELECT ledgerline_create_transfer_partitions(date_trunc('day', now(), 'UTC') - interval '10 days', now() + interval '7 days',
                                             interval '1 day', 100, interval '1 second') AS transfer_partitions;
INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency, destination_iban, destination_name,
                       provider_reference, status, version, last_actor, created_at, updated_at, next_attempt_at,
                       lease_expires_at)
SELECT ledgerline_transfer_id(gen_random_uuid(), c.at), 'user-' || (i % 1000), 'key-' || i, 'fp', 10, 'EUR', 'DE89370400440532013000', 'Ada',
       'll_' || md5(i::text),
       CASE WHEN i % 200 = 0 THEN 'pending' WHEN i % 1000 = 1 THEN 'reconciling' WHEN i % 2000 = 3 THEN 'processing' ELSE 'sent' END,
       CASE WHEN i % 200 = 0 THEN 0 ELSE 2 END, 'fill', c.at, c.at, c.at + interval '1 second',
       CASE WHEN i % 2000 = 3 THEN now() + interval '1 minute' END
  FROM generate_series(1, 200000) AS i, LATERAL (SELECT now() - i * interval '4.32 seconds' AS at) c;
INSERT INTO transfer_keys (user_id, idempotency_key, provider_reference, transfer_id, created_at)
SELECT user_id, idempotency_key, provider_reference, id, created_at FROM transfers;
ANALYZE;
SELECT count(*) AS partitions FROM ledgerline_partitions_of('transfers');
SELECT id AS probe_id, created_at AS probe_at FROM transfers WHERE status = 'sent' ORDER BY created_at LIMIT 1 \gset
SELECT id AS recent_id FROM transfers WHERE status = 'sent' ORDER BY created_at DESC LIMIT 1 \gset

\echo '== FIND_BY_ID (the long poll, GET /v1/transfers/{id}), a transfer of today'
PREPARE find_by_id (uuid) AS
SELECT id, user_id, request_fingerprint, amount, currency, destination_iban, destination_name, description,
       provider_reference, status, version, failure_reason, created_at, updated_at, execute_at FROM transfers
 WHERE id = $1 AND created_at >= ledgerline_transfer_id_time($1::uuid);
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE find_by_id(:'recent_id');
\echo '== FIND_BY_ID, the oldest transfer (ten days back)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE find_by_id(:'probe_id');
SET plan_cache_mode = force_generic_plan;
\echo '== FIND_BY_ID, a transfer of today, the generic plan'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE find_by_id(:'recent_id');
RESET plan_cache_mode;

\echo '== FIND_BY_KEY (a replay PostgreSQL answers)'
PREPARE find_by_key (text, text) AS
WITH k AS (SELECT transfer_id FROM transfer_keys WHERE user_id = $1 AND idempotency_key = $2)
SELECT id, user_id, request_fingerprint, amount, currency, destination_iban, destination_name, description,
       provider_reference, status, version, failure_reason, created_at, updated_at, execute_at
  FROM transfers
 WHERE id = (SELECT transfer_id FROM k) AND created_at >= ledgerline_transfer_id_time((SELECT transfer_id FROM k))
   AND user_id = $1;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE find_by_key('user-1', 'key-1');

\echo '== LIST (operations listing, status=pending, a page of 50)'
PREPARE list (text, bigint, timestamptz, uuid, int) AS
SELECT id, status, updated_at FROM transfers
 WHERE ($1::text IS NULL OR status = $1::text)
   AND updated_at < now() - $2::bigint * interval '1 millisecond'
   AND (updated_at, id) > ($3::timestamptz, $4::uuid)
 ORDER BY updated_at, id
 LIMIT $5;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF)
EXECUTE list('pending', 0, '-infinity', '00000000-0000-0000-0000-000000000000', 50);

\echo '== LIST_OWN (GET /v1/me/transfers, first page of 50)'
PREPARE list_own (text, text, timestamptz, uuid, int) AS
SELECT id, status, created_at FROM transfers
 WHERE user_id = $1
   AND ($2::text IS NULL OR status = $2::text)
   AND (created_at, id) < ($3::timestamptz, $4::uuid)
 ORDER BY created_at DESC, id DESC
 LIMIT $5;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF)
EXECUTE list_own('user-7', NULL, 'infinity', 'ffffffff-ffff-ffff-ffff-ffffffffffff', 50);

BEGIN;
\echo '== TAKE_PENDING (the sweeper, a batch of 32)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF)
WITH due AS MATERIALIZED (
    SELECT id FROM transfers
     WHERE status = 'pending' AND next_attempt_at <= now()
     ORDER BY next_attempt_at LIMIT 32 FOR UPDATE SKIP LOCKED)
UPDATE transfers t SET next_attempt_at = now() + 20000::bigint * interval '1 millisecond'
  FROM due
 WHERE t.id = due.id AND t.status = 'pending'
RETURNING t.id, t.version;

\echo '== TAKE_RECONCILING (the reconciler, a batch of 32; scheduling columns only)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF)
UPDATE transfers t
   SET next_attempt_at = now() + least(60000::bigint, 200::bigint * power(2, least(t.attempts, 16))) * interval '1 millisecond',
       attempts = t.attempts + 1, claim_token = gen_random_uuid()
  FROM (SELECT id FROM transfers
         WHERE status = 'reconciling' AND next_attempt_at <= now()
           AND (send_not_after IS NULL OR send_not_after + 2000::bigint * interval '1 millisecond' <= now())
         ORDER BY next_attempt_at LIMIT 32 FOR UPDATE SKIP LOCKED) due
 WHERE t.id = due.id AND t.status = 'reconciling'
RETURNING t.id;

\echo '== the lease scan of EXPIRE_LEASES (processing rows by lease)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT id FROM transfers WHERE status = 'processing' AND lease_expires_at < now() + interval '1 hour'
 ORDER BY lease_expires_at LIMIT 32 FOR UPDATE SKIP LOCKED;
ROLLBACK;
