package dev.ledgerline.transfers.account;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.config.StartupOrder;
import io.quarkus.runtime.Startup;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeoutException;

/**
 * Every read of {@code accounts} and {@code ledger_entries}, and every write of {@code credits}, each one statement of
 * {@link AccountSql}. Holds, posts and releases are written by the transfer's own statements, not here.
 */
@Startup(StartupOrder.CLIENTS)
@ApplicationScoped
public class AccountRepository {

    private final Pool pool;
    private final Duration deadline;
    private final long openingBalance;

    public AccountRepository(Pool pool, LedgerlineConfig config) {
        this.pool = pool;
        this.deadline = config.database().timeout();
        this.openingBalance = config.ledger().openingBalance();
    }

    /** Like every statement of the service: a PostgreSQL that does not answer in time fails the call (503). */
    private Uni<RowSet<Row>> run(String sql, Tuple params) {
        return pool.preparedQuery(sql).execute(params)
                .ifNoItem().after(deadline).failWith(() -> new TimeoutException("PostgreSQL did not answer within " + deadline));
    }

    /** The principal's accounts, by currency; none before its first transfer or credit. */
    public Uni<List<Balance>> balances(String principal) {
        return run(AccountSql.BALANCES, Tuple.of(principal)).map(rows -> {
            List<Balance> balances = new ArrayList<>();
            for (Row row : rows) {
                balances.add(new Balance(row.getString("currency"), row.getLong("posted"), row.getLong("held")));
            }
            return balances;
        });
    }

    /** Up to {@code limit} entries of the principal, newest first, with an id below {@code beforeId}. */
    public Uni<List<LedgerEntry>> entries(String principal, long beforeId, int limit) {
        return run(AccountSql.ENTRIES, Tuple.of(principal, beforeId, limit)).map(rows -> {
            List<LedgerEntry> entries = new ArrayList<>();
            for (Row row : rows) {
                entries.add(new LedgerEntry(row.getLong("id"), row.getString("kind"), row.getString("currency"),
                        row.getLong("amount"), row.getLong("account_leg"), row.getLong("held_change"),
                        row.getUUID("transfer_id"), row.getUUID("credit_id"), row.getOffsetDateTime("at")));
            }
            return entries;
        });
    }

    /** The booked credit, or {@code null} when {@code createdBy} already used {@code idempotencyKey}. */
    public Uni<Credit> credit(UUID id, String principal, long amount, String currency, String reference, String createdBy,
                              String idempotencyKey, String fingerprint) {
        Tuple params = Tuple.from(Arrays.asList(id, principal, currency, amount, reference, createdBy, idempotencyKey,
                fingerprint, openingBalance));
        return run(AccountSql.CREDIT, params).map(AccountRepository::firstCredit);
    }

    public Uni<Credit> findCredit(String createdBy, String idempotencyKey) {
        return run(AccountSql.FIND_CREDIT, Tuple.of(createdBy, idempotencyKey)).map(AccountRepository::firstCredit);
    }

    private static Credit firstCredit(RowSet<Row> rows) {
        var it = rows.iterator();
        if (!it.hasNext()) {
            return null;
        }
        Row row = it.next();
        return new Credit(row.getUUID("id"), row.getString("principal"), row.getLong("amount"), row.getString("currency"),
                row.getString("reference"), row.getString("request_fingerprint"), row.getOffsetDateTime("created_at"));
    }
}
