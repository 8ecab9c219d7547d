package dev.ledgerline.transfers.packaged;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Runs after the whole {@code @QuarkusTest} suite (integration-test phase) and fails if Vert.x reported
 * a blocked event loop or worker thread at any moment of it: nothing on the request path may block.
 *
 * <p>The test profile lowers Vert.x's threshold from 2 s to 100 ms, checked every 50 ms
 * ({@link BlockedThreadReports}), so an event-loop task of 100 ms or more fails this test with the stack
 * Vert.x printed for it. What used to cross that line at the first request of each application start (the
 * PostgreSQL pool, the provider REST client and its fault tolerance built on an event loop) is done at
 * start-up by {@code PoolWarmUp} and {@code ProviderWarmUp}.
 */
class NoBlockedEventLoopIT {

    private static final Path TARGET = Path.of("target");

    @Test
    void theSuiteNeverBlockedAVertxThreadFor100MsOrMore() throws IOException {
        List<Path> logs;
        try (var files = Files.list(TARGET)) {
            logs = files.filter(p -> p.getFileName().toString().startsWith("quarkus-test.log")).toList();
        }
        assertTrue(!logs.isEmpty(), "the test suite writes its log to target/quarkus-test.log; run ./mvnw verify");
        boolean started = false;
        List<String> blocked = new ArrayList<>();
        for (Path log : logs) {
            try (var lines = Files.lines(log)) {
                started |= lines.anyMatch(line -> line.contains("Profile test activated"));
            }
            blocked.addAll(BlockedThreadReports.in(log));
        }
        assertTrue(started, "the log must cover the @QuarkusTest runs it is meant to check");
        assertTrue(blocked.isEmpty(), "Vert.x reported " + blocked.size() + " blocked-thread report(s) in "
                + logs + ":\n" + String.join("\n\n", blocked));
    }
}
