-- transfer_events partitioned by range on its own time column (at), so that old history leaves the primary by
-- detaching whole partitions instead of deleting rows: no dead tuples, no vacuum, no index churn, one catalog change
-- per partition (docs/capacity.md "Data lifecycle" has the policy and what it costs).
--
-- The table is append-only and has no foreign key since V5, so nothing else has to change: every statement of
-- TransferSql inserts through the parent and PostgreSQL routes the row by its at (now(), the transaction's start).
--
-- What stays as it was:
--   * the feed's index (feed_xid, transfer_id, version) is a partitioned index: each partition has its part, and the
--     feed's ordered read is a Merge Append of the partitions' index scans, pruned to the feed's retention;
--   * one event per (transfer_id, version): a partitioned table's unique index must contain the partition key, and
--     (transfer_id, version, at) would refuse nothing. Each partition therefore carries its own
--     UNIQUE (transfer_id, version); across partitions the version itself is the guard, since the only writers
--     of an event are the statements that move transfers.version by exactly one (transfers_guard, V5) and append
--     that version's event;
--   * append-only: the statement trigger stays on the parent (an UPDATE, DELETE or TRUNCATE through it is refused),
--     and every partition gets the same trigger (a statement trigger on the parent does not fire for a statement
--     naming a partition). Removing history is DDL, which only the owner role may run, and the owner runs it only
--     through ledgerline_detach_event_partitions below.
--
-- The rows written so far become the first partition, transfer_events_initial, covering the days from the oldest
-- event's to the next midnight (UTC); it is detached like any other once that midnight is older than the retention.
-- Finding the oldest event and attaching the table (which checks its rows against the bound) read it twice under the
-- migration's lock: on a table of many millions of rows, run this migration in a quiet hour. A DEFAULT partition takes any event whose time no partition covers (the job fell
-- behind), so an accept never fails for want of a partition; ledgerline_retention_events_default_rows reports it.
--
-- The service's role owns nothing and cannot run DDL (ops/roles.sql). It creates and detaches partitions through
-- the two SECURITY DEFINER functions below, which run as the owner, do only that, and take one advisory transaction
-- lock so that any number of instances may call them: one works, the others are told the lock was busy.

ALTER TABLE transfer_events RENAME TO transfer_events_initial;
ALTER INDEX transfer_events_pkey RENAME TO transfer_events_initial_pkey;
ALTER INDEX transfer_events_feed RENAME TO transfer_events_initial_feed;

CREATE TABLE transfer_events (
    transfer_id uuid        NOT NULL,
    version     bigint      NOT NULL,
    from_status text,
    to_status   text        NOT NULL,
    actor       text        NOT NULL,
    reason      text,
    at          timestamptz NOT NULL DEFAULT now(),
    feed_xid    xid8
) PARTITION BY RANGE (at);

-- as in V10: every new event carries its feed_xid; NOT VALID like the initial partition's (the events from before the
-- feed have none)
ALTER TABLE transfer_events ADD CONSTRAINT transfer_events_feed_xid CHECK (feed_xid IS NOT NULL) NOT VALID;

CREATE INDEX transfer_events_feed ON transfer_events (feed_xid, transfer_id, version) WHERE feed_xid IS NOT NULL;

CREATE TRIGGER transfer_events_append_only
    BEFORE UPDATE OR DELETE OR TRUNCATE ON transfer_events
    FOR EACH STATEMENT EXECUTE FUNCTION transfer_events_refuse_change();

DO $$
DECLARE
    first_day timestamptz := coalesce((SELECT date_trunc('day', min(at), 'UTC') FROM transfer_events_initial),
                                      date_trunc('day', now(), 'UTC'));
BEGIN
    EXECUTE format('ALTER TABLE transfer_events ATTACH PARTITION transfer_events_initial FOR VALUES FROM (%L) TO (%L)',
                   first_day, date_trunc('day', now(), 'UTC') + interval '1 day');
END
$$;

CREATE TABLE transfer_events_default PARTITION OF transfer_events DEFAULT;
ALTER TABLE transfer_events_default ADD CONSTRAINT transfer_events_default_event UNIQUE (transfer_id, version);
CREATE TRIGGER transfer_events_append_only
    BEFORE UPDATE OR DELETE OR TRUNCATE ON transfer_events_default
    FOR EACH STATEMENT EXECUTE FUNCTION transfer_events_refuse_change();

-- The partitions of transfer_events and their bounds (NULL for MINVALUE and for the default partition), read from
-- the catalog, which is the only record of them.
CREATE FUNCTION ledgerline_event_partitions()
RETURNS TABLE (name text, from_at timestamptz, to_at timestamptz, is_default boolean)
LANGUAGE sql STABLE
SET search_path = pg_catalog, public, pg_temp
AS $$
    SELECT c.relname::text,
           (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \(''([^'']+)''\)'))[1]::timestamptz,
           (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \(''([^'']+)''\)'))[1]::timestamptz,
           pg_get_expr(c.relpartbound, c.oid) = 'DEFAULT'
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'public.transfer_events'::regclass
$$;

-- Creates the partitions of at most `at_most` ranges of `span` (aligned on the epoch, so every instance computes the
-- same bounds) that meet [cover_from, cover_until) and no partition covers yet. A range whose events already went to
-- the default partition (the job was behind) cannot be attached over them and is skipped with a warning; its events
-- stay in the default partition. Answers the number created, or -1 when another session holds the lock.
CREATE FUNCTION ledgerline_create_event_partitions(cover_from timestamptz, cover_until timestamptz, span interval,
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
        CONTINUE WHEN EXISTS (SELECT FROM ledgerline_event_partitions() p
                               WHERE NOT p.is_default
                                 AND coalesce(p.from_at, '-infinity') < range_to AND p.to_at > range_from);
        part := 'transfer_events_' || to_char(range_from AT TIME ZONE 'UTC', 'YYYYMMDD"t"HH24MISS');
        BEGIN
            -- a table of its own first, then ATTACH: attaching takes a SHARE UPDATE EXCLUSIVE lock of the parent,
            -- which concurrent inserts pass, where CREATE TABLE ... PARTITION OF would lock them out
            EXECUTE format('CREATE TABLE public.%I (LIKE public.transfer_events INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', part);
            EXECUTE format('ALTER TABLE public.%I ADD CONSTRAINT %I UNIQUE (transfer_id, version)', part, part || '_event');
            EXECUTE format('CREATE TRIGGER transfer_events_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON public.%I'
                           ' FOR EACH STATEMENT EXECUTE FUNCTION public.transfer_events_refuse_change()', part);
            EXECUTE format('ALTER TABLE public.transfer_events ATTACH PARTITION public.%I FOR VALUES FROM (%L) TO (%L)',
                           part, range_from, range_to);
            created := created + 1;
        EXCEPTION WHEN check_violation THEN
            RAISE WARNING 'transfer_events has events from % to % in its default partition; no partition is made for them',
                range_from, range_to;
        END;
    END LOOP;
    RETURN created;
END;
$$;

-- Detaches at most `at_most` partitions whose whole range ended at or before `older_than`, and at least an hour ago
-- (the service's role may call this: whatever it passes, the last hour of history stays), oldest first. Each is
-- dropped, or kept when `keep` (ledgerline.retention.keep-detached): a table of its own under the same name, which no
-- role but the owner may read, for an export (pg_dump -t) and a DROP after it. A partition that holds an event of a
-- transfer still open (pending, processing, reconciling: parked ones included) is left attached: the history of a
-- transfer that has not ended stays on the primary whole. Answers what it did, one row per partition; no row at all
-- when another session holds the lock (the caller tells that apart with `busy`).
CREATE FUNCTION ledgerline_detach_event_partitions(older_than timestamptz, at_most integer, keep boolean,
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
              WHERE NOT e.is_default AND e.to_at <= least(older_than, now() - interval '1 hour')
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

-- What the job's gauges report, on every instance: how far ahead partitions reach, how many partitions are past
-- `older_than` and still attached, and how many events (up to 1,000) sit in the default partition.
CREATE FUNCTION ledgerline_event_partitions_status(older_than timestamptz)
RETURNS TABLE (covered_until timestamptz, overdue integer, default_rows bigint)
LANGUAGE sql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, public, pg_temp
AS $$
    SELECT (SELECT max(p.to_at) FROM ledgerline_event_partitions() p WHERE NOT p.is_default),
           (SELECT count(*)::integer FROM ledgerline_event_partitions() p WHERE NOT p.is_default AND p.to_at <= older_than),
           (SELECT count(*) FROM (SELECT FROM public.transfer_events_default LIMIT 1000) d)
$$;

REVOKE ALL ON FUNCTION ledgerline_event_partitions() FROM PUBLIC;
REVOKE ALL ON FUNCTION ledgerline_create_event_partitions(timestamptz, timestamptz, interval, integer, interval) FROM PUBLIC;
REVOKE ALL ON FUNCTION ledgerline_detach_event_partitions(timestamptz, integer, boolean, interval) FROM PUBLIC;
REVOKE ALL ON FUNCTION ledgerline_event_partitions_status(timestamptz) FROM PUBLIC;
