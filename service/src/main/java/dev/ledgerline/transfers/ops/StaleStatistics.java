package dev.ledgerline.transfers.ops;

import dev.ledgerline.transfers.transfer.TableStatistics;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Since when each table's statistics have been due for an {@code ANALYZE} that has not come, from successive looks at
 * PostgreSQL's counters. A table is due from the first look that finds it changed past autovacuum's threshold; an
 * analyze seen between two looks (its count of analyzes moved) starts it afresh, due again only if the rows changed
 * since then are past the threshold too. With autovacuum on, a due table is analyzed within a naptime or so, so
 * nothing stays due for long; with autovacuum off, or its workers held by long vacuums elsewhere, the time grows until
 * someone analyzes. A table no longer listed (a partition dropped) is forgotten. Not thread-safe: one caller looks.
 */
final class StaleStatistics {

    /** The table due longest, and for how many nanoseconds; {@code name} is null and {@code nanos} 0 when none is. */
    record Longest(String name, long nanos) {
        long seconds() {
            return nanos / 1_000_000_000L;
        }
    }

    private record Seen(long analyzes, long dueSince, boolean due) {
    }

    private Map<Long, Seen> tables = new HashMap<>();

    /** Takes one look, made at {@code nowNanos} ({@link System#nanoTime()}), and answers the table due longest. */
    Longest look(List<TableStatistics> now, long nowNanos) {
        Map<Long, Seen> next = new HashMap<>();
        String longestName = null;
        long longest = 0;
        for (TableStatistics t : now) {
            Seen before = tables.get(t.relid());
            boolean stillDue = before != null && before.due() && before.analyzes() == t.analyzes();
            long since = !t.due() ? 0 : stillDue ? before.dueSince() : nowNanos;
            next.put(t.relid(), new Seen(t.analyzes(), since, t.due()));
            if (t.due() && (longestName == null || nowNanos - since > longest)) {
                longestName = t.name();
                longest = nowNanos - since;
            }
        }
        tables = next;
        return new Longest(longestName, longest);
    }
}
