package dev.ledgerline.transfers.support;

/**
 * Counts the statements the service sent to the tests' PostgreSQL, from {@code pg_stat_statements}
 * (preloaded by the local stack), so tests can assert what did and did not reach the database.
 */
public final class Statements {

    private Statements() {
    }

    /** Calls so far of every statement whose text contains {@code fragment}. */
    public static long calls(String fragment) {
        Db.update("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
        return Db.count("SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE query LIKE ?", "%" + fragment + "%");
    }

    /** The insert of a new transfer (also run, and then doing nothing, by a replay answered from PostgreSQL). */
    public static long inserts() {
        return calls("INSERT INTO transfers");
    }

    /** Every statement of the POST path: the insert, the lookup of the original by key, the read by id. */
    public static long postPath() {
        return inserts() + calls("WHERE user_id = $1 AND idempotency_key = $2") + calls("FROM transfers WHERE id = $1");
    }
}
