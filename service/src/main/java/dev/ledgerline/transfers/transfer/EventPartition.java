package dev.ledgerline.transfers.transfer;

import java.time.Instant;

/**
 * A partition the retention job acted on, of {@code transfer_events} (migration V14) or of {@code transfers} (V17): its
 * name, the end of its range, and what became of it.
 */
public record EventPartition(String name, Instant endsAt, Outcome outcome) {

    /** What a detach run did with a partition past the retention. */
    public enum Outcome {
        /** Detached and dropped. */
        DROPPED,
        /** Detached and kept as a table of its own, which only the owner role reads, for an export before a drop. */
        KEPT,
        /**
         * Left attached: it holds an event of a transfer that has not ended (events), or a transfer that has not ended
         * or a key still inside its window (transfers).
         */
        HELD
    }

    /**
     * The partitions as the gauges report them: the end of the latest range covered ({@code null}: none but the
     * default), how many partitions are past the retention and still attached, and events (up to 1,000) in the
     * default partition, which no range covered when they were written.
     */
    public record Status(Instant coveredUntil, int overdue, long defaultRows) {
    }
}
