package dev.ledgerline.transfers.ops;

import dev.ledgerline.transfers.transfer.TableStatistics;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

class StaleStatisticsTest {

    private static final long S = 1_000_000_000L;

    private final StaleStatistics stale = new StaleStatistics();

    private static TableStatistics table(long relid, long analyzes, boolean due) {
        return new TableStatistics(relid, "t" + relid, analyzes, due);
    }

    @Test
    void nothingDueIsZero() {
        StaleStatistics.Longest longest = stale.look(List.of(table(1, 3, false), table(2, 0, false)), 10 * S);
        assertNull(longest.name());
        assertEquals(0, longest.seconds());
    }

    @Test
    void aDueTableCountsFromTheFirstLookThatFoundItDue() {
        assertEquals(0, stale.look(List.of(table(1, 3, false)), 0).seconds());
        assertEquals(0, stale.look(List.of(table(1, 3, true)), 60 * S).seconds(), "due from this look on");
        assertEquals(60, stale.look(List.of(table(1, 3, true)), 120 * S).seconds());
        StaleStatistics.Longest later = stale.look(List.of(table(1, 3, true)), 1_000 * S);
        assertEquals(940, later.seconds());
        assertEquals("t1", later.name());
    }

    @Test
    void anAnalyzeBetweenTwoLooksStartsTheTableAfresh() {
        stale.look(List.of(table(1, 3, true)), 0);
        assertEquals(600, stale.look(List.of(table(1, 3, true)), 600 * S).seconds());
        // analyzed since, and already past the threshold again (a busy partition): due only from this look
        assertEquals(0, stale.look(List.of(table(1, 4, true)), 660 * S).seconds());
        assertEquals(60, stale.look(List.of(table(1, 4, true)), 720 * S).seconds());
        // analyzed and below the threshold
        assertEquals(0, stale.look(List.of(table(1, 5, false)), 780 * S).seconds());
    }

    @Test
    void theLongestDueTableIsNamedAndADroppedOneForgotten() {
        stale.look(List.of(table(1, 0, true), table(2, 0, false)), 0);
        stale.look(List.of(table(1, 0, true), table(2, 0, true)), 100 * S);
        StaleStatistics.Longest longest = stale.look(List.of(table(1, 0, true), table(2, 0, true)), 300 * S);
        assertEquals("t1", longest.name());
        assertEquals(300, longest.seconds());
        // t1 detached and dropped: t2 is the longest now
        StaleStatistics.Longest after = stale.look(List.of(table(2, 0, true)), 400 * S);
        assertEquals("t2", after.name());
        assertEquals(300, after.seconds());
        // a table of the same id listed again later starts afresh
        assertEquals(0, stale.look(List.of(table(1, 0, true)), 500 * S).seconds());
    }
}
