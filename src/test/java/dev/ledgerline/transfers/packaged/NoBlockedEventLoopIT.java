package dev.ledgerline.transfers.packaged;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Runs after the whole {@code @QuarkusTest} suite (integration-test phase) and fails if Vert.x reported
 * a blocked event loop or worker thread at any moment of it: nothing on the request path may block.
 *
 * <p>It sees what Vert.x reports, and the test profile keeps Vert.x's default threshold: an event-loop task
 * of 2 s or more. Shorter blocks pass unseen. With the threshold at 100 ms the suite's log shows blocks of up
 * to about 0.8 s on a loaded machine, mostly the first use of the provider REST client and of a PostgreSQL
 * connection on the event loop; lowering it belongs with removing those.
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
        List<String> started = new ArrayList<>();
        List<String> blocked = new ArrayList<>();
        for (Path log : logs) {
            try (var lines = Files.lines(log)) {
                lines.forEach(line -> {
                    if (line.contains("Profile test activated")) {
                        started.add(line);
                    }
                    if (line.contains("has been blocked for")) {
                        blocked.add(line);
                    }
                });
            }
        }
        assertTrue(!started.isEmpty(), "the log must cover the @QuarkusTest runs it is meant to check");
        assertEquals(List.of(), blocked, "Vert.x reported blocked threads");
    }
}
