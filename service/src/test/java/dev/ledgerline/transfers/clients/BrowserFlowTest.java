package dev.ledgerline.transfers.clients;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Repo;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A real browser on another origin moves money once through the TypeScript SDK: headless Debian
 * {@code chromium}, driven by {@code clients/typescript/test/browser-flow.mjs} (playwright-core), loads a
 * page from its own origin that gets a dev token, creates a transfer whose first attempt reaches the
 * service but loses its answer to a dropped connection, retries under the same key, long-polls the
 * transfer to {@code sent} and shows it. This test asserts the page's final DOM, the CORS headers the
 * browser received, exactly one transfer in PostgreSQL, and leaves the screenshot in
 * {@code target/browser-flow.png}.
 */
@QuarkusTest
class BrowserFlowTest {

    static final Path SCRIPT = Repo.file("clients/typescript/test/browser-flow.mjs");
    static final Path SCREENSHOT = Path.of("target/browser-flow.png");
    static final String SUBJECT = "browser-flow";

    @TestHTTPResource("/")
    URI service;

    @Test
    void aPageOnAnotherOriginCreatesOneTransferThroughADroppedAttemptAndFollowsItToSent() throws Exception {
        JsonNode run = runBrowser();
        String pageOrigin = run.path("pageOrigin").asText();
        JsonNode dom = run.path("dom");

        // the page's final DOM
        assertEquals("true", dom.path("done").asText(), "page error: " + dom.path("error").asText() + "\n" + run.toPrettyString());
        assertEquals("sent", dom.path("status").asText());
        assertEquals("sent", dom.path("statusClass").asText());
        // the first attempt was dropped, so at least one retry; a starved machine may need more (an attempt that
        // outlives the SDK's 10 s attempt timeout is retried too), each one reported by the page and under the one key
        int attempts = Integer.parseInt(dom.path("attempts").asText("0"));
        assertTrue(attempts >= 2, "attempts: " + attempts + "\n" + run.toPrettyString());
        assertEquals("true", dom.path("replayed").asText(), "the retry was answered as a replay of the dropped attempt");
        assertEquals(attempts - 1, dom.path("retries").size(), dom.path("retries").toString());
        for (JsonNode retry : dom.path("retries")) {
            assertTrue(retry.asText().contains("with the same key"), dom.path("retries").toString());
        }
        assertTrue(dom.path("retries").get(0).asText().matches("attempt 1 failed \\((?!\\d+\\)).*"),
                "the first attempt failed at the network level, not with a status: " + dom.path("retries"));
        String key = dom.path("key").asText();
        String id = dom.path("transfer-id").asText();

        // the browser saw the first POST fail at the network level
        List<JsonNode> failedPosts = select(run.path("browser").path("failures"), n -> n.path("method").asText().equals("POST"));
        assertTrue(failedPosts.size() >= 1 && failedPosts.size() <= attempts - 1, run.path("browser").toPrettyString());

        // every attempt carried the one key; the first was answered by the service and dropped on the way back, and
        // the last was answered as a replay of it
        List<JsonNode> posts = select(run.path("exchanges"), n -> n.path("method").asText().equals("POST") && n.path("path").asText().equals("/v1/transfers"));
        assertTrue(posts.size() >= 2 && posts.size() <= attempts, attempts + " attempts, at the proxy: " + run.path("exchanges").toPrettyString());
        assertTrue(posts.get(0).path("dropped").asBoolean());
        assertEquals(201, posts.get(0).path("status").asInt());
        assertEquals(Set.of(key), posts.stream().map(p -> p.path("idempotencyKey").asText()).collect(Collectors.toSet()));
        assertEquals("true", posts.get(posts.size() - 1).path("headers").path("idempotent-replayed").asText());

        // exactly one transfer for the intent, and it is sent
        List<java.util.Map<String, Object>> rows = Db.query("SELECT id::text AS id, status FROM transfers WHERE user_id = ? AND idempotency_key = ?", SUBJECT, key);
        assertEquals(1, rows.size(), rows.toString());
        assertEquals(id, rows.get(0).get("id"));
        assertEquals("sent", rows.get(0).get("status"));

        // CORS as the browser received it: the preflight for the create, and every answer the page read
        // the first preflight the service answered: one the proxy could not pass on (its record has an error and no
        // answer) reached the browser as a broken connection, and the browser sent it again
        JsonNode preflight = select(run.path("exchanges"), n -> n.path("method").asText().equals("OPTIONS")
                && n.path("path").asText().equals("/v1/transfers") && !n.has("error")).stream().findFirst()
                .orElseThrow(() -> new AssertionError("no preflight for POST /v1/transfers: " + run.path("exchanges")));
        assertEquals(pageOrigin, preflight.path("origin").asText(), run.path("exchanges").toPrettyString());
        assertEquals(pageOrigin, preflight.path("headers").path("access-control-allow-origin").asText());
        assertTrue(tokens(preflight.path("headers").path("access-control-allow-headers").asText())
                .containsAll(tokens(preflight.path("requestedHeaders").asText())), preflight.toPrettyString());
        assertTrue(tokens(preflight.path("requestedHeaders").asText()).contains("idempotency-key"), preflight.toPrettyString());
        List<JsonNode> answers = select(run.path("browser").path("responses"), n -> n.path("url").asText().startsWith("/v1/"));
        assertFalse(answers.isEmpty());
        for (JsonNode answer : answers) {
            JsonNode headers = answer.path("headers");
            assertEquals(pageOrigin, headers.path("access-control-allow-origin").asText(), answer.toPrettyString());
            assertTrue(tokens(headers.path("access-control-expose-headers").asText())
                    .containsAll(Set.of("location", "etag", "idempotent-replayed", "retry-after", "preference-applied")), answer.toPrettyString());
            assertNotEquals("true", headers.path("access-control-allow-credentials").asText());
        }

        byte[] png = Files.readAllBytes(SCREENSHOT);
        assertArrayEquals(new byte[] {(byte) 0x89, 'P', 'N', 'G'}, Arrays.copyOf(png, 4), "a PNG screenshot in " + SCREENSHOT);
    }

    private JsonNode runBrowser() throws Exception {
        if (!new File("/usr/bin/chromium").canExecute() && System.getenv("CHROMIUM") == null) {
            fail("headless Chromium is needed: apt-get install chromium (.ci/verify installs it), or set CHROMIUM");
        }
        Files.deleteIfExists(SCREENSHOT);
        return NodeScript.run(SCRIPT, Duration.ofSeconds(150), Path.of("target/browser-flow.log"),
                "--api", service.toString().replaceAll("/$", ""), "--screenshot", SCREENSHOT.toString(), "--subject", SUBJECT);
    }

    private static List<JsonNode> select(JsonNode array, java.util.function.Predicate<JsonNode> test) {
        List<JsonNode> selected = new ArrayList<>();
        array.forEach(n -> {
            if (test.test(n)) {
                selected.add(n);
            }
        });
        return selected;
    }

    private static Set<String> tokens(String list) {
        return Arrays.stream(list.split(",")).map(s -> s.strip().toLowerCase(Locale.ROOT)).filter(s -> !s.isEmpty())
                .collect(Collectors.toSet());
    }
}
