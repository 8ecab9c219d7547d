-- Transfers and their append-only history. Every guarantee of the service rests on the constraints
-- here and on the conditional UPDATEs in TransferRepository; Redis only makes them cheaper to reach.

CREATE TABLE transfers (
    id                  uuid        PRIMARY KEY,
    user_id             text        NOT NULL,
    idempotency_key     text        NOT NULL,
    request_fingerprint text        NOT NULL,
    amount              bigint      NOT NULL CHECK (amount > 0),
    currency            text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    destination_iban    text        NOT NULL,
    destination_name    text        NOT NULL,
    description         text,
    provider_reference  text        NOT NULL,
    status              text        NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'processing', 'sent', 'failed', 'reconciling')),
    version             bigint      NOT NULL DEFAULT 0,
    claimed_by          text,
    lease_expires_at    timestamptz,
    attempts            integer     NOT NULL DEFAULT 0,
    next_attempt_at     timestamptz NOT NULL DEFAULT now(),
    failure_reason      text,
    -- who made the latest transition and why; the trigger below copies them into transfer_events
    last_actor          text        NOT NULL,
    last_reason         text,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    -- the invariant behind every duplicate check: one transfer per (principal, key)
    CONSTRAINT transfers_user_idempotency_key UNIQUE (user_id, idempotency_key),
    -- the provider's idempotency key: one payment per transfer, whoever sends it
    CONSTRAINT transfers_provider_reference UNIQUE (provider_reference)
);

-- the sweeper's two scans: due pending/reconciling rows, and processing rows by lease
CREATE INDEX transfers_due ON transfers (next_attempt_at) WHERE status IN ('pending', 'reconciling');
CREATE INDEX transfers_leases ON transfers (lease_expires_at) WHERE status = 'processing';

CREATE TABLE transfer_events (
    transfer_id uuid        NOT NULL REFERENCES transfers (id),
    version     bigint      NOT NULL,
    from_status text,
    to_status   text        NOT NULL,
    actor       text        NOT NULL,
    reason      text,
    at          timestamptz NOT NULL DEFAULT now(),
    -- one event per version: two writers can never both record the same transition
    PRIMARY KEY (transfer_id, version)
);

-- Every transition appends its event in the same statement as the UPDATE, and the database itself
-- refuses what the state machine forbids: no change after a terminal status, and a status change
-- must bump the version by exactly one.
CREATE FUNCTION transfers_transition() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO transfer_events (transfer_id, version, from_status, to_status, actor, reason)
        VALUES (NEW.id, NEW.version, NULL, NEW.status, NEW.last_actor, NEW.last_reason);
        RETURN NULL;
    END IF;
    IF OLD.status IN ('sent', 'failed') AND (NEW.status <> OLD.status OR NEW.version <> OLD.version) THEN
        RAISE EXCEPTION 'transfer % is % and cannot change', OLD.id, OLD.status USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.version <> OLD.version THEN
        IF NEW.version <> OLD.version + 1 THEN
            RAISE EXCEPTION 'transfer % version must move from % to %', OLD.id, OLD.version, OLD.version + 1
                USING ERRCODE = 'check_violation';
        END IF;
        INSERT INTO transfer_events (transfer_id, version, from_status, to_status, actor, reason)
        VALUES (NEW.id, NEW.version, OLD.status, NEW.status, NEW.last_actor, NEW.last_reason);
    ELSIF NEW.status <> OLD.status THEN
        RAISE EXCEPTION 'transfer % changed status without a new version', OLD.id USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER transfers_transition
    AFTER INSERT OR UPDATE ON transfers
    FOR EACH ROW EXECUTE FUNCTION transfers_transition();
