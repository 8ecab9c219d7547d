package dev.ledgerline.transfers.packaged;

import dev.ledgerline.transfers.packaged.BlockedThreadReports.Report;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Runs after the whole {@code @QuarkusTest} suite (integration-test phase) and fails if a Vert.x thread
 * blocked at any moment of it: nothing on the request path may wait.
 *
 * <p>The test profile lowers Vert.x's threshold from 2 s to 100 ms, checked every 50 ms, so every event-loop
 * task of 100 ms or more is reported with its stack. A report whose thread was <em>waiting</em> (a sleep, a
 * park, a blocking read, a future's {@code get}) fails this test at 100 ms; one whose thread was caught running
 * code fails it at 2 s, and below that is printed, not failed: on a CI machine loaded to 15 runnable threads per
 * core a socket write or a {@code Tuple.of} is seen above 100 ms ({@link BlockedThreadReports}, and
 * {@code BlockedThreadReportsTest} for what each kind of report is judged). What used to run for that long at
 * the first request of each application start (the PostgreSQL pool, the provider's HTTP client and its fault
 * tolerance, the request path's beans, the body-size filter) is done at start-up by {@code PoolWarmUp},
 * {@code ProviderWarmUp}, the beans' {@code @Startup} and {@code BodySizeFilter.build}.
 */
class NoBlockedEventLoopIT {

    private static final Path TARGET = PackagedJar.SERVICE_TARGET;

    @Test
    void noVertxThreadWaitedFor100MsNorRanFor2s() throws IOException {
        List<Path> logs;
        try (var files = Files.list(TARGET)) {
            logs = files.filter(p -> p.getFileName().toString().startsWith("quarkus-test.log")).toList();
        }
        assertTrue(!logs.isEmpty(), "the service's test suite writes its log to service/target/quarkus-test.log; run ./mvnw verify");
        boolean started = false;
        List<Report> reports = new ArrayList<>();
        for (Path log : logs) {
            try (var lines = Files.lines(log)) {
                started |= lines.anyMatch(line -> line.contains("Profile test activated"));
            }
            reports.addAll(BlockedThreadReports.in(log));
        }
        assertTrue(started, "the log must cover the @QuarkusTest runs it is meant to check");
        List<String> bugs = reports.stream().filter(Report::isBug).map(Report::text).toList();
        List<Report> slow = reports.stream().filter(r -> !r.isBug()).toList();
        System.out.printf("NoBlockedEventLoopIT: %d report(s) of a Vert.x thread running 100 ms to 2 s without waiting"
                + " (machine load or first-use work), longest %d ms%n", slow.size(),
                slow.stream().mapToLong(Report::blockedMs).max().orElse(0));
        assertTrue(bugs.isEmpty(), "Vert.x saw " + bugs.size() + " blocked thread(s) that waited ≥ 100 ms or ran ≥ 2 s"
                + " in " + logs + ":\n" + String.join("\n\n", bugs));
    }
}
