-- A transaction that calls pg_notify commits while holding one database-wide lock until its WAL flush,
-- so notifying commits run one at a time without group commit. The benchmark measured the service's own
-- SQL at ~90 transfers/s with a notification on every transition and ~890/s without any (bench/FINDINGS.md).
-- Long polls only need the transitions a client waits for: a final status, or the move to reconciling.
-- pending -> processing is short-lived and not announced; a poll holding an older ETag wakes on the next
-- announced change and answers with the latest row.
DROP TRIGGER transfers_notify ON transfers;

CREATE TRIGGER transfers_notify
    AFTER INSERT OR UPDATE OF version ON transfers
    FOR EACH ROW
    WHEN (NEW.status IN ('sent', 'failed', 'reconciling'))
    EXECUTE FUNCTION transfers_notify();
