package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The one in-flight budget that dispatch on accept and the sweeper's drain share: the drain never takes the
 * slots kept for accepts, accepts may use the whole budget, and a stopped dispatcher starts nothing.
 */
class DispatcherTest {

    private static final int MAX_IN_FLIGHT = 8;
    private static final int ACCEPT_RESERVE = 2;

    private final Dispatcher dispatcher = new Dispatcher(null, config(), new SimpleMeterRegistry());

    @Test
    void aDrainFillsItsShareAndLeavesTheAcceptReserveFree() {
        assertEquals(MAX_IN_FLIGHT - ACCEPT_RESERVE, dispatcher.admit(Dispatcher.Lane.SWEEP, 50), "the sweeper's share, not the batch size");
        assertEquals(0, dispatcher.admit(Dispatcher.Lane.SWEEP, 50), "no more room for the sweeper");
        assertTrue((dispatcher.admit(Dispatcher.Lane.ACCEPT, 1) == 1), "an accepted transfer still starts at once");
        assertTrue((dispatcher.admit(Dispatcher.Lane.ACCEPT, 1) == 1));
        assertFalse((dispatcher.admit(Dispatcher.Lane.ACCEPT, 1) == 1), "the whole budget is in use");
        assertEquals(MAX_IN_FLIGHT, dispatcher.inFlight());
    }

    @Test
    void acceptsMayUseTheWholeBudgetAndThenTheSweeperWaits() {
        for (int i = 0; i < MAX_IN_FLIGHT; i++) {
            assertTrue((dispatcher.admit(Dispatcher.Lane.ACCEPT, 1) == 1));
        }
        assertEquals(0, dispatcher.admit(Dispatcher.Lane.SWEEP, 10));
    }

    @Test
    void slotsTheSweeperFoundNoTransferForAreGivenBack() {
        int reserved = dispatcher.admit(Dispatcher.Lane.SWEEP, 4);
        assertEquals(4, reserved);
        dispatcher.giveBack(3);
        assertEquals(1, dispatcher.inFlight());
        assertEquals(MAX_IN_FLIGHT - ACCEPT_RESERVE - 1, dispatcher.admit(Dispatcher.Lane.SWEEP, 50));
    }

    @Test
    void aWaitForRoomEndsAtOnceWhenThereIsRoomAndAtItsBoundWhenNoPassEnds() {
        long started = System.nanoTime();
        dispatcher.awaitRoom(4, Duration.ofSeconds(30)).await().atMost(Duration.ofSeconds(1));
        assertTrue(System.nanoTime() - started < Duration.ofSeconds(1).toNanos());

        dispatcher.admit(Dispatcher.Lane.SWEEP, 50);
        started = System.nanoTime();
        dispatcher.awaitRoom(1, Duration.ofMillis(300)).await().atMost(Duration.ofSeconds(5));
        assertTrue(System.nanoTime() - started >= Duration.ofMillis(300).toNanos(), "waited for a pass to end");
    }

    @Test
    void aStoppedDispatcherStartsNothingAndReportsIdleWhenNothingRuns() throws InterruptedException {
        assertTrue(dispatcher.stopAndAwaitIdle(Duration.ofMillis(100)));
        assertFalse((dispatcher.admit(Dispatcher.Lane.ACCEPT, 1) == 1));
        assertEquals(0, dispatcher.admit(Dispatcher.Lane.SWEEP, 10));
        assertEquals(0, dispatcher.admit(Dispatcher.Lane.RESEND, 1));
    }

    @Test
    void aStopWaitsForTheGraceAndSaysWhenPassesAreStillInFlight() throws InterruptedException {
        assertTrue((dispatcher.admit(Dispatcher.Lane.ACCEPT, 1) == 1));
        long started = System.nanoTime();
        assertFalse(dispatcher.stopAndAwaitIdle(Duration.ofMillis(200)));
        assertTrue(System.nanoTime() - started >= Duration.ofMillis(200).toNanos());
    }

    private static LedgerlineConfig config() {
        LedgerlineConfig.Pipeline pipeline = proxy(LedgerlineConfig.Pipeline.class, name -> switch (name) {
            case "maxInFlight" -> MAX_IN_FLIGHT;
            case "acceptReserve" -> ACCEPT_RESERVE;
            default -> throw new UnsupportedOperationException(name);
        });
        return proxy(LedgerlineConfig.class, name -> {
            if (name.equals("pipeline")) {
                return pipeline;
            }
            throw new UnsupportedOperationException(name);
        });
    }

    @SuppressWarnings("unchecked")
    private static <T> T proxy(Class<T> type, java.util.function.Function<String, Object> answers) {
        return (T) Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[]{type},
                (self, method, args) -> answers.apply(method.getName()));
    }
}
