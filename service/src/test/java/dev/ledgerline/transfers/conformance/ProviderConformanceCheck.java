package dev.ledgerline.transfers.conformance;

import dev.ledgerline.transfers.conformance.ProviderConformance.Options;
import dev.ledgerline.transfers.conformance.ProviderConformance.Report;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The conformance kit's command: {@code ./mvnw verify -Pprovider-conformance -Dprovider.url=https://...}
 * runs only this check (the profile in pom.xml) and prints which obligations hold. It fails when one
 * fails. Options (durations ISO-8601): {@code -Dprovider.lookup-lag=PT2S} (the lag bound the provider states),
 * {@code -Dprovider.reject-amount=N} (an amount, in cents, that the provider rejects — without it
 * {@code rejections-are-final} is reported as not checked), {@code -Dprovider.clock-skew-bound=PT1S} (the
 * service's {@code ledgerline.pipeline.clock-skew-bound}), {@code -Dprovider.key-window=PT24H} (how long the
 * provider states it keeps a key; none: not checked) and {@code -Dprovider.key-window-wait=PT10S} (how much of
 * it the kit waits out). Not named {@code *Test}, so an ordinary build does not run it.
 */
class ProviderConformanceCheck {

    @Test
    void theProviderKeepsItsObligations() {
        String url = System.getProperty("provider.url");
        assumeTrue(url != null && !url.isBlank(), "set -Dprovider.url=<the provider's base URL>");
        Options options = Options.defaults()
                .withLookupLag(Duration.parse(System.getProperty("provider.lookup-lag", "PT0S")))
                .withClockSkewBound(Duration.parse(System.getProperty("provider.clock-skew-bound", "PT1S")))
                .withKeyWindowWait(Duration.parse(System.getProperty("provider.key-window-wait", "PT10S")));
        String keyWindow = System.getProperty("provider.key-window");
        if (keyWindow != null && !keyWindow.isBlank()) {
            options = options.withKeyWindow(Duration.parse(keyWindow));
        }
        String rejectAmount = System.getProperty("provider.reject-amount");
        if (rejectAmount != null && !rejectAmount.isBlank()) {
            options = options.withRejections(ProviderConformance.Rejections.byAmount(Long.parseLong(rejectAmount)));
        }
        Report report = ProviderConformance.check(URI.create(url), options);
        System.out.println();
        System.out.print(report.table());
        assertTrue(report.failing().isEmpty(), "the provider breaks " + report.failing() + "\n" + report.table());
    }
}
