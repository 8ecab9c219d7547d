package dev.ledgerline.transfers.transfer;

/**
 * The SQL text of {@link TransferRepository}, one constant per statement. Every state change is one conditional
 * UPDATE that appends its event row in the same statement ({@link #recorded}), so history and state cannot disagree;
 * the {@code transfers_guard} trigger refuses changes after a terminal status and any version step other than one
 * (migration V5), {@code transfers_payment_fixed} any change of what a transfer pays, to whom and under which keys,
 * and {@code transfer_events} is append-only (V6). No statement here SETs a column of the payment: the database
 * would refuse it. Every transition SETs {@code feed_xid = greatest(feed_xid, pg_current_xact_id())} and its event
 * copies the value: the order of the event feed (V10, which refuses a transition without it).
 */
final class TransferSql {

    private TransferSql() {
    }

    static final String COLUMNS = """
            id, user_id, request_fingerprint, amount, currency, destination_iban, destination_name, description,
            provider_reference, status, version, failure_reason, created_at, updated_at, execute_at""";

    /** What a write returns besides its result, for the event row {@link #recorded} appends. */
    static final String EVENT_COLUMNS = "previous_status, last_actor, last_reason, feed_xid";

    /**
     * One write of {@code transfers} and its {@code transfer_events} row, in one statement: {@code write} ends
     * with a RETURNING of {@code id}, {@code version}, {@code status} and {@link #EVENT_COLUMNS}, and the event
     * is made of exactly those values of the row just written ({@code previous_status} holds the status the
     * write replaced). No row written, no event. The statement answers {@code result}, read from the written row.
     */
    static String recorded(String write, String result) {
        return recorded(write, "", result);
    }

    /**
     * {@link #recorded(String, String)} with further CTEs ({@code more}, each starting with a comma) that read
     * {@code w}: the ledger's writes, which happen exactly when the transition does.
     */
    static String recorded(String write, String more, String result) {
        return "WITH " + recordedAfter(write, more, result);
    }

    /**
     * A new transfer under its key, in one statement: {@code k} inserts the key into {@code transfer_keys} (V16) and
     * returns {@code transfer_id}, {@code user_id}, {@code idempotency_key} and {@code provider_reference}; {@code write}
     * inserts the transfer {@code SELECT … FROM k}, so a key that exists already ({@code ON CONFLICT DO NOTHING})
     * inserts no transfer, no event and no hold, and a transfer never exists without its key. Otherwise as
     * {@link #recorded(String, String, String)}. {@code transferId}: the transfer's id, {@link #NEW_ID} for a new
     * transfer or {@code $1} for one re-created under the id it had; {@code keyCreatedAt}: the key's {@code created_at},
     * from which its window counts.
     */
    static String keyed(String transferId, String keyCreatedAt, String write, String more, String result) {
        return key(transferId, keyCreatedAt) + recordedAfter(write, more, result);
    }

    /** {@link #keyed}'s first CTE, {@code k}, and the comma after it. */
    private static String key(String transferId, String keyCreatedAt) {
        return "WITH k AS (\n"
                + "INSERT INTO transfer_keys (user_id, idempotency_key, provider_reference, transfer_id, created_at)\n"
                + "VALUES ($2, $3, $10, " + transferId + ", " + keyCreatedAt + ")\n"
                + "ON CONFLICT DO NOTHING\n"
                + "RETURNING transfer_id, user_id, idempotency_key, provider_reference),\n";
    }

    private static String recordedAfter(String write, String more, String result) {
        return "w AS (\n" + write + "),\n"
                + "e AS (INSERT INTO transfer_events (transfer_id, version, from_status, to_status, actor, reason, feed_xid)\n"
                + "      SELECT id, version, previous_status, status, last_actor, last_reason, feed_xid FROM w)\n"
                + more
                + "SELECT " + result + " FROM w";
    }

    /**
     * A new transfer's id (V18): a UUID of version 7 made by the inserting statement from the service's random UUID
     * ({@code $1}) and the transaction's {@code now()}, which is also the row's {@code created_at}, so that the id
     * carries the partition its row is in.
     */
    static final String NEW_ID = "ledgerline_transfer_id($1::uuid, now())";

    /**
     * The row of the id {@code $1}, on the partitions that can hold it: {@code created_at} is never before the time
     * the id carries (V18, {@code transfers_id_in_time}), so every partition that ended before it is pruned when the
     * statement starts. An id made before V18 carries no time, and every partition is read, as before. The claim,
     * the park, the cancel and the history's bound carry the same condition in their text.
     */
    static final String BY_ID = "id = $1 AND created_at >= ledgerline_transfer_id_time($1::uuid)";

    /** The name of the CHECK that refuses a hold larger than the account's available funds (V12). */
    static final String FUNDS_CONSTRAINT = "accounts_available_not_negative";

    /**
     * The ledger's part of a fence or a cancel, reading {@code w} (which returns {@code id}, {@code user_id},
     * {@code currency}, {@code amount}, {@code status} and {@code holds_funds}): a transfer that holds funds and just
     * became {@code sent} has its hold posted (held and posted both go down by its amount, the settlement leg up),
     * one that became {@code failed} or {@code cancelled} has it released (held goes down). Every other transition
     * ({@code reconciling}, a park) keeps the hold. The accounts are locked in key order before any is written, so two
     * statements resolving holds of the same accounts wait for each other instead of deadlocking (the transfers are
     * locked before, in id order, by every statement that resolves holds). Only rows the transition wrote count:
     * a stale fence matches no row and moves no balance.
     */
    static final String RESOLVE_HOLDS = """
            , r AS (SELECT id, user_id, currency, amount, status FROM w
                     WHERE holds_funds AND status IN ('sent', 'failed', 'cancelled')),
            acct AS MATERIALIZED (
                SELECT a.principal, a.currency FROM accounts a
                 WHERE (a.principal, a.currency) IN (SELECT user_id, currency FROM r)
                 ORDER BY a.principal, a.currency FOR UPDATE),
            moved AS (
                UPDATE accounts a SET posted = a.posted - s.posted, held = a.held - s.held
                  FROM (SELECT user_id, currency, coalesce(sum(amount) FILTER (WHERE status = 'sent'), 0) AS posted,
                               sum(amount) AS held
                          FROM r GROUP BY user_id, currency) s
                 WHERE a.principal = s.user_id AND a.currency = s.currency
                   AND (a.principal, a.currency) IN (SELECT principal, currency FROM acct)),
            resolved AS (
                INSERT INTO ledger_entries (principal, currency, kind, amount, account_leg, settlement_leg, held_change, transfer_id)
                SELECT user_id, currency, CASE WHEN status = 'sent' THEN 'post' ELSE 'release' END, amount,
                       CASE WHEN status = 'sent' THEN -amount ELSE 0 END, CASE WHEN status = 'sent' THEN amount ELSE 0 END,
                       -amount, id
                  FROM r)
            """;

    /**
     * {@link #INSERT_HOLDING}'s hold, reading {@code w}: the account (opened with {@code %1$s}, the opening balance, if
     * it does not exist yet) holds the transfer's amount, under the funds CHECK.
     */
    private static final String HOLD_CHECKED = """
            , opened AS (
                INSERT INTO accounts (principal, currency, posted, held)
                SELECT user_id, currency, %1$s::bigint, amount FROM w
                 WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a.principal = w.user_id AND a.currency = w.currency)
                RETURNING principal, currency),
            held AS (
                UPDATE accounts a SET held = a.held + w.amount FROM w
                 WHERE a.principal = w.user_id AND a.currency = w.currency),
            entries AS (
                -- one INSERT, the opening first, so the account's entries read in the order the money moved
                INSERT INTO ledger_entries (principal, currency, kind, amount, account_leg, settlement_leg, held_change, transfer_id)
                SELECT principal, currency, 'opening', %1$s::bigint, %1$s::bigint, -%1$s::bigint, 0, NULL::uuid FROM opened
                 WHERE %1$s::bigint > 0
                UNION ALL
                SELECT user_id, currency, 'hold', amount, 0, 0, amount, id FROM w)
            """;

    /**
     * Insert unless the intent's key is taken; a conflict returns no row and the caller reads the original. The conflict
     * is on {@code transfer_keys} ({@link #keyed}), either of its unique constraints, (user_id, idempotency_key) or the
     * provider reference: an {@code ON CONFLICT} that named one would turn a conflict on the other into an error
     * (ConcurrentInsertTest). The transfer's own {@code ON CONFLICT DO NOTHING} covers its id.
     * A scheduled transfer ({@code $13}, its {@code execute_at}) is first due for the sweeper at that instant; one sent
     * at once after the pending grace ({@code $11} ms), the time its accepting instance has to process it first.
     */
    static final String INSERT = keyed(NEW_ID, "now()", """
            INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency,
                                   destination_iban, destination_name, description, provider_reference,
                                   next_attempt_at, last_actor, last_reason, execute_at)
            SELECT k.transfer_id, k.user_id, k.idempotency_key, $4::text, $5::bigint, $6::text, $7::text, $8::text, $9::text,
                   k.provider_reference,
                   coalesce($13::timestamptz, now() + $11::bigint * interval '1 millisecond'), $12::text, 'accepted', $13::timestamptz
              FROM k
            ON CONFLICT DO NOTHING
            RETURNING\s""" + COLUMNS + ", " + EVENT_COLUMNS, "", COLUMNS);

    /**
     * {@link #INSERT} with the hold, in the same statement: the row inserted, its event, the account's held amount
     * raised by the transfer's and a {@code hold} entry. The funds check is the account's CHECK
     * {@code posted - held >= 0} ({@link #FUNDS_CONSTRAINT}): two concurrent inserts of one principal serialise on the
     * account row, and the second one's UPDATE re-reads the row the first one wrote, so they never both pass on the same
     * funds; a violation aborts the whole statement, the transfer's row with it. A conflict inserts no transfer, and then
     * the hold has no row to read: a replay or a racing duplicate never holds again.
     *
     * <p>An account that does not exist yet is inserted with the hold ({@code $14}: its opening balance, with an
     * {@code opening} entry; 0 in prod, where an account has only what was credited, so the insert fails the same
     * CHECK). Two first uses of one account racing each other collide on its primary key, {@link #ACCOUNT_KEY}: the
     * loser's statement aborts whole and is run again, when the UPDATE finds the account.
     */
    static final String INSERT_HOLDING = keyed(NEW_ID, "now()", """
            INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency,
                                   destination_iban, destination_name, description, provider_reference,
                                   next_attempt_at, last_actor, last_reason, execute_at, holds_funds)
            SELECT k.transfer_id, k.user_id, k.idempotency_key, $4::text, $5::bigint, $6::text, $7::text, $8::text, $9::text,
                   k.provider_reference,
                   coalesce($13::timestamptz, now() + $11::bigint * interval '1 millisecond'), $12::text, 'accepted', $13::timestamptz, true
              FROM k
            ON CONFLICT DO NOTHING
            RETURNING\s""" + COLUMNS + ", " + EVENT_COLUMNS, HOLD_CHECKED.formatted("$14"), COLUMNS);

    /**
     * {@link #INSERT}, for a request accepted without knowing whether its key was used before: Redis did not answer
     * (or kept something not ours), and the key has no row. If the database server changed within the provider's key
     * window ({@code $16} ms), or the server answering is not adopted yet ({@link #ADOPT_EPOCH}), the key may have had
     * a row that the database lost with the commits of the server before, and its payment may have been made under
     * the reference, derived from the intent, that this row carries. The row is then written in {@code reconciling}, so
     * its first step is a provider lookup, as for a row re-created from its Redis entry ({@link #INSERT_RECOVERED}):
     * <ul>
     *   <li>no earlier than one send window ({@code $14} ms) after the adoption, and the settle time ({@code $15} ms)
     *   after that: a send the old server claimed has settled by then;</li>
     *   <li>{@code first_sent_at} is the newest key the server kept from before its adoption: the commits a server loses
     *   come after everything it kept, so a lost row's first send was no earlier; the provider's key window counts from
     *   there ({@link #CLAIM}).</li>
     * </ul>
     * Otherwise (no server before this one, or the change longer ago than the provider remembers) it is {@link #INSERT}'s
     * pending row. The reason in its event says which.
     */
    static final String INSERT_LOOKUP_FIRST = keyed(NEW_ID, "now()", lookupFirst(""), "", COLUMNS);

    /** {@link #INSERT_LOOKUP_FIRST} with {@link #INSERT_HOLDING}'s hold ({@code $17}: the opening balance). */
    static final String INSERT_LOOKUP_FIRST_HOLDING = keyed(NEW_ID, "now()", lookupFirst(", true"), HOLD_CHECKED.formatted("$17"),
            COLUMNS);

    /** The write of {@link #INSERT_LOOKUP_FIRST}; {@code holds}: the value of {@code holds_funds} ({@code ""}: the default). */
    private static String lookupFirst(String holds) {
        return """
                INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency,
                                       destination_iban, destination_name, description, provider_reference,
                                       status, send_not_after, next_attempt_at, first_sent_at, last_actor, last_reason,
                                       execute_at%1$s)
                SELECT k.transfer_id, k.user_id, k.idempotency_key, $4::text, $5::bigint, $6::text, $7::text, $8::text, $9::text,
                       k.provider_reference,
                       CASE WHEN l.lookup THEN 'reconciling' ELSE 'pending' END,
                       CASE WHEN l.lookup THEN l.not_after END,
                       CASE WHEN l.lookup THEN l.not_after + $15::bigint * interval '1 millisecond'
                            ELSE coalesce($13::timestamptz, now() + $11::bigint * interval '1 millisecond') END,
                       CASE WHEN l.lookup THEN l.kept_until END,
                       $12::text,
                       CASE WHEN l.lookup THEN 'accepted without its idempotency record, on a database that may have lost '
                                               || 'it: look up before any send'
                            ELSE 'accepted' END,
                       $13::timestamptz%2$s
                  FROM k, LATERAL (
                       SELECT e.adopted_at IS NULL
                                OR (e.adopted_at > now() - $16::bigint * interval '1 millisecond'
                                    AND EXISTS (SELECT 1 FROM database_epochs p WHERE p.started_at < pg_postmaster_start_time()))
                                AS lookup,
                              greatest(now(), coalesce(e.adopted_at, now()) + $14::bigint * interval '1 millisecond') AS not_after,
                              coalesce((SELECT max(o.created_at) FROM transfer_keys o WHERE o.created_at < e.adopted_at), now())
                                AS kept_until
                         FROM (SELECT (SELECT adopted_at FROM database_epochs
                                        WHERE started_at = pg_postmaster_start_time()) AS adopted_at) e) l
                ON CONFLICT DO NOTHING
                RETURNING\s""".formatted(holds.isEmpty() ? "" : ", holds_funds", holds) + COLUMNS + ", " + EVENT_COLUMNS;
    }

    /**
     * {@link #INSERT} and its first claim in one statement ({@link #keyed}'s key, then the row), for a transfer to send now that its accepting instance
     * has room to send: the row is written already claimed, as if {@link #CLAIM} had run on the pending row the moment
     * it was inserted and nothing had happened in between. Its history is the same two events in the same order,
     * version 0 ({@code null} → {@code pending}, {@code accepted}) and version 1 ({@code pending} → {@code processing},
     * the worker and the claim's reason), committed together; the row is what that claim would have written: a fresh
     * {@code claim_token}, the lease, the send's deadline, {@code first_sent_at}, one attempt and one send. The claim's
     * guards all hold of a row inserted by this statement but one, which is checked here: no claim is taken while the
     * server answering is not one the pipeline adopted ({@link #ADOPT_EPOCH}); the row is then inserted pending, as
     * {@link #INSERT} writes it, with its one event, and the sweeper takes it later. A scheduled transfer ({@code $13}
     * not null) is never claimed here either. Parameters: {@link #INSERT}'s, then from {@code $14} (from {@code $15}
     * with the hold, whose {@code $14} is the opening balance) the worker, the lease in ms, the claim's reason and the
     * send window in ms.
     *
     * <p>Answers the row written ({@link #COLUMNS}) and {@link #INSERTED_CLAIM} ({@code claim_token} null when the
     * row was inserted pending).
     */
    static final String INSERT_CLAIMED = insertClaimed(false);

    /** {@link #INSERT_CLAIMED} with {@link #INSERT_HOLDING}'s hold ({@code $14}: the opening balance). */
    static final String INSERT_HOLDING_CLAIMED = insertClaimed(true);

    private static String insertClaimed(boolean holds) {
        int p = holds ? 15 : 14;
        String claimed = "c.claimed";
        return key(NEW_ID, "now()")
                + "c AS (SELECT $13::timestamptz IS NULL\n"
                + "             AND EXISTS (SELECT 1 FROM database_epochs WHERE started_at = pg_postmaster_start_time()) AS claimed),\n"
                + "w AS (\n"
                + "INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency,\n"
                + "                       destination_iban, destination_name, description, provider_reference,\n"
                + "                       next_attempt_at, execute_at" + (holds ? ", holds_funds" : "") + ",\n"
                + "                       status, version, previous_status, claimed_by, claim_token, lease_expires_at,\n"
                + "                       send_not_after, first_sent_at, attempts, sends, last_actor, last_reason)\n"
                + "SELECT k.transfer_id, k.user_id, k.idempotency_key, $4::text, $5::bigint, $6::text, $7::text, $8::text, $9::text,\n"
                + "       k.provider_reference,\n"
                + "       coalesce($13::timestamptz, now() + $11::bigint * interval '1 millisecond'), $13::timestamptz"
                + (holds ? ", true" : "") + ",\n"
                + "       CASE WHEN " + claimed + " THEN 'processing' ELSE 'pending' END,\n"
                + "       CASE WHEN " + claimed + " THEN 1 ELSE 0 END,\n"
                + "       CASE WHEN " + claimed + " THEN 'pending' END,\n"
                + "       CASE WHEN " + claimed + " THEN $" + p + "::text END,\n"
                + "       CASE WHEN " + claimed + " THEN gen_random_uuid() END,\n"
                + "       CASE WHEN " + claimed + " THEN now() + $" + (p + 1) + "::bigint * interval '1 millisecond' END,\n"
                + "       CASE WHEN " + claimed + " THEN now() + $" + (p + 3) + "::bigint * interval '1 millisecond' END,\n"
                + "       CASE WHEN " + claimed + " THEN now() END,\n"
                + "       CASE WHEN " + claimed + " THEN 1 ELSE 0 END,\n"
                + "       CASE WHEN " + claimed + " THEN 1 ELSE 0 END,\n"
                + "       CASE WHEN " + claimed + " THEN $" + p + "::text ELSE $12::text END,\n"
                + "       CASE WHEN " + claimed + " THEN $" + (p + 2) + "::text ELSE 'accepted' END\n"
                + "  FROM k, c\n"
                + "ON CONFLICT DO NOTHING\n"
                + "RETURNING " + COLUMNS + ", " + EVENT_COLUMNS + ",\n"
                + "          lease_expires_at, send_not_after, claim_token, sends),\n"
                // the accept's event, then the claim's: what the two statements wrote when the claim was one of its own
                + "e AS (INSERT INTO transfer_events (transfer_id, version, from_status, to_status, actor, reason, feed_xid)\n"
                + "      SELECT id, 0, NULL, 'pending', $12::text, 'accepted', feed_xid FROM w\n"
                + "      UNION ALL\n"
                + "      SELECT id, version, previous_status, status, last_actor, last_reason, feed_xid FROM w\n"
                + "       WHERE status = 'processing')\n"
                + (holds ? HOLD_CHECKED.formatted("$14") : "")
                + "SELECT " + COLUMNS + ", " + INSERTED_CLAIM + " FROM w";
    }

    /** What {@link #INSERT_CLAIMED} answers of the claim after {@link #COLUMNS}. */
    static final String INSERTED_CLAIM = "lease_expires_at, send_not_after, claim_token, sends, previous_status";

    /** The primary key two first uses of one account collide on (V12): the losing statement is run again. */
    static final String ACCOUNT_KEY = "accounts_pkey";

    /**
     * The hold of a re-created transfer, reading {@code w} (which returns {@code holds_funds}): like
     * {@link #INSERT_HOLDING}'s, but owed rather than checked. What it takes beyond the available balance becomes the
     * account's {@code debt} (V13), which keeps the funds check of every later hold exactly where it was: at zero, so
     * nothing new passes until the debt is paid. {@code %1$s}: the opening balance of an account that does not exist yet.
     */
    private static final String HOLD_OWED = """
            , h AS (SELECT id, user_id, currency, amount FROM w WHERE holds_funds),
            opened AS (
                INSERT INTO accounts (principal, currency, posted, held, debt)
                SELECT user_id, currency, %1$s::bigint, amount, greatest(0, amount - %1$s::bigint) FROM h
                 WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a.principal = h.user_id AND a.currency = h.currency)
                RETURNING principal, currency),
            held AS (
                UPDATE accounts a SET held = a.held + h.amount, debt = greatest(a.debt, a.held + h.amount - a.posted) FROM h
                 WHERE a.principal = h.user_id AND a.currency = h.currency),
            entries AS (
                INSERT INTO ledger_entries (principal, currency, kind, amount, account_leg, settlement_leg, held_change, transfer_id)
                SELECT principal, currency, 'opening', %1$s::bigint, %1$s::bigint, -%1$s::bigint, 0, NULL::uuid FROM opened
                 WHERE %1$s::bigint > 0
                UNION ALL
                SELECT user_id, currency, 'hold', amount, 0, 0, amount, id FROM h)
            """;

    /**
     * The hold and the posting of a restored {@code sent} transfer, reading {@code w}: both entries as the lost fence
     * left them, the account's posted balance down by the amount and its held unchanged. Owed like
     * {@link #HOLD_OWED}'s hold: what the posting takes beyond the available balance becomes {@code debt}.
     */
    private static final String POSTING_OWED = """
            , h AS (SELECT id, user_id, currency, amount FROM w WHERE holds_funds),
            opened AS (
                INSERT INTO accounts (principal, currency, posted, held, debt)
                SELECT user_id, currency, %1$s::bigint - amount, 0, greatest(0, amount - %1$s::bigint) FROM h
                 WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a.principal = h.user_id AND a.currency = h.currency)
                RETURNING principal, currency),
            paid AS (
                UPDATE accounts a SET posted = a.posted - h.amount, debt = greatest(a.debt, a.held - a.posted + h.amount) FROM h
                 WHERE a.principal = h.user_id AND a.currency = h.currency),
            entries AS (
                INSERT INTO ledger_entries (principal, currency, kind, amount, account_leg, settlement_leg, held_change, transfer_id)
                SELECT principal, currency, 'opening', %1$s::bigint, %1$s::bigint, -%1$s::bigint, 0, NULL::uuid FROM opened
                 WHERE %1$s::bigint > 0
                UNION ALL
                SELECT user_id, currency, 'hold', amount, 0, 0, amount, id FROM h
                UNION ALL
                SELECT user_id, currency, 'post', amount, -amount, amount, -amount, id FROM h)
            """;

    /**
     * The transfer a key names, through {@code transfer_keys} (V16): the key table alone says whether a key is taken,
     * for its whole window; the transfer is then read by its id, on the partitions that can hold it ({@link #BY_ID}).
     * No row once the key's window has passed.
     */
    static final String FIND_BY_KEY = """
            WITH k AS (SELECT transfer_id FROM transfer_keys WHERE user_id = $1 AND idempotency_key = $2)
            SELECT\s""" + COLUMNS + """

              FROM transfers
             WHERE id = (SELECT transfer_id FROM k) AND created_at >= ledgerline_transfer_id_time((SELECT transfer_id FROM k))
               AND user_id = $1""";

    static final String FIND_BY_ID = "SELECT " + COLUMNS + " FROM transfers WHERE " + BY_ID;

    /** Whether the row exists: a primary-key probe that reads and sends back no column. */
    static final String EXISTS_BY_ID = "SELECT 1 FROM transfers WHERE " + BY_ID;

    /**
     * Those of the ids {@code $1} that have a row: {@link #EXISTS_BY_ID} for each, as a semi-join, so each id's probe
     * stops at the first partition that holds it.
     */
    static final String EXISTING_AMONG = """
            SELECT u.id FROM unnest($1::uuid[]) AS u(id)
             WHERE EXISTS (SELECT 1 FROM transfers t WHERE t.id = u.id AND t.created_at >= ledgerline_transfer_id_time(u.id))""";

    /** The most ids one {@link #EXISTING_AMONG} carries. */
    static final int MAX_PROBE_BATCH = 64;

    /**
     * The rows of the ids {@code $1}, locked in id order before a batch statement writes them ({@code locked}, which
     * the write must read for it to run): two instances' batches that share rows then wait for each other instead of
     * deadlocking.
     */
    private static final String LOCKED_IN_ID_ORDER = """
            locked AS MATERIALIZED (
                SELECT id FROM transfers WHERE id = ANY($1::uuid[]) AND created_at >= (SELECT min(ledgerline_transfer_id_time(i))
                                                                                         FROM unnest($1::uuid[]) i)
                 ORDER BY id FOR UPDATE)
            """;

    /** What a claim answers, read from the written row (and {@link #CLAIM_BATCH}'s {@code id} before it). */
    static final String CLAIM_RESULT = "version, provider_reference, amount, currency, destination_iban, destination_name, "
            + "created_at, lease_expires_at, send_not_after, claim_token, sends, previous_status";

    /**
     * The claim: a worker takes the row only if it is still exactly what the worker's caller saw — the
     * same pending or reconciling status at the same version — and taking it bumps the version (the
     * fencing token). Matching on "pending or reconciling" alone is not enough: a worker dispatched for a
     * pending row could then claim it after another worker's send timed out and moved it to reconciling,
     * and send again without the lookup (found by the model check, model/transfer.pml).
     *
     * <p>The claim also fixes the deadline its send will carry ({@code send_not_after}, {@code $7} ms from
     * now) and refuses to take a row whose previous send could still execute: that send's deadline plus
     * {@code $8} ms (clock margin and the provider's lookup lag) must have passed. A send held in transit
     * past its timeout can thus never overlap a resend (docs/safety.md "Sends that outlive their caller").
     *
     * <p>Three more guards, for a database that may forget commits it acknowledged: the claim writes a fresh
     * {@code claim_token}, and only a fence carrying it lands (a lost claim reissues the version, never the token);
     * no claim is taken while the server answering is not one the pipeline adopted ({@link #ADOPT_EPOCH}); and no
     * send leaves once the first send of the reference is older than the provider's key window less its margin
     * ({@code $9} ms), after which the provider would take a resend for a new payment.
     *
     * <p>A scheduled transfer is not claimed before its {@code execute_at}, by PostgreSQL's clock, whoever asks: the
     * dispatch right after its accept, the sweeper, or a resend after a lookup. A cancelled row never matches (its
     * status is neither pending nor reconciling), so a cancel that won never leads to a send.
     */
    static final String CLAIM = recorded("""
            UPDATE transfers
               SET previous_status = status, status = 'processing', version = version + 1, feed_xid = greatest(feed_xid, pg_current_xact_id()), claimed_by = $2,
                   claim_token = gen_random_uuid(),
                   lease_expires_at = now() + $3::bigint * interval '1 millisecond',
                   send_not_after = now() + $7::bigint * interval '1 millisecond',
                   first_sent_at = coalesce(first_sent_at, now()),
                   attempts = attempts + 1, sends = sends + 1,
                   updated_at = now(), last_actor = $2, last_reason = $4
             WHERE id = $1 AND created_at >= ledgerline_transfer_id_time($1::uuid) AND status = $5 AND version = $6 AND status IN ('pending', 'reconciling')
               AND (send_not_after IS NULL OR send_not_after + $8::bigint * interval '1 millisecond' <= now())
               AND (first_sent_at IS NULL OR first_sent_at + $9::bigint * interval '1 millisecond' > now())
               AND (execute_at IS NULL OR execute_at <= now())
               AND EXISTS (SELECT 1 FROM database_epochs WHERE started_at = pg_postmaster_start_time())
            RETURNING id, version, status, provider_reference, amount, currency, destination_iban, destination_name,
                      created_at, lease_expires_at, send_not_after, claim_token, sends,\s""" + EVENT_COLUMNS,
            CLAIM_RESULT);

    /**
     * {@link #CLAIM} for a batch of transfers ({@link BatchQueue}), each row under exactly the conditions of its own
     * claim: {@code $1} the ids and, element by element, {@code $2} the worker, {@code $3} the lease in ms, {@code $4}
     * the reason, {@code $5}/{@code $6} the status and version its caller saw; {@code $7}–{@code $9} as in
     * {@link #CLAIM}. A row whose conditions do not hold is not written and answers nothing; the others are claimed
     * as if each had its own statement, committed together. The rows are locked in id order first, as
     * {@link #FENCE} locks them, so two instances' batches that share rows wait for each other instead of deadlocking.
     */
    static final String CLAIM_BATCH = recorded("WITH " + LOCKED_IN_ID_ORDER + """
            UPDATE transfers t
               SET previous_status = t.status, status = 'processing', version = t.version + 1, feed_xid = greatest(t.feed_xid, pg_current_xact_id()), claimed_by = c.worker,
                   claim_token = gen_random_uuid(),
                   lease_expires_at = now() + c.lease * interval '1 millisecond',
                   send_not_after = now() + $7::bigint * interval '1 millisecond',
                   first_sent_at = coalesce(t.first_sent_at, now()),
                   attempts = t.attempts + 1, sends = t.sends + 1,
                   updated_at = now(), last_actor = c.worker, last_reason = c.reason
              FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::bigint[])
                   AS c (id, worker, lease, reason, status, version)
             WHERE t.id = c.id AND t.status = c.status AND t.version = c.version AND t.status IN ('pending', 'reconciling')
               AND t.id IN (SELECT id FROM locked)
               AND t.created_at >= (SELECT min(ledgerline_transfer_id_time(i)) FROM unnest($1::uuid[]) i)
               AND (t.send_not_after IS NULL OR t.send_not_after + $8::bigint * interval '1 millisecond' <= now())
               AND (t.first_sent_at IS NULL OR t.first_sent_at + $9::bigint * interval '1 millisecond' > now())
               AND (t.execute_at IS NULL OR t.execute_at <= now())
               AND EXISTS (SELECT 1 FROM database_epochs WHERE started_at = pg_postmaster_start_time())
            RETURNING t.id, t.version, t.status, t.provider_reference, t.amount, t.currency, t.destination_iban,
                      t.destination_name, t.created_at, t.lease_expires_at, t.send_not_after, t.claim_token, t.sends,
                      t.previous_status, t.last_actor, t.last_reason, t.feed_xid""", "id, " + CLAIM_RESULT);

    /** The most claims one {@link #CLAIM_BATCH} carries. */
    static final int MAX_CLAIM_BATCH = 64;

    /**
     * The fence, for a batch of transfers ({@link BatchQueue}): each final write applies only if its writer still
     * holds the version it claimed ({@code $1}/{@code $2} element by element; the other arrays carry each fence's
     * status, failure reason, delay of the next attempt in ms, actor, reason, and 1 if the send was refused). The
     * next attempt (for {@code reconciling}) comes no earlier than the last send's deadline plus {@code $9} ms.
     * A fence lands only where the row still carries the {@code claim_token} its writer's claim (or take) wrote
     * ({@code $10}): the version alone would match again after a lost claim reissued it. The rows are locked in
     * id order first, so two instances' batches that share rows wait for each other instead of deadlocking.
     * Answers the id and new version of each row written.
     */
    static final String FENCE = recorded("WITH " + LOCKED_IN_ID_ORDER + """
            UPDATE transfers t
               SET previous_status = t.status, status = f.status, version = t.version + 1, feed_xid = greatest(t.feed_xid, pg_current_xact_id()), failure_reason = f.failure_reason,
                   claimed_by = NULL, claim_token = NULL, lease_expires_at = NULL,
                   next_attempt_at = greatest(now() + f.next_attempt_in * interval '1 millisecond',
                                              coalesce(t.send_not_after, now()) + $9::bigint * interval '1 millisecond'),
                   refused_sends = t.refused_sends + f.refused,
                   updated_at = now(), last_actor = f.actor, last_reason = f.reason
              FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::int[],
                          $10::uuid[])
                   AS f (id, version, status, failure_reason, next_attempt_in, actor, reason, refused, claim_token)
             WHERE t.id = f.id AND t.version = f.version AND t.claim_token = f.claim_token
               AND t.id IN (SELECT id FROM locked)
               AND t.created_at >= (SELECT min(ledgerline_transfer_id_time(f)) FROM unnest($1::uuid[]) f)
            RETURNING t.id, t.version, t.status, t.previous_status, t.last_actor, t.last_reason, t.feed_xid,
                      t.user_id, t.currency, t.amount, t.holds_funds""", RESOLVE_HOLDS, "id, version");

    /**
     * The most fences one statement carries. Batches only grow while the previous one is in flight, so this
     * bounds the statement's size and row locks, not the latency of a fence.
     */
    static final int MAX_FENCE_BATCH = 64;

    /**
     * Processing rows whose lease ran out: their outcome is unknown, so they go to reconciliation — looked up
     * no earlier than their send's deadline plus {@code $3} ms.
     */
    static final String EXPIRE_LEASES = recorded("""
            UPDATE transfers t
               SET previous_status = t.status, status = 'reconciling', version = t.version + 1, feed_xid = greatest(t.feed_xid, pg_current_xact_id()), claimed_by = NULL,
                   claim_token = NULL, lease_expires_at = NULL,
                   next_attempt_at = greatest(now(), coalesce(t.send_not_after, now()) + $3::bigint * interval '1 millisecond'),
                   updated_at = now(), last_actor = $1, last_reason = 'lease expired'
              FROM (SELECT id FROM transfers
                     WHERE status = 'processing' AND lease_expires_at < now()
                     ORDER BY lease_expires_at LIMIT $2 FOR UPDATE SKIP LOCKED) due
             WHERE t.id = due.id AND t.status = 'processing' AND t.lease_expires_at < now()
            RETURNING t.id, t.version, t.status, t.previous_status, t.last_actor, t.last_reason, t.feed_xid""", "id, version");

    /**
     * Pending rows no instance picked up: pushes their next attempt out so other sweepers skip them meanwhile.
     * The batch is a MATERIALIZED CTE: as a plain sub-select joined to the UPDATE, PostgreSQL may run it more
     * than once and return more rows than its LIMIT (seen: 9 rows for LIMIT 6), and the sweeper sizes each
     * batch to the in-flight slots it reserved.
     */
    static final String TAKE_PENDING = """
            WITH due AS MATERIALIZED (
                SELECT id FROM transfers
                 WHERE status = 'pending' AND next_attempt_at <= now()
                 ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
            UPDATE transfers t SET next_attempt_at = now() + $2::bigint * interval '1 millisecond'
              FROM due
             WHERE t.id = due.id AND t.status = 'pending'
            RETURNING t.id, t.version""";

    /**
     * Reconciling rows that are due: takes them with an exponential back-off, which stands if the lookup fails.
     * A row whose last send could still execute (its deadline plus {@code $4} ms not yet passed) is not due:
     * a lookup now could say "not found" for a payment that is about to happen. The take writes a fresh
     * {@code claim_token}: the settle or park that follows its lookup lands only while the row still carries it.
     */
    static final String TAKE_RECONCILING = """
            UPDATE transfers t
               SET next_attempt_at = now() + least($3::bigint, $2::bigint * power(2, least(t.attempts, 16))) * interval '1 millisecond',
                   attempts = t.attempts + 1, claim_token = gen_random_uuid()
              FROM (SELECT id FROM transfers
                     WHERE status = 'reconciling' AND next_attempt_at <= now()
                       AND (send_not_after IS NULL OR send_not_after + $4::bigint * interval '1 millisecond' <= now())
                     ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED) due
             WHERE t.id = due.id AND t.status = 'reconciling'
            RETURNING t.id, t.version, t.provider_reference, t.created_at, t.refused_sends, t.claim_token, t.first_sent_at,
                      t.sends, t.last_reason""";

    /**
     * After the provider recovered: reconciling rows still waiting out a back-off (the lookups that failed during
     * the outage doubled it) become due again — but never before their last send's deadline plus {@code $2} ms,
     * the same bound {@link #TAKE_RECONCILING} checks. Scheduling only: no version, no status, no event; a parked
     * row ({@code 'infinity'}) stays parked. A bounded batch, {@code SKIP LOCKED}, so instances doing it at once
     * neither wait for nor undo each other.
     */
    static final String HASTEN_RECONCILING = """
            WITH backed_off AS MATERIALIZED (
                SELECT id FROM transfers
                 WHERE status = 'reconciling' AND next_attempt_at > now() AND next_attempt_at < 'infinity'
                   AND next_attempt_at > coalesce(send_not_after, now()) + $2::bigint * interval '1 millisecond'
                 ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
            UPDATE transfers t
               SET next_attempt_at = greatest(now(), coalesce(t.send_not_after, now()) + $2::bigint * interval '1 millisecond')
              FROM backed_off
             WHERE t.id = backed_off.id AND t.status = 'reconciling'
               AND t.next_attempt_at > greatest(now(), coalesce(t.send_not_after, now()) + $2::bigint * interval '1 millisecond')
            RETURNING t.id""";

    /**
     * Parks a reconciling transfer whose sends the provider refused and never knew,
     * {@code ledgerline.pipeline.max-refused-sends} times over: a new version (so the history says why) and no further attempt until an operator resumes it.
     */
    static final String PARK = recorded("""
            UPDATE transfers
               SET previous_status = status, version = version + 1, feed_xid = greatest(feed_xid, pg_current_xact_id()), next_attempt_at = 'infinity', claim_token = NULL,
                   updated_at = now(), last_actor = $3, last_reason = $4
             WHERE id = $1 AND created_at >= ledgerline_transfer_id_time($1::uuid) AND version = $2 AND status = 'reconciling' AND claim_token = $5
            RETURNING id, version, status,\s""" + EVENT_COLUMNS, "version");

    /**
     * Adopts the database server that answers, if the pipeline has not yet: PostgreSQL restarted or crashed, a
     * replica was promoted, or a backup was restored, and any of them may have forgotten claims whose sends are
     * still in flight, fences, or whole transfers. In one statement: the server is recorded, and every open
     * transfer that could be claimed ({@code pending} or {@code reconciling}, not parked) moves to
     * {@code reconciling} with its send deadline pushed to at least one full send window from now ({@code $2} ms)
     * and its next attempt after that plus the settle time ({@code $3} ms). Until the statement commits, no claim
     * is taken ({@link #CLAIM} checks {@code database_epochs}); after it, no row is claimed before a send a lost
     * claim let out can no longer execute, and each is looked up at the provider before any resend. Processing
     * rows keep their lease, and lease expiry sends them the same way. Instances that run it at once serialise on
     * the epoch's primary key, and only the first one moves rows. A pending transfer scheduled for later than now
     * plus the settle time (which holds the clock-skew bound) stays pending: no claim can have taken it on any server
     * ({@link #CLAIM} waits for {@code execute_at}), so nothing of it is in flight, and it stays cancellable. Answers
     * the rows moved, or -1 when the server had been adopted already, the server, and when it was adopted ({@code now()}
     * if just now; null when another instance's adoption committed while this statement ran: it is read next round).
     */
    static final String ADOPT_EPOCH = """
            WITH epoch AS (
                INSERT INTO database_epochs (started_at)
                SELECT pg_postmaster_start_time()
                 WHERE NOT EXISTS (SELECT 1 FROM database_epochs WHERE started_at = pg_postmaster_start_time())
                ON CONFLICT DO NOTHING
                RETURNING started_at),
            w AS (
                UPDATE transfers t
                   SET previous_status = t.status, status = 'reconciling', version = t.version + 1, feed_xid = greatest(t.feed_xid, pg_current_xact_id()), claimed_by = NULL,
                       claim_token = NULL,
                       -- a lost first claim took first_sent_at with it: the key window counts from the creation at the latest
                       first_sent_at = coalesce(t.first_sent_at, t.created_at),
                       send_not_after = greatest(coalesce(t.send_not_after, now()), now() + $2::bigint * interval '1 millisecond'),
                       next_attempt_at = greatest(coalesce(t.send_not_after, now()), now() + $2::bigint * interval '1 millisecond')
                                         + $3::bigint * interval '1 millisecond',
                       updated_at = now(), last_actor = $1, last_reason = 'database server changed: look up before any send'
                 WHERE t.status IN ('pending', 'reconciling') AND t.next_attempt_at < 'infinity'
                   AND NOT (t.status = 'pending' AND t.execute_at IS NOT NULL
                            AND t.execute_at > now() + $3::bigint * interval '1 millisecond')
                   AND EXISTS (SELECT 1 FROM epoch)
                RETURNING t.id, t.version, t.status, t.previous_status, t.last_actor, t.last_reason, t.feed_xid),
            e AS (INSERT INTO transfer_events (transfer_id, version, from_status, to_status, actor, reason, feed_xid)
                  SELECT id, version, previous_status, status, last_actor, last_reason, feed_xid FROM w)
            SELECT CASE WHEN EXISTS (SELECT 1 FROM epoch) THEN (SELECT count(*) FROM w) ELSE -1 END AS moved,
                   pg_postmaster_start_time() AS server,
                   coalesce((SELECT now() FROM epoch),
                            (SELECT adopted_at FROM database_epochs WHERE started_at = pg_postmaster_start_time())) AS adopted_at""";

    /** The server that answers and when the pipeline adopted it (null while it has not): {@link AdoptedServer}. */
    static final String ADOPTED_AT = """
            SELECT pg_postmaster_start_time() AS server,
                   (SELECT adopted_at FROM database_epochs WHERE started_at = pg_postmaster_start_time()) AS adopted_at""";

    /**
     * Re-creates a transfer whose row the database lost, from the idempotency record that names it: the same id,
     * the same (derived) provider reference, in {@code reconciling}, so its first step is a provider lookup, no
     * earlier than one full send window ({@code $11} ms) plus the settle time ({@code $12} ms) from now, in case its
     * last send is still in flight. {@code $13}: when its first send may have left, for the provider's key window.
     * A conflict (the row, or another under the key, exists) inserts nothing. {@code $15}: its {@code execute_at}, which
     * the request carries: a resend after the lookup is still not claimed before it.
     *
     * <p>With the ledger on ({@code $16}) the row holds its amount again, in the same statement, as its lost insert
     * did ({@link #HOLD_OWED}): the provider may have paid it already, so the hold is taken even past the available
     * balance, and the fence that makes it {@code sent} posts it like any other.
     */
    static final String INSERT_RECOVERED = keyed("$1", "now()", """
            INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency,
                                   destination_iban, destination_name, description, provider_reference,
                                   status, send_not_after, next_attempt_at, first_sent_at, last_actor, last_reason, execute_at,
                                   holds_funds)
            SELECT k.transfer_id, k.user_id, k.idempotency_key, $4::text, $5::bigint, $6::text, $7::text, $8::text, $9::text,
                   k.provider_reference, 'reconciling',
                   now() + $11::bigint * interval '1 millisecond',
                   now() + ($11::bigint + $12::bigint) * interval '1 millisecond', $13::timestamptz, $14::text,
                   'row lost by the database, re-created from its idempotency record: look up before any send', $15::timestamptz,
                   $16::boolean
              FROM k
            ON CONFLICT DO NOTHING
            RETURNING\s""" + COLUMNS + ", " + EVENT_COLUMNS + ", holds_funds", HOLD_OWED.formatted("$17"), COLUMNS);

    /**
     * A final transfer the database lost, written back as the idempotency record kept it: the provider already did what
     * the record says, so the row is restored in that state, with that version, and nothing is sent or looked up. The
     * event says where the row came from. {@code null} when a row exists after all.
     *
     * <p>With the ledger on ({@code $18}) a restored {@code sent} transfer is posted again, in the same statement
     * ({@link #POSTING_OWED}): its hold and its posting were lost with it, and the money did leave. A restored
     * {@code failed} or {@code cancelled} one moved nothing and holds nothing.
     */
    static final String INSERT_RESTORED = keyed("$1", "$14::timestamptz", """
            INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency,
                                   destination_iban, destination_name, description, provider_reference,
                                   status, version, failure_reason, created_at, updated_at, last_actor, last_reason, execute_at,
                                   holds_funds)
            SELECT k.transfer_id, k.user_id, k.idempotency_key, $4::text, $5::bigint, $6::text, $7::text, $8::text, $9::text,
                   k.provider_reference, $11::text, $12::bigint, $13::text, $14::timestamptz, $15::timestamptz, $16::text,
                   'row lost by the database, restored in its final state from its idempotency record', $17::timestamptz,
                   $18::boolean AND $11::text = 'sent'
              FROM k
            ON CONFLICT DO NOTHING
            RETURNING\s""" + COLUMNS + ", " + EVENT_COLUMNS + ", holds_funds", POSTING_OWED.formatted("$19"), COLUMNS);

    /**
     * The owner's cancel: the row moves to {@code cancelled} only while it is still exactly the pending version the
     * caller read ({@code $2}), the same discipline as {@link #CLAIM}; whichever of the two commits first wins, and
     * the other matches no row. Not while the server answering is one the pipeline has not adopted: a pending row
     * there may be a claim the database forgot, whose send is in flight ({@link #ADOPT_EPOCH} sends it to a lookup).
     * {@code $3}/{@code $4}: the event's actor and reason.
     */
    static final String CANCEL = recorded("""
            UPDATE transfers
               SET previous_status = status, status = 'cancelled', version = version + 1, feed_xid = greatest(feed_xid, pg_current_xact_id()),
                   updated_at = now(), last_actor = $3, last_reason = $4
             WHERE id = $1 AND created_at >= ledgerline_transfer_id_time($1::uuid) AND version = $2 AND status = 'pending'
               AND EXISTS (SELECT 1 FROM database_epochs WHERE started_at = pg_postmaster_start_time())
            RETURNING\s""" + COLUMNS + ", " + EVENT_COLUMNS + ", holds_funds", RESOLVE_HOLDS, COLUMNS);

    /** Keyset page of the operations listing, oldest change first; {@code $1} status (or null), {@code $2} min age. */
    static final String LIST = """
            SELECT\s""" + COLUMNS + """

              FROM transfers
             WHERE ($1::text IS NULL OR status = $1::text)
               AND updated_at < now() - $2::bigint * interval '1 millisecond'
               AND (updated_at, id) > ($3::timestamptz, $4::uuid)
             ORDER BY updated_at, id
             LIMIT $5""";

    /**
     * Keyset page of one principal's own transfers, newest first; {@code $2} status (or null), {@code $3, $4} the
     * cursor ({@code created_at}, {@code id}) of the previous page's last row. {@code transfers_by_owner} (V9) answers
     * it in order from the cursor on, whatever the principal's number of transfers; a status filter reads the
     * principal's rows past it until the page is full.
     */
    static final String LIST_OWN = """
            SELECT\s""" + COLUMNS + """

              FROM transfers
             WHERE user_id = $1
               AND ($2::text IS NULL OR status = $2::text)
               AND (created_at, id) < ($3::timestamptz, $4::uuid)
             ORDER BY created_at DESC, id DESC
             LIMIT $5""";

    /**
     * The tables whose statistics the hot statements are planned from (every attached partition of {@code transfers}
     * and of {@code transfer_events}, and {@code transfer_keys}), each with the number of analyzes it has had and
     * whether it has changed by more rows since the last one than the server's autovacuum settings let pass before
     * analyzing it again ({@code autovacuum_analyze_threshold} plus {@code autovacuum_analyze_scale_factor} of its rows).
     */
    static final String STATISTICS = """
            SELECT s.relid::bigint AS relid, s.relname::text AS name, s.analyze_count + s.autoanalyze_count AS analyzes,
                   s.n_mod_since_analyze > current_setting('autovacuum_analyze_threshold')::float8
                       + current_setting('autovacuum_analyze_scale_factor')::float8 * greatest(c.reltuples, 0) AS due
              FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
             WHERE s.relid IN (SELECT relid FROM pg_partition_tree('transfers') WHERE isleaf
                               UNION ALL SELECT relid FROM pg_partition_tree('transfer_events') WHERE isleaf
                               UNION ALL SELECT 'transfer_keys'::regclass)""";

    /** The database server's clock, for {@code ClockWatch}: the deadlines the claim fixes are in its time. */
    static final String DATABASE_CLOCK = "SELECT clock_timestamp() AS now";

    /**
     * Pending rows across instances that are due (a scheduled transfer before its time is not backlog), counted up to
     * {@code $1} only, so the count costs the same however deep the backlog.
     */
    static final String COUNT_PENDING = """
            SELECT count(*) AS n FROM (SELECT 1 FROM transfers
                                        WHERE status = 'pending' AND (execute_at IS NULL OR execute_at <= now()) LIMIT $1) p""";

    /**
     * Open transfers by status: how many the pipeline still works on and the age of the oldest of them (from its
     * creation, or from its execute_at for a scheduled one), and how many are parked ({@link #PARK}), which wait for
     * an operator and are counted apart. A scheduled transfer whose time has not come waits by design and is counted
     * in neither. Only non-terminal rows, which the partial indexes cover.
     */
    static final String OPEN = """
            SELECT status, count(*) FILTER (WHERE NOT parked AND NOT scheduled) AS n, count(*) FILTER (WHERE parked) AS parked,
                   coalesce(extract(epoch FROM now() - min(due_since) FILTER (WHERE NOT parked AND NOT scheduled)), 0) AS oldest
              FROM (SELECT status, greatest(created_at, execute_at) AS due_since,
                           status = 'reconciling' AND next_attempt_at = 'infinity' AS parked,
                           status = 'pending' AND coalesce(execute_at > now(), false) AS scheduled
                      FROM transfers WHERE status IN ('pending', 'processing', 'reconciling')) open
             GROUP BY status""";

    /**
     * A transfer's history. Its events are written at or after its creation, so the partitions of
     * {@code transfer_events} that ended before it are pruned when the statement starts (the bound is read first, by
     * primary key); the hour is room for a clock that stepped back, not a bound anything relies on.
     */
    static final String EVENTS = """
            SELECT version, from_status, to_status, actor, reason, at
              FROM transfer_events
             WHERE transfer_id = $1
               AND at >= (SELECT created_at FROM transfers WHERE id = $1 AND created_at >= ledgerline_transfer_id_time($1::uuid)) - interval '1 hour'
             ORDER BY version""";

    // ---- the lifecycle of transfer_events (migration V14): the owner's functions, each under one advisory lock ----

    /** Partitions for the ranges of span {@code $3} ms meeting [$1, $2), at most $4; -1 when another session works. */
    static final String CREATE_EVENT_PARTITIONS = """
            SELECT ledgerline_create_event_partitions($1, $2, $3::bigint * interval '1 millisecond', $4,
                                                      $5::bigint * interval '1 millisecond') AS created""";

    /** Partitions whose range ended by $1 detached, at most $2, dropped or ($3) kept; one row with busy when locked. */
    static final String DETACH_EVENT_PARTITIONS = """
            SELECT busy, name, to_at, outcome
              FROM ledgerline_detach_event_partitions($1, $2, $3, $4::bigint * interval '1 millisecond')""";

    /**
     * Keys whose window ended by $1 and whose transfer ended by then too, at most $2, removed (V16's owner function);
     * -1 when another session holds the retention lock.
     */
    static final String EXPIRE_KEYS = "SELECT ledgerline_expire_transfer_keys($1, $2) AS expired";

    /** Keys removable for more than a day past $1 and still there, up to 1,000. */
    static final String KEYS_OVERDUE = "SELECT ledgerline_transfer_keys_overdue($1) AS overdue";

    // ---- the lifecycle of transfers (migration V17): the same shape, the owner's functions under the same lock ----

    /** Partitions of {@code transfers} for the ranges of span {@code $3} ms meeting [$1, $2), at most $4; -1 when locked. */
    static final String CREATE_TRANSFER_PARTITIONS = """
            SELECT ledgerline_create_transfer_partitions($1, $2, $3::bigint * interval '1 millisecond', $4,
                                                         $5::bigint * interval '1 millisecond') AS created""";

    /** Partitions of {@code transfers} whose range ended by $1 detached, at most $2, dropped or ($3) kept. */
    static final String DETACH_TRANSFER_PARTITIONS = """
            SELECT busy, name, to_at, outcome
              FROM ledgerline_detach_transfer_partitions($1, $2, $3, $4::bigint * interval '1 millisecond')""";

    /** How far ahead partitions of {@code transfers} reach, how many are past $1, rows in its default partition. */
    static final String TRANSFER_PARTITIONS_STATUS = """
            SELECT covered_until, overdue, default_rows FROM ledgerline_transfer_partitions_status($1)""";

    /** How far ahead partitions reach, how many are past $1 and still attached, events in the default partition. */
    static final String EVENT_PARTITIONS_STATUS = """
            SELECT covered_until, overdue, default_rows FROM ledgerline_event_partitions_status($1)""";
}
