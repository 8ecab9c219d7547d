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
 * a blocked event loop or worker thread at any moment of it, with the stack Vert.x printed for each report.
 *
 * <p>It sees what Vert.x reports, and the test profile keeps Vert.x's default threshold: an event-loop task
 * of 2 s or more. The first-use work that crossed 100 ms (the PostgreSQL pool, the provider REST client and
 * its fault tolerance, the request path's beans) is now done at start-up, but on a machine loaded to 15 runnable
 * threads per core even a socket write or a {@code Tuple.of} shows up above 100 ms, so lowering the threshold
 * is left to a quieter CI machine: set {@code %test.quarkus.vertx.max-event-loop-execute-time=100ms} and
 * {@code %test.quarkus.vertx.warning-exception-time=50ms} (the check interval too) to see them.
 */
class NoBlockedEventLoopIT {

    private static final Path TARGET = Path.of("target");

    @Test
    void theSuiteNeverBlockedAVertxThreadForTwoSecondsOrMore() throws IOException {
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
