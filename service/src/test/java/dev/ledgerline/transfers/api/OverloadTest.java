package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Metrics;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;

import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Overload: beyond {@code max-pending} pending transfers a new transfer is refused with 503 and Retry-After
 * before anything is written, and once the backlog drains below the bound transfers are accepted again,
 * without a restart.
 */
@QuarkusTest
@TestProfile(OverloadTest.SmallBacklogBound.class)
class OverloadTest {

    public static class SmallBacklogBound implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("ledgerline.overload.max-pending", "5",
                    "ledgerline.overload.check-every", "200ms",
                    "ledgerline.overload.retry-after-seconds", "3");
        }
    }

    /**
     * The backlog is counted at the configured period, here 200 ms, not once a second as Quarkus's scheduler would
     * run it. Ten counts at 200 ms take 2 s; a once-a-second schedule needs 10 s for them, so the 6 s bound has
     * room for a loaded machine on one side and still tells the two apart on the other.
     */
    @Test
    void theBacklogIsCountedAtTheConfiguredPeriodBelowOneSecond() {
        double before = counts();

        Awaitility.await("ten backlog counts").atMost(Duration.ofSeconds(6)).pollInterval(Duration.ofMillis(100))
                .until(() -> counts() - before >= 10);
    }

    private static double counts() {
        return Metrics.sum("ledgerline_overload_counts_total", "");
    }

    @Test
    void beyondTheBacklogBoundANewTransferIsRefusedUnwrittenAndAcceptedAgainOnceItDrains() {
        String owner = "overload-" + UUID.randomUUID();
        // a backlog the sweeper does not see yet (due in an hour): ten pending transfers, twice the bound
        Db.update("""
                INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency, destination_iban,
                                       destination_name, provider_reference, next_attempt_at, last_actor, last_reason)
                SELECT gen_random_uuid(), ?, 'key-' || g, 'fingerprint', 100 + g, 'EUR', 'DE89370400440532013000', 'Ada',
                       'll_' || replace(gen_random_uuid()::text, '-', ''), now() + interval '1 hour', 'test', 'accepted'
                  FROM generate_series(1, 10) g""", owner);

        String token = Api.writer("overload-client");
        AtomicReference<String> refusedKey = new AtomicReference<>();
        AtomicReference<Response> refused = new AtomicReference<>();
        Awaitility.await("POST is refused for overload").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                .until(() -> {
                    String key = Api.newKey();
                    Response response = Api.post(token, key, Api.body(700));
                    refusedKey.set(key);
                    refused.set(response);
                    return response.statusCode() == 503;
                });
        refused.get().then().statusCode(503).contentType("application/problem+json").header("Retry-After", "3")
                .body("type", equalTo("https://ledgerline.dev/problems/service-unavailable"));
        assertEquals(0, Db.count("SELECT count(*) FROM transfers WHERE user_id = 'overload-client' AND idempotency_key = ?",
                refusedKey.get()), "a refused transfer is not written");

        // the backlog comes due and the sweeper drains it: new transfers are accepted again, no restart
        Db.update("UPDATE transfers SET next_attempt_at = now() WHERE user_id = ? AND status = 'pending'", owner);
        Awaitility.await("POST is accepted again once the backlog drained").atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(250))
                .until(() -> Api.post(token, Api.newKey(), Api.body(701)).statusCode() == 201);
        assertTrue(Db.count("SELECT count(*) FROM transfers WHERE user_id = ? AND status = 'pending'", owner) <= 5,
                "accepting again means the backlog went down to the bound");
    }
}
