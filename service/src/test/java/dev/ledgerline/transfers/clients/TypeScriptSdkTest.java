package dev.ledgerline.transfers.clients;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Repo;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The TypeScript SDK's {@code findByIdempotencyKey} and {@code nextEvents} against the real service, in node without a browser
 * ({@code clients/typescript/test/find-by-key.mjs}): the transfer of a lost response is found under its key, only by
 * its owner, and continuing the intent under that key replays it — one transfer in PostgreSQL.
 */
@QuarkusTest
class TypeScriptSdkTest {

    static final String SUBJECT = "sdk-ts-find";

    @TestHTTPResource("/")
    URI service;

    @Test
    void findsTheTransferOfALostResponseByItsKeyAndOnlyTheOwnersOne() throws Exception {
        JsonNode run = NodeScript.run(Repo.file("clients/typescript/test/find-by-key.mjs"), Duration.ofSeconds(60),
                Path.of("target/find-by-key.log"), "--api", service.toString().replaceAll("/$", ""), "--subject", SUBJECT);

        assertTrue(run.path("gaveUp").asBoolean(), "the first attempt's answer was lost and not retried: " + run);
        assertEquals(201, run.path("lostStatus").asInt(), "the lost attempt reached the service");
        String key = run.path("key").asText();
        List<Map<String, Object>> rows = Db.query("SELECT id::text AS id, amount FROM transfers WHERE user_id = ? AND idempotency_key = ?",
                SUBJECT, key);
        assertEquals(1, rows.size(), rows.toString());
        assertEquals(rows.get(0).get("id"), run.path("found").path("id").asText(), run.toString());
        assertEquals(2100, run.path("found").path("amount").asInt());
        assertTrue(run.path("otherFound").isNull(), "another principal finds nothing under the key: " + run);
        assertTrue(run.path("unknownFound").isNull(), run.toString());
        assertEquals(400, run.path("invalidStatus").asInt(), run.toString());
        assertEquals(rows.get(0).get("id"), run.path("continued").path("id").asText());
        assertTrue(run.path("continued").path("replayed").asBoolean(), "continuing under the key replays it");
        assertEquals(1, Db.count("SELECT count(*) FROM transfers WHERE user_id = ?", SUBJECT));
    }

    @Test
    void followsTheEventFeedThroughADroppedAnswerSeeingEachTransitionOnce() throws Exception {
        JsonNode run = NodeScript.run(Repo.file("clients/typescript/test/follow-feed.mjs"), Duration.ofSeconds(60),
                Path.of("target/follow-feed.log"), "--api", service.toString().replaceAll("/$", ""), "--subject", "sdk-ts-feed");

        assertEquals(200, run.path("dropped").asInt(), "a page of the feed was answered and lost: " + run);
        for (JsonNode id : run.path("ids")) {
            assertEquals("[0,1,2]", run.path("seen").path(id.asText()).toString(), "pending, processing, sent once: " + run);
        }
        assertEquals(410, run.path("expiredStatus").asInt(), run.toString());
    }
}
