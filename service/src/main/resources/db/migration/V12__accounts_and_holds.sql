-- Money the customer has. Each principal has one account per currency, with what was posted to it and what is held
-- for its open transfers, both in minor units. A transfer holds its amount in the statement that accepts it; the
-- fence that makes it sent posts the hold, the one that makes it failed or cancelled releases it, each in the same
-- statement as the transition (TransferSql). Everything a balance may never do is refused here, for every writer.

CREATE TABLE accounts (
    principal text   NOT NULL,
    currency  text   NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    posted    bigint NOT NULL DEFAULT 0,
    held      bigint NOT NULL DEFAULT 0,
    opened_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (principal, currency),
    CONSTRAINT accounts_held_not_negative CHECK (held >= 0),
    -- the funds check of every hold: a hold that would take available below zero aborts its whole statement, the
    -- transfer's insert with it (TransferSql.INSERT maps this constraint to insufficient-funds)
    CONSTRAINT accounts_available_not_negative CHECK (posted - held >= 0)
);

-- The ledger, double-entry: every entry carries two legs that sum to zero, one on the customer's account (posted) and
-- one on the currency's settlement account, the money outside the service (what came in through credits and what
-- left through the provider). A hold or a release moves only the customer's held amount: both legs are zero.
-- The settlement account of a currency is the sum of its legs (the view below), not a row every posting updates:
-- one row per currency would serialise every fence of every instance on its lock.
CREATE TABLE ledger_entries (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    principal      text   NOT NULL,
    currency       text   NOT NULL,
    kind           text   NOT NULL CHECK (kind IN ('opening', 'credit', 'hold', 'post', 'release')),
    amount         bigint NOT NULL CHECK (amount > 0),
    account_leg    bigint NOT NULL,
    settlement_leg bigint NOT NULL,
    held_change    bigint NOT NULL,
    transfer_id    uuid,
    credit_id      uuid,
    at             timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (principal, currency) REFERENCES accounts (principal, currency),
    CONSTRAINT ledger_entries_two_legs CHECK (account_leg + settlement_leg = 0),
    CONSTRAINT ledger_entries_kind_moves CHECK (CASE kind
        WHEN 'opening' THEN account_leg = amount AND held_change = 0
        WHEN 'credit' THEN account_leg = amount AND held_change = 0
        WHEN 'hold' THEN account_leg = 0 AND held_change = amount
        WHEN 'post' THEN account_leg = -amount AND held_change = -amount
        WHEN 'release' THEN account_leg = 0 AND held_change = -amount END),
    -- an entry belongs to exactly what caused it: a transfer's hold, post or release, or a credit
    CONSTRAINT ledger_entries_belongs CHECK (
        (transfer_id IS NOT NULL) = (kind IN ('hold', 'post', 'release'))
        AND (credit_id IS NOT NULL) = (kind = 'credit'))
);

-- a transfer holds at most once, and its hold is resolved at most once: posted or released, never both, never twice
CREATE UNIQUE INDEX ledger_entries_one_hold ON ledger_entries (transfer_id) WHERE kind = 'hold';
CREATE UNIQUE INDEX ledger_entries_resolved_once ON ledger_entries (transfer_id) WHERE kind IN ('post', 'release');
-- an account opens once
CREATE UNIQUE INDEX ledger_entries_one_opening ON ledger_entries (principal, currency) WHERE kind = 'opening';
-- GET /v1/accounts/me/entries: one principal's entries, newest first, keyset on id
CREATE INDEX ledger_entries_by_principal ON ledger_entries (principal, id);

CREATE FUNCTION ledger_entries_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ledger_entries is the ledger: entries are appended, never changed (% refused)', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE TRIGGER ledger_entries_append_only
    BEFORE UPDATE OR DELETE OR TRUNCATE ON ledger_entries
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_entries_refuse_change();

-- The settlement account per currency: minus everything customers' accounts were posted, in total.
CREATE VIEW settlement_accounts AS
SELECT currency, sum(settlement_leg)::bigint AS posted FROM ledger_entries GROUP BY currency;

-- Incoming money, booked by an internal service through POST /v1/accounts/{principal}/credits. The key is the
-- booking service's (created_by), with the same meaning as a transfer's Idempotency-Key.
CREATE TABLE credits (
    id                  uuid        PRIMARY KEY,
    principal           text        NOT NULL,
    currency            text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    amount              bigint      NOT NULL CHECK (amount > 0),
    reference           text        NOT NULL,
    created_by          text        NOT NULL,
    idempotency_key     text        NOT NULL,
    request_fingerprint text        NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT credits_idempotency_key UNIQUE (created_by, idempotency_key)
);

-- Whether a transfer holds funds: set by the insert that placed its hold, never changed. A fence posts or releases
-- only a transfer that holds; one accepted while the built-in ledger was off (or before this migration) moves no
-- balance when it ends.
ALTER TABLE transfers ADD COLUMN holds_funds boolean NOT NULL DEFAULT false;

CREATE FUNCTION transfers_refuse_hold_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'transfer % cannot change holds_funds: whether it holds is fixed by its insert', OLD.id
        USING ERRCODE = 'check_violation';
END;
$$;

CREATE TRIGGER transfers_hold_fixed
    AFTER UPDATE OF holds_funds ON transfers
    FOR EACH ROW
    WHEN (NEW.holds_funds IS DISTINCT FROM OLD.holds_funds)
    EXECUTE FUNCTION transfers_refuse_hold_change();
