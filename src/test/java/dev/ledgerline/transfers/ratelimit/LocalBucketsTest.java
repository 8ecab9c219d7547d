package dev.ledgerline.transfers.ratelimit;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The in-memory fallback bucket (jqwik, plain unit properties on the JUnit platform next to Jupiter):
 * for any arrival pattern it admits no more than {@code burst + rate × elapsed}, and the wait it
 * announces (Retry-After) is honest — asking again after it succeeds.
 */
class LocalBucketsTest {

    private static final long MS = 1_000_000L;

    @Property(tries = 300, seed = "9")
    void neverAdmitsMoreThanBurstPlusRefill(@ForAll @DoubleRange(min = 0.1, max = 50) double rate,
                                            @ForAll @IntRange(min = 1, max = 50) int burst,
                                            @ForAll @Size(min = 1, max = 300) List<@LongRange(min = 0, max = 200) Long> gapsMs) {
        LocalBuckets buckets = new LocalBuckets(10);
        long now = 1_000 * MS;
        long start = now;
        int admitted = 0;
        for (long gap : gapsMs) {
            now += gap * MS;
            if (buckets.take("p", rate, burst, now) == 0) {
                admitted++;
            }
        }
        double elapsedSeconds = (now - start) / 1e9;
        assertTrue(admitted <= burst + rate * elapsedSeconds + 1e-9,
                admitted + " admitted, bound " + (burst + rate * elapsedSeconds));
    }

    @Property(tries = 300, seed = "9")
    void theAnnouncedWaitIsEnough(@ForAll @DoubleRange(min = 0.01, max = 50) double rate,
                                  @ForAll @IntRange(min = 1, max = 20) int burst) {
        LocalBuckets buckets = new LocalBuckets(10);
        long now = 5_000 * MS;
        for (int i = 0; i < burst; i++) {
            assertEquals(0, buckets.take("p", rate, burst, now), "a fresh bucket serves its burst");
        }
        long waitMicros = buckets.take("p", rate, burst, now);
        assertTrue(waitMicros > 0, "the bucket is empty");
        assertEquals(0, buckets.take("p", rate, burst, now + waitMicros * 1_000), "after the announced wait a token is there");
    }

    @Property(tries = 50, seed = "9")
    void staysBoundedInPrincipals(@ForAll @IntRange(min = 1, max = 500) int principals) {
        LocalBuckets buckets = new LocalBuckets(64);
        for (int i = 0; i < principals; i++) {
            buckets.take("p" + i, 1, 1, 1_000 * MS);
        }
        assertTrue(buckets.size() <= 64, buckets.size() + " buckets");
    }
}
