package dev.ledgerline.transfers.packaged;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads Vert.x's blocked-thread reports out of a service log: each report's line and the top of the stack
 * Vert.x printed with it (it prints one once a block lasts {@code quarkus.vertx.warning-exception-time}).
 */
final class BlockedThreadReports {

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
