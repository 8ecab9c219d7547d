-- The floors under the retention policy are the database owner's settings, no longer constants of the functions.
--
-- The functions of V14, V16 and V17 that remove data cap what their caller passes, so that no role calling them (the
-- service's included) removes the last hour of history, a key younger than a day, or a transfer partition of the last
-- day. Those floors were written into the functions. They stay the defaults, but they live in retention_floors, a
-- one-row table that only the owner may read or change (ops/roles.sql grants nothing on it): the service's role still
-- cannot shorten them, and an owner who wants a shorter policy (a test environment, a run with retention in minutes
-- that shows the tables level off) lowers them with an UPDATE instead of a migration. A floor is at least a second; a
-- missing row counts as a day for all three.

CREATE TABLE retention_floors (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    -- history (transfer_events partitions): what ledgerline_detach_event_partitions never detaches
    events interval NOT NULL DEFAULT interval '1 hour' CHECK (events >= interval '1 second'),
    -- transfers partitions: what ledgerline_detach_transfer_partitions never detaches
    transfers interval NOT NULL DEFAULT interval '1 day' CHECK (transfers >= interval '1 second'),
    -- idempotency keys: the shortest window ledgerline_expire_transfer_keys lets any caller ask for
    keys interval NOT NULL DEFAULT interval '1 day' CHECK (keys >= interval '1 second')
);
INSERT INTO retention_floors DEFAULT VALUES;
REVOKE ALL ON retention_floors FROM PUBLIC;

-- Called only by the owner's SECURITY DEFINER functions below, which run as the owner.
CREATE FUNCTION ledgerline_retention_floor(what text) RETURNS interval
LANGUAGE sql STABLE
SET search_path = pg_catalog, public, pg_temp
AS $$
    SELECT coalesce((SELECT CASE what WHEN 'events' THEN f.events WHEN 'transfers' THEN f.transfers WHEN 'keys' THEN f.keys END
                       FROM retention_floors f), interval '1 day')
$$;
REVOKE ALL ON FUNCTION ledgerline_retention_floor(text) FROM PUBLIC;

-- The four functions again, word for word but for the floor they read (signatures, results and grants unchanged).

CREATE OR REPLACE FUNCTION ledgerline_detach_event_partitions(older_than timestamptz, at_most integer, keep boolean,
                                                   lock_wait interval)
RETURNS TABLE (busy boolean, name text, to_at timestamptz, outcome text)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    p record;
    open_events boolean;
    done integer := 0;
BEGIN
    IF NOT pg_try_advisory_xact_lock(hashtext('ledgerline.retention')) THEN
        RETURN QUERY SELECT true, NULL::text, NULL::timestamptz, NULL::text;
        RETURN;
    END IF;
    PERFORM set_config('lock_timeout', (extract(epoch FROM lock_wait) * 1000)::bigint::text || 'ms', true);
    FOR p IN SELECT e.name, e.to_at FROM ledgerline_event_partitions() e
              WHERE NOT e.is_default AND e.to_at <= least(older_than, now() - ledgerline_retention_floor('events'))
              ORDER BY e.to_at LOOP
        EXIT WHEN done >= at_most;
        -- the open transfers are few and indexed (transfers_open_by_age); each probes the partition's unique index
        EXECUTE format('SELECT EXISTS (SELECT FROM public.transfers t WHERE t.status IN (''pending'', ''processing'', ''reconciling'')'
                       ' AND EXISTS (SELECT FROM public.%I e WHERE e.transfer_id = t.id))', p.name)
            INTO open_events;
        IF open_events THEN
            RETURN QUERY SELECT false, p.name, p.to_at, 'held'::text;
            CONTINUE;
        END IF;
        EXECUTE format('ALTER TABLE public.transfer_events DETACH PARTITION public.%I', p.name);
        done := done + 1;
        IF keep THEN
            RETURN QUERY SELECT false, p.name, p.to_at, 'kept'::text;
        ELSE
            EXECUTE format('DROP TABLE public.%I', p.name);
            RETURN QUERY SELECT false, p.name, p.to_at, 'dropped'::text;
        END IF;
    END LOOP;
END;
$$;

CREATE OR REPLACE FUNCTION ledgerline_expire_transfer_keys(older_than timestamptz, at_most integer)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    bound timestamptz := least(older_than, now() - ledgerline_retention_floor('keys'));
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

CREATE OR REPLACE FUNCTION ledgerline_transfer_keys_overdue(older_than timestamptz)
RETURNS bigint
LANGUAGE sql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, public, pg_temp
AS $$
    SELECT count(*) FROM (
        SELECT FROM transfer_keys k
         WHERE k.created_at < least(older_than, now() - ledgerline_retention_floor('keys')) - interval '1 day'
           AND NOT EXISTS (SELECT FROM transfers t
                            WHERE t.id = k.transfer_id
                              AND (t.status IN ('pending', 'processing', 'reconciling')
                                   OR t.updated_at >= least(older_than, now() - ledgerline_retention_floor('keys')) - interval '1 day'))
         LIMIT 1000) overdue
$$;

CREATE OR REPLACE FUNCTION ledgerline_detach_transfer_partitions(older_than timestamptz, at_most integer, keep boolean,
                                                      lock_wait interval)
RETURNS TABLE (busy boolean, name text, to_at timestamptz, outcome text)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    p record;
    held boolean;
    done integer := 0;
BEGIN
    IF NOT pg_try_advisory_xact_lock(hashtext('ledgerline.retention')) THEN
        RETURN QUERY SELECT true, NULL::text, NULL::timestamptz, NULL::text;
        RETURN;
    END IF;
    PERFORM set_config('lock_timeout', (extract(epoch FROM lock_wait) * 1000)::bigint::text || 'ms', true);
    FOR p IN SELECT e.name, e.from_at, e.to_at FROM ledgerline_partitions_of('public.transfers') e
              WHERE NOT e.is_default AND e.to_at <= least(older_than, now() - ledgerline_retention_floor('transfers'))
              ORDER BY e.to_at LOOP
        EXIT WHEN done >= at_most;
        EXECUTE format('SELECT EXISTS (SELECT FROM public.%I WHERE status IN (''pending'', ''processing'', ''reconciling''))',
                       p.name) INTO held;
        held := held OR EXISTS (SELECT FROM transfer_keys k
                                 WHERE k.created_at >= coalesce(p.from_at, '-infinity') AND k.created_at < p.to_at);
        IF held THEN
            RETURN QUERY SELECT false, p.name, p.to_at, 'held'::text;
            CONTINUE;
        END IF;
        EXECUTE format('ALTER TABLE public.transfers DETACH PARTITION public.%I', p.name);
        done := done + 1;
        IF keep THEN
            RETURN QUERY SELECT false, p.name, p.to_at, 'kept'::text;
        ELSE
            EXECUTE format('DROP TABLE public.%I', p.name);
            RETURN QUERY SELECT false, p.name, p.to_at, 'dropped'::text;
        END IF;
    END LOOP;
END;
$$;

