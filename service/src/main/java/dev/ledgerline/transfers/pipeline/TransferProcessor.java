package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.config.Breaker;
import dev.ledgerline.transfers.config.InstanceId;
import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.config.StartupOrder;
import dev.ledgerline.transfers.metrics.Meters;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import dev.ledgerline.transfers.provider.PaymentOrder;
import dev.ledgerline.transfers.provider.PaymentProvider;
import dev.ledgerline.transfers.provider.ProviderGuards;
import dev.ledgerline.transfers.provider.ProviderRefusedException;
import dev.ledgerline.transfers.provider.SendNotWrittenException;
import dev.ledgerline.transfers.provider.SendResult;
import dev.ledgerline.transfers.transfer.TransferRepository;
import dev.ledgerline.transfers.transfer.Claim;
import dev.ledgerline.transfers.transfer.FirstClaim;
import dev.ledgerline.transfers.transfer.Seen;
import dev.ledgerline.transfers.transfer.TransferStatus;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.runtime.Startup;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.UUID;

/**
 * Moves one transfer through lock → claim → send → fence → release (docs/safety.md "How a transfer moves").
 *
 * <p>The Redis lock only keeps workers out of each other's way. What makes a payment happen at most
 * once is the database: the claim UPDATE succeeds for one worker only and hands it a version, the
 * provider is called only after that claim, and the final UPDATE applies only while that version is
 * still current. A worker that was paused past its lease therefore changes nothing when it wakes up.
 *
 * <p>A send can outlive its caller: after the timeout fires, the request may still be in transit and execute
 * later. Every send therefore carries the deadline its claim fixed in PostgreSQL ({@code send_not_after}), the
 * provider must not execute it afterwards, {@link dev.ledgerline.transfers.provider.ProviderHttp} keeps it in
 * the process once that deadline passed, and the database lets nobody claim the row again or act on a lookup
 * before the deadline plus the clock margin is over.
 */
@Startup(StartupOrder.BEFORE_SCHEDULER)
@Singleton
public class TransferProcessor {

    private static final Logger LOG = Logger.getLogger(TransferProcessor.class);

    /** How one pass over a transfer ended. */
    public enum Outcome { LOCKED_ELSEWHERE, REDIS_UNAVAILABLE, NOT_CLAIMABLE, PROVIDER_OPEN, CLOCK_SKEW, LEASE_TOO_SHORT, SENT, FAILED, UNKNOWN, STALE }

    private enum Lock { ACQUIRED, HELD_ELSEWHERE, UNAVAILABLE }

    /** How a send ended: the {@code outcome} tag of {@code ledgerline.provider.send}, in lower case. */
    private enum Send { COMPLETED, REJECTED, NOT_WRITTEN, REFUSED, UNKNOWN }

    private final RedisLock redisLock;
    private final TransferRepository transfers;
    private final PaymentProvider provider;
    private final ProviderGuards breakers;
    private final LedgerlineConfig.Pipeline settings;
    private final Duration providerTimeout;
    private final String worker;
    private final PipelineMetrics pipelineMetrics;
    private final ClockWatch clocks;
    // every meter built once, per tag value, so a pass does no registry lookups (names, tags and HELP: metrics.Meters;
    // what they mean: docs/operating.md)
    private final Counter lockNotNeeded;
    private final Map<Lock, Counter> lockAcquired = new EnumMap<>(Lock.class);
    private final Map<Outcome, Counter> passes = new EnumMap<>(Outcome.class);
    private final Counter claimWon;
    private final Counter claimLost;
    private final Map<Send, Counter> sends = new EnumMap<>(Send.class);
    private final Timer sendLatency;
    private final Counter lockReleased;
    private final Counter lockExpired;

    public TransferProcessor(PipelineMetrics pipelineMetrics, ClockWatch clocks, RedisLock redisLock, TransferRepository transfers, PaymentProvider provider,
                             ProviderGuards breakers, LedgerlineConfig config, InstanceId instance,
                             @ServiceMeters MeterRegistry metrics) {
        this.redisLock = redisLock;
        this.transfers = transfers;
        this.provider = provider;
        this.breakers = breakers;
        this.settings = config.pipeline();
        this.providerTimeout = config.provider().timeout();
        this.worker = instance.value();
        this.pipelineMetrics = pipelineMetrics;
        this.clocks = clocks;
        this.lockNotNeeded = Meters.LOCK_ACQUIRE.counter("not_needed").register(metrics);
        for (Lock lock : Lock.values()) {
            lockAcquired.put(lock, Meters.LOCK_ACQUIRE.counter(lock.name().toLowerCase()).register(metrics));
        }
        for (Outcome outcome : Outcome.values()) {
            passes.put(outcome, Meters.PIPELINE_PASSES.counter(outcome.name().toLowerCase()).register(metrics));
        }
        this.claimWon = Meters.CLAIM.counter("won").register(metrics);
        this.claimLost = Meters.CLAIM.counter("lost").register(metrics);
        for (Send send : Send.values()) {
            sends.put(send, Meters.PROVIDER_SEND.counter(send.name().toLowerCase()).register(metrics));
        }
        this.sendLatency = Meters.PROVIDER_SEND_LATENCY.timer().register(metrics);
        this.lockReleased = Meters.LOCK_RELEASE.counter("released").register(metrics);
        this.lockExpired = Meters.LOCK_RELEASE.counter("expired").register(metrics);
    }

    /**
     * One pass over a transfer the caller saw in a given status and version: ends in a terminal or
     * reconciling status, or leaves the row untouched for someone else.
     */
    public Uni<Outcome> process(Seen seen, String why) {
        return lockThenProcess(seen, why).invoke(this::countPass);
    }

    /**
     * The first pass over a transfer this instance committed a moment ago, without the Redis lock: no
     * other worker looks at a pending row before its pending grace has passed, and the lock is not what
     * guards the payment anyway — the claim is (the model in model/transfer.pml includes every path that
     * skips the lock). Saves two Redis round trips per transfer.
     */
    public Uni<Outcome> processJustAccepted(Seen seen, String why) {
        lockNotNeeded.increment();
        if (breakers.sendState() != Breaker.State.CLOSED) {
            // open: the send would fail at the breaker; half-open: the breaker lets only its few trial calls through,
            // which the sweeper makes (one row per batch), and a claim it refused waits out its deadline plus the
            // settle time in reconciling. Either way the row stays pending for the sweeper.
            return Uni.createFrom().item(Outcome.PROVIDER_OPEN).invoke(this::countPass);
        }
        return claimSendFence(seen, why).invoke(this::countPass);
    }

    /**
     * The claim a transfer this instance is accepting may take in the statement that inserts it
     * ({@link TransferRepository#insertClaimed}), or {@code null} when its first pass would not send now: the breaker
     * is not closed or the clocks hold sends ({@link #processJustAccepted} then leaves the row pending, as ever).
     */
    public FirstClaim firstClaim(String why) {
        if (breakers.sendState() != Breaker.State.CLOSED || clocks.holdingSends()) {
            return null;
        }
        return new FirstClaim(worker, settings.lease(), why, System.nanoTime());
    }

    /**
     * The first pass of a transfer its INSERT claimed for this instance ({@link #firstClaim}): send and fence, as
     * {@link #processJustAccepted} does after its own claim; the lease is counted from when the claim was asked for.
     */
    public Uni<Outcome> sendClaimed(Claim claim, FirstClaim asked) {
        lockNotNeeded.increment();
        claimWon.increment();
        LOG.debugf("transferId=%s version=%d step=claim by %s on insert (%s)", claim.id(), claim.version(), worker, asked.reason());
        return sendAndFence(claim, asked.askedAt()).invoke(this::countPass);
    }

    private void countPass(Outcome outcome) {
        passes.get(outcome).increment();
    }

    private Uni<Outcome> lockThenProcess(Seen seen, String why) {
        UUID id = seen.id();
        String key = RedisLock.key(id);
        String token = RedisLock.newToken();
        return acquireLock(id, key, token).flatMap(lock -> {
            if (lock == Lock.HELD_ELSEWHERE) {
                return Uni.createFrom().item(Outcome.LOCKED_ELSEWHERE);
            }
            if (lock == Lock.UNAVAILABLE && !settings.proceedWithoutLock()) {
                return Uni.createFrom().item(Outcome.REDIS_UNAVAILABLE);
            }
            return claimSendFence(seen, why)
                    .eventually(() -> lock == Lock.ACQUIRED ? release(id, key, token) : Uni.createFrom().voidItem());
        });
    }

    private Uni<Outcome> claimSendFence(Seen seen, String why) {
        if (breakers.sendState() == Breaker.State.OPEN) {
            // the provider is down: claiming now would only park the transfer in reconciling
            return Uni.createFrom().item(Outcome.PROVIDER_OPEN);
        }
        if (clocks.holdingSends()) {
            // a clock offset beyond the skew bound: a send's deadline would not mean what the settle time assumes
            return Uni.createFrom().item(Outcome.CLOCK_SKEW);
        }
        long claimedAt = System.nanoTime();
        return claim(seen, why).flatMap(claim -> claim == null
                ? Uni.createFrom().item(Outcome.NOT_CLAIMABLE)
                : sendAndFence(claim, claimedAt));
    }

    private Uni<Lock> acquireLock(UUID id, String key, String token) {
        return redisLock.acquire(key, token, settings.lockTtl())
                .map(acquired -> acquired ? Lock.ACQUIRED : Lock.HELD_ELSEWHERE)
                .onFailure().recoverWithItem(e -> {
                    LOG.debugf("transferId=%s step=lock redis unavailable (%s), the database claim guards", id, e.toString());
                    return Lock.UNAVAILABLE;
                })
                .invoke(lock -> lockAcquired.get(lock).increment());
    }

    private Uni<Claim> claim(Seen seen, String why) {
        UUID id = seen.id();
        return transfers.claim(seen, worker, settings.lease(), why)
                .invoke(claim -> {
                    (claim == null ? claimLost : claimWon).increment();
                    if (claim != null) {
                        LOG.debugf("transferId=%s version=%d step=claim by %s (%s)", id, claim.version(), worker, why);
                    }
                });
    }

    private Uni<Outcome> sendAndFence(Claim claim, long claimedAt) {
        long leaseLeft = settings.lease().toNanos() - (System.nanoTime() - claimedAt);
        if (leaseLeft < providerTimeout.plus(settings.margin()).toNanos()) {
            // a send now could still be executing after the lease ends and another worker resends
            return fence(claim, TransferStatus.RECONCILING, null, "lease too short to send", settings.retryBackoff(), false)
                    .map(fenced -> fenced ? Outcome.LEASE_TOO_SHORT : Outcome.STALE);
        }
        return send(claim).flatMap(sent -> {
            SendResult result = sent.definitive();
            if (result == null) {
                return fence(claim, TransferStatus.RECONCILING, null, sent.unknownReason(), settings.retryBackoff(), sent.refused())
                        .map(fenced -> fenced ? Outcome.UNKNOWN : Outcome.STALE);
            }
            if (result.finalOnlyOnFirstSend() && !claim.firstSend()) {
                // a 400/422 to a resend: real providers answer it for a key they already executed (a key reused with
                // another body, an idempotency error), so it says nothing about whether money moved; the lookup decides
                return fence(claim, TransferStatus.RECONCILING, null, "provider answered " + result.status()
                        + " to a resend, outcome unknown", settings.retryBackoff(), false)
                        .map(fenced -> fenced ? Outcome.UNKNOWN : Outcome.STALE);
            }
            if (result.executed()) {
                return fence(claim, TransferStatus.SENT, null, "provider completed", Duration.ZERO, false)
                        .map(fenced -> fenced ? Outcome.SENT : Outcome.STALE);
            }
            return fence(claim, TransferStatus.FAILED, result.reason(), "provider rejected", Duration.ZERO, false)
                    .map(fenced -> fenced ? Outcome.FAILED : Outcome.STALE);
        });
    }

    /**
     * How a send ended: the provider's definitive answer, or none ({@code unknownReason} says why; {@code refused}:
     * the provider answered an unexplained 4xx).
     */
    private record Sent(SendResult definitive, String unknownReason, boolean refused) {
    }

    private Uni<Sent> send(Claim claim) {
        // the deadline the claim fixed: the provider must not execute this send later, and nobody claims the row
        // again or decides from a lookup until it (plus the margin) has passed — whatever happens to this call
        PaymentOrder order = new PaymentOrder(claim.providerReference(), claim.amount(), claim.currency(), claim.iban(),
                claim.name(), claim.sendNotAfter().toInstant());
        long started = System.nanoTime();
        return provider.send(order)
                .invoke(result -> sends.get(result.executed() ? Send.COMPLETED : Send.REJECTED).increment())
                .map(result -> new Sent(result, null, false))
                .onFailure().recoverWithItem(e -> {
                    Send outcome = causedBy(e, SendNotWrittenException.class) ? Send.NOT_WRITTEN
                            : causedBy(e, ProviderRefusedException.class) ? Send.REFUSED : Send.UNKNOWN;
                    sends.get(outcome).increment();
                    LOG.infof("transferId=%s version=%d step=send outcome %s: %s", claim.id(), claim.version(),
                            outcome.name().toLowerCase(), e.toString());
                    return new Sent(null, switch (outcome) {
                        case NOT_WRITTEN -> "send not written, its deadline passed first";
                        case REFUSED -> "provider refused the send, outcome unknown";
                        default -> "provider outcome unknown";
                    }, outcome == Send.REFUSED);
                })
                .invoke(() -> sendLatency.record(Duration.ofNanos(System.nanoTime() - started)));
    }

    private static boolean causedBy(Throwable failure, Class<? extends Throwable> type) {
        for (Throwable e = failure; e != null; e = e.getCause()) {
            if (type.isInstance(e)) {
                return true;
            }
        }
        return false;
    }

    private Uni<Boolean> fence(Claim claim, TransferStatus status, String failureReason, String reason, Duration nextAttemptIn,
                               boolean refused) {
        return transfers.fence(claim.id(), claim.version(), claim.token(), status, failureReason, nextAttemptIn, worker, reason, refused)
                .invoke(fenced -> {
                    if (fenced) {
                        LOG.debugf("transferId=%s version=%d step=fence -> %s (%s)", claim.id(), claim.version() + 1, status.db(), reason);
                        if (status.isTerminal()) {
                            pipelineMetrics.finished(status, claim.createdAt());
                        }
                    } else {
                        pipelineMetrics.staleWrite();
                        LOG.warnf("transferId=%s version=%d step=fence stale worker: the row moved on, %s not written",
                                claim.id(), claim.version(), status.db());
                    }
                });
    }

    private Uni<Void> release(UUID id, String key, String token) {
        return redisLock.release(key, token)
                .invoke(released -> (released ? lockReleased : lockExpired).increment())
                .onFailure().invoke(e -> LOG.debugf("transferId=%s step=release redis unavailable, the lock expires by itself", id))
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }
}
