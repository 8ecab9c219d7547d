-- transfers partitioned by range on created_at, a day per partition, so that ended transfers leave the primary by
-- detaching whole partitions, as their history does since V14 (docs/capacity.md "Data lifecycle"). Possible since V16:
-- the keys' uniqueness lives in transfer_keys, which holds across partitions for the key's whole window.
--
-- What changes and what replaces it:
--   * the primary key is (id, created_at): a partitioned table's unique index must contain the partition key. An id is
--     a fresh random UUID from the service, written once; the key table names the transfer by its id and created_at;
--   * no foreign key points at transfers(id): transfer_events lost its key in V5 (the statement writes the event from
--     the row it wrote), ledger_entries.transfer_id and webhook_deliveries.event_id never had one. An event, an entry
--     or a delivery may therefore outlive its transfer's partition: entries are kept for ever (the ledger), events
--     follow their own retention (V14);
--   * the row triggers (transfers_guard, transfers_payment_fixed, transfers_cancelled_guard, transfers_hold_fixed,
--     transfers_notify) move to the parent, which clones them to every partition, present and future;
--     transfers_keep is a statement trigger, which fires only for the table a statement names: it is on the parent and
--     on every partition (the create function below adds it);
--   * the four indexes (transfers_due, transfers_leases, transfers_open_by_age, transfers_by_owner) are partitioned
--     indexes: each partition has its part, and the partial ones hold only open transfers, as before.
--
-- The rows written so far become the first partition, transfers_initial, covering the days from the oldest transfer's
-- to the next midnight (UTC); it is detached like any other once past the retention. Its primary key is rebuilt on
-- (id, created_at), which reads the table: on a table of many millions of rows, run this migration in a quiet hour.
-- A DEFAULT partition takes any transfer whose time no partition covers (the job fell behind), so an accept never
-- fails for want of a partition.
--
-- A partition is detached only when (ledgerline_detach_transfer_partitions, below): its whole range ended before the
-- retention and more than a day ago; it holds no open transfer (pending, processing, reconciling: parked ones too; an
-- open transfer cannot move to a later partition, created_at is fixed, so one keeps its whole day); and no key of its
-- range is left in transfer_keys. The last makes the key window the floor of a transfer's stay: a key is removed only
-- once its transfer ended a key window ago (V16), and a key never names a transfer that has left. A hold is resolved
-- by the very statement that ends its transfer (TransferSql.RESOLVE_HOLDS), so an ended transfer holds nothing.

ALTER TABLE transfers RENAME TO transfers_initial;
ALTER TABLE transfers_initial DROP CONSTRAINT transfers_pkey;
ALTER TABLE transfers_initial ALTER COLUMN id SET NOT NULL;
ALTER INDEX transfers_due RENAME TO transfers_initial_due;
ALTER INDEX transfers_leases RENAME TO transfers_initial_leases;
ALTER INDEX transfers_open_by_age RENAME TO transfers_initial_open_by_age;
ALTER INDEX transfers_by_owner RENAME TO transfers_initial_by_owner;

CREATE TABLE transfers (LIKE transfers_initial INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE (created_at);
ALTER TABLE transfers ADD CONSTRAINT transfers_pkey PRIMARY KEY (id, created_at);
CREATE INDEX transfers_due ON transfers (next_attempt_at) WHERE status IN ('pending', 'reconciling');
CREATE INDEX transfers_leases ON transfers (lease_expires_at) WHERE status = 'processing';
CREATE INDEX transfers_open_by_age ON transfers (status, updated_at, id) WHERE status IN ('pending', 'processing', 'reconciling');
CREATE INDEX transfers_by_owner ON transfers (user_id, created_at DESC, id DESC);

-- the triggers move from the table to the parent, word for word (pg_get_triggerdef), and the statement trigger is
-- added to the first partition again
DO $$
DECLARE
    t record;
    first_day timestamptz := coalesce((SELECT date_trunc('day', min(created_at), 'UTC') FROM transfers_initial),
                                      date_trunc('day', now(), 'UTC'));
BEGIN
    FOR t IN SELECT tgname, pg_get_triggerdef(oid) AS def FROM pg_trigger
              WHERE tgrelid = 'public.transfers_initial'::regclass AND NOT tgisinternal LOOP
        EXECUTE format('DROP TRIGGER %I ON public.transfers_initial', t.tgname);
        EXECUTE regexp_replace(t.def, ' ON (public\.)?transfers_initial ', ' ON public.transfers ');
    END LOOP;
    EXECUTE format('ALTER TABLE transfers ATTACH PARTITION transfers_initial FOR VALUES FROM (%L) TO (%L)',
                   first_day, date_trunc('day', now(), 'UTC') + interval '1 day');
END
$$;

-- An UPDATE that changes created_at to another partition's range is run as a DELETE and an INSERT (row movement), and
-- the AFTER UPDATE guard of V6/V8 (transfers_payment_fixed) does not fire for it; the row's DELETE does. This row
-- trigger refuses it, and any row DELETE that passed the statement trigger: created_at is fixed, rows are kept.
CREATE FUNCTION transfers_refuse_move() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'transfer % cannot change created_at (what it pays, to whom and under which keys is fixed at creation) or be deleted',
        OLD.id USING ERRCODE = 'check_violation';
END;
$$;

CREATE TRIGGER transfers_fixed_in_time
    BEFORE DELETE ON transfers
    FOR EACH ROW EXECUTE FUNCTION transfers_refuse_move();

CREATE TRIGGER transfers_keep
    BEFORE DELETE OR TRUNCATE ON transfers_initial
    FOR EACH STATEMENT EXECUTE FUNCTION transfers_refuse_delete();

CREATE TABLE transfers_default PARTITION OF transfers DEFAULT;
CREATE TRIGGER transfers_keep
    BEFORE DELETE OR TRUNCATE ON transfers_default
    FOR EACH STATEMENT EXECUTE FUNCTION transfers_refuse_delete();

-- The partitions of a partitioned table and their bounds (NULL for MINVALUE and for the default partition), read from
-- the catalog, which is the only record of them.
CREATE FUNCTION ledgerline_partitions_of(parent regclass)
RETURNS TABLE (name text, from_at timestamptz, to_at timestamptz, is_default boolean)
LANGUAGE sql STABLE
SET search_path = pg_catalog, public, pg_temp
AS $$
    SELECT c.relname::text,
           (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \(''([^'']+)''\)'))[1]::timestamptz,
           (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \(''([^'']+)''\)'))[1]::timestamptz,
           pg_get_expr(c.relpartbound, c.oid) = 'DEFAULT'
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = parent
$$;

-- Creates the partitions of transfers, as ledgerline_create_event_partitions (V14) does those of transfer_events:
-- at most `at_most` ranges of `span`, aligned on the epoch, meeting [cover_from, cover_until) and not covered yet, each
-- a table of its own with transfers_keep, then attached (the parent's row triggers and indexes come with the attach).
-- A range whose transfers already went to the default partition is skipped with a warning. Answers the number created,
-- or -1 when another session holds the retention lock.
CREATE FUNCTION ledgerline_create_transfer_partitions(cover_from timestamptz, cover_until timestamptz, span interval,
                                                      at_most integer, lock_wait interval)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    step double precision := extract(epoch FROM span);
    k bigint;
    range_from timestamptz;
    range_to timestamptz;
    part text;
    created integer := 0;
BEGIN
    IF step < 1 OR cover_until <= cover_from OR at_most < 1 THEN
        RAISE EXCEPTION 'partitions need a span of at least a second, a range to cover and at_most >= 1'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF NOT pg_try_advisory_xact_lock(hashtext('ledgerline.retention')) THEN
        RETURN -1;
    END IF;
    PERFORM set_config('lock_timeout', (extract(epoch FROM lock_wait) * 1000)::bigint::text || 'ms', true);
    k := floor(extract(epoch FROM cover_from) / step);
    LOOP
        range_from := to_timestamp(k * step);
        range_to := to_timestamp((k + 1) * step);
        EXIT WHEN range_from >= cover_until OR created >= at_most;
        k := k + 1;
        CONTINUE WHEN EXISTS (SELECT FROM ledgerline_partitions_of('public.transfers') p
                               WHERE NOT p.is_default
                                 AND coalesce(p.from_at, '-infinity') < range_to AND p.to_at > range_from);
        part := 'transfers_' || to_char(range_from AT TIME ZONE 'UTC', 'YYYYMMDD"t"HH24MISS');
        BEGIN
            EXECUTE format('CREATE TABLE public.%I (LIKE public.transfers INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', part);
            EXECUTE format('CREATE TRIGGER transfers_keep BEFORE DELETE OR TRUNCATE ON public.%I'
                           ' FOR EACH STATEMENT EXECUTE FUNCTION public.transfers_refuse_delete()', part);
            EXECUTE format('ALTER TABLE public.transfers ATTACH PARTITION public.%I FOR VALUES FROM (%L) TO (%L)',
                           part, range_from, range_to);
            created := created + 1;
        EXCEPTION WHEN check_violation THEN
            RAISE WARNING 'transfers has rows from % to % in its default partition; no partition is made for them',
                range_from, range_to;
        END;
    END LOOP;
    RETURN created;
END;
$$;

-- Detaches at most `at_most` partitions of transfers whose whole range ended at or before `older_than`, and more than
-- a day ago whatever the caller passes, oldest first; drops each, or keeps it (`keep`) as a table of its own that only
-- the owner reads, for an export and a DROP after it. Left attached ('held'): a partition with an open transfer
-- (pending, processing, reconciling, parked ones included; found through its part of transfers_open_by_age), or one
-- whose range still has a key in transfer_keys (a key created with its transfer, removed a key window after the
-- transfer ended). Answers one row per partition it looked at; one row with busy when another session holds the lock.
CREATE FUNCTION ledgerline_detach_transfer_partitions(older_than timestamptz, at_most integer, keep boolean,
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
              WHERE NOT e.is_default AND e.to_at <= least(older_than, now() - interval '1 day')
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

-- What the gauges report, on every instance: how far ahead partitions of transfers reach, how many are past
-- `older_than` and still attached, and how many transfers (up to 1,000) sit in the default partition.
CREATE FUNCTION ledgerline_transfer_partitions_status(older_than timestamptz)
RETURNS TABLE (covered_until timestamptz, overdue integer, default_rows bigint)
LANGUAGE sql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, public, pg_temp
AS $$
    SELECT (SELECT max(p.to_at) FROM ledgerline_partitions_of('public.transfers') p WHERE NOT p.is_default),
           (SELECT count(*)::integer FROM ledgerline_partitions_of('public.transfers') p
             WHERE NOT p.is_default AND p.to_at <= older_than),
           (SELECT count(*) FROM (SELECT FROM public.transfers_default LIMIT 1000) d)
$$;

REVOKE ALL ON FUNCTION ledgerline_partitions_of(regclass) FROM PUBLIC;
REVOKE ALL ON FUNCTION ledgerline_create_transfer_partitions(timestamptz, timestamptz, interval, integer, interval) FROM PUBLIC;
REVOKE ALL ON FUNCTION ledgerline_detach_transfer_partitions(timestamptz, integer, boolean, interval) FROM PUBLIC;
REVOKE ALL ON FUNCTION ledgerline_transfer_partitions_status(timestamptz) FROM PUBLIC;
