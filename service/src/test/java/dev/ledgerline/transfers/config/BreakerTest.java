package dev.ledgerline.transfers.config;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The breaker's rules on a clock of its own: Redis's (8 calls, 50 %, 2 s, one trial) and with two trials. */
class BreakerTest {

    private static final long DELAY = 2_000_000_000L;

    @Test
    void staysClosedUntilTheWindowIsFullAndHalfOfItFailed() {
        Breaker b = new Breaker(8, 0.5, DELAY);
        for (int i = 0; i < 4; i++) {
            b.failed(0);
        }
        assertEquals(Breaker.State.CLOSED, b.state(), "4 calls are not a full window of 8");
        for (int i = 0; i < 3; i++) {
            b.succeeded();
        }
        assertEquals(Breaker.State.CLOSED, b.state(), "7 calls, 4 failed: still not a full window");
        b.succeeded();
        assertEquals(Breaker.State.CLOSED, b.state(), "8 calls, 4 failed is 50 %, but the verdict comes with a call that fails");
        b.failed(0);
        assertEquals(Breaker.State.OPEN, b.state(), "the last 8: 4 failures (the oldest slid out) with a new one → 50 %");
    }

    @Test
    void oldFailuresSlideOutOfTheWindow() {
        Breaker b = new Breaker(8, 0.5, DELAY);
        for (int i = 0; i < 3; i++) {
            b.failed(0);
        }
        for (int i = 0; i < 20; i++) {
            b.succeeded();
        }
        for (int i = 0; i < 3; i++) {
            b.failed(0);
        }
        assertEquals(Breaker.State.CLOSED, b.state(), "3 of the last 8 failed");
        b.failed(0);
        assertEquals(Breaker.State.OPEN, b.state(), "4 of the last 8 failed");
    }

    @Test
    void openRefusesUntilTheDelayThenLetsOneTrialThrough() {
        Breaker b = new Breaker(2, 0.5, DELAY);
        b.failed(0);
        b.failed(10);
        assertEquals(Breaker.State.OPEN, b.state());
        assertFalse(b.allow(10 + DELAY - 1));
        assertTrue(b.allow(10 + DELAY), "the trial");
        assertFalse(b.allow(10 + DELAY), "only one trial at a time");
        b.succeeded();
        assertEquals(Breaker.State.CLOSED, b.state());
        assertTrue(b.allow(10 + DELAY));
    }

    @Test
    void anOpenBreakerReadsHalfOpenOnceItsDelayHasPassedAndTheTrialsAreThere() {
        Breaker b = new Breaker(2, 0.5, DELAY, 2);
        b.failed(0);
        b.failed(10);
        assertEquals(Breaker.State.OPEN, b.state(10 + DELAY - 1));
        assertEquals(Breaker.State.HALF_OPEN, b.state(10 + DELAY), "a caller that waits for the delay sees it pass");
        assertEquals(Breaker.State.OPEN, b.state(), "no call has come yet");
        assertTrue(b.allow(10 + DELAY), "the first trial");
        assertTrue(b.allow(10 + DELAY), "the second trial");
        assertFalse(b.allow(10 + DELAY), "no third");
        b.succeeded();
        assertEquals(Breaker.State.HALF_OPEN, b.state(), "one success of two");
        b.succeeded();
        assertEquals(Breaker.State.CLOSED, b.state(10 + DELAY));
    }

    @Test
    void aFailedTrialOpensItForAnotherDelay() {
        Breaker b = new Breaker(2, 0.5, DELAY);
        b.failed(0);
        b.failed(0);
        assertTrue(b.allow(DELAY));
        b.failed(DELAY + 5);
        assertEquals(Breaker.State.OPEN, b.state());
        assertFalse(b.allow(2 * DELAY));
        assertTrue(b.allow(2 * DELAY + 5));
    }

    @Test
    void anAbandonedCallIsNotCountedButAnAbandonedTrialLetsTheNextCallTry() {
        Breaker b = new Breaker(2, 0.5, DELAY);
        b.abandoned(0);
        b.abandoned(0);
        assertEquals(Breaker.State.CLOSED, b.state(), "cancelled calls say nothing about Redis");
        b.failed(0);
        b.failed(0);
        assertTrue(b.allow(DELAY), "the trial");
        b.abandoned(DELAY + 1);
        assertEquals(Breaker.State.OPEN, b.state());
        assertTrue(b.allow(DELAY + 2), "no second delay: the next call is the trial");
        b.succeeded();
        assertEquals(Breaker.State.CLOSED, b.state());
    }

    @Test
    void resetClosesWithAnEmptyWindow() {
        Breaker b = new Breaker(2, 0.5, DELAY);
        b.failed(0);
        b.failed(0);
        b.reset();
        assertEquals(Breaker.State.CLOSED, b.state());
        b.failed(0);
        assertEquals(Breaker.State.CLOSED, b.state(), "one failure in a fresh window of 2 is not a full window");
    }

    @Test
    void timeoutsWhileRedisKeepsAnsweringOthersDoNotOpenIt() {
        Breaker b = new Breaker(8, 0.5, DELAY);
        long sent = 1_000;
        // a saturated CPU: each call is read too late, but answers to other calls keep arriving after it was sent
        for (int i = 0; i < 20; i++) {
            b.succeeded(sent + 10);
            assertFalse(b.timedOut(sent, sent + 300_000_000L), "Redis answered after this call was sent: not its failure");
            sent += 1_000_000;
        }
        assertEquals(Breaker.State.CLOSED, b.state(), "late answers never open the breaker");
    }

    @Test
    void timeoutsWithNoAnswerSinceTheyWereSentOpenIt() {
        Breaker b = new Breaker(8, 0.5, DELAY);
        b.succeeded(500);
        for (int i = 0; i < 8; i++) {
            assertTrue(b.timedOut(1_000 + i, 300_000_000L + i), "a paused Redis answers nothing: counted");
        }
        assertEquals(Breaker.State.OPEN, b.state());
    }
}
