-- Every transition is announced on the 'transfer_changes' channel (payload "<id>:<version>"), delivered
-- to every instance's listener at commit. Long polls (Prefer: wait=N) wake up on it, on whichever
-- instance made the change, instead of polling the database.
CREATE FUNCTION transfers_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('transfer_changes', NEW.id::text || ':' || NEW.version::text);
    RETURN NULL;
END;
$$;

CREATE TRIGGER transfers_notify
    AFTER INSERT OR UPDATE OF version ON transfers
    FOR EACH ROW EXECUTE FUNCTION transfers_notify();

-- The operations listing (GET /v1/transfers?status=…&olderThan=…) pages through non-terminal transfers
-- by (updated_at, id); terminal ones are listed without an index (an ops query, not a hot path).
CREATE INDEX transfers_open_by_age ON transfers (status, updated_at, id)
    WHERE status IN ('pending', 'processing', 'reconciling');
