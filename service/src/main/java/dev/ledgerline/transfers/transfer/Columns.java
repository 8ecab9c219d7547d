package dev.ledgerline.transfers.transfer;

import io.vertx.mutiny.sqlclient.Row;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The names of columns a reader expects side by side, in order, and where a row has them: {@code Row.getX(name)}
 * looks its name up among the result's columns on every call, comparing the hash of each name on the way, and the
 * names' hashes are computed afresh for every result. For a transfer's fifteen columns that was about 2 % of a new
 * transfer's CPU (bench/CPU-AB.md); one look-up and one comparison per column, then reads by position, do the same.
 */
final class Columns {

    /** Rows read by name because their columns were not where a reader expected them (tests read it). */
    static final AtomicLong BY_NAME = new AtomicLong();

    private final String[] names;

    /** {@code list}: the names as a statement's select list writes them, separated by commas. */
    Columns(String list) {
        String[] split = list.split(",");
        for (int i = 0; i < split.length; i++) {
            split[i] = split[i].strip();
        }
        this.names = split;
    }

    /**
     * The position of the first name in {@code row} when all the names follow it there in this order; {@code -1}
     * when they do not (the reader then reads by name).
     */
    int base(Row row) {
        int base = row.getColumnIndex(names[0]);
        if (base < 0 || base + names.length > row.size()) {
            BY_NAME.incrementAndGet();
            return -1;
        }
        for (int i = 1; i < names.length; i++) {
            if (!names[i].equals(row.getColumnName(base + i))) {
                BY_NAME.incrementAndGet();
                return -1;
            }
        }
        return base;
    }
}
