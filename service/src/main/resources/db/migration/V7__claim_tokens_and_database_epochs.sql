-- A database can forget commits it acknowledged: a managed PostgreSQL fails over to an asynchronous replica and
-- loses its last few hundred milliseconds, a crash loses what synchronous_commit=off had not written, an operator
-- restores a backup. Three things make the pipeline safe through that (docs in README "Why it is safe").

-- 1. Every claim writes a token of its own, and only the holder of that token may fence the row. The version
--    alone is not enough: a lost claim puts the row back at its old version, the next claim reissues the same
--    version, and the first worker's fence would land on the second claim's row. The reconciler's take writes a
--    token as well, for the settle or park that follows its lookup.
ALTER TABLE transfers ADD COLUMN claim_token uuid;

-- 2. When the first send of the transfer left (set once, by the first claim): the provider keeps an idempotency
--    key for a limited window only (ledgerline.provider.key-window), after which a resend would be a new payment.
ALTER TABLE transfers ADD COLUMN first_sent_at timestamptz;

--    How many sends the transfer made (each claim is one): the reconciler parks a transfer whose sends keep ending
--    unknown after ledgerline.pipeline.max-sends of them, instead of going round lookup -> resend forever.
ALTER TABLE transfers ADD COLUMN sends integer NOT NULL DEFAULT 0;

-- 3. The database servers the pipeline has adopted, by their start time. A claim is only taken while the
--    server that answers is one of them. A server that is not (PostgreSQL restarted or crashed, a replica was
--    promoted, a backup was restored) may have lost claims whose sends are still in flight; the sweeper adopts it
--    in one statement that also sends every open transfer through a provider lookup first, no earlier than one
--    full send window from now (TransferRepository.ADOPT_EPOCH).
CREATE TABLE database_epochs (
    started_at timestamptz PRIMARY KEY,
    adopted_at timestamptz NOT NULL DEFAULT now()
);

-- the server this migration runs on: nothing has been sent through it yet
INSERT INTO database_epochs (started_at) VALUES (pg_postmaster_start_time()) ON CONFLICT DO NOTHING;

-- What README "Operating it" asks of an operator, and all that ops/roles.sql lets the operator role do: resume a
-- parked transfer (a reconciling row whose next attempt is 'infinity', set by TransferRepository.PARK) once the cause
-- is fixed. Like every transition it writes a new version and its event, in one statement, fenced on the row still
-- being parked; the reconciler then looks the transfer up and resends it under its reference if the provider does not
-- know it. The event's actor is the operator named; its reason also names the database role that called, which
-- the caller cannot choose. Answers the new version.
--
-- SECURITY DEFINER: it runs with its owner's privileges (the role that ran the migrations), so the operator role
-- needs EXECUTE and no privilege on the tables. The search_path is fixed, pg_temp last, so a caller's own objects
-- cannot stand in for the tables or for built-in functions.
-- Resuming also starts the transfer's count of sends afresh (ledgerline.pipeline.max-sends would park it again at
-- once) and clears its token like every transition that ends a claim or a take. Its key window does not start again:
-- a transfer parked because the provider's key window passed is looked up, settled if the provider knows it, and
-- parked again if it does not.
CREATE FUNCTION ledgerline_resume_parked(transfer uuid, operator text, why text) RETURNS bigint
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
               updated_at = now(), last_actor = btrim(operator),
               last_reason = left('resumed by an operator: ' || btrim(why) || ' (database role ' || session_user || ')', 512)
         WHERE id = transfer AND status = 'reconciling' AND next_attempt_at = 'infinity'
        RETURNING id, version, status, previous_status, last_actor, last_reason),
    e AS (INSERT INTO transfer_events (transfer_id, version, from_status, to_status, actor, reason)
          SELECT id, version, previous_status, status, last_actor, last_reason FROM w)
    SELECT version INTO resumed FROM w;
    IF resumed IS NULL THEN
        RAISE EXCEPTION 'transfer % is not parked (reconciling and waiting for an operator); nothing changed', transfer
            USING ERRCODE = 'no_data_found';
    END IF;
    RETURN resumed;
END;
$$;

REVOKE ALL ON FUNCTION ledgerline_resume_parked(uuid, text, text) FROM PUBLIC;
