package dev.ledgerline.transfers.ops;

import dev.ledgerline.transfers.support.Metrics;
import dev.ledgerline.transfers.support.Repo;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every metric in the alert table of docs/operating.md is on {@code /q/metrics} with HELP text the moment the service
 * is up — before any transfer, fault or lookup made it count — so an alert rule on it can fire on the
 * first event. Runs on a fresh application (its own profile) so no earlier test can have created them.
 */
@QuarkusTest
@TestProfile(AlertMetricsTest.FreshStart.class)
class AlertMetricsTest {

    /** A profile of its own: Quarkus starts a new application for it, with nothing counted yet. */
    public static class FreshStart implements QuarkusTestProfile {
    }

    /** One row of docs/operating.md "Metrics worth alerting on": {@code name{label="value"}}. */
    record Alerted(String name, String labels) {
    }

    @Test
    void everyAlertMetricIsThereWithHelpTextBeforeAnythingCounted() throws Exception {
        List<Alerted> alerted = alertTable();
        // the table has at least 8 rows; fewer means the table or its parsing broke
        assertTrue(alerted.size() >= 8, "docs/operating.md alert table rows: " + alerted);
        String page = Metrics.scrape();
        List<String> missing = new ArrayList<>();
        for (Alerted metric : alerted) {
            boolean sample = page.lines().anyMatch(line -> isSampleOf(line, metric.name()) && line.contains(metric.labels()));
            // a counter's family is named without _total in the HELP and TYPE lines
            String family = metric.name().replaceFirst("_total$", "");
            boolean help = page.lines().anyMatch(line -> line.matches("# HELP " + Pattern.quote(family) + " \\S.*"));
            if (!sample || !help) {
                missing.add(metric + (sample ? "" : " (no sample)") + (help ? "" : " (no HELP text)"));
            }
        }
        assertTrue(missing.isEmpty(), "alert metrics missing at start-up: " + missing);
    }

    /** A sample line of a counter, gauge or histogram family: the name, then labels, a value or a suffix. */
    private static boolean isSampleOf(String line, String name) {
        if (!line.startsWith(name)) {
            return false;
        }
        String rest = line.substring(name.length());
        return rest.startsWith("{") || rest.startsWith(" ") || rest.startsWith("_count") || rest.startsWith("_bucket");
    }

    /** The table under the heading "Metrics worth alerting on" in docs/operating.md. */
    static List<Alerted> alertTable() throws Exception {
        String page = Files.readString(Repo.file("docs/operating.md"));
        int start = page.indexOf("\n## Metrics worth alerting on\n");
        assertTrue(start >= 0, "docs/operating.md has no alert table");
        String table = page.substring(start, page.indexOf("\n\n", page.indexOf("| metric", start)));
        Matcher row = Pattern.compile("(?m)^\\| `(ledgerline_[a-z_]+)(\\{[^}]*})?`").matcher(table);
        List<Alerted> rows = new ArrayList<>();
        while (row.find()) {
            String labels = row.group(2) == null ? "" : row.group(2).substring(1, row.group(2).length() - 1);
            rows.add(new Alerted(row.group(1), labels));
        }
        return rows;
    }
}
