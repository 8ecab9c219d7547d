package dev.ledgerline.transfers.config;

import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.config.Config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Refuses to start with settings that would make the pipeline unsafe or the deployment insecure,
 * each with a sentence that names the settings in conflict.
 */
@Singleton
public class StartupChecks {

    static final String DEV_KEY_MARKER = "dev-jwt/";

    /**
     * The smallest {@code ledgerline.pipeline.clock-skew-bound}: what a reading of the provider's clock off its
     * {@code Date} header can be off by while the clocks agree ({@code provider.ProviderClock.WORST_READING_AT_ZERO_SKEW},
     * which a test holds below this), with some room so that sends are not held while the clocks agree.
     */
    public static final Duration MIN_CLOCK_SKEW_BOUND = Duration.ofMillis(1600);

    void onStart(@Observes StartupEvent event, LedgerlineConfig config, Config raw) {
        List<String> problems = problems(config, raw, LaunchMode.current());
        if (!problems.isEmpty()) {
            throw new IllegalStateException("Ledgerline refuses to start: " + String.join(" ", problems));
        }
    }

    static List<String> problems(LedgerlineConfig config, Config raw, LaunchMode mode) {
        List<String> problems = new ArrayList<>();
        Duration timeout = config.provider().timeout();
        Duration needed = timeout.plus(config.pipeline().margin());
        if (config.pipeline().lockTtl().compareTo(needed) < 0) {
            problems.add("ledgerline.pipeline.lock-ttl (" + config.pipeline().lockTtl() + ") must be at least "
                    + "ledgerline.provider.timeout-ms (" + timeout + ") plus ledgerline.pipeline.margin ("
                    + config.pipeline().margin() + "), or a slow provider call would outlive its lock.");
        }
        if (config.pipeline().lease().compareTo(needed) < 0) {
            problems.add("ledgerline.pipeline.lease (" + config.pipeline().lease() + ") must be at least "
                    + "ledgerline.provider.timeout-ms (" + timeout + ") plus ledgerline.pipeline.margin ("
                    + config.pipeline().margin() + "), or a send could still execute after its lease expired.");
        }
        LedgerlineConfig.RateLimit rates = config.rateLimit();
        if (!(rates.writes().perSecond() > 0) || rates.writes().burst() < 1
                || !(rates.reads().perSecond() > 0) || rates.reads().burst() < 1) {
            problems.add("ledgerline.rate-limit.writes/reads need per-second above 0 and burst of at least 1 (to turn "
                    + "the limiter off, set ledgerline.rate-limit.enabled=false instead).");
        }
        LedgerlineConfig.Redis redis = config.redis();
        if (redis.timeout().toMillis() < 1 || redis.breaker().requestVolume() < 1
                || !(redis.breaker().failureRatio() > 0 && redis.breaker().failureRatio() <= 1) || redis.breaker().delay().isNegative()) {
            problems.add("ledgerline.redis needs a timeout of at least 1 ms, a breaker request-volume of at least 1, a failure-ratio "
                    + "above 0 and at most 1, and a delay that is not negative.");
        }
        Duration keyWindow = config.provider().keyWindow();
        Duration keyUsable = keyWindow.minus(config.provider().keyWindowMargin()).minus(timeout);
        if (keyUsable.compareTo(config.pipeline().margin()) < 0) {
            problems.add("ledgerline.provider.key-window (" + keyWindow + ") must exceed ledgerline.provider.key-window-margin ("
                    + config.provider().keyWindowMargin() + ") plus ledgerline.provider.timeout-ms (" + timeout
                    + ") plus ledgerline.pipeline.margin, or no resend could ever leave.");
        }
        if (config.pipeline().maxSends() < 1) {
            problems.add("ledgerline.pipeline.max-sends must be at least 1.");
        }
        if (config.pipeline().clockSkewBound().compareTo(MIN_CLOCK_SKEW_BOUND) < 0) {
            problems.add("ledgerline.pipeline.clock-skew-bound (" + config.pipeline().clockSkewBound() + ") must be at least "
                    + MIN_CLOCK_SKEW_BOUND + ": the provider's clock is read off its Date header (whole "
                    + "seconds), and a smaller bound would hold sends for clocks that agree.");
        }
        LedgerlineConfig.Retention retention = config.retention();
        if (retention.eventsPartitionSpan().compareTo(Duration.ofSeconds(1)) < 0
                || retention.eventsPartitionsAhead().compareTo(retention.eventsPartitionSpan()) < 0
                || retention.maxPartitionsPerRun() < 1 || retention.lockTimeout().toMillis() < 1) {
            problems.add("ledgerline.retention needs an events-partition-span of at least a second, events-partitions-ahead"
                    + " of at least one span (" + retention.eventsPartitionSpan() + "), max-partitions-per-run of at least 1"
                    + " and a lock-timeout of at least 1 ms.");
        }
        if (retention.transfersPartitionSpan().compareTo(Duration.ofSeconds(1)) < 0
                || retention.transfersPartitionsAhead().compareTo(retention.transfersPartitionSpan()) < 0
                || retention.transfersRetention().compareTo(retention.transfersPartitionSpan()) < 0) {
            problems.add("ledgerline.retention needs a transfers-partition-span of at least a second, and"
                    + " transfers-partitions-ahead and transfers-retention of at least one span ("
                    + retention.transfersPartitionSpan() + ").");
        }
        // the floor of a day under every key is the database owner's (retention_floors, migration V19), not this check's
        if (retention.keyWindow().compareTo(config.provider().keyWindow()) < 0 || retention.maxKeysPerRun() < 1
                || retention.keyBatch() < 1) {
            problems.add("ledgerline.retention.key-window (" + retention.keyWindow() + ") must be at least"
                    + " ledgerline.provider.key-window (" + config.provider().keyWindow() + "): a key is what keeps a client's"
                    + " retry from becoming a second payment; and ledgerline.retention.max-keys-per-run and key-batch at least 1.");
        }
        if (config.idempotency().retention().compareTo(retention.keyWindow()) >= 0) {
            problems.add("ledgerline.idempotency.retention (" + config.idempotency().retention() + ") must be shorter than"
                    + " ledgerline.retention.key-window (" + retention.keyWindow() + "): a Redis entry that outlived its key"
                    + " would answer, or restore, a transfer the key no longer names.");
        }
        if (config.events().retention().compareTo(retention.eventsPartitionSpan()) < 0) {
            problems.add("ledgerline.events.retention (" + config.events().retention() + ") must be at least one"
                    + " ledgerline.retention.events-partition-span (" + retention.eventsPartitionSpan() + "): history is"
                    + " detached a whole partition at a time.");
        }
        if (mode == LaunchMode.NORMAL) {
            if (LedgerlineConfig.DEV_REFERENCE_SECRET.equals(config.idempotency().referenceSecret())) {
                problems.add("Set LEDGERLINE_IDEMPOTENCY_REFERENCE_SECRET: provider references are derived under it, and the "
                        + "dev/test default is public.");
            }
            String location = raw.getOptionalValue("mp.jwt.verify.publickey.location", String.class).orElse("");
            String inline = raw.getOptionalValue("mp.jwt.verify.publickey", String.class).orElse("");
            if (location.isBlank() && inline.isBlank()) {
                problems.add("Set MP_JWT_VERIFY_PUBLICKEY_LOCATION (or MP_JWT_VERIFY_PUBLICKEY) to the token issuer's public key.");
            } else if (location.contains(DEV_KEY_MARKER) || DevKey.isDevKey(location) || DevKey.isDevKey(inline)) {
                problems.add("The checked-in dev key pair cannot verify tokens in prod; configure the real issuer's public key.");
            }
        }
        LedgerlineConfig.Webhooks webhooks = config.webhooks();
        if (webhooks.lease().compareTo(webhooks.requestTimeout().multipliedBy(2)) < 0) {
            problems.add("ledgerline.webhooks.lease (" + webhooks.lease() + ") must be at least twice"
                    + " ledgerline.webhooks.request-timeout (" + webhooks.requestTimeout() + "): an instance sends only while"
                    + " its lease outlasts the request, so another instance never sends to the same endpoint at once.");
        }
        return problems;
    }
}
