package dev.ledgerline.transfers.transfer;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.function.LongSupplier;

/**
 * What this instance last learnt of the database server that answers it: when the pipeline adopted that server
 * ({@code database_epochs.adopted_at}, by PostgreSQL's clock) and when this instance last saw it answer as the
 * adopted server. A look every sweep interval tells it ({@link TransferRepository#lookAtServer}, scheduled by
 * {@code FinalRows}), and so does the sweeper's adoption statement ({@link TransferRepository#adoptEpoch}).
 *
 * <p>A database forgets commits only with its server: a crash whose recovery lacks them, a failover to a replica that
 * never received them, a restore from a backup. Each starts a server with another {@code pg_postmaster_start_time()},
 * which the pipeline adopts anew, at a later {@code adopted_at}. So a row that became final on the adopted server after
 * its adoption (its {@code updated_at} later than {@code adopted_at} plus the clock-skew bound, for the clocks of two
 * servers) is still there unless the server changed since this instance last looked: {@link #keeps} says so for as
 * long as that look is recent (three sweep intervals) and no connection to the server was lost since. When it is not
 * recent (a sweep failed, the database is down, the instance just started), when the change listener's connection
 * dropped (a crash or restart closes it at once), or when the row became final before the adoption, nothing is
 * vouched for and the caller reads the row. A failover that closes no connection, inside that interval, is the window
 * this leaves: of the same kind as a read just before a failover, since a replica that lags can lose what any read
 * saw.
 */
@Singleton
public class AdoptedServer {

    /**
     * What a server said to a question asked at {@code askedAtNanos}: which server it is ({@code server}, its
     * {@code pg_postmaster_start_time()}) and when the pipeline adopted it ({@code adoptedAt}, null: nothing is
     * vouched for).
     */
    private record Seen(Instant server, Instant adoptedAt, long askedAtNanos) {
    }

    private final long validNanos;
    private final Duration clockMargin;
    private final LongSupplier nanoTime;
    private volatile Seen seen;

    @Inject
    public AdoptedServer(LedgerlineConfig config) {
        this(config.pipeline().sweepEvery().multipliedBy(3), config.pipeline().clockSkewBound(), System::nanoTime);
    }

    AdoptedServer(Duration valid, Duration clockMargin, LongSupplier nanoTime) {
        this.validNanos = valid.toNanos();
        this.clockMargin = clockMargin;
        this.nanoTime = nanoTime;
        this.seen = new Seen(null, null, nanoTime.getAsLong());
    }

    /** The moment a question to the server leaves: pass it to {@link #answered} with the answer. */
    long asking() {
        return nanoTime.getAsLong();
    }

    /**
     * The server {@code server} answered a question asked at {@code askedAt} ({@link #asking}): the pipeline adopted it
     * at {@code adoptedAt}, or (null) not yet. Two statements on two connections, the sweeper's adoption and the look,
     * run at the same moment every sweep interval, so their answers can arrive in either order and can disagree:
     * <ul>
     *   <li>answers are taken in the order their questions were asked: one asked before a later answer, or before a
     *   connection was lost ({@link #unknown}), says nothing of the server that answers now and is dropped;</li>
     *   <li>a server once adopted stays adopted: "not adopted" from the server already seen adopted is a statement whose
     *   snapshot came before the adoption committed, and only renews the look.</li>
     * </ul>
     */
    synchronized void answered(Instant server, Instant adoptedAt, long askedAt) {
        Seen last = seen;
        if (askedAt - last.askedAtNanos() < 0) {
            return;
        }
        boolean sameAdopted = adoptedAt == null && server != null && server.equals(last.server()) && last.adoptedAt() != null;
        seen = new Seen(server, sameAdopted ? last.adoptedAt() : adoptedAt, askedAt);
    }

    /**
     * The server could not be asked, or a connection to it was lost ({@link TransferChanges}' listener: the first
     * sign of a crash or restart): nothing is vouched for until the server answers a question asked after this.
     */
    synchronized void unknown() {
        seen = new Seen(null, null, nanoTime.getAsLong());
    }

    /**
     * Whether a row that became final at {@code finalAt} (its {@code updated_at}) is still in the database: it was
     * written on the server adopted last, after its adoption, and this instance saw that server answer recently.
     * {@code false} means "not known", never "lost".
     */
    public boolean keeps(OffsetDateTime finalAt) {
        Instant adoptedAt = adoptedAt();
        return adoptedAt != null && finalAt != null && finalAt.toInstant().isAfter(adoptedAt.plus(clockMargin));
    }

    /**
     * When the server vouched for now was adopted, or {@code null} when nothing is vouched for. A row read after that
     * server's adoption and found there cannot be missing while {@link #stillAdopted} says so.
     */
    public Instant adoptedAt() {
        Seen s = seen;
        return s.adoptedAt() != null && nanoTime.getAsLong() - s.askedAtNanos() < validNanos ? s.adoptedAt() : null;
    }

    /** Whether the server vouched for now is still the one adopted at {@code adoptedAt} (from {@link #adoptedAt}). */
    public boolean stillAdopted(Instant adoptedAt) {
        return adoptedAt != null && adoptedAt.equals(adoptedAt());
    }
}
