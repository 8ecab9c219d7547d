package dev.ledgerline.transfers.events;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.config.StartupOrder;
import dev.ledgerline.transfers.problem.ProblemException;
import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.transfer.HeldPolls;
import dev.ledgerline.transfers.transfer.TransferEvent;
import io.quarkus.runtime.Startup;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;

/**
 * Reads the event feed: every committed transition once, a transfer's in version order, past any cursor the feed
 * issued. The order and the horizon are PostgreSQL's ({@code feed_xid} below the reading snapshot's xmin; migration
 * V10 says why nothing can then appear behind a cursor). A read that finds nothing past the cursor may be held, and
 * looks again every {@code ledgerline.events.poll-every} until an event is there or the wait is over.
 */
@Startup(StartupOrder.CLIENTS)
@ApplicationScoped
public class EventFeed {

    /** A page, and the cursor to ask with next: past its last event, or the one asked with when it is empty. */
    public record Page(List<FeedEvent> events, FeedCursor next) {
    }

    static final String READ = """
            SELECT e.feed_xid::text AS feed_xid, e.transfer_id, e.version, e.from_status, e.to_status, e.actor, e.reason,
                   e.at, t.user_id, t.amount, t.currency, t.destination_iban, t.destination_name, t.description,
                   t.created_at
              FROM transfer_events e JOIN transfers t
                ON t.id = e.transfer_id AND t.created_at >= ledgerline_transfer_id_time(e.transfer_id)
             WHERE e.feed_xid < pg_snapshot_xmin(pg_current_snapshot())
               AND (e.feed_xid, e.transfer_id, e.version) > ($1::text::xid8, $2, $3)
               AND e.at >= now() - $5::bigint * interval '1 millisecond'
             ORDER BY e.feed_xid, e.transfer_id, e.version
             LIMIT $4""";

    private final Pool pool;
    private final Duration retention;
    private final Duration pollEvery;
    private final Duration deadline;
    private final HeldPolls held;
    private final int perPrincipal;

    public EventFeed(Pool pool, HeldPolls held, LedgerlineConfig config) {
        this.pool = pool;
        this.held = held;
        this.perPrincipal = config.longPoll().maxWaitingPerPrincipal();
        this.retention = config.events().retention();
        this.pollEvery = config.events().pollEvery();
        this.deadline = config.database().timeout();
    }

    /**
     * Up to {@code limit} events past {@code after} ({@code null}: from the oldest retained); with a {@code wait},
     * held until there is at least one or the wait is over, within the principal's share of held requests (429
     * beyond it). A cursor older than the retention is 410.
     */
    public Uni<Page> read(String principal, FeedCursor after, int limit, Duration wait) {
        if (after != null && after.at().isBefore(Instant.now().minus(retention))) {
            throw new ProblemException(ProblemType.CURSOR_EXPIRED, "The cursor points at an event from " + after.at()
                    + ", older than the " + retention.toDays() + " days the feed keeps; start again without after.");
        }
        FeedCursor from = after == null ? FeedCursor.START : after;
        if (wait.isZero()) {
            return page(from, limit, System.nanoTime(), after);
        }
        if (!held.tryHold(principal)) {
            throw new ProblemException(ProblemType.RATE_LIMITED, "You already hold " + perPrincipal
                    + " waiting requests; retry when one has been answered.", null, Map.of("Retry-After", "1"));
        }
        return page(from, limit, System.nanoTime() + wait.toNanos(), after)
                .onTermination().invoke(() -> held.release(principal));
    }

    /**
     * Up to {@code limit} events past {@code after}, without waiting and outside any principal's share: what a
     * webhook endpoint that has acknowledged everything up to {@code after} is sent next.
     */
    public Uni<List<FeedEvent>> next(FeedCursor after, int limit) {
        return page(after, limit, System.nanoTime(), after).map(Page::events);
    }

    private Uni<Page> page(FeedCursor from, int limit, long until, FeedCursor asked) {
        return pool.preparedQuery(READ)
                .execute(Tuple.of(Long.toString(from.feedXid()), from.transferId(), from.version(), limit, retention.toMillis()))
                .ifNoItem().after(deadline).failWith(() -> new TimeoutException("PostgreSQL did not answer within " + deadline))
                .flatMap(rows -> {
                    List<FeedEvent> events = new ArrayList<>(rows.size());
                    for (Row row : rows) {
                        events.add(event(row));
                    }
                    if (!events.isEmpty()) {
                        return Uni.createFrom().item(new Page(events, events.get(events.size() - 1).position()));
                    }
                    long left = until - System.nanoTime();
                    if (left <= 0) {
                        return Uni.createFrom().item(new Page(events, asked));
                    }
                    return Uni.createFrom().voidItem().onItem().delayIt().by(Duration.ofNanos(Math.min(left, pollEvery.toNanos())))
                            .flatMap(nothing -> page(from, limit, until, asked));
                });
    }

    private static FeedEvent event(Row row) {
        TransferEvent event = TransferEvent.from(row);
        FeedCursor position = new FeedCursor(Long.parseLong(row.getString("feed_xid")), row.getUUID("transfer_id"),
                event.version(), event.at().toInstant());
        return new FeedEvent(position, row.getUUID("transfer_id"), event, row.getString("user_id"), row.getLong("amount"),
                row.getString("currency"), row.getString("destination_iban"), row.getString("destination_name"),
                row.getString("description"), row.getOffsetDateTime("created_at"));
    }
}
