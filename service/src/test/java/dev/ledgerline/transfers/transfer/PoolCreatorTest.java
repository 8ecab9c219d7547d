package dev.ledgerline.transfers.transfer;

import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The service's pool keeps its long statements prepared ({@link PoolCreator}): PostgreSQL shows a connection's
 * prepared statements in {@code pg_prepared_statements}, so a statement longer than the client's default limit of
 * 2,048 characters must be there after it ran, as a short one is, and not be prepared again on every execution.
 */
@QuarkusTest
class PoolCreatorTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @Inject
    Pool pool;

    @Test
    void aStatementLongerThanTheClientsDefaultLimitStaysPreparedOnItsConnection() {
        String marker = "pool_creator_test_" + System.nanoTime();
        String padding = " ".repeat(3_000);
        String longSql = "SELECT $1::int + 1 AS " + marker + padding;
        String shortSql = "SELECT $1::int + 2 AS " + marker + "_short";
        assertTrue(longSql.length() > 2_048 && longSql.length() <= PoolCreator.SQL_LIMIT);

        SqlConnection connection = pool.getConnection().await().atMost(WAIT);
        try {
            for (int i = 0; i < 3; i++) {
                Row row = connection.preparedQuery(longSql).execute(Tuple.of(i)).await().atMost(WAIT).iterator().next();
                assertEquals(i + 1, row.getInteger(0));
                connection.preparedQuery(shortSql).execute(Tuple.of(i)).await().atMost(WAIT);
            }
            List<String> prepared = new ArrayList<>();
            for (Row row : connection.query("SELECT statement FROM pg_prepared_statements").execute().await().atMost(WAIT)) {
                prepared.add(row.getString(0));
            }
            assertEquals(1, prepared.stream().filter(shortSql::equals).count(), "the short statement is kept: " + prepared.size());
            assertEquals(1, prepared.stream().filter(longSql::equals).count(), "the long statement is kept too, once");
        } finally {
            connection.close().await().atMost(WAIT);
        }
    }

    /** A credentials provider would not reach the pool this creator builds: refused, not silently dropped. */
    @Test
    void aCredentialsProviderIsRefusedRatherThanIgnored() {
        IllegalStateException refused = assertThrows(IllegalStateException.class, () -> new PoolCreator(Optional.of("vault")));
        assertTrue(refused.getMessage().contains("quarkus.datasource.credentials-provider"), refused.getMessage());
        new PoolCreator(Optional.empty());
        new PoolCreator(Optional.of(" "));
    }

    /** Every statement of {@link TransferSql} fits the limit, so each is prepared once per connection. */
    @Test
    void everyStatementTheServiceSendsFitsTheLimit() throws Exception {
        int longest = 0;
        String name = null;
        for (Field field : TransferSql.class.getDeclaredFields()) {
            if (field.getType() == String.class && Modifier.isStatic(field.getModifiers())) {
                field.setAccessible(true);
                String sql = (String) field.get(null);
                if (sql != null && sql.length() > longest) {
                    longest = sql.length();
                    name = field.getName();
                }
            }
        }
        assertTrue(longest > 2_048, "the test reads the statements (longest " + name + ": " + longest + ")");
        assertTrue(longest <= PoolCreator.SQL_LIMIT, name + " is " + longest + " characters, over the pool's limit");
    }
}
