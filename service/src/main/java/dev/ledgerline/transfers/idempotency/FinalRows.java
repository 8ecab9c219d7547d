package dev.ledgerline.transfers.idempotency;

import dev.ledgerline.transfers.config.InstanceId;
import dev.ledgerline.transfers.config.StartupOrder;
import dev.ledgerline.transfers.metrics.Meters;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import dev.ledgerline.transfers.redis.RedisCommands;
import dev.ledgerline.transfers.transfer.AdoptedServer;
import dev.ledgerline.transfers.transfer.Transfer;
import dev.ledgerline.transfers.transfer.TransferRepository;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Response;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The row a final replay names must exist: a database that lost the commit (a failover, a crash, a restore) is
 * given the row back, in the final state the idempotency record kept, so a {@code 201} never names a transfer
 * {@code GET} cannot find.
 *
 * <p>Only a row that became final before the database server now answering was adopted can be missing
 * ({@link AdoptedServer}: commits are lost with their server, and every new server is adopted anew). A row that
 * became final on the adopted server, after its adoption, is not read: the replay is answered without the database,
 * as long as this instance saw that server answer within the last three sweep intervals; so is a row this instance
 * already read under the same adoption (found or restored). Any other replay checks
 * with one primary-key read, bounded so that a database that does not answer never holds the
 * answer back. A check that could not run is not dropped: it is owed, in a Redis set next to the entries
 * ({@link #OWED}), and every instance's round pays what is owed once PostgreSQL answers again. Right after a crash
 * is exactly when a client retries and when the read fails, so the obligation must outlive the request that
 * found it, and the instance too. Restoring twice is harmless: the insert does nothing when the row is there.
 */
@Startup(StartupOrder.BEFORE_SCHEDULER)
@Singleton
public class FinalRows {

    private static final Logger LOG = Logger.getLogger(FinalRows.class);

    /** The checks replays could not run: members {@code <length of key>:<key>|<final entry>}. */
    static final String OWED = "idem:v1:final-checks";

    /** How long a replay waits for the read (retried once: the first read after a restart may meet a dead connection). */
    private static final Duration CHECK = Duration.ofMillis(500);

    /** Checks paid per round and instance. */
    private static final int BATCH = 100;

    /** Rows remembered as checked at most; about 100 bytes each. */
    private static final int MAX_CHECKED = 16_384;

    /**
     * Rows read (found or restored) since the server adopted at the time each maps to: a row final before that
     * adoption, which {@link AdoptedServer#keeps} cannot vouch for, is read once per instance and adoption, not on
     * every replay.
     */
    private final Map<UUID, Instant> checked = new ConcurrentHashMap<>();

    private final TransferRepository transfers;
    private final RedisCommands cache;
    private final String actor;
    private final Counter restored;
    private final Counter owed;
    private final Counter kept;
    private final AdoptedServer adopted;

    public FinalRows(TransferRepository transfers, RedisCommands cache, InstanceId instance, @ServiceMeters MeterRegistry metrics,
                     AdoptedServer adopted) {
        this.transfers = transfers;
        this.adopted = adopted;
        this.cache = cache;
        this.actor = instance.value();
        this.restored = Meters.IDEMPOTENCY.counter("db", "restored_final").register(metrics);
        this.owed = Meters.IDEMPOTENCY.counter("fast", "final_check_owed").register(metrics);
        this.kept = Meters.IDEMPOTENCY.counter("fast", "final_check_not_needed").register(metrics);
    }

    /**
     * Checks that the database still has {@code last}'s row and restores it if not; a check that cannot run within
     * its bound is owed instead. A row that became final on the adopted server after its adoption is not read
     * ({@link AdoptedServer#keeps}). Never fails: the replay is answered either way.
     */
    Uni<Void> check(IdempotencyKey key, Transfer last) {
        if (adopted.keeps(last.updatedAt()) || adopted.stillAdopted(checked.get(last.id()))) {
            kept.increment();
            return Uni.createFrom().voidItem();
        }
        // the adoption vouched for when the read starts: a row found (or restored) by a read under it stays there
        // while that server stays adopted
        Instant under = adopted.adoptedAt();
        return restoreIfLost(key.value(), last)
                .invoke(() -> remember(last.id(), under))
                .ifNoItem().after(CHECK).fail()
                .onFailure().recoverWithUni(e -> {
                    LOG.debugf("transferId=%s step=idempotency could not check the final row, owed: %s", last.id(), e.toString());
                    owed.increment();
                    return cache.execute("SADD", OWED, member(key.value(), last)).replaceWithVoid()
                            .onFailure().invoke(f -> LOG.warnf("transferId=%s step=idempotency could not check the final "
                                    + "row nor owe the check, the next replay tries again: %s", last.id(), f.toString()))
                            .onFailure().recoverWithNull();
                });
    }

    private void remember(UUID id, Instant under) {
        if (under == null) {
            return;
        }
        if (checked.size() >= MAX_CHECKED) {
            checked.clear(); // a bound, not an eviction policy: the rows replayed now are checked once more
        }
        checked.put(id, under);
    }

    /** The row is there, or is restored now; fails when the database could not say. */
    private Uni<Void> restoreIfLost(String key, Transfer last) {
        return transfers.exists(last.id())
                .onFailure().retry().withBackOff(Duration.ofMillis(50)).atMost(1)
                .flatMap(exists -> exists ? Uni.createFrom().voidItem()
                        : transfers.insertRestored(last, key, actor).invoke(inserted -> {
                            if (inserted != null) {
                                restored.increment();
                                LOG.warnf("transferId=%s step=idempotency the database had lost this %s transfer: restored "
                                        + "from its idempotency record", last.id(), last.status().db());
                            }
                        }).replaceWithVoid());
    }

    /**
     * Looks at the database server every sweep interval, whatever the sweeper is doing, so that {@link AdoptedServer}
     * vouches for final rows only on a recent answer: one index probe of {@code database_epochs} per interval.
     */
    @Scheduled(every = "${ledgerline.pipeline.sweep-every}", delayed = "1s",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP, identity = "ledgerline-adopted-server")
    Uni<Void> lookAtServer() {
        return transfers.lookAtServer().onFailure().recoverWithNull();
    }

    /** Pays the owed checks, a batch per round; one that still cannot run stays owed. */
    @Scheduled(every = "${ledgerline.pipeline.sweep-every}", delayed = "1s",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP, identity = "ledgerline-final-rows")
    Uni<Void> payOwed() {
        return cache.execute("SRANDMEMBER", OWED, Integer.toString(BATCH))
                .onFailure().recoverWithNull()
                .flatMap(members -> members == null || members.size() == 0 ? Uni.createFrom().voidItem()
                        : Multi.createFrom().iterable(strings(members)).onItem().transformToUniAndConcatenate(this::pay)
                        .collect().last().replaceWithVoid());
    }

    private Uni<Void> pay(String member) {
        int colon = member.indexOf(':');
        IdempotencyEntry entry = null;
        String key = null;
        try {
            int length = Integer.parseInt(member.substring(0, colon));
            key = member.substring(colon + 1, colon + 1 + length);
            entry = IdempotencyEntry.decode(member.substring(colon + 2 + length));
        } catch (RuntimeException garbled) {
            // not a member of ours: dropped below
        }
        Uni<Void> paid = entry == null || entry.kind() != IdempotencyEntry.Kind.FINAL ? Uni.createFrom().voidItem()
                : restoreIfLost(key, entry.last()).ifNoItem().after(CHECK).fail();
        return paid.flatMap(done -> cache.execute("SREM", OWED, member).replaceWithVoid())
                .onFailure().invoke(e -> LOG.debugf("step=idempotency an owed final-row check is still owed: %s", e.toString()))
                .onFailure().recoverWithNull();
    }

    static String member(String key, Transfer last) {
        return key.length() + ":" + key + "|" + IdempotencyEntry.finalState(last).encode();
    }

    private static List<String> strings(Response members) {
        List<String> values = new ArrayList<>(members.size());
        for (Response m : members) {
            values.add(m.toString());
        }
        return values;
    }
}
