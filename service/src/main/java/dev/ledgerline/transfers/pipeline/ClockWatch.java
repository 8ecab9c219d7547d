package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.config.StartupOrder;
import dev.ledgerline.transfers.metrics.Meters;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import dev.ledgerline.transfers.provider.PaymentProvider;
import dev.ledgerline.transfers.provider.ProviderClock;
import dev.ledgerline.transfers.transfer.TransferRepository;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.time.Instant;

/**
 * Watches the clocks a send's deadline depends on. PostgreSQL's clock fixes the deadline ({@code send_not_after},
 * its {@code now()} at the claim plus the send window) and the provider's clock enforces it; the pipeline waits
 * out the deadline plus the settle time, which includes {@code ledgerline.pipeline.clock-skew-bound}, before it
 * looks a send up or sends again. A provider whose clock runs behind by more than that bound would still execute a
 * send the pipeline already treats as unable to execute, so while a measured offset exceeds the bound no new send
 * is claimed ({@link #holdingSends()}); sends resume by themselves once the clocks agree again.
 *
 * <p>Measured against this JVM's clock: PostgreSQL every {@code clock-check-every} by {@code clock_timestamp()} in a
 * round trip (offset to the round trip's midpoint, uncertain by half the round trip), the provider by
 * {@link ProviderClock} on every answer (its {@code Date}, whole seconds, so uncertain by half a second plus half
 * the round trip), refreshed by a probe lookup when no answer came for a while or sends are held. Sends go on only
 * while each offset is <em>known</em> to be within the bound: the uncertainty is added to the offset, never
 * subtracted, so the bound must exceed the {@code Date} header's half second ({@code StartupChecks}). Exported as {@code ledgerline_clock_offset_seconds{peer}} and
 * {@code ledgerline_clock_sends_held}.
 *
 * <p>A skew's effects outlive it. A send claimed while the provider's clock was behind (by this instance before it
 * saw the offset, or by another that had not) executes as late as its deadline plus that offset, and lookups show it
 * only the lookup lag later: a "not found" until then is no proof. So sends stay held after the clocks agree again,
 * for a send window, the largest offset seen, the lookup lag and the margin. And a provider reading older than a
 * check is refreshed at the next one: sends that time out carry no {@code Date}, so under a skew that holds sends
 * on the wire the answers that would show it never come. A reading older than three checks is no reading: the
 * provider's clock is not <em>known</em> to be within the bound, so sends are held until a probe answers. Without
 * that rule an instance whose probe was late (a loaded machine, a slow provider) claimed a resend on the reading
 * from before a skew began, while the first send was still held at a provider running behind.
 */
@Startup(StartupOrder.BEFORE_SCHEDULER)
@Singleton
public class ClockWatch {

    private static final Logger LOG = Logger.getLogger(ClockWatch.class);

    private final TransferRepository transfers;
    private final ProviderClock providerClock;
    private final PaymentProvider provider;
    /** A provider reading older than this is refreshed by a lookup of {@link #PROBE_REFERENCE}. */
    private final Duration providerReadingMaxAge;
    /** A provider reading older than this says nothing: sends are held until a newer one (three checks). */
    private final Duration providerReadingTrustedFor;
    private final long boundMs;
    /** How long sends stay held after the clocks agree again, before the largest offset of the episode is added. */
    private final long afterSkewMs;
    /** While a skew of the provider's clock holds sends: the largest offset seen, and until when ({@code nanoTime}). */
    private double episodeSkewMs;
    private long heldUntilNanos = System.nanoTime();
    private volatile double postgresOffsetMs;
    private volatile double postgresUncertaintyMs;
    /** The reason last logged, so a change is logged once. */
    private volatile String loggedReason;

    /** A reference no transfer has (ours all start {@code ll_} and 32 hex digits): its lookup answers 404, with a Date. */
    static final String PROBE_REFERENCE = "ll_clock-probe";

    public ClockWatch(TransferRepository transfers, ProviderClock providerClock, PaymentProvider provider,
                      LedgerlineConfig config, @ServiceMeters MeterRegistry metrics) {
        this.transfers = transfers;
        this.providerClock = providerClock;
        this.provider = provider;
        this.providerReadingMaxAge = config.pipeline().clockCheckEvery();
        this.providerReadingTrustedFor = config.pipeline().clockCheckEvery().multipliedBy(3);
        this.boundMs = config.pipeline().clockSkewBound().toMillis();
        this.afterSkewMs = config.provider().timeout().plus(config.provider().lookupLag()).plus(config.pipeline().margin()).toMillis();
        Meters.CLOCK_OFFSET.gauge(metrics, this, w -> w.postgresOffsetMs / 1000.0, "postgres");
        Meters.CLOCK_OFFSET.gauge(metrics, this, w -> w.providerClock.last().map(r -> r.offsetMillis() / 1000.0).orElse(0.0),
                "provider");
        Meters.CLOCK_SENDS_HELD.gauge(metrics, this, w -> w.holdingSends() ? 1 : 0);
    }

    /**
     * Whether new sends are held back because the clocks disagree by more than the bound. Judged from the latest
     * readings at every call, not at the next check: the provider's offset is read off every answer (lookups
     * included, before their result reaches the reconciler), so a resend is held as soon as any answer showed the
     * provider's clock off.
     */
    public boolean holdingSends() {
        return holdReason() != null;
    }

    /** Why sends are held, or {@code null} when they are not. */
    public String holdReason() {
        String reason = skewReason();
        return reason != null ? reason : afterSkew();
    }

    /**
     * Within the hold after a skew of the provider's clock: why, or {@code null} once it has passed. Every call while
     * the clocks disagree moves the end of the hold on, so it counts from the last moment they were seen apart.
     */
    private synchronized String afterSkew() {
        long left = heldUntilNanos - System.nanoTime();
        if (left <= 0) {
            episodeSkewMs = 0;
            return null;
        }
        return "the provider's clock agrees again, but a send claimed under its skew (up to " + Math.round(episodeSkewMs)
                + " ms) may still execute and show: no new send is claimed for another " + left / 1_000_000 + " ms";
    }

    private synchronized void skewSeen(double skewMs) {
        episodeSkewMs = Math.max(episodeSkewMs, skewMs);
        long until = System.nanoTime() + (afterSkewMs + Math.round(episodeSkewMs)) * 1_000_000;
        if (until - heldUntilNanos > 0) {
            heldUntilNanos = until;
        }
    }

    /** Why the clocks disagree beyond the bound now, or {@code null}. */
    private String skewReason() {
        String reason = null;
        // PostgreSQL against this JVM: the JVM's clock is not part of the deadline, only the reference both offsets are
        // measured against (and ProviderHttp's deadline check), so only an offset certainly beyond the bound holds sends
        if (Math.abs(postgresOffsetMs) - postgresUncertaintyMs > boundMs) {
            reason = "PostgreSQL's clock is " + describe(postgresOffsetMs) + " this instance's";
        }
        var reading = providerClock.last();
        long ageMs = reading.map(r -> Duration.between(r.at(), Instant.now()).toMillis()).orElse(0L);
        if (reason == null && ageMs > providerReadingTrustedFor.toMillis()) {
            // a skew that began since is unseen: a send claimed now could meet a provider running behind
            reason = "the provider's clock was last read " + ageMs + " ms ago, more than three clock checks, so it is not"
                    + " known to be within the bound";
        } else if (reason == null && reading.isPresent()) {
            // the deadline is PostgreSQL's time and the provider enforces it by its own: sends go on only while this
            // skew is known to be within the bound, so the uncertainty counts against it
            double providerVsPostgres = reading.get().offsetMillis() - postgresOffsetMs;
            if (Math.abs(providerVsPostgres) + reading.get().uncertaintyMillis() + postgresUncertaintyMs > boundMs) {
                reason = "the provider's clock is " + describe(providerVsPostgres) + " PostgreSQL's";
                skewSeen(Math.abs(providerVsPostgres) + reading.get().uncertaintyMillis() + postgresUncertaintyMs);
            }
        }
        return reason == null ? null
                : reason + ", beyond ledgerline.pipeline.clock-skew-bound (" + boundMs + " ms): no new send is claimed";
    }

    @Scheduled(every = "${ledgerline.pipeline.clock-check-every}", delayed = "1s",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP, identity = "ledgerline-clock-watch")
    Uni<Void> check() {
        return refreshProviderReading().chain(this::checkPostgres).invoke(this::logChange);
    }

    /**
     * The provider's offset is read off its answers' {@code Date}; with no traffic (or while sends are held, when only
     * lookups reach it) the latest reading ages, so a lookup of a reference nobody has refreshes it. Its answer and
     * failure do not matter, only its {@code Date}.
     */
    private Uni<Void> refreshProviderReading() {
        boolean fresh = providerClock.lastSampleAt()
                .map(at -> at.plus(providerReadingMaxAge).isAfter(Instant.now())).orElse(false);
        if (fresh && !holdingSends()) {
            return Uni.createFrom().voidItem();
        }
        return provider.lookup(PROBE_REFERENCE).replaceWithVoid()
                .onFailure().invoke(e -> LOG.debugf("step=clock the provider's clock probe failed: %s", e.toString()))
                .onFailure().recoverWithNull();
    }

    private Uni<Void> checkPostgres() {
        long sentAt = System.currentTimeMillis();
        long started = System.nanoTime();
        return transfers.databaseClock()
                .invoke(pgNow -> {
                    double halfRoundTripMs = (System.nanoTime() - started) / 2e6;
                    postgresOffsetMs = pgNow.toEpochMilli() - (sentAt + halfRoundTripMs);
                    postgresUncertaintyMs = halfRoundTripMs;
                })
                .onFailure().invoke(e -> LOG.debugf("step=clock could not read PostgreSQL's clock, keeping the last offset: %s", e.toString()))
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }

    /** Says so in the log when sends start or stop being held. */
    private void logChange() {
        String reason = holdReason();
        String before = loggedReason;
        loggedReason = reason;
        if (reason != null && before == null) {
            LOG.errorf("step=clock %s", reason);
        } else if (reason == null && before != null) {
            LOG.infof("step=clock the clocks agree again within %d ms: sends resume", boundMs);
        }
    }

    private static String describe(double offsetMs) {
        return Math.round(Math.abs(offsetMs)) + " ms " + (offsetMs < 0 ? "behind" : "ahead of");
    }
}
