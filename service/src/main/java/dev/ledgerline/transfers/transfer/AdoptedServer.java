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

    private record Seen(Instant adoptedAt, long atNanos) {
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
    }

    /** The server answered as the one adopted at {@code adoptedAt} (null: it could not say, nothing is vouched for). */
    void answered(Instant adoptedAt) {
        seen = adoptedAt == null ? null : new Seen(adoptedAt, nanoTime.getAsLong());
    }

    /**
     * The server could not be asked, or a connection to it was lost ({@link TransferChanges}' listener: the first
     * sign of a crash or restart): nothing is vouched for until the sweeper sees the adopted server answer again.
     */
    void unknown() {
        seen = null;
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
        return s != null && nanoTime.getAsLong() - s.atNanos() < validNanos ? s.adoptedAt() : null;
    }

    /** Whether the server vouched for now is still the one adopted at {@code adoptedAt} (from {@link #adoptedAt}). */
    public boolean stillAdopted(Instant adoptedAt) {
        return adoptedAt != null && adoptedAt.equals(adoptedAt());
    }
}
