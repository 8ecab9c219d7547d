-- A transfer's id carries its creation time, so that a statement addressed by id reads one partition of transfers
-- instead of probing every partition's primary key (docs/capacity.md "Plans on the hot partitions").
--
-- The id is a UUID of version 7 (RFC 9562): its first 48 bits are a Unix time in milliseconds, the rest random. The
-- statement that inserts a transfer makes it (ledgerline_transfer_id) from the random UUID the service sends and the
-- transaction's now(), which is also the row's created_at: the id's millisecond is created_at truncated, whatever the
-- service's own clock says. A statement that names an id then adds
--     created_at >= ledgerline_transfer_id_time(id)
-- which PostgreSQL uses to prune, when the statement starts, every partition whose range ended before the id's time.
-- The condition never hides a row because:
--   * every insert keeps created_at at or after the id's time: a new transfer by construction; a transfer re-created
--     after a lost commit keeps the id it was created with and gets a later created_at (now()) or its own (a restored
--     one); transfers_id_in_time below refuses any insert that would not, whoever writes it;
--   * created_at never changes afterwards (transfers_payment_fixed, V6) and rows never move (transfers_fixed_in_time,
--     V17);
--   * an id made before this migration is random (version 4): its time is -infinity, and the condition is true for
--     every partition, as before.
-- The id's time is one millisecond early on purpose: the decimal seconds to_timestamp reads cannot round it past the
-- created_at it came from.

-- ledgerline_transfer_id is one SQL expression, inlined into the inserting statement. ledgerline_transfer_id_time is a
-- STABLE PL/pgSQL function on purpose: PostgreSQL then neither folds it into a constant when it plans a statement nor
-- inlines it, so a statement naming an id is pruned when it starts (initial pruning), its custom and generic plans cost
-- the same, and the plan cache keeps the generic plan after five executions. As an IMMUTABLE or inlined SQL function
-- the custom plan is pruned when planned, looks cheaper than the generic one, and every claim is then planned again:
-- about a fifth more database CPU per transfer (bench/dbcost.sh, docs/capacity.md). The function's own expression is
-- planned once per session and costs microseconds per call.
CREATE FUNCTION ledgerline_transfer_id(random uuid, at timestamptz) RETURNS uuid
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT encode(set_byte(overlay(uuid_send(random)
                                   PLACING substring(int8send(floor(extract(epoch FROM at) * 1000)::bigint) FROM 3)
                                   FROM 1 FOR 6),
                           6, (get_byte(uuid_send(random), 6) & 15) | 112), 'hex')::uuid
$$;

CREATE FUNCTION ledgerline_transfer_id_time(id uuid) RETURNS timestamptz
LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
    RETURN CASE WHEN get_byte(uuid_send(id), 6) >> 4 = 7
                THEN to_timestamp((('x' || encode(substring(uuid_send(id) FROM 1 FOR 6), 'hex'))::bit(48)::bigint - 1)
                                  / 1000.0)
                ELSE '-infinity'::timestamptz END;
END;
$$;

CREATE FUNCTION transfers_refuse_id_after_creation() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.created_at < ledgerline_transfer_id_time(NEW.id) THEN
        RAISE EXCEPTION 'transfer % was created at %, before the time its id carries (%): statements addressed by its id would not find it',
            NEW.id, NEW.created_at, ledgerline_transfer_id_time(NEW.id) USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER transfers_id_in_time
    BEFORE INSERT ON transfers
    FOR EACH ROW EXECUTE FUNCTION transfers_refuse_id_after_creation();
