package dev.ledgerline.transfers.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

import java.time.Duration;
import java.util.Optional;
import java.util.Set;

/**
 * Every setting of the service, under {@code ledgerline.*}. A length of time is a {@link Duration} ({@code PT2S},
 * {@code 250ms}, {@code 2s}), with three kinds of exception: the provider's {@code timeout-ms} and
 * {@code breaker.delay-ms} are whole milliseconds, the unit of the fault-tolerance settings they replaced
 * ({@link Provider#timeout()} is the timeout as a {@code Duration}); the {@code *-every} settings are schedules that {@code @Scheduled} reads, which also takes
 * {@code off} (except {@code overload.check-every}, a timer's period); and the {@code *-seconds} settings are the whole seconds of a header ({@code Retry-After},
 * {@code Prefer: wait}).
 */
@ConfigMapping(prefix = "ledgerline")
public interface LedgerlineConfig {

    /** Name of this instance in leases, events and logs; defaults to host name and pid. */
    Optional<String> instanceId();

    /** What a transfer may be: amount, currency, text lengths. */
    Transfers transfers();

    /** The HTTP edge's bounds on a request: its body and the pages of the listings. */
    Http http();

    /** Requests held open by {@code Prefer: wait}: the transfer long poll and the event feed. */
    LongPoll longPoll();

    /** How the service waits for PostgreSQL. */
    Database database();

    Idempotency idempotency();

    Pipeline pipeline();

    Provider provider();

    Overload overload();

    Events events();

    Webhooks webhooks();

    Ledger ledger();

    Retention retention();

    /**
     * The data lifecycle (docs/capacity.md "Data lifecycle"): how old history leaves the primary. {@code transfer_events}
     * is partitioned by the time of each event (migration V14); a job, safe on any number of instances, creates the
     * partitions ahead of time and detaches those whose whole range is older than {@code ledgerline.events.retention},
     * which is therefore both how far back the feed answers and how long events stay on the primary. It also removes
     * idempotency keys past their window ({@code key-window}, docs/safety.md "Idempotency policy"), and detaches the
     * partitions of {@code transfers} (migration V17) older than {@code transfers-retention} that hold no open transfer and
     * no key still inside its window.
     */
    interface Retention {
        /**
         * Whether this instance runs the job. Off, it still reports the partitions' state (the gauges and the alert), and
         * partitions must then be created and detached by hand through the same database functions.
         */
        @WithDefault("true")
        boolean enabled();

        /** How often the job runs; each run is bounded by {@code max-partitions-per-run}. */
        @WithDefault("10m")
        String every();

        /**
         * The time range of one partition of {@code transfer_events}, aligned on the epoch (a day: midnight UTC to
         * midnight). A day is about 36 GB of events at 1,000 transfers/s (413 MB per million transfers), detached a day
         * at a time; at least one second. Changing it applies to partitions created afterwards.
         */
        @WithDefault("P1D")
        Duration eventsPartitionSpan();

        /**
         * How far past now partitions exist. An event whose time no partition covers lands in the default partition
         * (accepts never fail for want of one), and its range can then no longer get a partition: a week gives the job,
         * and an operator paged by its alert, days to catch up.
         */
        @WithDefault("P7D")
        Duration eventsPartitionsAhead();

        /**
         * Partitions one run creates, and partitions it detaches, at most: bounded work per run, however far behind the
         * job is (a detach takes a brief exclusive lock of {@code transfer_events}).
         */
        @WithDefault("4")
        int maxPartitionsPerRun();

        /**
         * What happens to a detached partition: dropped ({@code false}), or kept as a table of its own under the same
         * name ({@code transfer_events_<start>}), which only the owner role reads, for an export to cold storage
         * ({@code pg_dump -t}) before an operator drops it ({@code true}). Keep it if an audit rule asks for the history and nothing else copies it
         * (the event feed and the webhooks do, to whoever consumes them).
         */
        @WithDefault("false")
        boolean keepDetached();

        /**
         * The longest a create or a detach waits for its lock of {@code transfer_events}; past it the step gives up and
         * the next run tries again. Inserts queue behind a waiting detach, so this bounds the stall of an accept.
         */
        @WithDefault("PT1S")
        Duration lockTimeout();

        /**
         * How long an idempotency key stays unique after its transfer ended: within it a request with the key answers
         * that transfer (a replay, or 422 for another body); after it the key is removed from {@code transfer_keys} and
         * the same key is a new intent, which creates a new transfer (under the intent's provider reference, which the
         * provider has forgotten by then). A transfer that has not ended (parked ones included) keeps its key. At least a
         * day and at least {@code ledgerline.provider.key-window}:
         * far above any client's retry horizon (the SDKs give up after 30 s) and Stripe's 24 h; 30 days by default, the
         * history's own retention, so that a client reconciling a month of its payments by key finds every one.
         */
        @WithDefault("P30D")
        Duration keyWindow();

        /**
         * Keys one run removes at most, oldest first, in statements of {@code key-batch} keys each: bounded work per run.
         * At 1,000 transfers/s a ten-minute run must remove 600,000 to keep up; the default covers that with room for
         * catching up.
         */
        @WithDefault("1000000")
        int maxKeysPerRun();

        /**
         * Keys one statement removes at most: each is a transaction of its own under the retention lock, so a batch
         * bounds how long the lock is held and how many row locks one transaction takes.
         */
        @WithDefault("10000")
        int keyBatch();

        /**
         * How long ended transfers stay on the primary: a day's partition of {@code transfers} is detached once its whole
         * range is older than this, none of its transfers is open (pending, processing, reconciling: parked ones too) and
         * none of its keys is left (a key stays {@code key-window} after its transfer ended), so a transfer stays at least
         * as long as its key. 30 days, as the history: a transfer, its events and its key leave together.
         */
        @WithDefault("P30D")
        Duration transfersRetention();

        /** The time range of one partition of {@code transfers}, aligned on the epoch: a day, about 34 GB at 1,000 transfers/s. */
        @WithDefault("P1D")
        Duration transfersPartitionSpan();

        /**
         * How far past now partitions of {@code transfers} exist; a transfer whose time none covers lands in the default
         * partition, which is never detached.
         */
        @WithDefault("P7D")
        Duration transfersPartitionsAhead();
    }

    /**
     * The built-in ledger (docs/safety.md "Money the customer has"): accounts per principal and currency, a hold at
     * accept, posted or released by the fence that ends the transfer.
     */
    interface Ledger {
        /**
         * Whether a transfer must be covered by its owner's available balance and holds it until it ends. Off, for a
         * deployment whose balances live in a core-banking system: a transfer is accepted whatever the balance, as
         * before the ledger, and holds nothing; transfers accepted while it was on still post or release their holds.
         */
        @WithDefault("true")
        boolean enabled();

        /**
         * What an account holds when it opens on first use, in minor units of its currency, booked as an
         * {@code opening} entry. 0 in prod, where an account holds only what was credited; the dev and test profiles
         * open with 1,000,000 so the walkthrough and the sandbox work without a credit.
         */
        @WithDefault("0")
        long openingBalance();
    }

    /**
     * Webhooks: the event feed pushed to registered HTTP endpoints (docs/webhooks.md). Each endpoint follows the feed
     * with its own cursor; one instance at a time delivers to it, under a lease.
     */
    interface Webhooks {
        /**
         * How often each instance looks for endpoints with a delivery due (the scheduler's tick: 1 s at the least); a
         * retry also gets a timer of its own, so it is not late by up to a tick. The scheduler reads the property itself; typed here so that a
         * value that is no duration stops the start.
         */
        @WithDefault("1s")
        Duration deliverEvery();

        /** The longest one delivery may take, connect to last byte of the answer; beyond it the attempt failed. */
        @WithDefault("PT10S")
        Duration requestTimeout();

        /**
         * How long an instance holds an endpoint it delivers to; renewed with each acknowledged event. Must exceed
         * request-timeout: an instance sends only while its lease outlasts the request, so a lease that ran out
         * (the instance died or stalled) means no request of that instance can still be in flight.
         */
        @WithDefault("PT1M")
        Duration lease();

        /** Back-off after the first failed attempt at an event; it doubles with each further one, with jitter. */
        @WithDefault("PT1S")
        Duration firstBackoff();

        /** The longest back-off between two attempts, also once the endpoint is marked failing. */
        @WithDefault("PT1H")
        Duration maxBackoff();

        /**
         * How long an endpoint may keep failing one event before it is marked failing (gauge
         * ledgerline_webhooks_endpoints_failing, alert LedgerlineWebhookEndpointFailing). Delivery goes on at
         * max-backoff; nothing is skipped.
         */
        @WithDefault("P3D")
        Duration giveUpAfter();

        /**
         * After POST /v1/webhook-endpoints/{id}/secret, how long the replaced secret goes on signing deliveries beside
         * the new one (a second v1 in Ledgerline-Signature), so receivers can switch without refusing a delivery.
         */
        @WithDefault("PT24H")
        Duration previousSecretValidFor();

        /** Events one endpoint is sent, at most, per lease. */
        @WithDefault("100")
        int batch();

        /** Endpoints one instance leases, at most, per round (delivered to side by side). */
        @WithDefault("16")
        int endpointsPerRound();

        /** Delivery attempts kept per endpoint for GET /v1/webhook-endpoints/{id}/deliveries; older ones are pruned. */
        @WithDefault("500")
        int keepAttempts();

        /** Bytes of an endpoint's answer that are read; the rest is discarded unread. */
        @WithDefault("4096")
        int maxResponseBytes();

        /**
         * Whether an endpoint URL may use plain http; prod requires https (dev and test allow http, for local
         * receivers).
         */
        @WithDefault("false")
        boolean allowHttp();

        /**
         * Whether an endpoint may resolve to a loopback, private, link-local, unique-local, cloud-metadata or
         * unspecified address. Off in prod (server-side request forgery); dev and test allow them.
         */
        @WithDefault("false")
        boolean allowPrivateHosts();
    }

    /** The event feed, {@code GET /v1/events} (docs/http.md "The event feed"). */
    interface Events {
        /**
         * How far back the feed answers; a cursor older than this is refused with 410, never moved forward. Also how
         * long events stay on the primary: the retention job detaches a partition of {@code transfer_events} once its
         * whole range is older than this ({@code ledgerline.retention}).
         */
        @WithDefault("P30D")
        Duration retention();

        /** How often a held feed request ({@code Prefer: wait}) looks again for events past its cursor. */
        @WithDefault("PT0.2S")
        Duration pollEvery();
    }

    /**
     * What the service does when accepts outpace the pipeline (docs/operating.md "Overload"): beyond a bound on the
     * pending backlog, {@code POST /v1/transfers} answers 503 with Retry-After before writing anything.
     */
    interface Overload {
        /** Pending transfers, across all instances, beyond which new transfers are refused; 0 turns the bound off. */
        @WithDefault("20000")
        int maxPending();

        /**
         * How often each instance counts the pending transfers (a bounded count, stopping at max-pending + 1), on a
         * Vert.x timer, so periods below a second hold (pipeline/Backlog); at least 1 ms.
         */
        @WithDefault("500ms")
        Duration checkEvery();

        /** Retry-After, in seconds, sent with a refusal for overload. */
        @WithDefault("5")
        int retryAfterSeconds();
    }

    ApiDocs apiDocs();

    interface ApiDocs {
        /**
         * Serves the contract (openapi.yaml) at /q/openapi and Swagger UI at /q/swagger-ui, in prod too, so ops can
         * read it from a running instance; application.properties passes it to the two Quarkus switches.
         */
        @WithDefault("true")
        boolean enabled();

        /**
         * The API's base URL as its clients reach it (e.g. {@code https://api.example.com}): the served contract's
         * server, so that Swagger UI on the management port calls the API and not itself. Unset, the served document
         * keeps the contract's relative {@code /}. Dev and test set it to the local API port.
         */
        Optional<String> publicUrl();
    }

    RateLimit rateLimit();

    Redis redis();

    /**
     * The one guard on every Redis command (redis/RedisCommands, docs/operating.md "Recovery and overload"): a timeout per
     * command and a count-based circuit breaker shared by the lock, the rate limiter and the idempotency fast path.
     * While it is open, those paths use their fallbacks (PostgreSQL, local buckets) instead of waiting for Redis.
     */
    interface Redis {
        /** Longest wait for one command's answer; a timeout counts against Redis only if Redis answered nothing meanwhile. */
        @WithDefault("250ms")
        Duration timeout();

        /**
         * Each event loop holds one connection and pipelines its commands on it (redis/Pipes); false leases a pooled
         * connection per command.
         */
        @WithDefault("true")
        boolean pipelined();

        Breaker breaker();

        interface Breaker {
            /** Calls the breaker judges at once: the ratio below is taken over the last this many calls that got a verdict. */
            @WithDefault("8")
            int requestVolume();

            /** Share of failed calls in that window, in (0, 1], that opens the breaker. */
            @WithDefault("0.5")
            double failureRatio();

            /** How long an open breaker refuses commands before it lets one trial through; its success closes it. */
            @WithDefault("PT2S")
            Duration delay();
        }
    }

    TokenCache tokenCache();

    /** Bearer tokens verified a moment ago are not verified again (security/VerifiedTokens). */
    interface TokenCache {
        /** Verified tokens remembered at most; 0 verifies every request in full. */
        @WithDefault("10000")
        int maxEntries();

        /** How long one verification is trusted at most; never beyond the token's own exp. */
        @WithDefault("PT60S")
        Duration ttl();
    }

    /**
     * Per-principal request rates (token buckets). The buckets live in Redis so that every instance
     * draws from the same one; while Redis cannot answer, each instance keeps its own bucket with the
     * same rate, so the limit loosens by at most the number of instances and never disappears.
     */
    interface RateLimit {
        /** Switches the limiter off entirely (for load tests); on by default. */
        @WithDefault("true")
        boolean enabled();

        /** {@code POST /v1/transfers}: creating transfers (20 per second, 40 at once, in application.properties). */
        Bucket writes();

        /**
         * {@code GET /v1/transfers/**}: reading transfers, their history and the operations listing (100 per second, 200
         * at once, in application.properties).
         */
        Bucket reads();

        /** Principals whose in-memory fallback buckets this instance keeps at most; the idlest are dropped first. */
        @WithDefault("100000")
        int maxLocalBuckets();
    }

    /**
     * One principal's token bucket: refills at {@code per-second} up to {@code burst} requests. The write and the read
     * bucket are this one type; their numbers are set in application.properties, so each has its own.
     */
    interface Bucket {
        /** Sustained requests one principal may make per second (fractions allowed, e.g. 0.5). */
        double perSecond();

        /** Requests one principal may make at once after being idle: the bucket's size. */
        int burst();
    }


    interface Transfers {
        /** Largest amount accepted, in minor units. */
        @WithDefault("100000000")
        long maxAmount();

        /** ISO 4217 codes accepted. */
        @WithDefault("EUR,GBP,USD,CHF,SEK,DKK,NOK,PLN,CZK")
        Set<String> currencies();

        /** Longest beneficiary name, in characters. */
        @WithDefault("140")
        int maxNameLength();

        /** Longest description, in characters. */
        @WithDefault("140")
        int maxDescriptionLength();
    }

    interface Http {
        /** Largest request body, in bytes; larger bodies get 413. */
        @WithDefault("16384")
        int maxBodyBytes();

        /**
         * Longest time a client may take to send a request body once its headers are in; the connection is
         * closed after it. Vert.x's idle timeout alone never fires for a client that trickles a byte now and then.
         */
        @WithDefault("PT10S")
        Duration bodyTimeout();

        /** Largest page of the listings (the operations listing and a principal's own). */
        @WithDefault("200")
        int maxPageSize();
    }

    interface LongPoll {
        /** Requests that may wait at once on this instance ({@code Prefer: wait}); beyond it they answer at once. */
        @WithDefault("10000")
        int maxWaitingRequests();

        /**
         * Long polls one principal may hold at once on this instance; one more GET gets 429, one more POST is
         * answered at once without waiting.
         */
        @WithDefault("10")
        int maxWaitingPerPrincipal();

        /** Longest {@code Prefer: wait=N} honoured, in seconds. */
        @WithDefault("30")
        int maxWaitSeconds();
    }

    interface Database {
        /** How long a request waits for PostgreSQL before answering 503 (the write may still commit: retry with the key). */
        @WithDefault("PT5S")
        Duration timeout();

        /**
         * How often each instance looks at how long the planner statistics of the busy tables have been due for an
         * {@code ANALYZE} ({@code ops.StatisticsWatch}, read by the scheduler).
         */
        @WithDefault("60s")
        Duration statisticsCheckEvery();

        /**
         * How long a fence that finds no batch in flight waits for others to share its statement, when the fence
         * before it arrived within as long ({@code transfer.BatchQueue}); whole milliseconds, {@code 0} sends every such
         * fence at once. Each batch is one notifying commit instead of one per fence.
         */
        @WithDefault("8ms")
        Duration fenceLinger();
    }

    /** The dev/test default of {@code ledgerline.idempotency.reference-secret}; prod refuses it. */
    String DEV_REFERENCE_SECRET = "ledgerline-dev-reference-secret";

    interface Idempotency {
        /** How long a completed key is answered from Redis without touching PostgreSQL. */
        @WithDefault("PT24H")
        Duration retention();

        /**
         * Generation of the Redis idempotency entries: raising it retires every entry at once. Not a step of the
         * database restore procedure: the entries are the record of which intents were sent, and a retry whose
         * entry names a row the database lost re-creates that row for a provider lookup
         * (docs/operating.md "Restoring PostgreSQL from a backup").
         */
        @WithDefault("1")
        int generation();

        /**
         * The key under which each transfer's provider reference is derived from its intent (an HMAC over the
         * principal and the Idempotency-Key), so a row the database lost and re-created carries the reference the
         * provider already knows. Set it once per deployment and never change it: a reference derived under another
         * secret is a new payment to the provider. Prod refuses to start with the dev/test default.
         */
        @WithDefault(DEV_REFERENCE_SECRET)
        String referenceSecret();

        /** How long an in-flight marker may block a key if its request dies before completing. */
        @WithDefault("PT10S")
        Duration inFlightTtl();

        /** Retry-After sent with 409 idempotency-key-in-use. */
        @WithDefault("1")
        int retryAfterSeconds();

        /**
         * Final idempotency entries this instance keeps decoded, by their Redis key and used only while the key holds
         * exactly the text they were decoded from, so a replayed key's entry is not decoded again on every replay (about
         * 2 KB each; 0 decodes every time). A final entry never changes, and a text decodes to one entry only, so this
         * saves CPU and changes no answer.
         */
        @WithDefault("4096")
        int decodedFinalEntries();
    }

    interface Pipeline {
        /** Redis lock TTL; must exceed the provider timeout plus margin. */
        @WithDefault("PT15S")
        Duration lockTtl();

        /** Database lease of a claim; must exceed the provider timeout plus margin. */
        @WithDefault("PT20S")
        Duration lease();

        /** Margin the lock and the lease must leave beyond the provider timeout. */
        @WithDefault("PT2S")
        Duration margin();

        /**
         * Transfers processed at once by this instance; beyond it, dispatch waits for the sweeper. A pass spends most
         * of its time waiting (for a pooled connection, the provider, its fence batch), so the bound sits well above
         * the pool size: at 64, an instance near its limit deferred a third of its transfers to the sweeper, which
         * costs each of them a Redis lock, a sweep query and the pending grace (bench/DBCOST.md, "The service
         * itself"). It stays below the provider bulkhead's 64 running plus 256 queued sends.
         */
        @WithDefault("256")
        int maxInFlight();

        /** How often the sweeper looks for dropped, expired and reconciling transfers (read by the scheduler too). */
        @WithDefault("1s")
        Duration sweepEvery();

        /** Rows taken per sweep and per kind; a backlog of pending rows is taken batch after batch, each at most this large. */
        @WithDefault("50")
        int sweepBatch();

        /**
         * In-flight slots the sweeper leaves to dispatch on accept: while it drains a backlog it fills at most
         * {@code max-in-flight} less this, so transfers accepted meanwhile still start at once.
         */
        @WithDefault("16")
        int acceptReserve();

        /**
         * Longest the sweeper keeps taking batches of pending rows before it turns to expired leases and
         * reconciliation; then it goes on with the backlog at once, without waiting for {@code sweep-every}.
         */
        @WithDefault("PT1S")
        Duration drainSlice();

        /**
         * On shutdown, how long the passes in flight may take to finish before the process exits anyway; a pass
         * cut off is left as a crash would leave it (its lease expires and another instance reconciles it).
         */
        @WithDefault("PT8S")
        Duration shutdownGrace();

        /** A pending transfer untouched this long is taken by the sweeper. */
        @WithDefault("PT2S")
        Duration pendingGrace();

        /** First back-off after an unknown outcome; doubles per attempt up to the maximum. */
        @WithDefault("PT1S")
        Duration retryBackoff();

        /** Longest back-off between reconciliation attempts. */
        @WithDefault("PT60S")
        Duration maxRetryBackoff();

        /** When Redis is unavailable, still process (the database claim guards) rather than wait. */
        @WithDefault("true")
        boolean proceedWithoutLock();

        /**
         * Sends of one transfer that the provider refused with a 4xx it does not explain (401, 403, 409, 429, …) and
         * then did not know at lookup: after this many, the reconciler stops resending and parks the transfer in
         * {@code reconciling} for an operator (docs/operating.md "A parked transfer") instead of looping
         * lookup → resend without end. Timeouts and 5xx (an outage) never park: they back off and retry.
         */
        @WithDefault("5")
        int maxRefusedSends();

        /**
         * Sends of one transfer, first send included, after which the reconciler parks it instead of resending:
         * whatever made every one of them end unknown (a 412, a send the deadline kept in the process, a replayed
         * 5xx, a lookup answering a status the service does not know), the cycle unknown -> lookup -> resend ends.
         */
        @WithDefault("10")
        int maxSends();

        /**
         * How far the clocks that decide a send's deadline may disagree: PostgreSQL's (which fixes the deadline) and
         * the provider's (which enforces it). Part of the settle time after a send's deadline. While a measured
         * offset exceeds it, no new send is claimed (docs/safety.md "Why it is safe"). At least 1.6 s: the provider's clock is
         * read off its {@code Date} header, in whole seconds.
         */
        @WithDefault("PT2S")
        Duration clockSkewBound();

        /** How often each instance measures the clock offsets {@code clock-skew-bound} is held against (read by the scheduler too). */
        @WithDefault("5s")
        Duration clockCheckEvery();
    }

    interface Provider {
        /**
         * Timeout of one provider call in milliseconds, its wait for a turn in the bulkhead included
         * ({@code ProviderGuards}); the lock TTL and lease must cover it.
         */
        @WithDefault("5000")
        long timeoutMs();

        /** {@link #timeoutMs()} as a {@code Duration}. */
        default Duration timeout() {
            return Duration.ofMillis(timeoutMs());
        }

        /**
         * The circuit breaker of each provider call: sends ({@code provider-send}) and lookups ({@code provider-lookup})
         * have one each. While one is open its calls fail at once, unknown, without reaching the provider, and the
         * pipeline waits (docs/operating.md "After a provider outage").
         */
        Breaker breaker();

        /** The provider's breakers ({@code ProviderGuards}). */
        interface Breaker {
            /** Calls the breaker judges at once: it opens when {@code failure-ratio} of the last this many failed. */
            @WithDefault("10")
            int requestVolume();

            /** Share of failed calls in that window, in (0, 1], that opens the breaker. */
            @WithDefault("0.5")
            double failureRatio();

            /**
             * How long an open breaker refuses calls before it lets trial calls through, in milliseconds (the unit
             * fault-tolerance settings they replaced had).
             */
            @WithDefault("5000")
            long delayMs();

            /** Trial calls that must succeed, one after the other, before a half-open breaker closes again. */
            @WithDefault("2")
            int successThreshold();
        }

        /** How many provider calls of each kind (sends, lookups) run at once and how many wait for a turn. */
        Bulkhead bulkhead();

        /** The provider's bulkheads ({@code ProviderGuards}). */
        interface Bulkhead {
            /**
             * Calls of one kind running at once. The provider's client keeps as many connections to it
             * ({@code quarkus.rest-client.provider.connection-pool-size}), so a send let through does not wait for one.
             */
            @WithDefault("64")
            int maxConcurrent();

            /**
             * Calls of one kind waiting for a turn; one more fails at once, unknown. A send that waited here past its
             * deadline is not written.
             */
            @WithDefault("256")
            int waitingQueue();
        }

        /**
         * The provider's stated bound on how far its lookups may lag behind its executions. The reconciler decides
         * nothing from a lookup until an earlier send's deadline, the clock margin and this lag have all passed.
         */
        @WithDefault("PT0S")
        Duration lookupLag();

        /**
         * How long the provider keeps an idempotency key (24 h at many PSPs, 30 minutes at some). After it, a resend
         * under the same reference would be a new payment; so no send of a reference leaves once its first send is
         * older than this less {@code key-window-margin}, and such a transfer is parked for an operator.
         */
        @WithDefault("PT24H")
        Duration keyWindow();

        /** How long before the end of the provider's key window the service stops sending a reference. */
        @WithDefault("PT10M")
        Duration keyWindowMargin();
    }
}
