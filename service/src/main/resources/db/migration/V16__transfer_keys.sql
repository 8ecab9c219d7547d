-- An idempotency key with a lifetime of its own (docs/capacity.md "Data lifecycle"). Until now a key was unique for as
-- long as its transfer row lived, by UNIQUE (user_id, idempotency_key) and UNIQUE (provider_reference) on transfers.
-- Those constraints tie the key's lifetime to the row's, and they cannot survive a partitioning of transfers by time (a
-- partitioned table's unique index must contain the partition key, and would then hold within one partition only).
--
-- From here the keys live in transfer_keys, one row per accepted intent, written by the same statement that inserts
-- the transfer (TransferSql: WITH k AS (INSERT INTO transfer_keys ... ON CONFLICT DO NOTHING RETURNING ...) INSERT INTO
-- transfers ... SELECT ... FROM k): no key, no transfer, and a key that exists already inserts nothing at all. The
-- table is written once per transfer and never updated, so its two unique indexes take one entry each per transfer,
-- where the same indexes on transfers took one per row version (three per transfer: no update of transfers is HOT).
--
-- A key row is removed once it is older than the key window (ledgerline.retention.key-window) and its transfer ended
-- at least that long ago, by the owner's function below, in bounded batches; an open or parked transfer keeps its key.
-- After that the key is free: the same request creates a new transfer, under a new provider reference (the reference
-- is derived from the principal, the key and the transfer's id, IdempotencyService.providerReference).

CREATE TABLE transfer_keys (
    user_id            text        NOT NULL,
    idempotency_key    text        NOT NULL,
    provider_reference text        NOT NULL,
    transfer_id        uuid        NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    -- one transfer per (principal, key), for the key's whole window
    CONSTRAINT transfer_keys_pkey PRIMARY KEY (user_id, idempotency_key),
    -- the provider's idempotency key: one payment per transfer, whoever sends it
    CONSTRAINT transfer_keys_provider_reference UNIQUE (provider_reference)
);

-- the expiry's scan, oldest first
CREATE INDEX transfer_keys_by_age ON transfer_keys (created_at);

-- every transfer so far keeps its key (run in a quiet hour on a table of many millions: this reads transfers once)
INSERT INTO transfer_keys (user_id, idempotency_key, provider_reference, transfer_id, created_at)
SELECT user_id, idempotency_key, provider_reference, id, created_at FROM transfers;

-- the keys' uniqueness lives in transfer_keys now; kept on transfers it would outlive the key window
ALTER TABLE transfers DROP CONSTRAINT transfers_user_idempotency_key;
ALTER TABLE transfers DROP CONSTRAINT transfers_provider_reference;

-- Keys are removed, never changed: the service inserts and reads them (ops/roles.sql), and only the function below,
-- as the owner, deletes. A statement trigger refuses an UPDATE or TRUNCATE from anyone.
CREATE FUNCTION transfer_keys_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'transfer_keys: a key is written with its transfer and removed after its window, never changed (% refused)', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE TRIGGER transfer_keys_fixed
    BEFORE UPDATE OR TRUNCATE ON transfer_keys
    FOR EACH STATEMENT EXECUTE FUNCTION transfer_keys_refuse_change();

-- Removes at most `at_most` keys, oldest first, whose row is older than `older_than` and whose transfer ended at or
-- before it (or no longer exists); `older_than` is capped at 24 hours ago whatever the caller passes, so no role can make
-- a key's window shorter than a day. A key of a transfer still open (pending, processing, reconciling: parked ones
-- included) is kept. Answers the number removed, or -1 when another session holds the retention lock (the same lock as
-- the partitions' functions of V14: one instance works at a time).
CREATE FUNCTION ledgerline_expire_transfer_keys(older_than timestamptz, at_most integer)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    bound timestamptz := least(older_than, now() - interval '24 hours');
    removed integer;
BEGIN
    IF at_most < 1 THEN
        RAISE EXCEPTION 'at_most must be at least 1' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF NOT pg_try_advisory_xact_lock(hashtext('ledgerline.retention')) THEN
        RETURN -1;
    END IF;
    WITH due AS (
        SELECT k.user_id, k.idempotency_key FROM transfer_keys k
         WHERE k.created_at < bound
           AND NOT EXISTS (SELECT FROM transfers t
                            WHERE t.id = k.transfer_id
                              AND (t.status IN ('pending', 'processing', 'reconciling') OR t.updated_at >= bound))
         ORDER BY k.created_at
         LIMIT at_most
         FOR UPDATE OF k SKIP LOCKED),
    gone AS (
        DELETE FROM transfer_keys k USING due
         WHERE k.user_id = due.user_id AND k.idempotency_key = due.idempotency_key
        RETURNING 1)
    SELECT count(*)::integer INTO removed FROM gone;
    RETURN removed;
END;
$$;

-- What the keys' gauge reports, on every instance: keys (up to 1,000) that have been removable for more than a day and
-- are still there (the job is behind, or off).
CREATE FUNCTION ledgerline_transfer_keys_overdue(older_than timestamptz)
RETURNS bigint
LANGUAGE sql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, public, pg_temp
AS $$
    SELECT count(*) FROM (
        SELECT FROM transfer_keys k
         WHERE k.created_at < least(older_than, now() - interval '24 hours') - interval '1 day'
           AND NOT EXISTS (SELECT FROM transfers t
                            WHERE t.id = k.transfer_id
                              AND (t.status IN ('pending', 'processing', 'reconciling')
                                   OR t.updated_at >= least(older_than, now() - interval '24 hours') - interval '1 day'))
         LIMIT 1000) overdue
$$;

REVOKE ALL ON FUNCTION ledgerline_expire_transfer_keys(timestamptz, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION ledgerline_transfer_keys_overdue(timestamptz) FROM PUBLIC;
