package dev.ledgerline.transfers.transfer;

/**
 * One table's planner statistics as PostgreSQL reports them: its id and name, how many times it has been analyzed
 * (by hand or by autovacuum), and whether it has changed by more rows since the last analyze than autovacuum lets pass
 * before analyzing it again.
 */
public record TableStatistics(long relid, String name, long analyzes, boolean due) {
}
