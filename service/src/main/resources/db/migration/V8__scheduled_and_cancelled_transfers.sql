-- Two additions to the state machine: a transfer may be scheduled for a later instant (execute_at), and a transfer
-- nobody has claimed yet may be cancelled by its owner. Both are enforced here, for every writer, not only by the
-- service's statements: the claim (TransferSql.CLAIM) refuses a row whose execute_at has not come, and the guard
-- below refuses any change after cancelled, as transfers_guard (V5) does after sent and failed.

-- 1. When the transfer may first be sent; NULL for "at once". Set by the INSERT only, fixed afterwards like the
--    other columns of the payment (transfers_payment_fixed, below). The insert also sets next_attempt_at to it, so
--    the sweeper's due index (transfers_due) does not offer the row before then.
ALTER TABLE transfers ADD COLUMN execute_at timestamptz;

-- 2. cancelled: terminal, reached from pending only (a pending row has no claim, so nothing was sent).
ALTER TABLE transfers DROP CONSTRAINT transfers_status_check;
ALTER TABLE transfers ADD CONSTRAINT transfers_status_check
    CHECK (status IN ('pending', 'processing', 'sent', 'failed', 'reconciling', 'cancelled'));

-- The refusals for cancelled, beside the guard of V5 (which stays as it is for sent and failed): no change of status
-- or version after cancelled, and no move to cancelled from anything but pending. A claimed row (processing), one
-- whose outcome is unknown (reconciling) or a final one may already have moved money, so it is never called
-- cancelled. Same pattern as transfers_guard: the executor evaluates the WHEN, and the function only raises, so an
-- allowed transition pays no plpgsql call.
CREATE FUNCTION transfers_refuse_cancel_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.status = 'cancelled' THEN
        RAISE EXCEPTION 'transfer % is cancelled and cannot change', OLD.id USING ERRCODE = 'check_violation';
    END IF;
    RAISE EXCEPTION 'transfer % is % and cannot be cancelled: only a pending transfer can', OLD.id, OLD.status
        USING ERRCODE = 'check_violation';
END;
$$;

CREATE TRIGGER transfers_cancelled_guard
    AFTER UPDATE ON transfers
    FOR EACH ROW
    WHEN ((OLD.status = 'cancelled' AND (NEW.status <> OLD.status OR NEW.version <> OLD.version))
          OR (NEW.status = 'cancelled' AND OLD.status NOT IN ('pending', 'cancelled')))
    EXECUTE FUNCTION transfers_refuse_cancel_change();

-- 3. execute_at is part of the payment: a rescheduled row would go out at another time than the client asked for,
--    under the same key. The guard of V6 with the column added; the function now names the changed columns from the
--    trigger's arguments (the list the trigger watches) instead of spelling out one test per column.
CREATE OR REPLACE FUNCTION transfers_refuse_payment_change() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    changed text[] := '{}';
    col text;
BEGIN
    FOREACH col IN ARRAY TG_ARGV LOOP
        IF to_jsonb(NEW) -> col IS DISTINCT FROM to_jsonb(OLD) -> col THEN changed := changed || col; END IF;
    END LOOP;
    RAISE EXCEPTION 'transfer % cannot change % (what it pays, to whom and under which keys is fixed at creation)',
        OLD.id, array_to_string(changed, ', ') USING ERRCODE = 'check_violation';
END;
$$;

DROP TRIGGER transfers_payment_fixed ON transfers;

CREATE TRIGGER transfers_payment_fixed
    AFTER UPDATE OF id, user_id, idempotency_key, request_fingerprint, amount, currency, destination_iban,
                    destination_name, description, provider_reference, created_at, execute_at
    ON transfers
    FOR EACH ROW
    WHEN ((NEW.id, NEW.user_id, NEW.idempotency_key, NEW.request_fingerprint, NEW.amount, NEW.currency,
           NEW.destination_iban, NEW.destination_name, NEW.description, NEW.provider_reference, NEW.created_at,
           NEW.execute_at)
          IS DISTINCT FROM
          (OLD.id, OLD.user_id, OLD.idempotency_key, OLD.request_fingerprint, OLD.amount, OLD.currency,
           OLD.destination_iban, OLD.destination_name, OLD.description, OLD.provider_reference, OLD.created_at,
           OLD.execute_at))
    EXECUTE FUNCTION transfers_refuse_payment_change('id', 'user_id', 'idempotency_key', 'request_fingerprint', 'amount',
        'currency', 'destination_iban', 'destination_name', 'description', 'provider_reference', 'created_at', 'execute_at');

-- 4. A cancel is a final status a long poll waits for (Prefer: wait): announce it like sent and failed.
DROP TRIGGER transfers_notify ON transfers;

CREATE TRIGGER transfers_notify
    AFTER INSERT OR UPDATE OF version ON transfers
    FOR EACH ROW
    WHEN (NEW.status IN ('sent', 'failed', 'cancelled', 'reconciling'))
    EXECUTE FUNCTION transfers_notify();
