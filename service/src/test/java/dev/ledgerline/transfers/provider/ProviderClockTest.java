package dev.ledgerline.transfers.provider;

import dev.ledgerline.transfers.support.Sandbox;
import dev.ledgerline.transfers.support.TestStack;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The provider's clock as the service reads it off the {@code Date} header of every send and lookup answer: a
 * reading is centred on Date's whole second and placed at the exchange's midpoint, and a sandbox clock put 5 s
 * behind is measured as 5 s behind through the service's own provider client.
 */
@QuarkusTest
class ProviderClockTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @Inject
    ProviderClock clock;

    @Inject
    PaymentProvider provider;

    @AfterEach
    void healthy() {
        Sandbox.reset();
        TestStack.closeBreakers();
    }

    @Test
    void aReadingIsTakenAtTheMidpointAndCentredOnDatesWholeSecond() {
        ProviderClock readings = new ProviderClock();
        assertTrue(readings.lastSampleAt().isEmpty());
        assertEquals(0, readings.offsetMillis(), "no reading yet");

        Instant sentAt = Instant.parse("2026-01-01T00:00:00.000Z");
        // the provider's clock is 2.3 s ahead; at the midpoint (100 ms) it read 00:00:02.400, and Date says 00:00:02
        assertTrue(readings.record(Instant.parse("2026-01-01T00:00:02Z"), sentAt, Duration.ofMillis(200)));
        ProviderClock.Sample sample = readings.last().orElseThrow();
        assertEquals(2400, sample.offsetMillis());
        assertEquals(601, sample.uncertaintyMillis(), "half of Date's second plus half the round trip");
        assertTrue(Math.abs(sample.offsetMillis() - 2300) <= sample.uncertaintyMillis());
        assertEquals(sentAt.plusMillis(100), readings.lastSampleAt().orElseThrow());

        assertFalse(readings.record(Instant.parse("2026-01-01T00:01:00Z"), sentAt.plusSeconds(10), Duration.ofMillis(1500)),
                "an exchange slower than half a second tells too little about when Date was stamped");
        assertEquals(2400, readings.offsetMillis());
        assertFalse(readings.record(null, sentAt, Duration.ofMillis(10)), "no Date, no reading");
    }

    @Test
    void theSmallestSkewBoundTheServiceStartsWithIsWhatAReadingCanBeOffByWhileTheClocksAgree() {
        assertTrue(ProviderClock.WORST_READING_AT_ZERO_SKEW.compareTo(dev.ledgerline.transfers.config.StartupChecks.MIN_CLOCK_SKEW_BOUND) < 0);
        // clocks that agree exactly, read in the worst phase of Date's second with the slowest exchange sampled
        ProviderClock readings = new ProviderClock();
        Instant sentAt = Instant.parse("2026-01-01T00:00:00.750Z");
        assertTrue(readings.record(Instant.parse("2026-01-01T00:00:00Z"), sentAt, ProviderClock.MAX_ROUND_TRIP));
        ProviderClock.Sample worst = readings.last().orElseThrow();
        assertTrue(Math.abs(worst.offsetMillis()) + worst.uncertaintyMillis() <= ProviderClock.WORST_READING_AT_ZERO_SKEW.toMillis(),
                worst.toString());
    }

    @Test
    void theServiceReadsASandboxClockBehindOffItsAnswers() {
        Sandbox.faults(Map.of("clockOffsetMs", -5000));
        Instant before = Instant.now();
        // the service's first provider call may time out while a cold JVM loads the client: poll until one answers
        String unknown = "ll_" + UUID.randomUUID();
        await().atMost(WAIT.multipliedBy(3)).ignoreExceptions()
                .until(() -> provider.lookup(unknown).await().atMost(WAIT).kind() == LookupResult.Kind.NOT_FOUND);
        ProviderClock.Sample behind = clock.last().orElseThrow();
        assertTrue(!behind.at().isBefore(before), "a reading of this lookup, not an older one: " + behind);
        assertTrue(Math.abs(behind.offsetMillis() + 5000) <= behind.uncertaintyMillis(),
                "the sandbox's clock is 5000 ms behind, the service read " + behind);

        Sandbox.reset();
        Instant again = Instant.now();
        PaymentOrder order = new PaymentOrder("ll_" + UUID.randomUUID(), 1250, "EUR", "DE89370400440532013000", "Ada Lovelace",
                Instant.now().plusSeconds(30));
        await().atMost(WAIT.multipliedBy(3)).ignoreExceptions().until(() -> provider.send(order).await().atMost(WAIT).executed());
        ProviderClock.Sample agreed = clock.last().orElseThrow();
        assertTrue(!agreed.at().isBefore(again), "a reading of this send: " + agreed);
        assertTrue(Math.abs(agreed.offsetMillis()) <= agreed.uncertaintyMillis(), "the clocks agree again: " + agreed);
    }
}
