-- Least privilege for Ledgerline Transfers: three roles, and exactly what each may do in the service's database.
--
--   ledgerline_owner     owns the tables, functions and flyway_schema_history: the migrations run as this role and
--                        nothing else does. Not a superuser.
--   ledgerline_service   the running service (QUARKUS_DATASOURCE_USERNAME). Reads and writes rows and nothing else:
--                        it owns nothing, so it cannot ALTER a table or DISABLE TRIGGER; it is not a superuser, so it
--                        cannot SET session_replication_role = replica (a superuser-only parameter) to write behind
--                        the triggers; no DELETE or TRUNCATE on transfers and their events (DELETE only on the
--                        webhook tables: an endpoint removed, old attempts pruned), no UPDATE of transfer_events, no CREATE
--                        (partitions of transfer_events are made and detached by the owner's functions of V14). Its
--                        Flyway run at start only reads flyway_schema_history: with nothing pending it passes, and
--                        a release whose migrations have not been applied refuses to start instead of migrating.
--   ledgerline_operator  a group for people: what docs/operating.md asks of an operator, resuming a parked
--                        transfer, through ledgerline_resume_parked() (migration V7), and nothing else; transfers are
--                        read through the API with a transfers.read.all token. Give each person a login of their own
--                        in the group, so the history names the database role that acted:
--                            CREATE ROLE olga LOGIN PASSWORD '...' IN ROLE ledgerline_operator;
--
-- Run it as a superuser (or the database owner with CREATEROLE, on a managed PostgreSQL) in the service's database,
-- with psql -v ON_ERROR_STOP=1 -d <database> -f ops/roles.sql. It is idempotent, and it is the whole truth: each
-- run takes back from these roles any table privilege it does not list. Passwords are not in it: set them with
-- psql's \password or the provider's console.
--
-- A deployment:
--   1. run this file (it creates the roles; the grants below wait for their tables);
--   2. apply the release's migrations as ledgerline_owner: the manifests' Job ledgerline-transfers-migrate (the
--      release's image with QUARKUS_INIT_AND_EXIT=true, credentials from the Secret ledgerline-migrations), or the
--      packaged jar run the same way (QUARKUS_DATASOURCE_USERNAME/PASSWORD of ledgerline_owner);
--   3. run this file again: it grants on the tables the migrations created, and fails naming any table it does not
--      know (a release that adds a table adds its grant here);
--   4. start the service as ledgerline_service.
-- An existing deployment whose tables belong to the role the service used so far hands them over first, as a
-- superuser: REASSIGN OWNED BY <that role> TO ledgerline_owner; then steps 1 to 4.

DO $$
BEGIN
    IF to_regrole('ledgerline_owner') IS NULL THEN
        CREATE ROLE ledgerline_owner LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
    END IF;
    IF to_regrole('ledgerline_service') IS NULL THEN
        CREATE ROLE ledgerline_service LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
    END IF;
    IF to_regrole('ledgerline_operator') IS NULL THEN
        CREATE ROLE ledgerline_operator NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
    END IF;
    -- roles made by hand before this file may carry more: refuse to go on rather than pretend
    IF EXISTS (SELECT FROM pg_roles
                WHERE rolname IN ('ledgerline_owner', 'ledgerline_service', 'ledgerline_operator')
                  AND (rolsuper OR rolcreaterole OR rolcreatedb OR rolreplication OR rolbypassrls)) THEN
        RAISE EXCEPTION 'a ledgerline role is a superuser or may create roles or databases, replicate or bypass row '
                        'security; take that away (ALTER ROLE ... NOSUPERUSER ...) and run this file again';
    END IF;
    -- a member of the owner could SET ROLE to it, and then alter the tables or disable their triggers
    IF pg_has_role('ledgerline_service', 'ledgerline_owner', 'MEMBER')
       OR pg_has_role('ledgerline_operator', 'ledgerline_owner', 'MEMBER') THEN
        RAISE EXCEPTION 'ledgerline_service or ledgerline_operator is a member of ledgerline_owner; revoke that membership';
    END IF;
END
$$;

-- Only the owner creates objects (PostgreSQL 15 and later already deny CREATE to PUBLIC, earlier versions do not).
GRANT USAGE, CREATE ON SCHEMA public TO ledgerline_owner;
GRANT USAGE ON SCHEMA public TO ledgerline_service, ledgerline_operator;
REVOKE CREATE ON SCHEMA public FROM PUBLIC;

-- What each role may do with each table, once the migrations have created it.
DO $$
BEGIN
    IF to_regclass('public.transfers') IS NOT NULL THEN
        REVOKE ALL ON transfers FROM PUBLIC, ledgerline_service, ledgerline_operator;
        -- insert a transfer, read it, move it through the state machine (the triggers refuse the rest)
        GRANT SELECT, INSERT, UPDATE ON transfers TO ledgerline_service;
    END IF;
    IF to_regclass('public.transfer_events') IS NOT NULL THEN
        REVOKE ALL ON transfer_events FROM PUBLIC, ledgerline_service, ledgerline_operator;
        -- the history is appended to and read, never changed
        GRANT SELECT, INSERT ON transfer_events TO ledgerline_service;
    END IF;
    IF to_regclass('public.transfer_keys') IS NOT NULL THEN
        REVOKE ALL ON transfer_keys FROM PUBLIC, ledgerline_service, ledgerline_operator;
        -- a key is written with its transfer and read by a replay; only the owner's function removes it, after its window
        GRANT SELECT, INSERT ON transfer_keys TO ledgerline_service;
    END IF;
    IF to_regclass('public.database_epochs') IS NOT NULL THEN
        REVOKE ALL ON database_epochs FROM PUBLIC, ledgerline_service, ledgerline_operator;
        -- every claim checks that the server answering is one the pipeline adopted; the sweeper adopts a new one
        GRANT SELECT, INSERT ON database_epochs TO ledgerline_service;
    END IF;
    IF to_regclass('public.webhook_endpoints') IS NOT NULL THEN
        REVOKE ALL ON webhook_endpoints FROM PUBLIC, ledgerline_service, ledgerline_operator;
        -- registered, leased, moved along the feed and removed through the API
        GRANT SELECT, INSERT, UPDATE, DELETE ON webhook_endpoints TO ledgerline_service;
    END IF;
    IF to_regclass('public.webhook_deliveries') IS NOT NULL THEN
        REVOKE ALL ON webhook_deliveries FROM PUBLIC, ledgerline_service, ledgerline_operator;
        -- every attempt is recorded; the oldest beyond keep-attempts per endpoint are pruned
        GRANT SELECT, INSERT, DELETE ON webhook_deliveries TO ledgerline_service;
    END IF;
    IF to_regclass('public.accounts') IS NOT NULL THEN
        REVOKE ALL ON accounts FROM PUBLIC, ledgerline_service, ledgerline_operator;
        -- opened on first use, held, posted and released by the transfer's statements, raised by credits; never deleted
        GRANT SELECT, INSERT, UPDATE ON accounts TO ledgerline_service;
    END IF;
    IF to_regclass('public.ledger_entries') IS NOT NULL THEN
        REVOKE ALL ON ledger_entries FROM PUBLIC, ledgerline_service, ledgerline_operator;
        -- the ledger is appended to and read, never changed
        GRANT SELECT, INSERT ON ledger_entries TO ledgerline_service;
        GRANT SELECT ON settlement_accounts TO ledgerline_service, ledgerline_operator;
        GRANT SELECT ON ledger_entries TO ledgerline_operator;
    END IF;
    IF to_regclass('public.credits') IS NOT NULL THEN
        REVOKE ALL ON credits FROM PUBLIC, ledgerline_service, ledgerline_operator;
        -- booked once under the booking service's key and read back for its replays
        GRANT SELECT, INSERT ON credits TO ledgerline_service;
    END IF;
    IF to_regclass('public.flyway_schema_history') IS NOT NULL THEN
        REVOKE ALL ON flyway_schema_history FROM PUBLIC, ledgerline_service, ledgerline_operator;
        -- readiness reports the schema version, and Flyway at start checks that nothing is pending
        GRANT SELECT ON flyway_schema_history TO ledgerline_service;
    END IF;
    IF to_regprocedure('public.ledgerline_event_partitions_status(timestamptz)') IS NOT NULL THEN
        -- the retention job (docs/capacity.md "Data lifecycle"): the service creates and detaches partitions of
        -- transfer_events through the owner's functions alone, which do only that (migration V14); it owns nothing
        REVOKE ALL ON FUNCTION ledgerline_create_event_partitions(timestamptz, timestamptz, interval, integer, interval),
                               ledgerline_detach_event_partitions(timestamptz, integer, boolean, interval),
                               ledgerline_event_partitions_status(timestamptz),
                               ledgerline_event_partitions() FROM PUBLIC, ledgerline_operator;
        GRANT EXECUTE ON FUNCTION ledgerline_create_event_partitions(timestamptz, timestamptz, interval, integer, interval),
                                  ledgerline_detach_event_partitions(timestamptz, integer, boolean, interval),
                                  ledgerline_event_partitions_status(timestamptz) TO ledgerline_service;
    END IF;
    IF to_regprocedure('public.ledgerline_expire_transfer_keys(timestamptz, integer)') IS NOT NULL THEN
        -- the retention job removes keys past their window through the owner's function alone (migration V16)
        REVOKE ALL ON FUNCTION ledgerline_expire_transfer_keys(timestamptz, integer),
                               ledgerline_transfer_keys_overdue(timestamptz) FROM PUBLIC, ledgerline_operator;
        GRANT EXECUTE ON FUNCTION ledgerline_expire_transfer_keys(timestamptz, integer),
                                  ledgerline_transfer_keys_overdue(timestamptz) TO ledgerline_service;
    END IF;
    IF to_regprocedure('public.ledgerline_transfer_partitions_status(timestamptz)') IS NOT NULL THEN
        -- the retention job makes and detaches partitions of transfers through the owner's functions alone (V17)
        REVOKE ALL ON FUNCTION ledgerline_create_transfer_partitions(timestamptz, timestamptz, interval, integer, interval),
                               ledgerline_detach_transfer_partitions(timestamptz, integer, boolean, interval),
                               ledgerline_transfer_partitions_status(timestamptz),
                               ledgerline_partitions_of(regclass) FROM PUBLIC, ledgerline_operator;
        GRANT EXECUTE ON FUNCTION ledgerline_create_transfer_partitions(timestamptz, timestamptz, interval, integer, interval),
                                  ledgerline_detach_transfer_partitions(timestamptz, integer, boolean, interval),
                                  ledgerline_transfer_partitions_status(timestamptz) TO ledgerline_service;
    END IF;
    IF to_regclass('public.retention_floors') IS NOT NULL THEN
        -- the floors under the retention policy (migration V19) are the owner's alone: no other role reads or changes them
        REVOKE ALL ON retention_floors FROM PUBLIC, ledgerline_service, ledgerline_operator;
        REVOKE ALL ON FUNCTION ledgerline_retention_floor(text) FROM PUBLIC, ledgerline_service, ledgerline_operator;
    END IF;
    IF to_regprocedure('public.ledgerline_resume_parked(uuid, text, text)') IS NOT NULL THEN
        REVOKE ALL ON FUNCTION ledgerline_resume_parked(uuid, text, text) FROM PUBLIC, ledgerline_service;
        GRANT EXECUTE ON FUNCTION ledgerline_resume_parked(uuid, text, text) TO ledgerline_operator;
    END IF;
END
$$;

-- A table this file does not know would be unusable to the service, or usable beyond what anyone decided.
DO $$
DECLARE
    unknown text;
BEGIN
    SELECT string_agg(c.relname, ', ' ORDER BY c.relname) INTO unknown
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
       -- a partition of transfer_events is reached through its parent's grants; one detached and kept for an export
       -- (ledgerline.retention.keep-detached) is the owner's alone
       AND NOT (c.relispartition OR c.relname LIKE 'transfer\_events\_%'
                OR c.relname ~ '^transfers_([0-9]{8}t[0-9]{6}|initial|default)$')
       AND c.relname NOT IN ('transfers', 'transfer_events', 'transfer_keys', 'database_epochs', 'flyway_schema_history', 'webhook_endpoints',
                             'webhook_deliveries', 'accounts', 'ledger_entries', 'credits', 'retention_floors');
    IF unknown IS NOT NULL THEN
        RAISE EXCEPTION 'ops/roles.sql grants nothing on %: add what the service may do with it', unknown;
    END IF;
END
$$;
