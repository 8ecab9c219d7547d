package dev.ledgerline.transfers.packaged;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads Vert.x's blocked-thread reports out of a service log. The test profile and the packaged ITs' services
 * run with {@code max-event-loop-execute-time=100ms} and {@code warning-exception-time=50ms}, so an event-loop
 * task of 100 ms or more is reported, with its stack, within 50 ms of crossing the line.
 *
 * <p>Each report is sorted by what the thread was doing when Vert.x looked. A thread whose top frames are a
 * blocking primitive (a sleep, a park, a monitor wait, a {@code java.net.Socket} waiting for bytes or for its
 * connection, a future's {@code get}, a DNS lookup) was <em>waiting</em> on the event loop: that is a bug however short the wait. A thread caught running
 * code (class loading, JIT-cold first calls, or nothing at all on a machine with 15 runnable threads per core)
 * was <em>running</em>: slow, and reported, but only a bug once it reaches {@link #RUNNING_LIMIT_MS}.
 */
final class BlockedThreadReports {

    /** What the packaged ITs' services are started with (the test profile sets the same in application.properties). */
    static final String MAX_EVENT_LOOP_EXECUTE_TIME = "100ms";
    static final String WARNING_EXCEPTION_TIME = "50ms";
    /** A thread caught running, not waiting, fails the check from here on: Vert.x's own default threshold. */
    static final long RUNNING_LIMIT_MS = 2_000;

    private static final String REPORT = "has been blocked for";
    private static final Pattern BLOCKED_MS = Pattern.compile("has been blocked for (\\d+) ms");
    /** Frames shown per report: enough to see what the thread was doing, not the whole Netty loop below it. */
    private static final int FRAMES = 12;
    /** Frames searched for a blocking primitive: the primitive is on top, under at most a native wrapper or two. */
    private static final int WAIT_FRAMES = 4;
    private static final List<String> WAITING = List.of(
            "java.lang.Thread.sleep", "java.lang.Object.wait", "java.lang.Thread.join",
            "jdk.internal.misc.Unsafe.park", "java.util.concurrent.locks.LockSupport.park",
            "java.util.concurrent.CompletableFuture.get", "java.util.concurrent.CompletableFuture.join",
            "java.util.concurrent.CompletableFuture.waitingGet", "java.util.concurrent.FutureTask.get",
            "sun.nio.ch.NioSocketImpl.park", "sun.nio.ch.Net.poll",
            "sun.nio.ch.NioSocketImpl.connect", "java.net.Inet4AddressImpl.lookupAllHostAddr",
            "java.net.Inet6AddressImpl.lookupAllHostAddr", "java.lang.ProcessImpl.waitFor",
            "java.lang.ProcessHandleImpl.waitForProcessExit");

    /** One report: its text (the line and the top of the stack), how long the task had run, and whether it waited. */
    record Report(String text, long blockedMs, boolean waiting) {

        /** A wait of any length on the event loop, or anything at all that held it for {@link #RUNNING_LIMIT_MS}. */
        boolean isBug() {
            return waiting || blockedMs >= RUNNING_LIMIT_MS;
        }
    }

    private BlockedThreadReports() {
    }

    /** Each report in the log. */
    static List<Report> in(Path log) throws IOException {
        return parse(Files.readAllLines(log));
    }

    /** Each report in these log lines. */
    static List<Report> parse(List<String> lines) {
        List<Report> reports = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            if (!lines.get(i).contains(REPORT)) {
                continue;
            }
            Matcher ms = BLOCKED_MS.matcher(lines.get(i));
            long blockedMs = ms.find() ? Long.parseLong(ms.group(1)) : Long.MAX_VALUE;
            StringBuilder text = new StringBuilder(lines.get(i));
            boolean waiting = false;
            int frames = 0;
            for (int j = i + 1; j < lines.size() && isStackLine(lines.get(j)); j++) {
                String line = lines.get(j);
                if (!line.startsWith("\tat ")) {
                    continue;
                }
                if (frames < WAIT_FRAMES && WAITING.stream().anyMatch(line::contains)) {
                    waiting = true;
                }
                if (frames++ < FRAMES) {
                    text.append('\n').append(line);
                }
            }
            reports.add(new Report(text.toString(), blockedMs, waiting));
        }
        return reports;
    }

    private static boolean isStackLine(String line) {
        return line.startsWith("\t") || line.startsWith("io.vertx.core.VertxException");
    }
}
