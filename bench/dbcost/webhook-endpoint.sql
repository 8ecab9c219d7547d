-- Webhook endpoints for bench/dbcost/transfer-webhooks.pgbench: one per pgbench client (CLIENTS=20), each registered
-- with WebhookRepository.CREATE's text and then given the id 00000000-0000-4000-8000-0000000000NN and a lease under
-- the token 00000000-0000-4000-9000-0000000000NN, NN = 10 + the client's :client_id, so that each client
-- acknowledges its own transfers' events with the deliverer's ADVANCE. Applied after the migrations.
PREPARE create_endpoint(text, text, text) AS
INSERT INTO webhook_endpoints (url, description, secret, cursor_xid, cursor_transfer, cursor_version, cursor_at)
SELECT $1, $2, $3, coalesce(h.feed_xid, '0'::xid8), coalesce(h.transfer_id, '00000000-0000-0000-0000-000000000000'::uuid),
       coalesce(h.version, -1), coalesce(h.at, now())
  FROM (SELECT 1) AS one
  LEFT JOIN LATERAL (
        SELECT e.feed_xid, e.transfer_id, e.version, e.at
          FROM transfer_events e
         WHERE e.feed_xid IS NOT NULL AND e.feed_xid < pg_snapshot_xmin(pg_current_snapshot())
         ORDER BY e.feed_xid DESC, e.transfer_id DESC, e.version DESC
         LIMIT 1) h ON true
RETURNING id, url, description, created_at, failing, failing_since;
SELECT format('EXECUTE create_endpoint(%L, %L, %L)', 'https://hooks.example.com/ledgerline/' || n, 'dbcost ' || n,
              'whsec_' || substr(md5(n::text) || md5('x' || n), 1, 43))
  FROM generate_series(10, 29) n \gexec
UPDATE webhook_endpoints w
   SET id = ('00000000-0000-4000-8000-0000000000' || n)::uuid, leased_by = 'pgbench',
       lease_token = ('00000000-0000-4000-9000-0000000000' || n)::uuid, lease_expires_at = now() + interval '1 day'
  FROM (SELECT id, 9 + row_number() OVER (ORDER BY description) AS n FROM webhook_endpoints) x
 WHERE w.id = x.id;
