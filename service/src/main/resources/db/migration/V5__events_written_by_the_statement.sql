-- The database cost of one transfer (issue 18, SCALE.md, bench/DBCOST.md). Until V4 every INSERT and UPDATE of
-- transfers ran a plpgsql row trigger that appended the transfer_events row, and that row's foreign key locked the
-- transfers row again (one more WAL record per transition). bench/dbcost.sh measured the service's three
-- statements at 30 % of the seed's plain-table floor; most of the gap was the fence's pg_notify commit, which
-- TransferRepository now batches (FenceQueue), the rest is what this migration removes.
--
-- From V5 each of TransferRepository's writes appends its own event in the same statement:
--     WITH w AS (UPDATE transfers ... RETURNING ...) INSERT INTO transfer_events SELECT ... FROM w
-- Every field of the event comes from the row the statement just wrote (previous_status, below, carries the status
-- it replaced), so history and state still cannot disagree, and an event can only name a transfer that exists.

-- The status a transition left: set to the old status by every version-bumping UPDATE (a SET expression sees the
-- row being replaced), so the statement's RETURNING can record from_status without reading the row twice.
ALTER TABLE transfers ADD COLUMN previous_status text;

DROP TRIGGER transfers_transition ON transfers;
DROP FUNCTION transfers_transition();

-- The state machine's refusals stay in the database, for every writer: no change of status or version after a
-- terminal status, a version moves by exactly one, a status never changes without a new version. The WHEN is
-- evaluated by the executor itself; the function (which only raises, aborting the statement) runs for a forbidden
-- change alone, so an allowed transition no longer pays for a plpgsql call. AFTER, not BEFORE: a BEFORE ROW UPDATE
-- trigger makes PostgreSQL lock the row again before it evaluates any WHEN (one more WAL record per transition,
-- measured by bench/dbcost.sh); an AFTER trigger whose WHEN is false is not even queued.
CREATE FUNCTION transfers_refuse() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.status IN ('sent', 'failed') THEN
        RAISE EXCEPTION 'transfer % is % and cannot change', OLD.id, OLD.status USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.version <> OLD.version THEN
        RAISE EXCEPTION 'transfer % version must move from % to %', OLD.id, OLD.version, OLD.version + 1
            USING ERRCODE = 'check_violation';
    END IF;
    RAISE EXCEPTION 'transfer % changed status without a new version', OLD.id USING ERRCODE = 'check_violation';
END;
$$;

CREATE TRIGGER transfers_guard
    AFTER UPDATE ON transfers
    FOR EACH ROW
    WHEN ((OLD.status IN ('sent', 'failed') AND (NEW.status <> OLD.status OR NEW.version <> OLD.version))
          OR (NEW.version <> OLD.version AND NEW.version <> OLD.version + 1)
          OR (NEW.version = OLD.version AND NEW.status <> OLD.status))
    EXECUTE FUNCTION transfers_refuse();

-- The foreign key from transfer_events checked every event against transfers with a FOR KEY SHARE lock of the row
-- the same statement had just written. The statement now guarantees it (the event's transfer_id is the RETURNING
-- of that write), and what the key also prevented, deleting a transfer that has history, is refused here for the
-- whole table: transfers are kept (SCALE.md "Retention" is the plan for old rows). Without the key, transfer_events
-- can also be partitioned on its own time column later.
ALTER TABLE transfer_events DROP CONSTRAINT transfer_events_transfer_id_fkey;

CREATE FUNCTION transfers_refuse_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'transfers are kept with their history; rows cannot be deleted' USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE TRIGGER transfers_keep
    BEFORE DELETE OR TRUNCATE ON transfers
    FOR EACH STATEMENT EXECUTE FUNCTION transfers_refuse_delete();
