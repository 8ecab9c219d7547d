package dev.ledgerline.transfers.webhooks;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.config.StartupOrder;
import dev.ledgerline.transfers.events.FeedCursor;
import dev.ledgerline.transfers.events.FeedEvent;
import io.quarkus.runtime.Startup;
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
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeoutException;

/**
 * All SQL on {@code webhook_endpoints} and {@code webhook_deliveries} (migration V11). Every write after the lease
 * matches the lease's token, so an instance whose lease was taken over changes nothing.
 */
@Startup(StartupOrder.CLIENTS)
@ApplicationScoped
public class WebhookRepository {

    /** The feed's horizon: a new endpoint is sent what commits after it was registered. */
    static final String CREATE = """
            INSERT INTO webhook_endpoints (url, description, secret, cursor_xid, cursor_transfer, cursor_version, cursor_at)
            SELECT $1, $2, $3, coalesce(h.feed_xid, '0'::xid8), coalesce(h.transfer_id, '00000000-0000-0000-0000-000000000000'::uuid),
                   coalesce(h.version, -1), coalesce(h.at, now())
              FROM (SELECT 1) AS one
              LEFT JOIN LATERAL (
                    SELECT e.feed_xid, e.transfer_id, e.version, e.at
                      FROM transfer_events e
                     WHERE e.feed_xid IS NOT NULL AND e.feed_xid < pg_snapshot_xmin(pg_current_snapshot())
                     ORDER BY e.feed_xid DESC, e.transfer_id DESC, e.version DESC
                     LIMIT 1) h ON true
            RETURNING id, url, description, created_at, failing, failing_since""";

    static final String LIST = """
            SELECT id, url, description, created_at, failing, failing_since
              FROM webhook_endpoints ORDER BY created_at, id LIMIT $1""";

    static final String DELETE = "DELETE FROM webhook_endpoints WHERE id = $1";

    /**
     * A new secret ({@code $2}); the one it replaces keeps signing beside it for {@code $3} ms (V15). A previous secret
     * from an earlier rotation stops signing.
     */
    static final String ROTATE = """
            UPDATE webhook_endpoints
               SET previous_secret = secret, previous_secret_expires_at = now() + $3::bigint * interval '1 millisecond',
                   secret = $2
             WHERE id = $1
            RETURNING id, previous_secret_expires_at""";

    static final String ATTEMPTS = """
            SELECT d.event_id, d.attempt, d.status_code, d.latency_ms, d.error, d.at
              FROM webhook_endpoints w
              LEFT JOIN LATERAL (SELECT * FROM webhook_deliveries x WHERE x.endpoint_id = w.id ORDER BY x.id DESC LIMIT $2) d ON true
             WHERE w.id = $1
             ORDER BY d.id DESC""";

    /** Due endpoints nobody holds; FOR UPDATE re-checks a row another instance changed meanwhile, SKIP LOCKED passes it. */
    static final String LEASE = """
            UPDATE webhook_endpoints w
               SET leased_by = $1, lease_token = gen_random_uuid(), lease_expires_at = now() + $2::bigint * interval '1 millisecond'
             WHERE w.id IN (SELECT id FROM webhook_endpoints
                             WHERE next_attempt_at <= now() AND (lease_expires_at IS NULL OR lease_expires_at <= now())
                             ORDER BY next_attempt_at
                             LIMIT $3
                             FOR UPDATE SKIP LOCKED)
               AND w.next_attempt_at <= now() AND (w.lease_expires_at IS NULL OR w.lease_expires_at <= now())
            RETURNING w.id, w.url, w.secret, w.lease_token, w.cursor_xid::text AS cursor_xid, w.cursor_transfer,
                      CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret END AS previous_secret,
                      w.cursor_version, w.cursor_at, w.attempts, w.failing_since, w.failing""";

    /** A 2xx: the cursor moves past the event, the failure count clears, the lease is renewed, the attempt recorded. */
    static final String ADVANCE = """
            WITH w AS (
                UPDATE webhook_endpoints
                   SET cursor_xid = $3::text::xid8, cursor_transfer = $4, cursor_version = $5, cursor_at = $6,
                       attempts = 0, failing_since = NULL, failing = false,
                       lease_expires_at = now() + $7::bigint * interval '1 millisecond'
                 WHERE id = $1 AND lease_token = $2
                RETURNING id)
            INSERT INTO webhook_deliveries (endpoint_id, event_id, attempt, status_code, latency_ms, error, instance)
            SELECT id, $8, $9, $10, $11, NULL, $12 FROM w""";

    /**
     * A failed attempt: the cursor stays, the next attempt waits out the back-off, the endpoint is marked failing
     * once the event has failed for longer than give-up-after; the lease is given back and the attempt recorded.
     */
    static final String FAIL = """
            WITH w AS (
                UPDATE webhook_endpoints
                   SET attempts = attempts + 1, failing_since = coalesce(failing_since, now()),
                       failing = failing OR coalesce(failing_since, now()) <= now() - $3::bigint * interval '1 millisecond',
                       next_attempt_at = now() + $4::bigint * interval '1 millisecond',
                       leased_by = NULL, lease_token = NULL, lease_expires_at = NULL
                 WHERE id = $1 AND lease_token = $2
                RETURNING id, attempts, failing),
            i AS (
                INSERT INTO webhook_deliveries (endpoint_id, event_id, attempt, status_code, latency_ms, error, instance)
                SELECT id, $5, attempts, $6, $7, $8, $9 FROM w)
            SELECT attempts, failing FROM w""";

    static final String RELEASE = """
            UPDATE webhook_endpoints SET leased_by = NULL, lease_token = NULL, lease_expires_at = NULL, next_attempt_at = now()
             WHERE id = $1 AND lease_token = $2""";

    /** Keeps the newest {@code $2} attempts of an endpoint. */
    static final String PRUNE = """
            DELETE FROM webhook_deliveries
             WHERE endpoint_id = $1
               AND id <= (SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY id DESC OFFSET $2 LIMIT 1)""";

    static final String FAILING = "SELECT count(*) FILTER (WHERE failing) AS failing FROM webhook_endpoints";

    /** What a failed attempt left: the endpoint's failed attempts at the event, and whether it is now failing. */
    record Failed(int attempts, boolean failing) {
    }

    private final Pool pool;
    private final Duration deadline;

    public WebhookRepository(Pool pool, LedgerlineConfig config) {
        this.pool = pool;
        this.deadline = config.database().timeout();
    }

    private Uni<RowSet<Row>> run(String sql, Tuple params) {
        return pool.preparedQuery(sql).execute(params)
                .ifNoItem().after(deadline).failWith(() -> new TimeoutException("PostgreSQL did not answer within " + deadline));
    }

    public Uni<WebhookEndpoint> create(String url, String description, String secret) {
        return run(CREATE, Tuple.of(url, description, secret)).map(rows -> endpoint(rows.iterator().next()));
    }

    public Uni<List<WebhookEndpoint>> list(int limit) {
        return run(LIST, Tuple.of(limit)).map(rows -> {
            List<WebhookEndpoint> all = new ArrayList<>();
            rows.forEach(row -> all.add(endpoint(row)));
            return all;
        });
    }

    /** {@code false} when there was no such endpoint. Its attempts go with it. */
    public Uni<Boolean> delete(UUID id) {
        return run(DELETE, Tuple.of(id)).map(rows -> rows.rowCount() > 0);
    }

    /** When the replaced secret stops signing; {@code null} when there is no such endpoint. */
    public Uni<OffsetDateTime> rotate(UUID id, String secret, Duration previousValidFor) {
        return run(ROTATE, Tuple.of(id, secret, previousValidFor.toMillis()))
                .map(rows -> rows.rowCount() == 0 ? null : rows.iterator().next().getOffsetDateTime("previous_secret_expires_at"));
    }

    /** The newest attempts first; {@code null} when there is no such endpoint. */
    public Uni<List<DeliveryAttempt>> attempts(UUID id, int limit) {
        return run(ATTEMPTS, Tuple.of(id, limit)).map(rows -> {
            if (rows.size() == 0) {
                return null;
            }
            List<DeliveryAttempt> attempts = new ArrayList<>();
            for (Row row : rows) {
                if (row.getString("event_id") != null) {
                    attempts.add(new DeliveryAttempt(row.getString("event_id"), row.getInteger("attempt"),
                            row.getInteger("status_code"), row.getLong("latency_ms"), row.getString("error"),
                            row.getOffsetDateTime("at")));
                }
            }
            return attempts;
        });
    }

    Uni<List<Lease>> lease(String instance, Duration lease, int limit) {
        long deadline = System.nanoTime() + lease.toNanos();
        return run(LEASE, Tuple.of(instance, lease.toMillis(), limit)).map(rows -> {
            List<Lease> leases = new ArrayList<>();
            for (Row row : rows) {
                FeedCursor cursor = new FeedCursor(Long.parseLong(row.getString("cursor_xid")), row.getUUID("cursor_transfer"),
                        row.getLong("cursor_version"), row.getOffsetDateTime("cursor_at").toInstant());
                leases.add(new Lease(row.getUUID("id"), row.getString("url"), row.getString("secret"),
                        row.getString("previous_secret"), row.getUUID("lease_token"),
                        cursor, row.getInteger("attempts"), row.getOffsetDateTime("failing_since"), row.getBoolean("failing"),
                        deadline));
            }
            return leases;
        });
    }

    /** The renewed lease past {@code event}, or {@code null} when the lease was lost (nothing changed). */
    Uni<Lease> advance(Lease lease, FeedEvent event, int attempt, int status, long latencyMs, Duration renewal, String instance) {
        long deadline = System.nanoTime() + renewal.toNanos();
        FeedCursor at = event.position();
        Tuple params = Tuple.from(Arrays.asList(lease.id(), lease.token(), Long.toString(at.feedXid()), at.transferId(),
                at.version(), at.at().atOffset(java.time.ZoneOffset.UTC), renewal.toMillis(), event.id(), attempt, status,
                latencyMs, instance));
        return run(ADVANCE, params).map(rows -> rows.rowCount() == 0 ? null : lease.renewed(at, deadline));
    }

    /** What the failure left, or {@code null} when the lease was lost (nothing changed). */
    Uni<Failed> fail(Lease lease, String eventId, Integer status, long latencyMs, String error, Duration giveUpAfter,
                     Duration backoff, String instance) {
        Tuple params = Tuple.from(Arrays.asList(lease.id(), lease.token(), giveUpAfter.toMillis(), backoff.toMillis(), eventId,
                status, latencyMs, DeliveryAttempt.bound(error), instance));
        return run(FAIL, params).map(rows -> {
            if (rows.size() == 0) {
                return null;
            }
            Row row = rows.iterator().next();
            return new Failed(row.getInteger("attempts"), row.getBoolean("failing"));
        });
    }

    Uni<Void> release(Lease lease) {
        return run(RELEASE, Tuple.of(lease.id(), lease.token())).replaceWithVoid();
    }

    Uni<Void> prune(UUID endpoint, int keep) {
        return run(PRUNE, Tuple.of(endpoint, keep)).replaceWithVoid();
    }

    Uni<Long> failing() {
        return run(FAILING, Tuple.tuple()).map(rows -> rows.iterator().next().getLong("failing"));
    }

    private static WebhookEndpoint endpoint(Row row) {
        return new WebhookEndpoint(row.getUUID("id"), row.getString("url"), row.getString("description"),
                row.getOffsetDateTime("created_at"), row.getBoolean("failing"), row.getOffsetDateTime("failing_since"));
    }
}
