package dev.ledgerline.transfers.support;

import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.Map;

/**
 * One test profile for the tests that each change a setting that no other test reads. Every profile is an application
 * of its own, built and started once per test JVM; four single-setting profiles cost four of them, this one costs
 * one. A setting belongs here only when every test under this profile passes with it, whatever the order:
 * <ul>
 *   <li>{@code ledgerline.ledger.enabled=false} (LedgerOffTest): balances kept elsewhere. The others move no money
 *       or do not read balances.</li>
 *   <li>the production body, read and idle timeouts (LongPollProdTimeoutsTest); the default test profile shortens
 *       the body deadline. REST Assured's read timeout goes to 60 s so that the client does not give up first.</li>
 *   <li>{@code ledgerline.webhooks.allow-private-hosts=false}, the production setting (WebhookSsrfTest); no test here
 *       delivers a webhook.</li>
 *   <li>a clock skew of 1 s and a verified-token cache of four entries (TokenCacheTest); the others' tokens live for
 *       minutes, and a small cache only makes them verified more often.</li>
 * </ul>
 */
public class SideSettings implements QuarkusTestProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of(
                "ledgerline.ledger.enabled", "false",
                "ledgerline.http.body-timeout", "PT10S",
                "quarkus.http.read-timeout", "10S",
                "quarkus.http.idle-timeout", "45S",
                "quarkus.http.test-timeout", "60S",
                "ledgerline.webhooks.allow-private-hosts", "false",
                "mp.jwt.verify.clock.skew", "1",
                "ledgerline.token-cache.max-entries", "4");
    }
}
