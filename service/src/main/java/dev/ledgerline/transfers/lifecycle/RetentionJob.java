package dev.ledgerline.transfers.lifecycle;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.config.StartupOrder;
import dev.ledgerline.transfers.metrics.Meters;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import dev.ledgerline.transfers.transfer.EventPartition;
import dev.ledgerline.transfers.transfer.TransferRepository;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Moves old history and ended transfers off the primary a whole partition at a time, and removes idempotency keys past
 * their window (docs/capacity.md "Data lifecycle"), safely on any number of instances. Each run, in this order:
 * <ul>
 *   <li>creates the partitions of {@code transfer_events} for the next {@code events-partitions-ahead};</li>
 *   <li>detaches the partitions whose whole range is older than {@code ledgerline.events.retention}, oldest first,
 *       and drops them or keeps them apart ({@code keep-detached}); one that holds an event of a transfer that has not
 *       ended stays attached;</li>
 *   <li>removes the keys of {@code transfer_keys} older than {@code key-window} whose transfer ended at least that long
 *       ago, oldest first, {@code key-batch} per statement and at most {@code max-keys-per-run}; a transfer that has not
 *       ended keeps its key;</li>
 *   <li>creates the partitions of {@code transfers} for the next {@code transfers-partitions-ahead} and detaches those
 *       whose whole range is older than {@code transfers-retention}, unless one of its transfers has not ended or one of
 *       its keys is still inside its window;</li>
 *   <li>reports the partitions' state (the gauges the alert reads), on every instance, whether or not it worked.</li>
 * </ul>
 * Each step is one call of a database function (migrations V14, V16, V17) that first takes a transaction-scoped advisory lock
 * with {@code pg_try_advisory_xact_lock}: on many instances one works and the others count the run as busy; a crash
 * mid-step rolls the step back and frees the lock with the transaction. Each step does at most
 * {@code max-partitions-per-run} partitions (or {@code max-keys-per-run} keys), so a job far behind catches up over
 * several runs without one long lock.
 */
@Startup(StartupOrder.BEFORE_SCHEDULER)
@ApplicationScoped
public class RetentionJob {

    private static final Logger LOG = Logger.getLogger(RetentionJob.class);

    /** What one run did; {@code busy} when another instance held the lock for a step. */
    public record Run(boolean busy, int created, List<EventPartition> detached, long keysExpired, int transferPartitionsCreated,
                      List<EventPartition> transferPartitionsDetached) {

        static Run busy(int created, List<EventPartition> detached, long keysExpired) {
            return new Run(true, created, detached, keysExpired, 0, List.of());
        }


        /** How a run ended, as {@code ledgerline_retention_runs_total} counts it. */
        enum Result { DONE, BUSY, FAILED }
    }

    private final TransferRepository transfers;
    private final LedgerlineConfig.Retention policy;
    private final Duration eventsRetention;
    private final Map<Run.Result, Counter> runs = new EnumMap<>(Run.Result.class);
    private final Counter created;
    private final Map<EventPartition.Outcome, Counter> detached = new EnumMap<>(EventPartition.Outcome.class);
    private final AtomicLong coveredAheadSeconds = new AtomicLong();
    private final AtomicLong overdue = new AtomicLong();
    private final AtomicLong defaultRows = new AtomicLong();
    private final Counter keysExpired;
    private final Counter transferPartitionsCreated;
    private final Map<EventPartition.Outcome, Counter> transferPartitionsDetached = new EnumMap<>(EventPartition.Outcome.class);
    private final AtomicLong transfersCoveredAheadSeconds = new AtomicLong();
    private final AtomicLong transfersOverdue = new AtomicLong();
    private final AtomicLong transfersDefaultRows = new AtomicLong();
    private final AtomicLong keysOverdue = new AtomicLong();

    public RetentionJob(TransferRepository transfers, LedgerlineConfig config, @ServiceMeters MeterRegistry metrics) {
        this.transfers = transfers;
        this.policy = config.retention();
        this.eventsRetention = config.events().retention();
        for (Run.Result result : Run.Result.values()) {
            runs.put(result, Meters.RETENTION_RUNS.counter(result.name().toLowerCase()).register(metrics));
        }
        this.created = Meters.RETENTION_PARTITIONS.counter("created").register(metrics);
        for (EventPartition.Outcome outcome : EventPartition.Outcome.values()) {
            detached.put(outcome, Meters.RETENTION_PARTITIONS.counter(outcome.name().toLowerCase()).register(metrics));
        }
        Meters.RETENTION_EVENTS_COVERED_AHEAD.gauge(metrics, coveredAheadSeconds, AtomicLong::get);
        Meters.RETENTION_EVENTS_OVERDUE.gauge(metrics, overdue, AtomicLong::get);
        Meters.RETENTION_EVENTS_DEFAULT_ROWS.gauge(metrics, defaultRows, AtomicLong::get);
        this.keysExpired = Meters.RETENTION_KEYS_EXPIRED.counter().register(metrics);
        Meters.RETENTION_KEYS_OVERDUE.gauge(metrics, keysOverdue, AtomicLong::get);
        this.transferPartitionsCreated = Meters.RETENTION_TRANSFER_PARTITIONS.counter("created").register(metrics);
        for (EventPartition.Outcome outcome : EventPartition.Outcome.values()) {
            transferPartitionsDetached.put(outcome,
                    Meters.RETENTION_TRANSFER_PARTITIONS.counter(outcome.name().toLowerCase()).register(metrics));
        }
        Meters.RETENTION_TRANSFERS_COVERED_AHEAD.gauge(metrics, transfersCoveredAheadSeconds, AtomicLong::get);
        Meters.RETENTION_TRANSFERS_OVERDUE.gauge(metrics, transfersOverdue, AtomicLong::get);
        Meters.RETENTION_TRANSFERS_DEFAULT_ROWS.gauge(metrics, transfersDefaultRows, AtomicLong::get);
    }

    @Scheduled(every = "${ledgerline.retention.every}", delayed = "5s",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP, identity = "ledgerline-retention")
    Uni<Void> scheduled() {
        Uni<?> work = policy.enabled() ? run() : Uni.createFrom().voidItem();
        return work.onFailure().recoverWithNull()
                .flatMap(done -> report())
                .onFailure().invoke(e -> LOG.warnf("step=retention-status failed: %s", e.toString()))
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }

    /**
     * One run of the policy: events' partitions made ahead and detached past the retention, keys past their window
     * removed, then transfers' partitions made ahead and detached (after the keys: a partition waits for its keys).
     */
    public Uni<Run> run() {
        Instant now = Instant.now();
        return transfers.createEventPartitions(now, now.plus(policy.eventsPartitionsAhead()), policy.eventsPartitionSpan(),
                        policy.maxPartitionsPerRun(), policy.lockTimeout())
                .flatMap(made -> made < 0
                        ? Uni.createFrom().item(Run.busy(0, List.of(), 0))
                        : detach(now).flatMap(gone -> gone == null ? Uni.createFrom().item(Run.busy(made, List.of(), 0))
                                : expireKeys(now.minus(policy.keyWindow()), 0).flatMap(keys -> keys < 0
                                        ? Uni.createFrom().item(Run.busy(made, gone, 0))
                                        : transferPartitions(now, made, gone, keys))))
                .invoke(this::count)
                .onFailure().invoke(e -> {
                    runs.get(Run.Result.FAILED).increment();
                    LOG.warnf("step=retention failed, next run retries: %s", e.toString());
                });
    }

    private Uni<Run> transferPartitions(Instant now, int eventsMade, List<EventPartition> eventsGone, long keys) {
        return transfers.createTransferPartitions(now, now.plus(policy.transfersPartitionsAhead()),
                        policy.transfersPartitionSpan(), policy.maxPartitionsPerRun(), policy.lockTimeout())
                .flatMap(made -> made < 0 ? Uni.createFrom().item(Run.busy(eventsMade, eventsGone, keys))
                        : transfers.detachTransferPartitions(now.minus(policy.transfersRetention()), policy.maxPartitionsPerRun(),
                                        policy.keepDetached(), policy.lockTimeout())
                                .map(gone -> gone == null ? Run.busy(eventsMade, eventsGone, keys)
                                        : new Run(false, eventsMade, eventsGone, keys, made, gone)));
    }

    private Uni<List<EventPartition>> detach(Instant now) {
        return transfers.detachEventPartitions(now.minus(eventsRetention), policy.maxPartitionsPerRun(),
                policy.keepDetached(), policy.lockTimeout());
    }

    /**
     * Removes the keys past their window in batches, each a statement of its own, until a batch comes back short or
     * the run's bound is reached; answers how many, or -1 when another instance held the lock for the first batch.
     */
    private Uni<Long> expireKeys(Instant olderThan, long removedSoFar) {
        int batch = (int) Math.min(policy.keyBatch(), policy.maxKeysPerRun() - removedSoFar);
        return transfers.expireKeys(olderThan, batch).flatMap(removed -> {
            if (removed < 0) {
                return Uni.createFrom().item(removedSoFar == 0 ? -1L : removedSoFar);
            }
            long total = removedSoFar + removed;
            keysExpired.increment(removed);
            return removed < batch || total >= policy.maxKeysPerRun()
                    ? Uni.createFrom().item(total)
                    : expireKeys(olderThan, total);
        });
    }

    private void count(Run run) {
        runs.get(run.busy() ? Run.Result.BUSY : Run.Result.DONE).increment();
        created.increment(run.created());
        transferPartitionsCreated.increment(run.transferPartitionsCreated());
        for (EventPartition partition : run.transferPartitionsDetached()) {
            transferPartitionsDetached.get(partition.outcome()).increment();
            if (partition.outcome() == EventPartition.Outcome.HELD) {
                LOG.debugf("step=retention partition=%s kept attached: an open transfer or a key inside its window", partition.name());
            } else {
                LOG.infof("step=retention partition=%s ended=%s %s", partition.name(), partition.endsAt(),
                        partition.outcome().name().toLowerCase());
            }
        }
        if (run.keysExpired() > 0) {
            LOG.infof("step=retention expired=%d idempotency keys past ledgerline.retention.key-window", run.keysExpired());
        }
        if (run.created() > 0) {
            LOG.infof("step=retention created=%d partitions of transfer_events ahead", run.created());
        }
        for (EventPartition partition : run.detached()) {
            detached.get(partition.outcome()).increment();
            if (partition.outcome() == EventPartition.Outcome.HELD) {
                LOG.debugf("step=retention partition=%s kept attached: it holds an event of a transfer that has not ended",
                        partition.name());
            } else {
                LOG.infof("step=retention partition=%s ended=%s %s", partition.name(), partition.endsAt(),
                        partition.outcome().name().toLowerCase());
            }
        }
    }

    /** Reads the partitions' and the keys' state into the gauges. */
    public Uni<EventPartition.Status> report() {
        Instant now = Instant.now();
        return transfers.eventPartitionStatus(now.minus(eventsRetention)).invoke(status -> {
            coveredAheadSeconds.set(status.coveredUntil() == null ? 0
                    : Math.max(0, Duration.between(now, status.coveredUntil()).toSeconds()));
            overdue.set(status.overdue());
            defaultRows.set(status.defaultRows());
        }).call(status -> transfers.keysOverdue(now.minus(policy.keyWindow())).invoke(keysOverdue::set))
                .call(status -> transfers.transferPartitionStatus(now.minus(policy.transfersRetention())).invoke(t -> {
                    transfersCoveredAheadSeconds.set(t.coveredUntil() == null ? 0
                            : Math.max(0, Duration.between(now, t.coveredUntil()).toSeconds()));
                    transfersOverdue.set(t.overdue());
                    transfersDefaultRows.set(t.defaultRows());
                }));
    }
}
