-- A transfer the database lost and re-created from its idempotency record (TransferSql.INSERT_RECOVERED_HOLDING,
-- INSERT_RESTORED_HOLDING) may already have been paid by the provider: its hold, or its posting, is owed whatever the
-- account holds now. Until V13 such a row held nothing, and a lookup that found it executed made it sent without
-- posting: money left without a debit. Now a re-creation holds (or posts) its amount even past the available balance,
-- and what it took beyond the funds is the account's debt.
--
-- debt is what the account owes: how far re-creations took it below zero. The funds check of every ordinary hold
-- becomes posted - held + debt >= 0, so while an account owes, available (posted - held) is negative, debt makes the
-- check exactly zero, and no new transfer passes it. Only a statement that SETs debt higher raises it (the two
-- re-creations); every other change of the account lowers it to what is still owed, in the trigger below: a credit,
-- or a release of a hold, pays it off first; a posting moves posted and held alike and leaves it as it is.

ALTER TABLE accounts ADD COLUMN debt bigint NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD CONSTRAINT accounts_debt_not_negative CHECK (debt >= 0);

ALTER TABLE accounts DROP CONSTRAINT accounts_available_not_negative;
ALTER TABLE accounts ADD CONSTRAINT accounts_available_not_negative CHECK (posted - held + debt >= 0);

CREATE FUNCTION accounts_settle_debt() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.debt > OLD.debt THEN
        -- a re-creation: the debt it sets may cover the shortfall, never more
        IF NEW.debt > greatest(0, NEW.held - NEW.posted) THEN
            RAISE EXCEPTION 'account %/% cannot owe % when posted % and held % leave a shortfall of %',
                NEW.principal, NEW.currency, NEW.debt, NEW.posted, NEW.held, greatest(0, NEW.held - NEW.posted)
                USING ERRCODE = 'check_violation';
        END IF;
    ELSE
        NEW.debt := least(OLD.debt, greatest(0, NEW.held - NEW.posted));
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER accounts_debt
    BEFORE UPDATE ON accounts
    FOR EACH ROW
    EXECUTE FUNCTION accounts_settle_debt();

CREATE FUNCTION accounts_refuse_opening_debt() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.debt > greatest(0, NEW.held - NEW.posted) THEN
        RAISE EXCEPTION 'account %/% cannot open owing % when posted % and held % leave a shortfall of %',
            NEW.principal, NEW.currency, NEW.debt, NEW.posted, NEW.held, greatest(0, NEW.held - NEW.posted)
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER accounts_opening_debt
    BEFORE INSERT ON accounts
    FOR EACH ROW
    EXECUTE FUNCTION accounts_refuse_opening_debt();
