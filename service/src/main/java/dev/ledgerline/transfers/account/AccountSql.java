package dev.ledgerline.transfers.account;

/**
 * The SQL text of {@link AccountRepository}, one constant per statement. The writes that hold, post and release a
 * transfer's funds are not here: they are part of the transfer's own statements ({@code TransferSql.INSERT_HOLDING},
 * {@code RESOLVE_HOLDS}), so a transition and its money move in one statement.
 */
final class AccountSql {

    private AccountSql() {
    }

    static final String BALANCES = "SELECT currency, posted, held FROM accounts WHERE principal = $1 ORDER BY currency";

    /** One principal's entries, newest first, below the cursor's id ({@code ledger_entries_by_principal}). */
    static final String ENTRIES = """
            SELECT id, kind, currency, amount, account_leg, held_change, transfer_id, credit_id, at
              FROM ledger_entries
             WHERE principal = $1 AND id < $2
             ORDER BY id DESC
             LIMIT $3""";

    /**
     * A credit under the booking service's key, in one statement: the credit row, the account's posted amount raised
     * (the account opens here if it is new, with {@code $9}, the opening balance, and its {@code opening} entry), and a
     * {@code credit} entry whose settlement leg is the money that came in. A conflict on the key writes nothing and
     * returns no row: the caller reads the original and compares fingerprints. The key is decided by the same statement
     * that books the money, so a second request under a key waits for the first's commit and then sees its row.
     */
    static final String CREDIT = """
            WITH c AS (
                INSERT INTO credits (id, principal, currency, amount, reference, created_by, idempotency_key, request_fingerprint)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                ON CONFLICT DO NOTHING
                RETURNING id, principal, currency, amount, reference, request_fingerprint, created_at),
            acct AS (
                INSERT INTO accounts AS a (principal, currency, posted, held)
                SELECT principal, currency, $9::bigint + amount, 0 FROM c
                ON CONFLICT (principal, currency) DO UPDATE SET posted = a.posted + EXCLUDED.posted - $9::bigint
                RETURNING a.principal, a.currency, (a.xmax = 0) AS opened),
            entries AS (
                -- one INSERT, the opening first, so the account's entries read in the order the money moved
                INSERT INTO ledger_entries (principal, currency, kind, amount, account_leg, settlement_leg, held_change, credit_id)
                SELECT principal, currency, 'opening', $9::bigint, $9::bigint, -$9::bigint, 0, NULL::uuid FROM acct
                 WHERE opened AND $9::bigint > 0
                UNION ALL
                SELECT principal, currency, 'credit', amount, amount, -amount, 0, id FROM c)
            SELECT id, principal, currency, amount, reference, request_fingerprint, created_at FROM c""";

    static final String FIND_CREDIT = """
            SELECT id, principal, currency, amount, reference, request_fingerprint, created_at
              FROM credits WHERE created_by = $1 AND idempotency_key = $2""";
}
