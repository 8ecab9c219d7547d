package dev.ledgerline.transfers.ratelimit;

import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The in-memory fallback bucket, over many random cases from a fixed seed: for any arrival pattern it
 * admits no more than {@code burst + rate × elapsed}, and the wait it announces (Retry-After) is
 * honest — asking again after it succeeds. A failure names its case, which replays exactly.
 */
class LocalBucketsTest {

    private static final long MS = 1_000_000L;
    private static final long SEED = 9L;

    @Test
    void neverAdmitsMoreThanBurstPlusRefill() {
        Random r = new Random(SEED);
        for (int n = 0; n < 300; n++) {
            double rate = 0.1 + r.nextDouble() * 49.9;
            int burst = 1 + r.nextInt(50);
            int arrivals = 1 + r.nextInt(300);
            LocalBuckets buckets = new LocalBuckets(10);
            long now = 1_000 * MS;
            long start = now;
            int admitted = 0;
            for (int i = 0; i < arrivals; i++) {
                now += r.nextInt(201) * MS;
                if (buckets.take("p", rate, burst, now) == 0) {
                    admitted++;
                }
            }
            double bound = burst + rate * (now - start) / 1e9;
            assertTrue(admitted <= bound + 1e-9,
                    "case " + n + ": rate " + rate + ", burst " + burst + ": " + admitted + " admitted, bound " + bound);
        }
    }

    @Test
    void theAnnouncedWaitIsEnough() {
        Random r = new Random(SEED);
        for (int n = 0; n < 300; n++) {
            double rate = 0.01 + r.nextDouble() * 49.99;
            int burst = 1 + r.nextInt(20);
            String what = "case " + n + ": rate " + rate + ", burst " + burst;
            LocalBuckets buckets = new LocalBuckets(10);
            long now = 5_000 * MS;
            for (int i = 0; i < burst; i++) {
                assertEquals(0, buckets.take("p", rate, burst, now), what + ": a fresh bucket serves its burst");
            }
            long waitMicros = buckets.take("p", rate, burst, now);
            assertTrue(waitMicros > 0, what + ": the bucket is empty");
            assertEquals(0, buckets.take("p", rate, burst, now + waitMicros * 1_000), what + ": after the announced wait a token is there");
        }
    }

    @Test
    void staysBoundedInPrincipals() {
        Random r = new Random(SEED);
        for (int n = 0; n < 50; n++) {
            int principals = 1 + r.nextInt(500);
            LocalBuckets buckets = new LocalBuckets(64);
            for (int i = 0; i < principals; i++) {
                buckets.take("p" + i, 1, 1, 1_000 * MS);
            }
            assertTrue(buckets.size() <= 64, "case " + n + ": " + buckets.size() + " buckets for " + principals + " principals");
        }
    }
}
