package dev.ledgerline.transfers.transfer;

import dev.ledgerline.transfers.support.Db;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The inserts of one intent racing each other, as they do whenever Redis cannot hold them apart (down, paused,
 * behind its breaker) and a client's retries arrive together. The provider reference is derived from the intent, so
 * every racer carries the same one as well as the same key: two unique constraints, and PostgreSQL reports a
 * conflict on a constraint the {@code ON CONFLICT} clause does not name as an error. Each racer must come back
 * with the row it created or with nothing (then it reads the original), never with an error a client sees as 500.
 */
@QuarkusTest
class ConcurrentInsertTest {

    /** Racers per intent: more than the two cores, so their statements overlap inside PostgreSQL. */
    private static final int RACERS = 8;
    private static final Duration BUDGET = Duration.ofSeconds(20);
    private static final int ROUNDS = 400;

    @Inject
    TransferRepository transfers;

    /** One racer's end: the row it created, nothing (the intent existed), or the failure. */
    private record Raced(Transfer created, Throwable failure) {
    }

    @Test
    void racingInsertsOfOneIntentCreateOneRowAndFailNone() {
        String user = "racer-" + UUID.randomUUID();
        long deadline = System.nanoTime() + BUDGET.toNanos();
        int rounds = 0;
        for (; rounds < ROUNDS && System.nanoTime() < deadline; rounds++) {
            String key = "race-" + rounds;
            String reference = "ll_race_" + UUID.randomUUID().toString().replace("-", "");
            List<Uni<Raced>> racers = new ArrayList<>();
            for (int i = 0; i < RACERS; i++) {
                NewTransfer intent = new NewTransfer(UUID.randomUUID(), user, key, "fp", 100, "EUR",
                        "DE89370400440532013000", "Ada Lovelace", null, reference, null);
                racers.add(transfers.insert(intent, Duration.ofSeconds(60), "concurrent-insert-test")
                        .map(created -> new Raced(created, null))
                        .onFailure().recoverWithItem(e -> new Raced(null, e)));
            }
            List<Raced> raced = Uni.join().all(racers).andFailFast().await().atMost(Duration.ofSeconds(10));
            for (Raced r : raced) {
                assertNull(r.failure(), "round " + key + ": an insert of the same intent failed instead of finding the original");
            }
            assertEquals(1, raced.stream().filter(r -> r.created() != null).count(), "round " + key + ": exactly one racer created the row");
        }
        assertTrue(rounds >= 50, "enough rounds ran to race: " + rounds);
        assertEquals((long) rounds, Db.count("SELECT count(*) FROM transfers WHERE user_id = ?", user),
                "one row per intent");
    }
}
