-- What a transfer pays, to whom and under which keys is fixed when its row is created, for every writer and in
-- every status. The guard of V5 refuses what the state machine forbids (status and version); nothing refused an
-- edit of the payment itself. A reconciling row is resent under its provider_reference, so an edited amount or IBAN
-- would go out under the same provider idempotency key; an edited provider_reference, user_id, idempotency_key or
-- request_fingerprint would detach the row from the payment it made or from the client's key.
--
-- Same pattern as transfers_guard (V5): an AFTER trigger whose WHEN the executor evaluates, and a function that only
-- raises. UPDATE OF lists the columns, so PostgreSQL does not even evaluate the WHEN for a statement that does not
-- SET one of them; none of TransferRepository's writes does, so an allowed transition pays nothing for this guard.
-- A SET of an unchanged value (a tool that writes every column) passes: the columns cannot change, not be named.
CREATE FUNCTION transfers_refuse_payment_change() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    changed text[] := '{}';
BEGIN
    IF NEW.id IS DISTINCT FROM OLD.id THEN changed := changed || 'id'::text; END IF;
    IF NEW.user_id IS DISTINCT FROM OLD.user_id THEN changed := changed || 'user_id'::text; END IF;
    IF NEW.idempotency_key IS DISTINCT FROM OLD.idempotency_key THEN changed := changed || 'idempotency_key'::text; END IF;
    IF NEW.request_fingerprint IS DISTINCT FROM OLD.request_fingerprint THEN changed := changed || 'request_fingerprint'::text; END IF;
    IF NEW.amount IS DISTINCT FROM OLD.amount THEN changed := changed || 'amount'::text; END IF;
    IF NEW.currency IS DISTINCT FROM OLD.currency THEN changed := changed || 'currency'::text; END IF;
    IF NEW.destination_iban IS DISTINCT FROM OLD.destination_iban THEN changed := changed || 'destination_iban'::text; END IF;
    IF NEW.destination_name IS DISTINCT FROM OLD.destination_name THEN changed := changed || 'destination_name'::text; END IF;
    IF NEW.description IS DISTINCT FROM OLD.description THEN changed := changed || 'description'::text; END IF;
    IF NEW.provider_reference IS DISTINCT FROM OLD.provider_reference THEN changed := changed || 'provider_reference'::text; END IF;
    IF NEW.created_at IS DISTINCT FROM OLD.created_at THEN changed := changed || 'created_at'::text; END IF;
    RAISE EXCEPTION 'transfer % cannot change % (what it pays, to whom and under which keys is fixed at creation)',
        OLD.id, array_to_string(changed, ', ') USING ERRCODE = 'check_violation';
END;
$$;

CREATE TRIGGER transfers_payment_fixed
    AFTER UPDATE OF id, user_id, idempotency_key, request_fingerprint, amount, currency, destination_iban,
                    destination_name, description, provider_reference, created_at
    ON transfers
    FOR EACH ROW
    WHEN ((NEW.id, NEW.user_id, NEW.idempotency_key, NEW.request_fingerprint, NEW.amount, NEW.currency,
           NEW.destination_iban, NEW.destination_name, NEW.description, NEW.provider_reference, NEW.created_at)
          IS DISTINCT FROM
          (OLD.id, OLD.user_id, OLD.idempotency_key, OLD.request_fingerprint, OLD.amount, OLD.currency,
           OLD.destination_iban, OLD.destination_name, OLD.description, OLD.provider_reference, OLD.created_at))
    EXECUTE FUNCTION transfers_refuse_payment_change();

-- The history is appended to, never rewritten: every transition's statement inserts its event (V5), and nothing
-- updates, deletes or truncates one. A statement trigger: an INSERT never fires it, and a refused statement is
-- refused whether or not it matched a row.
CREATE FUNCTION transfer_events_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'transfer_events is the history of every transfer: events are appended, never changed (% refused)', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE TRIGGER transfer_events_append_only
    BEFORE UPDATE OR DELETE OR TRUNCATE ON transfer_events
    FOR EACH STATEMENT EXECUTE FUNCTION transfer_events_refuse_change();

