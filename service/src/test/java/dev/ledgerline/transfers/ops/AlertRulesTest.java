package dev.ledgerline.transfers.ops;

import dev.ledgerline.transfers.support.Repo;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ops/alerts.yml} covers the alert table of docs/operating.md: every metric (with its label) an operator is told to
 * alert on is read by a rule. promtool validates and unit-tests the rules themselves in {@code .ci/verify}
 * ({@code promtool check rules}, {@code promtool test rules ops/alerts.test.yml}).
 */
class AlertRulesTest {

    @Test
    void everyMetricOfTheAlertTableHasARule() throws Exception {
        String rules = Files.readString(Repo.file("ops/alerts.yml"));
        String tests = Files.readString(Repo.file("ops/alerts.test.yml"));
        List<AlertMetricsTest.Alerted> uncovered = AlertMetricsTest.alertTable().stream()
                .filter(m -> !(rules.contains(m.name() + (m.labels().isEmpty() ? "" : "{" + m.labels() + "}"))
                        && tests.contains(m.name())))
                .collect(Collectors.toList());
        assertTrue(uncovered.isEmpty(), "docs/operating.md alert-table metrics without a rule (and a rule test) in ops/: " + uncovered);
    }
}
