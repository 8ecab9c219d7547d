package dev.ledgerline.transfers.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * Every meter of the service, defined once: its name, base unit, HELP text and tag keys, and for a counter an alert
 * rule reads ({@code ops/alerts.yml}), the series that rule selects. The classes that count build their meters from
 * here ({@link #counter}, {@link #gauge}, {@link #timer}, {@link #summary}) and add only what is particular to the
 * kind of meter (a gauge's value, a histogram's buckets). Micrometer hands back the same meter for the same name and
 * tags, and Prometheus takes the HELP text and the tag keys of a name from whichever registration came first, so
 * one definition here is what keeps every registration of a name alike.
 *
 * <p>The exported names follow Micrometer's Prometheus naming: dots become underscores, a counter ends in
 * {@code _total}, a base unit is appended ({@code ledgerline.clock.offset} in seconds is
 * {@code ledgerline_clock_offset_seconds}). A meter whose {@link #help()} is {@code null} is exported with a blank
 * HELP line. This package imports nothing of the service, so every package may use it.
 */
public enum Meters {

    // the pipeline and its outcomes
    FENCE_STALE("ledgerline.fence.stale",
            "Final writes refused by the version fence: a worker paused past its lease (GC, CPU starvation)",
            List.of(), List.of(List.of())),
    FENCE_BATCH_SIZE("ledgerline.fence.batch.size", "fences",
            "Fences written by one batch statement (one commit, one WAL flush)", List.of()),
    CLAIM("ledgerline.claim", null, List.of("result")),
    CLAIM_BATCH_SIZE("ledgerline.claim.batch.size", "claims",
            "Claims written by one statement (one commit): claims asked for while one is in flight go together", List.of()),
    LOCK_ACQUIRE("ledgerline.lock.acquire", null, List.of("result")),
    LOCK_RELEASE("ledgerline.lock.release", null, List.of("result")),
    PIPELINE_PASSES("ledgerline.pipeline.passes", null, List.of("outcome")),
    PIPELINE_IN_FLIGHT("ledgerline.pipeline.in_flight", null, List.of()),
    PIPELINE_LATENCY("ledgerline.pipeline.latency", "From accepted to sent or failed", List.of()),
    DISPATCH("ledgerline.dispatch", null, List.of("result")),
    PROVIDER_SEND("ledgerline.provider.send",
            "Sends to the payment provider by outcome; unknown is a timeout, 5xx or broken connection, resolved by lookup; "
                    + "refused an unexplained 4xx",
            List.of("outcome"), List.of(List.of("unknown"), List.of("refused"), List.of("completed"), List.of("rejected"))),
    PROVIDER_SEND_LATENCY("ledgerline.provider.send.latency", null, List.of()),
    PROVIDER_BREAKER_OPEN("ledgerline.provider.breaker.open",
            "1 while the provider breaker of sends or of lookups is open or half-open: calls are refused without reaching "
                    + "the provider, and new sends wait",
            List.of("breaker")),
    RECONCILIATIONS("ledgerline.reconciliations",
            "Reconciler lookups at the provider by result; lookup_error means the provider's lookup failed too, parked that "
                    + "a transfer waits for an operator",
            List.of("result"), List.of(List.of("lookup_error"), List.of("parked"))),
    SWEEPER_LEASES_EXPIRED("ledgerline.sweeper.leases_expired", null, List.of()),
    SWEEPER_EPOCHS_ADOPTED("ledgerline.sweeper.epochs_adopted",
            "Database servers this instance adopted after a restart, failover or restore", List.of()),
    SWEEPER_HASTENED("ledgerline.sweeper.hastened",
            "Reconciling transfers whose back-off was cut short because the provider recovered", List.of()),
    TRANSFERS_FINISHED("ledgerline.transfers.finished", null, List.of("status")),

    // what the database holds
    TRANSFERS_OPEN("ledgerline.transfers.open",
            "Transfers not yet sent or failed, parked ones aside (ledgerline_transfers_parked)", List.of("status")),
    TRANSFERS_OLDEST_OPEN_AGE("ledgerline.transfers.oldest.open.age", "seconds",
            "Age of the oldest transfer not yet sent or failed, parked ones aside", List.of()),
    TRANSFERS_PARKED("ledgerline.transfers.parked",
            "Transfers parked in reconciling: the reconciler stopped trying, an operator must check and resume them", List.of()),
    DATABASE_STATISTICS_DUE("ledgerline.database.statistics.due", "seconds",
            "How long the planner statistics of a partition of transfers or transfer_events, or of transfer_keys, have"
                    + " been due for an ANALYZE that has not come (0: none is due); grows while autovacuum is off or behind",
            List.of()),

    // admission and the duplicate decision
    TRANSFERS_REQUESTS("ledgerline.transfers.requests",
            "POST /v1/transfers answers by outcome; conflict means a retry arrived while the first request was in flight",
            List.of("outcome"), List.of(List.of("conflict"), List.of("created"))),
    OVERLOAD_PENDING("ledgerline.overload.pending",
            "Pending transfers across instances as last counted (stops at ledgerline.overload.max-pending + 1)", List.of()),
    OVERLOAD_REFUSING("ledgerline.overload.refusing",
            "1 while new transfers are refused because the pending backlog is beyond its bound", List.of()),
    OVERLOAD_COUNTS("ledgerline.overload.counts",
            "Counts of the pending backlog this instance made, one per ledgerline.overload.check-every", List.of()),
    RATE_LIMIT("ledgerline.rate.limit", null, List.of("kind", "store", "result")),
    IDEMPOTENCY("ledgerline.idempotency",
            "Idempotency decisions by path (fast: Redis, db: PostgreSQL) and result; redis_unavailable means the service "
                    + "runs on PostgreSQL alone",
            List.of("path", "result"), List.of(List.of("db", "redis_unavailable"))),
    REPLAYS_EARLY("ledgerline.replays.early",
            "Replays answered as kept by the replay route, in front of Quarkus REST and the HTTP authentication",
            List.of()),
    CREATED_EARLY("ledgerline.transfers.created.early",
            "First uses of a key created and answered by the replay route, in front of Quarkus REST and the HTTP "
                    + "authentication",
            List.of()),
    AUTH_TOKEN_CACHE("ledgerline.auth.token.cache",
            "Bearer tokens answered from the verified-token cache (hit) or verified in full (miss)", List.of("result")),

    // the peers: Redis and the clocks
    REDIS_COMMANDS("ledgerline.redis.commands",
            "Redis commands by result; late: timed out while Redis kept answering others (this process was busy), "
                    + "not counted against Redis; breaker_open: refused without sending; script_sent: a script sent as text "
                    + "because this Redis did not hold it (restarted, failed over, flushed)",
            List.of("result")),
    REDIS_BREAKER_OPEN("ledgerline.redis.breaker.open",
            "1 while the shared Redis breaker is open or half-open: Redis-backed paths use their fallbacks", List.of()),
    CLOCK_OFFSET("ledgerline.clock.offset", "seconds",
            "The peer's clock minus this instance's, as last measured (negative: behind)", List.of("peer")),
    CLOCK_SENDS_HELD("ledgerline.clock.sends_held",
            "1 while no new send is claimed because a clock offset exceeds ledgerline.pipeline.clock-skew-bound", List.of()),

    // the data lifecycle
    RETENTION_RUNS("ledgerline.retention.runs",
            "Runs of the retention job by result; busy means another instance held the retention lock, failed that a step "
                    + "failed (the next run tries again)",
            List.of("result"), List.of(List.of("failed"))),
    RETENTION_PARTITIONS("ledgerline.retention.partitions",
            "Partitions of transfer_events the retention job created, dropped, kept detached, or left attached (held) "
                    + "because they hold an event of a transfer that has not ended",
            List.of("action")),
    RETENTION_EVENTS_COVERED_AHEAD("ledgerline.retention.events.covered_ahead", "seconds",
            "How far past now the partitions of transfer_events reach; events past it land in the default partition",
            List.of()),
    RETENTION_EVENTS_OVERDUE("ledgerline.retention.events.overdue",
            "Partitions of transfer_events whose whole range is older than ledgerline.events.retention and still attached",
            List.of()),
    RETENTION_EVENTS_DEFAULT_ROWS("ledgerline.retention.events.default_rows",
            "Events in the default partition of transfer_events, written when no partition covered their time (stops at 1000)",
            List.of()),
    RETENTION_TRANSFER_PARTITIONS("ledgerline.retention.transfer_partitions",
            "Partitions of transfers the retention job created, dropped, kept detached, or left attached (held) because "
                    + "they hold an open transfer or a key still inside its window",
            List.of("action")),
    RETENTION_TRANSFERS_COVERED_AHEAD("ledgerline.retention.transfers.covered_ahead", "seconds",
            "How far past now the partitions of transfers reach; transfers past it land in the default partition",
            List.of()),
    RETENTION_TRANSFERS_OVERDUE("ledgerline.retention.transfers.overdue",
            "Partitions of transfers whose whole range is older than ledgerline.retention.transfers-retention and still attached",
            List.of()),
    RETENTION_TRANSFERS_DEFAULT_ROWS("ledgerline.retention.transfers.default_rows",
            "Transfers in the default partition of transfers, written when no partition covered their time (stops at 1000)",
            List.of()),
    RETENTION_KEYS_EXPIRED("ledgerline.retention.keys.expired",
            "Idempotency keys the retention job removed from transfer_keys after ledgerline.retention.key-window",
            List.of()),
    RETENTION_KEYS_OVERDUE("ledgerline.retention.keys.overdue",
            "Idempotency keys removable for more than a day and still in transfer_keys (stops at 1000)",
            List.of()),

    // webhooks
    WEBHOOK_DELIVERIES("ledgerline.webhooks.deliveries",
            "Webhook delivery attempts by outcome; failed is a non-2xx answer, a timeout, a refused connection or a refused address",
            List.of("outcome")),
    WEBHOOK_ENDPOINTS_FAILING("ledgerline.webhooks.endpoints.failing",
            "Webhook endpoints marked failing: one event has failed for longer than ledgerline.webhooks.give-up-after",
            List.of()),
    WEBHOOK_ENDPOINTS_MARKED_FAILING("ledgerline.webhooks.endpoints.marked_failing",
            "Times this instance marked a webhook endpoint failing", List.of(), List.of(List.of()));

    private final String meterName;
    private final String baseUnit;
    private final String help;
    private final List<String> tagKeys;
    private final List<List<String>> alerted;

    Meters(String meterName, String help, List<String> tagKeys) {
        this(meterName, null, help, tagKeys, List.of());
    }

    Meters(String meterName, String help, List<String> tagKeys, List<List<String>> alerted) {
        this(meterName, null, help, tagKeys, alerted);
    }

    Meters(String meterName, String baseUnit, String help, List<String> tagKeys) {
        this(meterName, baseUnit, help, tagKeys, List.of());
    }

    Meters(String meterName, String baseUnit, String help, List<String> tagKeys, List<List<String>> alerted) {
        this.meterName = meterName;
        this.baseUnit = baseUnit;
        this.help = help;
        this.tagKeys = tagKeys;
        this.alerted = alerted;
    }

    /** The Micrometer name, e.g. {@code ledgerline.fence.stale}. */
    public String meterName() {
        return meterName;
    }

    /** The HELP text, or {@code null} for a meter exported without one. */
    public String help() {
        return help;
    }

    /** The tag keys, in the order {@link #counter} and the other builders take their values. */
    public List<String> tagKeys() {
        return tagKeys;
    }

    /**
     * The series an alert rule reads, as tag values in {@link #tagKeys()} order (an empty list: the meter without
     * tags); registered at start-up so that they exist, with their HELP text, before they first count.
     */
    public List<List<String>> alerted() {
        return alerted;
    }

    /** A counter of this meter with the given tag values, one for each of {@link #tagKeys()}. */
    public Counter.Builder counter(String... tagValues) {
        return Counter.builder(meterName).description(help).baseUnit(baseUnit).tags(tags(tagValues));
    }

    /**
     * Registers a gauge of this meter reading {@code value} off {@code state}, with the given tag values, in place of
     * any gauge of the same name and tags already there. Micrometer would hand back the one already there, still
     * reading its own state: Quarkus keeps the meters of its global registry when an application stops outside dev
     * mode, so an application started again in the same JVM (as the tests do, one per test profile) would export
     * the stopped one's values.
     */
    public <T> Gauge gauge(MeterRegistry registry, T state, ToDoubleFunction<T> value, String... tagValues) {
        Tags tags = tags(tagValues);
        Gauge stale = registry.find(meterName).tags(tags).gauge();
        if (stale != null) {
            registry.remove(stale);
        }
        return Gauge.builder(meterName, state, value).description(help).baseUnit(baseUnit).tags(tags).register(registry);
    }

    /** A timer of this meter with the given tag values. */
    public Timer.Builder timer(String... tagValues) {
        return Timer.builder(meterName).description(help).tags(tags(tagValues));
    }

    /** A distribution summary of this meter with the given tag values. */
    public DistributionSummary.Builder summary(String... tagValues) {
        return DistributionSummary.builder(meterName).description(help).baseUnit(baseUnit).tags(tags(tagValues));
    }

    private Tags tags(String... values) {
        if (values.length != tagKeys.size()) {
            throw new IllegalArgumentException(meterName + " takes the tags " + tagKeys + ", got " + values.length + " values");
        }
        Tags tags = Tags.empty();
        for (int i = 0; i < values.length; i++) {
            tags = tags.and(tagKeys.get(i), values[i]);
        }
        return tags;
    }
}
