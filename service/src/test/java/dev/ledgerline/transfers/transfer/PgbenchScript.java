package dev.ledgerline.transfers.transfer;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URL;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code bench/transfer.pgbench}, the statements a transfer costs PostgreSQL on the happy path, written from this
 * build's {@link TransferSql} rather than by hand, so the database limit the benchmarks divide by is the service's
 * SQL of today: the insert that holds the funds and claims the transfer for its accepting instance
 * ({@link TransferSql#INSERT_HOLDING_CLAIMED}) and the fence to {@code sent} that posts the hold ({@link TransferSql#FENCE}), each
 * parameter replaced by the value the service binds under the prod profile's settings (read from
 * {@code application.properties} and {@link LedgerlineConfig}'s defaults). {@code PgbenchScriptTest} fails when the
 * committed file is not what this writes, and runs the script's statements against a migrated database.
 */
final class PgbenchScript {

    /** Transfers per run of the script: their fences go in one statement, as {@link BatchQueue} batches them. */
    static final int BATCH = 4;

    /** What {@code bench/servicecost.sh} opens each account with. */
    static final long OPENING_BALANCE = 100_000_000_000_000L;

    /** A request fingerprint's length: a SHA-256 in hex. */
    private static final String FINGERPRINT = "'" + "0123456789abcdef".repeat(4) + "'";

    private static final Pattern PARAMETER = Pattern.compile("\\$(\\d+)");

    private PgbenchScript() {
    }

    /** The milliseconds the repository binds, from the configuration as {@link TransferRepository} derives them. */
    record Settings(long pendingGraceMs, long leaseMs, long sendWindowMs, long settleMs, long keyUsableMs) {

        static Settings prod() {
            LedgerlineConfig config = prodConfig();
            LedgerlineConfig.Pipeline pipeline = config.pipeline();
            LedgerlineConfig.Provider provider = config.provider();
            long sendWindow = Math.min(provider.timeoutMs(), pipeline.lease().minus(pipeline.margin()).toMillis());
            return new Settings(pipeline.pendingGrace().toMillis(), pipeline.lease().toMillis(), sendWindow,
                    pipeline.margin().plus(provider.lookupLag()).plus(pipeline.clockSkewBound()).toMillis(),
                    provider.keyWindow().minus(provider.keyWindowMargin()).toMillis() - sendWindow);
        }

        private static LedgerlineConfig prodConfig() {
            URL properties = PgbenchScript.class.getClassLoader().getResource("application.properties");
            try {
                SmallRyeConfig config = new SmallRyeConfigBuilder()
                        .withSources(new PropertiesConfigSource(properties, 250))
                        .withProfile("prod")
                        // durations as Quarkus reads them ("500ms" as well as ISO-8601)
                        .withConverter(Duration.class, 200, new DurationConverter())
                        .withMapping(LedgerlineConfig.class)
                        .withValidateUnknown(false)
                        .build();
                return config.getConfigMapping(LedgerlineConfig.class);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** The script: a header, the variables, then per transfer its claimed insert, then one fence for all. */
    static String render(Settings s) {
        StringBuilder out = new StringBuilder();
        out.append("-- transfers-per-run: ").append(BATCH).append('\n').append("""
                -- The database limit for one transfer: the statements a transfer costs PostgreSQL on the happy path, as
                -- TransferRepository runs them with the ledger on, text for text (TransferSql's INSERT_HOLDING_CLAIMED and
                -- FENCE), each parameter replaced by the value the service binds with the prod profile's settings. Per
                -- pgbench transaction %d transfers: each is accepted and claimed by one statement (the insert, which holds
                -- its amount on the owner's account and claims the row for its accepting instance), in its own implicit
                -- transaction, as the service's pool runs it; their fences to sent (which post the holds) go in one statement, as BatchQueue
                -- sends the fences that waited while the previous batch was in flight. Each pgbench client is its own account's owner
                -- (bench-<client_id>, opened on first use with %d), as bench/servicecost.sh's OWNERS spreads
                -- transfers over principals. The insert claims only on an adopted server: INSERT INTO database_epochs (started_at)
                -- VALUES (pg_postmaster_start_time()) ON CONFLICT DO NOTHING on a migrated database first.
                -- Written by PgbenchScriptTest from this build's TransferSql (-Dpgbench.write=true writes it; without,
                -- the test fails when this file differs). Do not edit by hand. Run as bench/servicecost.sh does:
                --   pgbench -n -M prepared -c 20 -j 2 -T 20 -f bench/transfer.pgbench <database>
                -- (pgbench's tps counts runs of this script: multiply by %d for transfers/s).
                """.formatted(BATCH, OPENING_BALANCE, BATCH));
        for (int i = 1; i <= BATCH; i++) {
            out.append("\\set k").append(i).append(" random(1, 1000000000000000)\n");
        }
        for (int i = 1; i <= BATCH; i++) {
            out.append(statement(TransferSql.INSERT_HOLDING_CLAIMED, insertClaimed(i, s))).append(" \\gset c").append(i).append("_\n");
        }
        out.append(statement(TransferSql.FENCE, fence(s))).append(";\n");
        return out.toString();
    }

    /** One SQL command of the script and the prefix its {@code \gset} gives the answer's columns (null: none). */
    record Step(String sql, String gset) {
    }

    /** The SQL commands of {@link #render}'s script, in order. */
    static List<Step> steps(String script) {
        List<Step> statements = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : script.split("\n")) {
            if (line.startsWith("--") && current.isEmpty() || line.startsWith("\\set")) {
                continue;
            }
            int gset = line.indexOf(" \\gset ");
            if (gset >= 0) {
                current.append(line, 0, gset);
                statements.add(new Step(current.toString(), line.substring(gset + " \\gset ".length())));
                current.setLength(0);
            } else if (line.endsWith(";")) {
                current.append(line, 0, line.length() - 1);
                statements.add(new Step(current.toString(), null));
                current.setLength(0);
            } else {
                current.append(line).append('\n');
            }
        }
        return statements;
    }

    private static IntFunction<String> insert(int i, Settings s) {
        String key = "('pg-' || :client_id || '-' || :k" + i + ")";
        return n -> switch (n) {
            case 1 -> "gen_random_uuid()";
            case 2 -> "('bench-' || :client_id)";
            case 3 -> key;
            case 4 -> FINGERPRINT;
            case 5 -> "1250";
            case 6 -> "'EUR'";
            case 7 -> "'DE89370400440532013000'";
            case 8 -> "'Ada Lovelace'";
            case 9 -> "'bench'";
            // the length of ll_ and an HMAC-SHA256 in hex
            case 10 -> "('ll_' || md5(" + key + ") || md5(" + key + " || 'r'))";
            case 11 -> Long.toString(s.pendingGraceMs());
            case 12 -> "'pgbench'";
            case 13 -> "NULL";
            case 14 -> Long.toString(OPENING_BALANCE);
            default -> throw new IllegalArgumentException("INSERT_HOLDING_CLAIMED has no $" + n);
        };
    }

    private static IntFunction<String> insertClaimed(int i, Settings s) {
        IntFunction<String> insert = insert(i, s);
        return n -> switch (n) {
            case 15 -> "'pgbench'";
            case 16 -> Long.toString(s.leaseMs());
            case 17 -> "'dispatched on accept'";
            case 18 -> Long.toString(s.sendWindowMs());
            default -> insert.apply(n);
        };
    }

    private static IntFunction<String> fence(Settings s) {
        return n -> switch (n) {
            case 1 -> array(i -> ":c" + i + "_id");
            case 2 -> array(i -> ":c" + i + "_version");
            case 3 -> array(i -> "'sent'");
            case 4 -> array(i -> "NULL");
            case 5 -> array(i -> "0");
            case 6 -> array(i -> "'pgbench'");
            case 7 -> array(i -> "'provider completed'");
            case 8 -> array(i -> "0");
            case 9 -> Long.toString(s.settleMs());
            case 10 -> array(i -> ":c" + i + "_claim_token");
            default -> throw new IllegalArgumentException("FENCE has no $" + n);
        };
    }

    /** pgbench cannot bind an array: the batch's values as an {@code ARRAY[...]} (its cast stays the statement's). */
    private static String array(IntFunction<String> element) {
        List<String> elements = new ArrayList<>();
        for (int i = 1; i <= BATCH; i++) {
            elements.add(element.apply(i));
        }
        return "(ARRAY[" + String.join(", ", elements) + "])";
    }

    private static String statement(String sql, IntFunction<String> value) {
        Matcher m = PARAMETER.matcher(sql);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(out, Matcher.quoteReplacement(value.apply(Integer.parseInt(m.group(1)))));
        }
        m.appendTail(out);
        return out.toString();
    }
}
