package dev.ledgerline.transfers.api;

import java.time.Duration;
import java.util.Optional;

/**
 * The {@code wait} preference of RFC 7240 ({@code Prefer: wait=N}). Anything else in the header, and a
 * malformed {@code wait}, is ignored as the RFC asks; N above the configured maximum is cut to it.
 */
final class Prefer {

    private Prefer() {
    }

    static Optional<Duration> waitFor(String header, int maxSeconds) {
        if (header == null) {
            return Optional.empty();
        }
        for (String preference : header.split("[,;]")) {
            String p = preference.trim();
            int eq = p.indexOf('=');
            if (eq > 0 && p.substring(0, eq).trim().equalsIgnoreCase("wait")) {
                String value = p.substring(eq + 1).trim().replace("\"", "");
                if (value.matches("[0-9]{1,9}")) {
                    return Optional.of(Duration.ofSeconds(Math.min(Long.parseLong(value), maxSeconds)));
                }
            }
        }
        return Optional.empty();
    }

    static String applied(Duration wait) {
        return "wait=" + wait.toSeconds();
    }
}
