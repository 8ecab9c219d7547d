package dev.ledgerline.transfers.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

import java.time.Duration;
import java.util.Optional;
import java.util.Set;

/** Every setting of the service, under {@code ledgerline.*}. */
@ConfigMapping(prefix = "ledgerline")
public interface LedgerlineConfig {

    /** Name of this instance in leases, events and logs; defaults to host name and pid. */
    Optional<String> instanceId();

    Transfers transfers();

    Idempotency idempotency();

    Pipeline pipeline();

    Provider provider();

    Overload overload();

    /**
     * What the service does when accepts outpace the pipeline (README "Overload"): beyond a bound on the
     * pending backlog, {@code POST /v1/transfers} answers 503 with Retry-After before writing anything.
     */
    interface Overload {
        /** Pending transfers, across all instances, beyond which new transfers are refused; 0 turns the bound off. */
        @WithDefault("20000")
        int maxPending();

        /** How often each instance counts the pending transfers (a bounded count, stopping at max-pending + 1). */
        @WithDefault("500ms")
        String checkEvery();

        /** Retry-After, in seconds, sent with a refusal for overload. */
        @WithDefault("5")
        int retryAfterSeconds();
    }

    Sandbox sandbox();

    ApiDocs apiDocs();

    interface ApiDocs {
        /**
         * Serves the contract (openapi.yaml) at /q/openapi and Swagger UI at /q/swagger-ui, in prod too, so ops can
         * read it from a running instance; application.properties passes it to the two Quarkus switches.
         */
        @WithDefault("true")
        boolean enabled();
    }

    RateLimit rateLimit();

    Redis redis();

    /**
     * The one guard on every Redis command (redis/RedisCommands, README "Recovery and overload"): a timeout per
     * command and a count-based circuit breaker shared by the lock, the rate limiter and the idempotency fast path.
     * While it is open, those paths use their fallbacks (PostgreSQL, local buckets) instead of waiting for Redis.
     */
    interface Redis {
        /** Longest wait for one command's answer; a timeout counts against Redis only if Redis answered nothing meanwhile. */
        @WithDefault("250ms")
        Duration timeout();

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

        /** {@code POST /v1/transfers}: creating transfers. */
        Writes writes();

        /** {@code GET /v1/transfers/**}: reading transfers, their history and the operations listing. */
        Reads reads();

        /** Principals whose in-memory fallback buckets this instance keeps at most; the idlest are dropped first. */
        @WithDefault("100000")
        int maxLocalBuckets();
    }

    /** The write bucket: refills at {@code per-second} up to {@code burst} requests. */
    interface Writes {
        /** Sustained transfers one principal may create per second (fractions allowed, e.g. 0.5). */
        @WithDefault("20")
        double perSecond();

        /** Transfers one principal may create at once after being idle: the bucket's size. */
        @WithDefault("40")
        int burst();
    }

    /** The read bucket: refills at {@code per-second} up to {@code burst} requests. */
    interface Reads {
        /** Sustained reads one principal may make per second (fractions allowed). */
        @WithDefault("100")
        double perSecond();

        /** Reads one principal may make at once after being idle: the bucket's size. */
        @WithDefault("200")
        int burst();
    }

    interface Sandbox {
        /** Builds the sandbox provider into the application (a build-time switch: on in dev and test, off in prod). */
        @WithDefault("false")
        boolean enabled();
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

        /** Largest request body, in bytes; larger bodies get 413. */
        @WithDefault("16384")
        int maxBodyBytes();

        /**
         * Longest time a client may take to send a request body once its headers are in; the connection is
         * closed after it. Vert.x's idle timeout alone never fires for a client that trickles a byte now and then.
         */
        @WithDefault("PT10S")
        Duration bodyTimeout();

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

        /** Largest page of the operations listing. */
        @WithDefault("200")
        int maxPageSize();

        /** How long a request waits for PostgreSQL before answering 503 (the write may still commit: retry with the key). */
        @WithDefault("PT5S")
        Duration databaseTimeout();
    }

    interface Idempotency {
        /** How long a completed key is answered from Redis without touching PostgreSQL. */
        @WithDefault("PT24H")
        Duration retention();

        /**
         * Generation of the Redis idempotency entries. Replays of finished transfers are answered from Redis alone;
         * after restoring PostgreSQL from a backup, raise it so no entry can answer for a row the restore lost.
         */
        @WithDefault("1")
        int generation();

        /** How long an in-flight marker may block a key if its request dies before completing. */
        @WithDefault("PT10S")
        Duration inFlightTtl();

        /** Retry-After sent with 409 idempotency-key-in-use. */
        @WithDefault("1")
        int retryAfterSeconds();
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

        /** How often the sweeper looks for dropped, expired and reconciling transfers. */
        @WithDefault("1s")
        String sweepEvery();

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
         * {@code reconciling} for an operator (README "A transfer stuck in reconciling") instead of looping
         * lookup → resend without end. Timeouts and 5xx (an outage) never park: they back off and retry.
         */
        @WithDefault("5")
        int maxRefusedSends();
    }

    interface Provider {
        /**
         * Timeout of one provider call in milliseconds; the fault-tolerance {@code @Timeout} of
         * {@code ProviderClient} reads this value, and the lock TTL and lease must cover it.
         */
        @WithDefault("5000")
        long timeoutMs();

        /**
         * The provider's stated bound on how far its lookups may lag behind its executions. The reconciler decides
         * nothing from a lookup until an earlier send's deadline, the clock margin and this lag have all passed.
         */
        @WithDefault("PT0S")
        Duration lookupLag();
    }
}
