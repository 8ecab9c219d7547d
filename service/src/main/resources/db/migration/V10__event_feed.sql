-- The event feed (GET /v1/events) reads transfer_events in an order in which nothing can appear behind a reader.
--
-- Each event carries feed_xid: the greatest transaction id among the transactions that wrote this version of the
-- transfer and every version before it. A reader takes only events whose feed_xid is below the xmin of its own
-- snapshot (pg_snapshot_xmin(pg_current_snapshot())), in (feed_xid, transfer_id, version) order:
--   * below xmin, every transaction has ended, so the events there are final: each is visible or never will be;
--   * a transaction still running, or not begun, has an id at or above xmin, and every event it writes has a
--     feed_xid at least its own id, so it can only ever add events past the horizon, never behind a cursor;
--   * a transfer's versions never go down the order, because each version's feed_xid is at least its
--     predecessor's. This is why feed_xid is not simply the writer's id: a statement that got its id early and
--     waited for a row lock (or re-checked a row another transaction had just changed) writes the next version
--     with an id older than the one that wrote the version before it.
-- A sequence or a timestamp alone has neither property: a number drawn early and committed late lands behind a
-- cursor that has already moved past it.
--
-- transfers.feed_xid keeps the last event's value. INSERTs take the writer's id from the default; every other
-- transition SETs feed_xid = greatest(feed_xid, pg_current_xact_id()), and the guard below refuses one that does
-- not. The events copy the row's value in the same statement, and their column has no default, so an event
-- written without it is refused too.
--
-- What the horizon costs a reader: the feed lags by the longest-running transaction that holds an id (in any
-- database of the cluster). Set idle_in_transaction_session_timeout, and avoid long write transactions and
-- prepared transactions left behind.
--
-- The columns are added without a table rewrite: a column without a default is only a catalog change, and a default
-- set afterwards applies to new rows alone. Rows from before stay NULL: greatest() skips a NULL, so their next
-- transition starts the order, and events from before have no place in the feed, which begins with this migration.
-- New events must carry a feed_xid (the constraint is NOT VALID: checked for every new row, without a scan of the
-- old ones).
ALTER TABLE transfers ADD COLUMN feed_xid xid8;
ALTER TABLE transfers ALTER COLUMN feed_xid SET DEFAULT pg_current_xact_id();
ALTER TABLE transfer_events ADD COLUMN feed_xid xid8;
ALTER TABLE transfer_events ADD CONSTRAINT transfer_events_feed_xid CHECK (feed_xid IS NOT NULL) NOT VALID;

-- the feed's order; the events from before the feed are not in it
CREATE INDEX transfer_events_feed ON transfer_events (feed_xid, transfer_id, version) WHERE feed_xid IS NOT NULL;

CREATE OR REPLACE FUNCTION transfers_refuse() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.status IN ('sent', 'failed') THEN
        RAISE EXCEPTION 'transfer % is % and cannot change', OLD.id, OLD.status USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.version <> OLD.version AND NEW.version <> OLD.version + 1 THEN
        RAISE EXCEPTION 'transfer % version must move from % to %', OLD.id, OLD.version, OLD.version + 1
            USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.version = OLD.version THEN
        RAISE EXCEPTION 'transfer % changed status without a new version', OLD.id USING ERRCODE = 'check_violation';
    END IF;
    RAISE EXCEPTION 'transfer % moved to version % without feed_xid = greatest(feed_xid, pg_current_xact_id())',
        OLD.id, NEW.version USING ERRCODE = 'check_violation';
END;
$$;

DROP TRIGGER transfers_guard ON transfers;
CREATE TRIGGER transfers_guard
    AFTER UPDATE ON transfers
    FOR EACH ROW
    WHEN ((OLD.status IN ('sent', 'failed') AND (NEW.status <> OLD.status OR NEW.version <> OLD.version))
          OR (NEW.version <> OLD.version AND NEW.version <> OLD.version + 1)
          OR (NEW.version = OLD.version AND NEW.status <> OLD.status)
          OR (NEW.version <> OLD.version AND (NEW.feed_xid IS NULL OR NEW.feed_xid < greatest(OLD.feed_xid, pg_current_xact_id()))))
    EXECUTE FUNCTION transfers_refuse();

-- the operators' resume carries the feed's order like every other transition
CREATE OR REPLACE FUNCTION ledgerline_resume_parked(transfer uuid, operator text, why text) RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    resumed bigint;
BEGIN
    IF coalesce(btrim(operator), '') = '' OR coalesce(btrim(why), '') = '' THEN
        RAISE EXCEPTION 'name the operator and the reason: both go into the transfer''s history'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    WITH w AS (
        UPDATE transfers
           SET previous_status = status, version = version + 1, next_attempt_at = now(), refused_sends = 0, sends = 0, claim_token = NULL,
               feed_xid = greatest(feed_xid, pg_current_xact_id()),
               updated_at = now(), last_actor = btrim(operator),
               last_reason = left('resumed by an operator: ' || btrim(why) || ' (database role ' || session_user || ')', 512)
         WHERE id = transfer AND status = 'reconciling' AND next_attempt_at = 'infinity'
        RETURNING id, version, status, previous_status, last_actor, last_reason, feed_xid),
    e AS (INSERT INTO transfer_events (transfer_id, version, from_status, to_status, actor, reason, feed_xid)
          SELECT id, version, previous_status, status, last_actor, last_reason, feed_xid FROM w)
    SELECT version INTO resumed FROM w;
    IF resumed IS NULL THEN
        RAISE EXCEPTION 'transfer % is not parked (reconciling and waiting for an operator); nothing changed', transfer
            USING ERRCODE = 'no_data_found';
    END IF;
    RETURN resumed;
END;
$$;

REVOKE ALL ON FUNCTION ledgerline_resume_parked(uuid, text, text) FROM PUBLIC;
