package dev.ledgerline.transfers.transfer;

import dev.ledgerline.transfers.support.Db;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

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

    @Test
    void racingInsertsOfOneIntentCreateOneRowAndFailNone() {
        String user = "racer-" + UUID.randomUUID();
        long deadline = System.nanoTime() + BUDGET.toNanos();
        int rounds = 0;
        for (; rounds < ROUNDS && System.nanoTime() < deadline; rounds++) {
            String key = "race-" + rounds;
            String reference = "ll_race_" + UUID.randomUUID().toString().replace("-", "");
            List<Uni<Transfer>> racers = new ArrayList<>();
            for (int i = 0; i < RACERS; i++) {
                NewTransfer intent = new NewTransfer(UUID.randomUUID(), user, key, "fp", 100, "EUR",
                        "DE89370400440532013000", "Ada Lovelace", null, reference, null);
                racers.add(transfers.insert(intent, Duration.ofSeconds(60), "concurrent-insert-test")
                        .onFailure().recoverWithItem(e -> {
                            fail("round " + key + ": an insert of the same intent failed instead of finding the original: " + e);
                            return null;
                        }));
            }
            List<Transfer> created = Uni.join().all(racers).andCollectFailures()
                    .await().atMost(Duration.ofSeconds(10)).stream().filter(Objects::nonNull).toList();
            assertEquals(1, created.size(), "round " + key + ": exactly one racer created the row");
        }
        assertTrue(rounds >= 50, "enough rounds ran to race: " + rounds);
        assertEquals((long) rounds, Db.count("SELECT count(*) FROM transfers WHERE user_id = ?", user),
                "one row per intent");
    }
}
