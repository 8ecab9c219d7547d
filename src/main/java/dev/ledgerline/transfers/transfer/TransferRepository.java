package dev.ledgerline.transfers.transfer;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeoutException;

/**
 * All SQL of {@code transfers} and {@code transfer_events}. Every state change is one conditional
 * UPDATE that appends its event row in the same statement ({@link #recorded}), so history and state
 * cannot disagree; the {@code transfers_guard} trigger refuses changes after a terminal status and any
 * version step other than one (migration V5).
 */
@ApplicationScoped
public class TransferRepository {

    static final String COLUMNS = """
            id, user_id, request_fingerprint, amount, currency, destination_iban, destination_name, description,
            provider_reference, status, version, failure_reason, created_at, updated_at""";

    /** What a write returns besides its result, for the event row {@link #recorded} appends. */
    static final String EVENT_COLUMNS = "previous_status, last_actor, last_reason";

    /**
     * One write of {@code transfers} and its {@code transfer_events} row, in one statement: {@code write} ends
     * with a RETURNING of {@code id}, {@code version}, {@code status} and {@link #EVENT_COLUMNS}, and the event
     * is made of exactly those values of the row just written ({@code previous_status} holds the status the
     * write replaced). No row written, no event. The statement answers {@code result}, read from the written row.
     */
    static String recorded(String write, String result) {
        return "WITH w AS (\n" + write + "),\n"
                + "e AS (INSERT INTO transfer_events (transfer_id, version, from_status, to_status, actor, reason)\n"
                + "      SELECT id, version, previous_status, status, last_actor, last_reason FROM w)\n"
                + "SELECT " + result + " FROM w";
    }

    /** Insert unless (user_id, idempotency_key) exists; a conflict returns no row and the caller reads the original. */
    static final String INSERT = recorded("""
            INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency,
                                   destination_iban, destination_name, description, provider_reference,
                                   next_attempt_at, last_actor, last_reason)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now() + $11::bigint * interval '1 millisecond', $12, 'accepted')
            ON CONFLICT (user_id, idempotency_key) DO NOTHING
            RETURNING\s""" + COLUMNS + ", " + EVENT_COLUMNS, COLUMNS);

    static final String FIND_BY_KEY = "SELECT " + COLUMNS + " FROM transfers WHERE user_id = $1 AND idempotency_key = $2";

    static final String FIND_BY_ID = "SELECT " + COLUMNS + " FROM transfers WHERE id = $1";

    /**
     * The claim: a worker takes the row only if it is still exactly what the worker's caller saw — the
     * same pending or reconciling status at the same version — and taking it bumps the version (the
     * fencing token). Matching on "pending or reconciling" alone is not enough: a worker dispatched for a
     * pending row could then claim it after another worker's send timed out and moved it to reconciling,
     * and send again without the lookup (found by the model check, src/model/transfer.pml).
     *
     * <p>The claim also fixes the deadline its send will carry ({@code send_not_after}, {@code $7} ms from
     * now) and refuses to take a row whose previous send could still execute: that send's deadline plus
     * {@code $8} ms (clock margin and the provider's lookup lag) must have passed. A send held in transit
     * past its timeout can thus never overlap a resend (README "Why it is safe").
     */
    static final String CLAIM = recorded("""
            UPDATE transfers
               SET previous_status = status, status = 'processing', version = version + 1, claimed_by = $2,
                   lease_expires_at = now() + $3::bigint * interval '1 millisecond',
                   send_not_after = now() + $7::bigint * interval '1 millisecond',
                   attempts = attempts + 1,
                   updated_at = now(), last_actor = $2, last_reason = $4
             WHERE id = $1 AND status = $5 AND version = $6 AND status IN ('pending', 'reconciling')
               AND (send_not_after IS NULL OR send_not_after + $8::bigint * interval '1 millisecond' <= now())
            RETURNING id, version, status, provider_reference, amount, currency, destination_iban, destination_name,
                      created_at, lease_expires_at, send_not_after,\s""" + EVENT_COLUMNS,
            "version, provider_reference, amount, currency, destination_iban, destination_name, created_at, "
                    + "lease_expires_at, send_not_after");

    /**
     * The fence, for a batch of transfers ({@link FenceQueue}): each final write applies only if its writer still
     * holds the version it claimed ({@code $1}/{@code $2} element by element; the other arrays carry each fence's
     * status, failure reason, delay of the next attempt in ms, actor, reason, and 1 if the send was refused). The
     * next attempt (for {@code reconciling}) comes no earlier than the last send's deadline plus {@code $9} ms.
     * Answers the id and new version of each row written.
     */
    static final String FENCE = recorded("""
            UPDATE transfers t
               SET previous_status = t.status, status = f.status, version = t.version + 1, failure_reason = f.failure_reason,
                   claimed_by = NULL, lease_expires_at = NULL,
                   next_attempt_at = greatest(now() + f.next_attempt_in * interval '1 millisecond',
                                              coalesce(t.send_not_after, now()) + $9::bigint * interval '1 millisecond'),
                   refused_sends = t.refused_sends + f.refused,
                   updated_at = now(), last_actor = f.actor, last_reason = f.reason
              FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::int[])
                   AS f (id, version, status, failure_reason, next_attempt_in, actor, reason, refused)
             WHERE t.id = f.id AND t.version = f.version
            RETURNING t.id, t.version, t.status, t.previous_status, t.last_actor, t.last_reason""", "id, version");

    /**
     * The most fences one statement carries. Batches only grow while the previous one is in flight, so this
     * bounds the statement's size and row locks, not the latency of a fence.
     */
    static final int MAX_FENCE_BATCH = 64;

    /**
     * Processing rows whose lease ran out: their outcome is unknown, so they go to reconciliation — looked up
     * no earlier than their send's deadline plus {@code $3} ms.
     */
    static final String EXPIRE_LEASES = recorded("""
            UPDATE transfers t
               SET previous_status = t.status, status = 'reconciling', version = t.version + 1, claimed_by = NULL, lease_expires_at = NULL,
                   next_attempt_at = greatest(now(), coalesce(t.send_not_after, now()) + $3::bigint * interval '1 millisecond'),
                   updated_at = now(), last_actor = $1, last_reason = 'lease expired'
              FROM (SELECT id FROM transfers
                     WHERE status = 'processing' AND lease_expires_at < now()
                     ORDER BY lease_expires_at LIMIT $2 FOR UPDATE SKIP LOCKED) due
             WHERE t.id = due.id AND t.status = 'processing' AND t.lease_expires_at < now()
            RETURNING t.id, t.version, t.status, t.previous_status, t.last_actor, t.last_reason""", "id, version");

    /**
     * Pending rows no instance picked up: pushes their next attempt out so other sweepers skip them meanwhile.
     * The batch is a MATERIALIZED CTE: as a plain sub-select joined to the UPDATE, PostgreSQL may run it more
     * than once and return more rows than its LIMIT (seen: 9 rows for LIMIT 6), and the sweeper sizes each
     * batch to the in-flight slots it reserved.
     */
    static final String TAKE_PENDING = """
            WITH due AS MATERIALIZED (
                SELECT id FROM transfers
                 WHERE status = 'pending' AND next_attempt_at <= now()
                 ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
            UPDATE transfers t SET next_attempt_at = now() + $2::bigint * interval '1 millisecond'
              FROM due
             WHERE t.id = due.id AND t.status = 'pending'
            RETURNING t.id, t.version""";

    /**
     * Reconciling rows that are due: takes them with an exponential back-off, which stands if the lookup fails.
     * A row whose last send could still execute (its deadline plus {@code $4} ms not yet passed) is not due:
     * a lookup now could say "not found" for a payment that is about to happen.
     */
    static final String TAKE_RECONCILING = """
            UPDATE transfers t
               SET next_attempt_at = now() + least($3::bigint, $2::bigint * power(2, least(t.attempts, 16))) * interval '1 millisecond',
                   attempts = t.attempts + 1
              FROM (SELECT id FROM transfers
                     WHERE status = 'reconciling' AND next_attempt_at <= now()
                       AND (send_not_after IS NULL OR send_not_after + $4::bigint * interval '1 millisecond' <= now())
                     ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED) due
             WHERE t.id = due.id AND t.status = 'reconciling'
            RETURNING t.id, t.version, t.provider_reference, t.created_at, t.refused_sends""";

    /**
     * After the provider recovered: reconciling rows still waiting out a back-off (the lookups that failed during
     * the outage doubled it) become due again — but never before their last send's deadline plus {@code $2} ms,
     * the same bound {@link #TAKE_RECONCILING} checks. Scheduling only: no version, no status, no event; a parked
     * row ({@code 'infinity'}) stays parked. A bounded batch, {@code SKIP LOCKED}, so instances doing it at once
     * neither wait for nor undo each other.
     */
    static final String HASTEN_RECONCILING = """
            WITH backed_off AS MATERIALIZED (
                SELECT id FROM transfers
                 WHERE status = 'reconciling' AND next_attempt_at > now() AND next_attempt_at < 'infinity'
                   AND next_attempt_at > coalesce(send_not_after, now()) + $2::bigint * interval '1 millisecond'
                 ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
            UPDATE transfers t
               SET next_attempt_at = greatest(now(), coalesce(t.send_not_after, now()) + $2::bigint * interval '1 millisecond')
              FROM backed_off
             WHERE t.id = backed_off.id AND t.status = 'reconciling'
               AND t.next_attempt_at > greatest(now(), coalesce(t.send_not_after, now()) + $2::bigint * interval '1 millisecond')
            RETURNING t.id""";

    /**
     * Parks a reconciling transfer whose sends the provider refused and never knew,
     * {@code ledgerline.pipeline.max-refused-sends} times over: a new version (so the history says why) and no further attempt until an operator resumes it.
     */
    static final String PARK = recorded("""
            UPDATE transfers
               SET previous_status = status, version = version + 1, next_attempt_at = 'infinity', updated_at = now(), last_actor = $3, last_reason = $4
             WHERE id = $1 AND version = $2 AND status = 'reconciling'
            RETURNING id, version, status,\s""" + EVENT_COLUMNS, "version");

    /** Keyset page of the operations listing, oldest change first; {@code $1} status (or null), {@code $2} min age. */
    static final String LIST = """
            SELECT\s""" + COLUMNS + """

              FROM transfers
             WHERE ($1::text IS NULL OR status = $1::text)
               AND updated_at < now() - $2::bigint * interval '1 millisecond'
               AND (updated_at, id) > ($3::timestamptz, $4::uuid)
             ORDER BY updated_at, id
             LIMIT $5""";

    /** Pending rows across instances, counted up to {@code $1} only, so the count costs the same however deep the backlog. */
    static final String COUNT_PENDING = "SELECT count(*) AS n FROM (SELECT 1 FROM transfers WHERE status = 'pending' LIMIT $1) p";

    /** Open transfers by status and the age of the oldest; only non-terminal rows, which the partial indexes cover. */
    static final String OPEN = """
            SELECT status, count(*) AS n, coalesce(extract(epoch FROM now() - min(created_at)), 0) AS oldest
              FROM transfers WHERE status IN ('pending', 'processing', 'reconciling') GROUP BY status""";

    static final String EVENTS = """
            SELECT version, from_status, to_status, actor, reason, at
              FROM transfer_events WHERE transfer_id = $1 ORDER BY version""";

    private final Pool pool;
    private final Duration deadline;
    /** How long a send may still execute after its claim: the provider timeout, within the lease less the margin. */
    private final long sendWindowMs;
    /** After a send's deadline, how long until nothing of it can still surface: the clock margin and the lookup lag. */
    private final long settleMs;
    private final FenceQueue fences = new FenceQueue(MAX_FENCE_BATCH, this::fenceBatch);
    /** Fences per batch statement: 1 while fences do not overlap, growing with the load (bench/DBCOST.md). */
    private final DistributionSummary fenceBatchSize;

    public TransferRepository(Pool pool, LedgerlineConfig config, MeterRegistry metrics) {
        this.pool = pool;
        this.fenceBatchSize = DistributionSummary.builder("ledgerline.fence.batch.size")
                .description("Fences written by one batch statement (one commit, one WAL flush)")
                .baseUnit("fences")
                .serviceLevelObjectives(1, 2, 4, 8, 16, 32, 64)
                .register(metrics);
        this.deadline = config.transfers().databaseTimeout();
        this.sendWindowMs = Math.min(config.provider().timeoutMs(),
                config.pipeline().lease().minus(config.pipeline().margin()).toMillis());
        this.settleMs = config.pipeline().margin().plus(config.provider().lookupLag()).toMillis();
    }

    /**
     * Runs one statement with a deadline: a paused or unreachable PostgreSQL fails the call (503 at the
     * edge) instead of holding it. A timed-out write may still commit, which every caller tolerates —
     * clients retry with their Idempotency-Key, the pipeline re-reads through its fenced UPDATEs.
     */
    private Uni<RowSet<Row>> run(String sql, Tuple params) {
        return pool.preparedQuery(sql).execute(params)
                .ifNoItem().after(deadline).failWith(() -> new TimeoutException("PostgreSQL did not answer within " + deadline));
    }

    /** The inserted transfer, or {@code null} when the (user, key) pair already exists. */
    public Uni<Transfer> insert(NewTransfer t, Duration dispatchGrace, String actor) {
        Tuple params = Tuple.from(Arrays.asList(t.id(), t.userId(), t.idempotencyKey(), t.requestFingerprint(),
                t.amount(), t.currency(), t.destinationIban(), t.destinationName(), t.description(),
                t.providerReference(), dispatchGrace.toMillis(), actor));
        return run(INSERT, params).map(TransferRepository::firstTransfer);
    }

    public Uni<Transfer> findByKey(String userId, String idempotencyKey) {
        return run(FIND_BY_KEY, Tuple.of(userId, idempotencyKey)).map(TransferRepository::firstTransfer);
    }

    public Uni<Transfer> findById(UUID id) {
        return run(FIND_BY_ID, Tuple.of(id)).map(TransferRepository::firstTransfer);
    }

    /** The claim, or {@code null} when the row is no longer what the caller saw (someone else moved it). */
    public Uni<Claim> claim(Seen seen, String worker, Duration lease, String reason) {
        UUID id = seen.id();
        return run(CLAIM, Tuple.from(Arrays.asList(id, worker, lease.toMillis(), reason, seen.status().db(), seen.version(),
                sendWindowMs, settleMs)))
                .map(rows -> {
                    Row row = first(rows);
                    return row == null ? null : new Claim(id, row.getLong("version"), row.getString("provider_reference"),
                            row.getLong("amount"), row.getString("currency"), row.getString("destination_iban"),
                            row.getString("destination_name"), row.getOffsetDateTime("created_at"),
                            row.getOffsetDateTime("lease_expires_at"), row.getOffsetDateTime("send_not_after"));
                });
    }

    /**
     * Moves the row from the claimed version to {@code status}; {@code false} when the version moved on
     * (a stale writer), in which case nothing changed. {@code refused}: the send was refused with an
     * unexplained 4xx, counted towards parking the transfer.
     */
    public Uni<Boolean> fence(UUID id, long claimedVersion, TransferStatus status, String failureReason,
                              Duration nextAttemptIn, String actor, String reason, boolean refused) {
        return fences.fence(new FenceQueue.Fence(id, claimedVersion, status.db(), failureReason, nextAttemptIn.toMillis(),
                actor, reason, refused ? 1 : 0));
    }

    private Uni<Set<UUID>> fenceBatch(List<FenceQueue.Fence> batch) {
        int n = batch.size();
        fenceBatchSize.record(n);
        UUID[] ids = new UUID[n];
        Long[] versions = new Long[n];
        String[] statuses = new String[n];
        String[] failureReasons = new String[n];
        Long[] nextAttemptIn = new Long[n];
        String[] actors = new String[n];
        String[] reasons = new String[n];
        Integer[] refused = new Integer[n];
        for (int i = 0; i < n; i++) {
            FenceQueue.Fence f = batch.get(i);
            ids[i] = f.id();
            versions[i] = f.version();
            statuses[i] = f.status();
            failureReasons[i] = f.failureReason();
            nextAttemptIn[i] = f.nextAttemptInMs();
            actors[i] = f.actor();
            reasons[i] = f.reason();
            refused[i] = f.refused();
        }
        Tuple params = Tuple.tuple().addArrayOfUUID(ids).addArrayOfLong(versions).addArrayOfString(statuses)
                .addArrayOfString(failureReasons).addArrayOfLong(nextAttemptIn).addArrayOfString(actors)
                .addArrayOfString(reasons).addArrayOfInteger(refused).addLong(settleMs);
        return run(FENCE, params).map(rows -> new HashSet<>(ids(rows, "id")));
    }

    /** Parks a reconciling row at {@code version} for an operator; {@code false} when the row moved on. */
    public Uni<Boolean> park(UUID id, long version, String actor, String reason) {
        return run(PARK, Tuple.of(id, version, actor, reason)).map(rows -> rows.rowCount() == 1);
    }

    public Uni<List<UUID>> expireLeases(String actor, int limit) {
        return run(EXPIRE_LEASES, Tuple.of(actor, limit, settleMs)).map(rows -> ids(rows, "id"));
    }

    public Uni<List<Seen>> takePending(int limit, Duration holdFor) {
        return run(TAKE_PENDING, Tuple.of(limit, holdFor.toMillis())).map(rows -> {
            List<Seen> due = new ArrayList<>();
            for (Row row : rows) {
                due.add(new Seen(row.getUUID("id"), TransferStatus.PENDING, row.getLong("version")));
            }
            return due;
        });
    }

    public Uni<List<Reconcilable>> takeReconciling(int limit, Duration backoff, Duration maxBackoff) {
        return run(TAKE_RECONCILING, Tuple.of(limit, backoff.toMillis(), maxBackoff.toMillis(), settleMs))
                .map(rows -> {
                    List<Reconcilable> due = new ArrayList<>();
                    for (Row row : rows) {
                        due.add(new Reconcilable(row.getUUID("id"), row.getLong("version"), row.getString("provider_reference"),
                                row.getOffsetDateTime("created_at"), row.getInteger("refused_sends")));
                    }
                    return due;
                });
    }

    /**
     * Pulls the due time of up to {@code limit} backed-off reconciling rows forward to the earliest moment the
     * in-transit rule allows ({@link #HASTEN_RECONCILING}): how many rows it moved (a full batch means more
     * may be waiting).
     */
    public Uni<Integer> hastenReconciling(int limit) {
        return run(HASTEN_RECONCILING, Tuple.of(limit, settleMs)).map(RowSet::rowCount);
    }

    /** One page of transfers in a status (or any), unchanged for at least {@code olderThan}, after the cursor. */
    public Uni<List<Transfer>> list(TransferStatus status, Duration olderThan, OffsetDateTime afterUpdatedAt,
                                    UUID afterId, int limit) {
        Tuple params = Tuple.from(Arrays.asList(status == null ? null : status.db(), olderThan.toMillis(),
                afterUpdatedAt, afterId, limit));
        return run(LIST, params).map(rows -> {
            List<Transfer> page = new ArrayList<>();
            for (Row row : rows) {
                page.add(Transfer.from(row));
            }
            return page;
        });
    }

    public Uni<List<TransferEvent>> events(UUID id) {
        return run(EVENTS, Tuple.of(id)).map(rows -> {
            List<TransferEvent> events = new ArrayList<>();
            for (Row row : rows) {
                events.add(TransferEvent.from(row));
            }
            return events;
        });
    }

    /** Pending transfers across instances, counted up to {@code upTo} at most. */
    public Uni<Long> countPending(long upTo) {
        return run(COUNT_PENDING, Tuple.of(upTo)).map(rows -> first(rows).getLong("n"));
    }

    /** The open (not sent or failed) transfers per status that has any, with each status's oldest age. */
    public Uni<List<Open>> open() {
        return run(OPEN, Tuple.tuple()).map(rows -> {
            List<Open> open = new ArrayList<>();
            for (Row row : rows) {
                open.add(new Open(TransferStatus.fromDb(row.getString("status")), row.getLong("n"),
                        row.getNumeric("oldest").doubleValue()));
            }
            return open;
        });
    }

    /** How many transfers are in an open status, and how long ago the oldest of them was created. */
    public record Open(TransferStatus status, long count, double oldestSeconds) {
    }

    /** A transfer as a caller saw it: the claim succeeds only if the row is still in this status at this version. */
    public record Seen(UUID id, TransferStatus status, long version) {
        public Seen {
            if (status != TransferStatus.PENDING && status != TransferStatus.RECONCILING) {
                throw new IllegalArgumentException("only pending or reconciling transfers can be claimed, not " + status);
            }
        }
    }

    /**
     * A claimed transfer: what the worker needs to send it, the version that fences its final write, and the
     * deadline its send carries — the provider must not execute it later, and nobody acts on the row before it passed.
     */
    public record Claim(UUID id, long version, String providerReference, long amount, String currency,
                        String iban, String name, OffsetDateTime createdAt,
                        OffsetDateTime leaseExpiresAt, OffsetDateTime sendNotAfter) {
    }

    /**
     * A reconciling transfer taken for a lookup, with the version its outcome must be fenced against and how
     * many of its sends the provider refused with an unexplained 4xx.
     */
    public record Reconcilable(UUID id, long version, String providerReference, OffsetDateTime createdAt, int refusedSends) {
    }

    private static Transfer firstTransfer(RowSet<Row> rows) {
        Row row = first(rows);
        return row == null ? null : Transfer.from(row);
    }

    private static Row first(RowSet<Row> rows) {
        var it = rows.iterator();
        return it.hasNext() ? it.next() : null;
    }

    private static List<UUID> ids(RowSet<Row> rows, String column) {
        List<UUID> ids = new ArrayList<>();
        for (Row row : rows) {
            ids.add(row.getUUID(column));
        }
        return ids;
    }
}
