package dev.ledgerline.transfers.packaged;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads Vert.x's blocked-thread reports out of a service log. The test profile and the packaged ITs' services
 * run with {@code max-event-loop-execute-time=100ms} and {@code warning-exception-time=50ms}, so an event-loop
 * task of 100 ms or more is reported, with its stack, within 50 ms of crossing the line.
 */
final class BlockedThreadReports {

    /** What the packaged ITs' services are started with (the test profile sets the same in application.properties). */
    static final String MAX_EVENT_LOOP_EXECUTE_TIME = "100ms";
    static final String WARNING_EXCEPTION_TIME = "50ms";

    private static final String REPORT = "has been blocked for";
    /** Frames shown per report: enough to see what the thread was doing, not the whole Netty loop below it. */
    private static final int FRAMES = 12;

    private BlockedThreadReports() {
    }

    /** Each report in the log, its line followed by the top of the stack Vert.x printed with it. */
    static List<String> in(Path log) throws IOException {
        List<String> lines = Files.readAllLines(log);
        List<String> reports = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            if (!lines.get(i).contains(REPORT)) {
                continue;
            }
            StringBuilder report = new StringBuilder(lines.get(i));
            int frames = 0;
            for (int j = i + 1; j < lines.size() && isStackLine(lines.get(j)); j++) {
                if (frames++ < FRAMES) {
                    report.append('\n').append(lines.get(j));
                }
            }
            reports.add(report.toString());
        }
        return reports;
    }

    private static boolean isStackLine(String line) {
        return line.startsWith("\t") || line.startsWith("io.vertx.core.VertxException");
    }
}
