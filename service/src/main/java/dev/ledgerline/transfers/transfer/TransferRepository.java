package dev.ledgerline.transfers.transfer;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.config.StartupOrder;
import dev.ledgerline.transfers.metrics.Meters;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import dev.ledgerline.transfers.problem.ProblemException;
import dev.ledgerline.transfers.problem.ProblemType;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.arc.ClientProxy;
import io.quarkus.runtime.Startup;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgException;
import jakarta.inject.Singleton;

import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeoutException;

/**
 * Every read and write of {@code transfers} and {@code transfer_events}, each one statement of {@link TransferSql}:
 * the conditional UPDATEs that carry the protocol's guarantees, their parameters, and the batching of claims and fences
 * ({@link BatchQueue}).
 */
@Startup(StartupOrder.CLIENTS)
@Singleton
public class TransferRepository {

    private final Pool pool;
    private final Duration deadline;
    /** How long a send may still execute after its claim: the provider timeout, within the lease less the margin. */
    private final long sendWindowMs;
    /**
     * After a send's deadline, how long until nothing of it can still surface: the clock margin, the lookup lag and
     * the clock-skew bound.
     */
    private final long settleMs;
    /** How long after a reference's first send the claim still lets a send of it leave: the key window less margins. */
    private final long keyUsableMs;
    private final BatchQueue<Fence, Set<UUID>, Boolean> fences;
    private final BatchQueue<ClaimAsked, Map<UUID, Claim>, Claim> claims = new BatchQueue<>("claim",
            TransferSql.MAX_CLAIM_BATCH, asked -> asked.seen().id(), this::claimBatch, (claimed, asked) -> claimed.get(asked.seen().id()));
    private final ProbeQueue probes = new ProbeQueue(TransferSql.MAX_PROBE_BATCH, this::existing);
    /** Fences per batch statement: 1 while fences do not overlap, growing with the load (bench/DBCOST.md). */
    private final DistributionSummary fenceBatchSize;
    /** Claims per statement, as {@link #fenceBatchSize} counts fences. */
    private final DistributionSummary claimBatchSize;
    /** What the last adoption statement said of the server that answers. */
    private final AdoptedServer adopted;
    /** Whether an insert holds the amount from its owner's account ({@code ledgerline.ledger.enabled}). */
    private final boolean ledger;
    /** What an account opening on first use holds ({@code ledgerline.ledger.opening-balance}). */
    private final long openingBalance;

    public TransferRepository(Pool pool, LedgerlineConfig config, @ServiceMeters MeterRegistry metrics, AdoptedServer adopted, Vertx vertx) {
        // Quarkus's pools are @ApplicationScoped beans behind client proxies, the Mutiny pool and the pool it wraps, so
        // every statement would look the application context up twice; they live as long as the application does
        this.pool = Pool.newInstance(ClientProxy.unwrap(ClientProxy.unwrap(pool).getDelegate()));
        this.fences = new BatchQueue<>("fence", TransferSql.MAX_FENCE_BATCH, Fence::id, this::fenceBatch,
                (written, fence) -> written.contains(fence.id()), config.database().fenceLinger().toMillis(),
                (millis, task) -> vertx.setTimer(millis, timer -> task.run()));
        this.adopted = adopted;
        this.fenceBatchSize = Meters.FENCE_BATCH_SIZE.summary()
                .serviceLevelObjectives(1, 2, 4, 8, 16, 32, 64)
                .register(metrics);
        this.claimBatchSize = Meters.CLAIM_BATCH_SIZE.summary()
                .serviceLevelObjectives(1, 2, 4, 8, 16, 32, 64)
                .register(metrics);
        this.deadline = config.database().timeout();
        this.ledger = config.ledger().enabled();
        this.openingBalance = config.ledger().openingBalance();
        this.sendWindowMs = Math.min(config.provider().timeoutMs(),
                config.pipeline().lease().minus(config.pipeline().margin()).toMillis());
        this.settleMs = config.pipeline().margin().plus(config.provider().lookupLag())
                .plus(config.pipeline().clockSkewBound()).toMillis();
        this.keyUsableMs = config.provider().keyWindow().minus(config.provider().keyWindowMargin()).toMillis() - sendWindowMs;
    }

    /** How long a send may still execute after its claim (the deadline it carries). */
    public long sendWindowMs() {
        return sendWindowMs;
    }

    /** After a send's deadline, how long until nothing of it can still surface. */
    public long settleMs() {
        return settleMs;
    }

    /**
     * Runs one statement with a deadline: a paused or unreachable PostgreSQL fails the call (503 at the
     * edge) instead of holding it. A timed-out write may still commit, which every caller tolerates —
     * clients retry with their Idempotency-Key, the pipeline re-reads through its fenced UPDATEs.
     */
    private Uni<RowSet<Row>> run(String sql, Tuple params) {
        return run(sql, params, deadline);
    }

    private Uni<RowSet<Row>> run(String sql, Tuple params, Duration within) {
        return pool.preparedQuery(sql).execute(params)
                .ifNoItem().after(within).failWith(() -> new TimeoutException("PostgreSQL did not answer within " + within));
    }

    /**
     * How long a create or detach of up to {@code atMost} partitions may take: DDL waits for its locks (each partition
     * takes up to three, each waiting at most {@code lockWait}) and writes the catalog, which the deadline of a
     * transfer's statements does not allow for on a loaded server.
     */
    private Duration ddlDeadline(int atMost, Duration lockWait) {
        return deadline.plus(lockWait.multipliedBy(3L * atMost));
    }

    /**
     * The inserted transfer, or {@code null} when the (user, key) pair already exists. Its id is not {@code t.id()}
     * but a UUID of version 7 made from it and the database's time ({@link TransferSql#NEW_ID}). With the ledger on, the
     * insert holds the amount in the same statement ({@link TransferSql#INSERT_HOLDING}) and fails with
     * {@code insufficient-funds} when the owner's available balance does not cover it; nothing is written then.
     */
    public Uni<Transfer> insert(NewTransfer t, Duration dispatchGrace, String actor) {
        if (!ledger) {
            Tuple params = Tuple.wrap(Arrays.asList(t.id(), t.userId(), t.idempotencyKey(), t.requestFingerprint(),
                    t.amount(), t.currency(), t.destinationIban(), t.destinationName(), t.description(),
                    t.providerReference(), dispatchGrace.toMillis(), actor, t.executeAt()));
            return run(TransferSql.INSERT, params).map(TransferRepository::firstTransfer);
        }
        Tuple params = Tuple.wrap(Arrays.asList(t.id(), t.userId(), t.idempotencyKey(), t.requestFingerprint(),
                t.amount(), t.currency(), t.destinationIban(), t.destinationName(), t.description(),
                t.providerReference(), dispatchGrace.toMillis(), actor, t.executeAt(), openingBalance));
        return runOpening(TransferSql.INSERT_HOLDING, params)
                .onFailure(e -> violated(e, TransferSql.FUNDS_CONSTRAINT)).transform(e -> insufficientFunds(t))
                .map(TransferRepository::firstTransfer);
    }

    /**
     * A new transfer and the claim its first send needs, written together: the transfer as accepted and, when the
     * row was claimed, the claim ({@code null} when the server answering is not adopted yet or the transfer is
     * scheduled, and the row was inserted pending).
     */
    public record Inserted(Transfer accepted, Claim claim) {
    }

    /**
     * {@link #insert} that also claims the row for {@code worker} in the same statement
     * ({@link TransferSql#INSERT_CLAIMED}): one statement and one commit less per transfer than an insert followed by
     * {@link #claim}, and no moment at which anyone else could act on the pending row. {@code null} when the key
     * exists already.
     */
    public Uni<Inserted> insertClaimed(NewTransfer t, Duration dispatchGrace, String actor, String worker, Duration lease,
                                       String reason) {
        List<Object> values = new ArrayList<>(Arrays.asList(t.id(), t.userId(), t.idempotencyKey(), t.requestFingerprint(),
                t.amount(), t.currency(), t.destinationIban(), t.destinationName(), t.description(),
                t.providerReference(), dispatchGrace.toMillis(), actor, t.executeAt()));
        if (!ledger) {
            values.addAll(Arrays.asList(worker, lease.toMillis(), reason, sendWindowMs));
            return run(TransferSql.INSERT_CLAIMED, Tuple.wrap(values)).map(TransferRepository::inserted);
        }
        values.addAll(Arrays.asList(openingBalance, worker, lease.toMillis(), reason, sendWindowMs));
        return runOpening(TransferSql.INSERT_HOLDING_CLAIMED, Tuple.wrap(values))
                .onFailure(e -> violated(e, TransferSql.FUNDS_CONSTRAINT)).transform(e -> insufficientFunds(t))
                .map(TransferRepository::inserted);
    }

    /** {@link TransferSql#INSERTED_CLAIM}, which {@link TransferSql#INSERT_CLAIMED} answers after the transfer. */
    private static final Columns INSERTED_CLAIM = new Columns(TransferSql.INSERTED_CLAIM);

    /**
     * The transfer as it was accepted ({@code pending} at version 0: what the {@code 201} shows, as it did when the
     * claim was a statement of its own that followed the insert) and the claim, if the row was written claimed.
     */
    private static Inserted inserted(RowSet<Row> rows) {
        Row row = first(rows);
        if (row == null) {
            return null;
        }
        Transfer t = Transfer.from(row);
        int c = INSERTED_CLAIM.base(row);
        UUID token = c >= 0 ? row.getUUID(c + 2) : row.getUUID("claim_token");
        if (token == null) {
            return new Inserted(t, null);
        }
        OffsetDateTime leaseExpiresAt = c >= 0 ? row.getOffsetDateTime(c) : row.getOffsetDateTime("lease_expires_at");
        OffsetDateTime sendNotAfter = c >= 0 ? row.getOffsetDateTime(c + 1) : row.getOffsetDateTime("send_not_after");
        int sends = c >= 0 ? row.getInteger(c + 3) : row.getInteger("sends");
        TransferStatus claimedFrom = TransferStatus.fromDb(c >= 0 ? row.getString(c + 4) : row.getString("previous_status"));
        Claim claim = new Claim(t.id(), t.version(), token, t.providerReference(), t.amount(), t.currency(),
                t.destinationIban(), t.destinationName(), t.createdAt(), leaseExpiresAt, sendNotAfter, sends, claimedFrom);
        Transfer accepted = new Transfer(t.id(), t.userId(), t.requestFingerprint(), t.amount(), t.currency(),
                t.destinationIban(), t.destinationName(), t.description(), t.providerReference(), claimedFrom,
                t.version() - 1, t.failureReason(), t.createdAt(), t.updatedAt(), t.executeAt());
        return new Inserted(accepted, claim);
    }

    /**
     * {@link #insert}, for a request accepted without knowing whether its key was used before (Redis could not say):
     * on a database that may have lost the key's row with its server's commits, the row starts in {@code reconciling},
     * its first step a provider lookup ({@link TransferSql#INSERT_LOOKUP_FIRST}); else it is {@link #insert}'s.
     */
    public Uni<Transfer> insertLookupFirst(NewTransfer t, Duration dispatchGrace, String actor) {
        List<Object> values = new ArrayList<>(Arrays.asList(t.id(), t.userId(), t.idempotencyKey(),
                t.requestFingerprint(), t.amount(), t.currency(), t.destinationIban(), t.destinationName(), t.description(),
                t.providerReference(), dispatchGrace.toMillis(), actor, t.executeAt(), sendWindowMs, settleMs, keyUsableMs));
        if (!ledger) {
            return run(TransferSql.INSERT_LOOKUP_FIRST, Tuple.wrap(values)).map(TransferRepository::firstTransfer);
        }
        values.add(openingBalance);
        return runOpening(TransferSql.INSERT_LOOKUP_FIRST_HOLDING, Tuple.wrap(values))
                .onFailure(e -> violated(e, TransferSql.FUNDS_CONSTRAINT)).transform(e -> insufficientFunds(t))
                .map(TransferRepository::firstTransfer);
    }

    /**
     * {@link #run} for a statement that may open an account: the first use of an account by two statements at once
     * collides on its key, the loser aborted whole, and run again it finds the account.
     */
    private Uni<RowSet<Row>> runOpening(String sql, Tuple params) {
        return run(sql, params).onFailure(e -> violated(e, TransferSql.ACCOUNT_KEY)).retry().atMost(1);
    }

    /** Whether {@code e} is PostgreSQL refusing a write on {@code constraint}. */
    static boolean violated(Throwable e, String constraint) {
        return e instanceof PgException pg && constraint.equals(pg.getConstraint());
    }

    private static ProblemException insufficientFunds(NewTransfer t) {
        return new ProblemException(ProblemType.INSUFFICIENT_FUNDS,
                "The available balance in " + t.currency() + " does not cover " + t.amount() + " minor units.");
    }

    public Uni<Transfer> findByKey(String userId, String idempotencyKey) {
        return run(TransferSql.FIND_BY_KEY, Tuple.of(userId, idempotencyKey)).map(TransferRepository::firstTransfer);
    }

    public Uni<Transfer> findById(UUID id) {
        return run(TransferSql.FIND_BY_ID, Tuple.of(id)).map(TransferRepository::firstTransfer);
    }

    /**
     * Whether a row with this id exists, read after this call; the probes asked for while one is in flight go
     * together in one statement ({@link ProbeQueue}).
     */
    public Uni<Boolean> exists(UUID id) {
        return probes.exists(id);
    }

    /** Those of {@code ids} (distinct) that have a row: one primary-key probe, or one statement for the batch. */
    private Uni<Set<UUID>> existing(List<UUID> ids) {
        if (ids.size() == 1) {
            return run(TransferSql.EXISTS_BY_ID, Tuple.of(ids.get(0))).map(rows -> rows.size() > 0 ? Set.of(ids.get(0)) : Set.of());
        }
        return run(TransferSql.EXISTING_AMONG, Tuple.tuple().addArrayOfUUID(ids.toArray(UUID[]::new))).map(rows -> new HashSet<>(ids(rows, "id")));
    }

    /** One claim asked for: {@link #claim}'s arguments. */
    private record ClaimAsked(Seen seen, String worker, Duration lease, String reason) {
    }

    /**
     * The claim ({@link TransferSql#CLAIM}), or {@code null} when the row is no longer what the caller saw (someone else
     * moved it). The claims asked for while one is in flight go together in the next statement
     * ({@link TransferSql#CLAIM_BATCH}), each under its own conditions.
     */
    public Uni<Claim> claim(Seen seen, String worker, Duration lease, String reason) {
        return claims.submit(new ClaimAsked(seen, worker, lease, reason));
    }

    /** The claims a batch won, by id: {@link TransferSql#CLAIM} alone, {@link TransferSql#CLAIM_BATCH} for more. */
    private Uni<Map<UUID, Claim>> claimBatch(List<ClaimAsked> batch) {
        int n = batch.size();
        claimBatchSize.record(n);
        if (n == 1) {
            ClaimAsked c = batch.get(0);
            UUID id = c.seen().id();
            return run(TransferSql.CLAIM, Tuple.wrap(Arrays.asList(id, c.worker(), c.lease().toMillis(), c.reason(),
                    c.seen().status().db(), c.seen().version(), sendWindowMs, settleMs, keyUsableMs)))
                    .map(rows -> {
                        Row row = first(rows);
                        return row == null ? Map.of() : Map.of(id, claim(id, row));
                    });
        }
        UUID[] ids = new UUID[n];
        String[] workers = new String[n];
        Long[] leases = new Long[n];
        String[] reasons = new String[n];
        String[] statuses = new String[n];
        Long[] versions = new Long[n];
        for (int i = 0; i < n; i++) {
            ClaimAsked c = batch.get(i);
            ids[i] = c.seen().id();
            workers[i] = c.worker();
            leases[i] = c.lease().toMillis();
            reasons[i] = c.reason();
            statuses[i] = c.seen().status().db();
            versions[i] = c.seen().version();
        }
        Tuple params = Tuple.tuple().addArrayOfUUID(ids).addArrayOfString(workers).addArrayOfLong(leases)
                .addArrayOfString(reasons).addArrayOfString(statuses).addArrayOfLong(versions)
                .addLong(sendWindowMs).addLong(settleMs).addLong(keyUsableMs);
        return run(TransferSql.CLAIM_BATCH, params).map(rows -> {
            Map<UUID, Claim> won = new HashMap<>();
            for (Row row : rows) {
                UUID id = row.getUUID("id");
                won.put(id, claim(id, row));
            }
            return won;
        });
    }

    /** {@link TransferSql#CLAIM_RESULT}, which both claims return. */
    private static final Columns CLAIMED = new Columns(TransferSql.CLAIM_RESULT);

    private static Claim claim(UUID id, Row row) {
        int c = CLAIMED.base(row);
        if (c >= 0) {
            return new Claim(id, row.getLong(c), row.getUUID(c + 9), row.getString(c + 1), row.getLong(c + 2),
                    row.getString(c + 3), row.getString(c + 4), row.getString(c + 5), row.getOffsetDateTime(c + 6),
                    row.getOffsetDateTime(c + 7), row.getOffsetDateTime(c + 8), row.getInteger(c + 10),
                    TransferStatus.fromDb(row.getString(c + 11)));
        }
        return new Claim(id, row.getLong("version"), row.getUUID("claim_token"), row.getString("provider_reference"),
                row.getLong("amount"), row.getString("currency"), row.getString("destination_iban"),
                row.getString("destination_name"), row.getOffsetDateTime("created_at"),
                row.getOffsetDateTime("lease_expires_at"), row.getOffsetDateTime("send_not_after"),
                row.getInteger("sends"), TransferStatus.fromDb(row.getString("previous_status")));
    }

    /**
     * Cancels a pending transfer at the version the caller read ({@link TransferSql#CANCEL}): the cancelled row, or
     * {@code null} when the row is no longer that pending version (a claim won) or the database server is not adopted yet.
     */
    public Uni<Transfer> cancel(UUID id, long seenVersion, String actor, String reason) {
        return run(TransferSql.CANCEL, Tuple.of(id, seenVersion, actor, reason)).map(TransferRepository::firstTransfer);
    }

    /**
     * Moves the row from the claimed version to {@code status}; {@code false} when the version moved on or the row
     * no longer carries {@code claimToken} (a stale writer), in which case nothing changed. {@code refused}: the
     * send was refused with an unexplained 4xx, counted towards parking the transfer.
     */
    public Uni<Boolean> fence(UUID id, long claimedVersion, UUID claimToken, TransferStatus status, String failureReason,
                              Duration nextAttemptIn, String actor, String reason, boolean refused) {
        return fences.submit(new Fence(id, claimedVersion, claimToken, status.db(), failureReason,
                nextAttemptIn.toMillis(), actor, reason, refused ? 1 : 0));
    }

    private Uni<Set<UUID>> fenceBatch(List<Fence> batch) {
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
        UUID[] tokens = new UUID[n];
        for (int i = 0; i < n; i++) {
            Fence f = batch.get(i);
            ids[i] = f.id();
            versions[i] = f.version();
            statuses[i] = f.status();
            failureReasons[i] = f.failureReason();
            nextAttemptIn[i] = f.nextAttemptInMs();
            actors[i] = f.actor();
            reasons[i] = f.reason();
            refused[i] = f.refused();
            tokens[i] = f.claimToken();
        }
        Tuple params = Tuple.tuple().addArrayOfUUID(ids).addArrayOfLong(versions).addArrayOfString(statuses)
                .addArrayOfString(failureReasons).addArrayOfLong(nextAttemptIn).addArrayOfString(actors)
                .addArrayOfString(reasons).addArrayOfInteger(refused).addLong(settleMs).addArrayOfUUID(tokens);
        return run(TransferSql.FENCE, params).map(rows -> new HashSet<>(ids(rows, "id")));
    }

    /** Parks a reconciling row at {@code version} for an operator; {@code false} when the row moved on. */
    public Uni<Boolean> park(UUID id, long version, UUID takeToken, String actor, String reason) {
        return run(TransferSql.PARK, Tuple.wrap(Arrays.asList(id, version, actor, reason, takeToken))).map(rows -> rows.rowCount() == 1);
    }

    /**
     * Adopts the database server that answers if the pipeline has not yet ({@link TransferSql#ADOPT_EPOCH}): the open
     * transfers it moved to a lookup first, or -1 when the server had been adopted already. What it learnt of the
     * server goes to {@link AdoptedServer}, and a failure tells it that nothing is known.
     */
    public Uni<Long> adoptEpoch(String actor) {
        return Uni.createFrom().deferred(() -> {
            long asked = adopted.asking();
            return run(TransferSql.ADOPT_EPOCH, Tuple.of(actor, sendWindowMs, settleMs))
                    .onFailure().invoke(adopted::unknown)
                    .map(rows -> {
                        Row row = first(rows);
                        tellAdopted(row, asked);
                        return row.getLong("moved");
                    });
        });
    }

    /**
     * Asks the server that answers when the pipeline adopted it ({@link TransferSql#ADOPTED_AT}) and tells
     * {@link AdoptedServer}: not adopted, or no answer, vouches for nothing.
     */
    public Uni<Void> lookAtServer() {
        return Uni.createFrom().deferred(() -> {
            long asked = adopted.asking();
            return run(TransferSql.ADOPTED_AT, Tuple.tuple())
                    .onFailure().invoke(adopted::unknown)
                    .invoke(rows -> tellAdopted(first(rows), asked));
        }).replaceWithVoid();
    }

    /**
     * The answering server and its {@code adopted_at} ({@code null}: not adopted) for {@link AdoptedServer}, with when
     * the question was asked.
     */
    private void tellAdopted(Row row, long asked) {
        adopted.answered(instant(row, "server"), instant(row, "adopted_at"), asked);
    }

    private static Instant instant(Row row, String column) {
        OffsetDateTime at = row == null ? null : row.getOffsetDateTime(column);
        return at == null ? null : at.toInstant();
    }

    /**
     * Re-creates a transfer the database lost, from its idempotency record, for a lookup first
     * ({@link TransferSql#INSERT_RECOVERED}); {@code null} when a row exists after all. {@code firstSentNoEarlierThan}: the
     * earliest its first send may have left. With the ledger on, the row holds its amount again, even past the
     * available balance: the provider may have paid it already.
     */
    public Uni<Transfer> insertRecovered(NewTransfer t, OffsetDateTime firstSentNoEarlierThan, String actor) {
        Tuple params = Tuple.wrap(Arrays.asList(t.id(), t.userId(), t.idempotencyKey(), t.requestFingerprint(),
                t.amount(), t.currency(), t.destinationIban(), t.destinationName(), t.description(),
                t.providerReference(), sendWindowMs, settleMs, firstSentNoEarlierThan, actor, t.executeAt(), ledger,
                openingBalance));
        return runOpening(TransferSql.INSERT_RECOVERED, params).map(TransferRepository::firstTransfer);
    }

    /**
     * Restores a final transfer the database lost ({@link TransferSql#INSERT_RESTORED}); {@code null} when a row exists
     * after all. With the ledger on, a restored {@code sent} transfer is posted again, even past the available balance.
     */
    public Uni<Transfer> insertRestored(Transfer t, String idempotencyKey, String actor) {
        if (!t.status().isTerminal()) {
            throw new IllegalArgumentException("only a sent, failed or cancelled transfer is restored as it was, not " + t.status());
        }
        Tuple params = Tuple.wrap(Arrays.asList(t.id(), t.userId(), idempotencyKey, t.requestFingerprint(), t.amount(),
                t.currency(), t.destinationIban(), t.destinationName(), t.description(), t.providerReference(),
                t.status().db(), t.version(), t.failureReason(), t.createdAt(), t.updatedAt(), actor, t.executeAt(), ledger,
                openingBalance));
        return runOpening(TransferSql.INSERT_RESTORED, params).map(TransferRepository::firstTransfer);
    }

    public Uni<List<UUID>> expireLeases(String actor, int limit) {
        return run(TransferSql.EXPIRE_LEASES, Tuple.of(actor, limit, settleMs)).map(rows -> ids(rows, "id"));
    }

    public Uni<List<Seen>> takePending(int limit, Duration holdFor) {
        return run(TransferSql.TAKE_PENDING, Tuple.of(limit, holdFor.toMillis())).map(rows -> {
            List<Seen> due = new ArrayList<>();
            for (Row row : rows) {
                due.add(new Seen(row.getUUID("id"), TransferStatus.PENDING, row.getLong("version")));
            }
            return due;
        });
    }

    public Uni<List<Reconcilable>> takeReconciling(int limit, Duration backoff, Duration maxBackoff) {
        return run(TransferSql.TAKE_RECONCILING, Tuple.of(limit, backoff.toMillis(), maxBackoff.toMillis(), settleMs))
                .map(rows -> {
                    List<Reconcilable> due = new ArrayList<>();
                    for (Row row : rows) {
                        due.add(new Reconcilable(row.getUUID("id"), row.getLong("version"), row.getUUID("claim_token"),
                                row.getString("provider_reference"), row.getOffsetDateTime("created_at"),
                                row.getInteger("refused_sends"), row.getOffsetDateTime("first_sent_at"),
                                row.getInteger("sends"), row.getString("last_reason")));
                    }
                    return due;
                });
    }

    /**
     * Pulls the due time of up to {@code limit} backed-off reconciling rows forward to the earliest moment the
     * in-transit rule allows ({@link TransferSql#HASTEN_RECONCILING}): how many rows it moved (a full batch means more
     * may be waiting).
     */
    public Uni<Integer> hastenReconciling(int limit) {
        return run(TransferSql.HASTEN_RECONCILING, Tuple.of(limit, settleMs)).map(RowSet::rowCount);
    }

    /** One page of transfers in a status (or any), unchanged for at least {@code olderThan}, after the cursor. */
    public Uni<List<Transfer>> list(TransferStatus status, Duration olderThan, OffsetDateTime afterUpdatedAt,
                                    UUID afterId, int limit) {
        Tuple params = Tuple.wrap(Arrays.asList(status == null ? null : status.db(), olderThan.toMillis(),
                afterUpdatedAt, afterId, limit));
        return run(TransferSql.LIST, params).map(TransferRepository::transfers);
    }

    /** One page of {@code userId}'s transfers in a status (or any), newest first, created before the cursor. */
    public Uni<List<Transfer>> listOwn(String userId, TransferStatus status, OffsetDateTime beforeCreatedAt, UUID beforeId,
                                       int limit) {
        Tuple params = Tuple.wrap(Arrays.asList(userId, status == null ? null : status.db(), beforeCreatedAt, beforeId, limit));
        return run(TransferSql.LIST_OWN, params).map(TransferRepository::transfers);
    }

    public Uni<List<TransferEvent>> events(UUID id) {
        return run(TransferSql.EVENTS, Tuple.of(id)).map(rows -> {
            List<TransferEvent> events = new ArrayList<>();
            for (Row row : rows) {
                events.add(TransferEvent.from(row));
            }
            return events;
        });
    }

    /** PostgreSQL's clock as it answers this statement ({@code clock_timestamp()}, not the transaction's start). */
    public Uni<Instant> databaseClock() {
        return run(TransferSql.DATABASE_CLOCK, Tuple.tuple()).map(rows -> first(rows).getOffsetDateTime("now").toInstant());
    }

    /** Pending transfers across instances, counted up to {@code upTo} at most. */
    public Uni<Long> countPending(long upTo) {
        return run(TransferSql.COUNT_PENDING, Tuple.of(upTo)).map(rows -> first(rows).getLong("n"));
    }

    /** The statistics of the tables the hot statements are planned from ({@link TransferSql#STATISTICS}). */
    public Uni<List<TableStatistics>> statistics() {
        return run(TransferSql.STATISTICS, Tuple.tuple()).map(rows -> {
            List<TableStatistics> tables = new ArrayList<>();
            for (Row row : rows) {
                tables.add(new TableStatistics(row.getLong("relid"), row.getString("name"), row.getLong("analyzes"),
                        row.getBoolean("due")));
            }
            return tables;
        });
    }

    /** The open (not sent or failed) transfers per status that has any, with each status's oldest age and parked count. */
    public Uni<List<Open>> open() {
        return run(TransferSql.OPEN, Tuple.tuple()).map(rows -> {
            List<Open> open = new ArrayList<>();
            for (Row row : rows) {
                open.add(new Open(TransferStatus.fromDb(row.getString("status")), row.getLong("n"),
                        row.getNumeric("oldest").doubleValue(), row.getLong("parked")));
            }
            return open;
        });
    }

    private static List<Transfer> transfers(RowSet<Row> rows) {
        List<Transfer> transfers = new ArrayList<>();
        for (Row row : rows) {
            transfers.add(Transfer.from(row));
        }
        return transfers;
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

    /**
     * Creates the partitions of {@code transfer_events} for the ranges of {@code span} that meet [{@code from},
     * {@code until}) and have none yet, at most {@code atMost}; answers how many, or -1 when another instance holds the
     * retention lock.
     */
    public Uni<Integer> createEventPartitions(Instant from, Instant until, Duration span, int atMost, Duration lockWait) {
        return createPartitions(TransferSql.CREATE_EVENT_PARTITIONS, from, until, span, atMost, lockWait);
    }

    /** {@link #createEventPartitions}, for the partitions of {@code transfers} (V17). */
    public Uni<Integer> createTransferPartitions(Instant from, Instant until, Duration span, int atMost, Duration lockWait) {
        return createPartitions(TransferSql.CREATE_TRANSFER_PARTITIONS, from, until, span, atMost, lockWait);
    }

    private Uni<Integer> createPartitions(String sql, Instant from, Instant until, Duration span, int atMost, Duration lockWait) {
        return run(sql, Tuple.of(utc(from), utc(until), span.toMillis(), atMost, lockWait.toMillis()), ddlDeadline(atMost, lockWait))
                .map(rows -> first(rows).getInteger("created"));
    }

    /**
     * Detaches, oldest first and at most {@code atMost}, the partitions of {@code transfer_events} whose whole range
     * ended by {@code olderThan}, except those holding an event of an open transfer; drops them or keeps them apart.
     * {@code null} when another instance holds the retention lock.
     */
    public Uni<List<EventPartition>> detachEventPartitions(Instant olderThan, int atMost, boolean keep, Duration lockWait) {
        return detachPartitions(TransferSql.DETACH_EVENT_PARTITIONS, olderThan, atMost, keep, lockWait);
    }

    /**
     * Detaches, oldest first and at most {@code atMost}, the partitions of {@code transfers} whose whole range ended by
     * {@code olderThan}, except those holding an open transfer or a key still inside its window; drops them or keeps
     * them apart. {@code null} when another instance holds the retention lock.
     */
    public Uni<List<EventPartition>> detachTransferPartitions(Instant olderThan, int atMost, boolean keep, Duration lockWait) {
        return detachPartitions(TransferSql.DETACH_TRANSFER_PARTITIONS, olderThan, atMost, keep, lockWait);
    }

    private Uni<List<EventPartition>> detachPartitions(String sql, Instant olderThan, int atMost, boolean keep, Duration lockWait) {
        return run(sql, Tuple.of(utc(olderThan), atMost, keep, lockWait.toMillis()), ddlDeadline(atMost, lockWait))
                .map(rows -> {
                    List<EventPartition> partitions = new ArrayList<>();
                    for (Row row : rows) {
                        if (row.getBoolean("busy")) {
                            return null;
                        }
                        partitions.add(new EventPartition(row.getString("name"), row.getOffsetDateTime("to_at").toInstant(),
                                EventPartition.Outcome.valueOf(row.getString("outcome").toUpperCase())));
                    }
                    return partitions;
                });
    }

    /**
     * Removes, oldest first and at most {@code atMost}, the idempotency keys created before {@code olderThan} whose
     * transfer ended before it too (or is gone); answers how many, or -1 when another instance holds the retention lock.
     */
    public Uni<Integer> expireKeys(Instant olderThan, int atMost) {
        // a batch of many thousand rows deletes longer than a transfer's statement is allowed to take
        return run(TransferSql.EXPIRE_KEYS, Tuple.of(utc(olderThan), atMost), deadline.plus(Duration.ofSeconds(30)))
                .map(rows -> first(rows).getInteger("expired"));
    }

    /** Keys removable for more than a day past {@code olderThan} and still there (up to 1,000), for the gauge. */
    public Uni<Long> keysOverdue(Instant olderThan) {
        return run(TransferSql.KEYS_OVERDUE, Tuple.of(utc(olderThan))).map(rows -> first(rows).getLong("overdue"));
    }

    /** The state of {@code transfer_events}' partitions, for the retention gauges, with {@code olderThan} the retention. */
    public Uni<EventPartition.Status> eventPartitionStatus(Instant olderThan) {
        return partitionStatus(TransferSql.EVENT_PARTITIONS_STATUS, olderThan);
    }

    /** The state of the partitions of {@code transfers}, with {@code olderThan} the retention. */
    public Uni<EventPartition.Status> transferPartitionStatus(Instant olderThan) {
        return partitionStatus(TransferSql.TRANSFER_PARTITIONS_STATUS, olderThan);
    }

    private Uni<EventPartition.Status> partitionStatus(String sql, Instant olderThan) {
        return run(sql, Tuple.of(utc(olderThan))).map(rows -> {
            Row row = first(rows);
            OffsetDateTime covered = row.getOffsetDateTime("covered_until");
            return new EventPartition.Status(covered == null ? null : covered.toInstant(), row.getInteger("overdue"),
                    row.getLong("default_rows"));
        });
    }

    private static OffsetDateTime utc(Instant at) {
        return at.atOffset(ZoneOffset.UTC);
    }
}
