package dev.ledgerline.transfers.redis;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * The rules that keep the service correct on Redis Cluster (docs/operating.md "Redis Cluster"), checked over the main
 * sources so a new command or script cannot break them unnoticed: every {@code EVAL} declares exactly one
 * key and its script reads no other key, and nothing walks or clears the whole keyspace. One key per
 * operation means one hash slot per operation, so no {@code CROSSSLOT} and no hash tags needed;
 * {@link RedisClusterTest} runs the same code on a real cluster.
 */
class ClusterSafetyTest {

    private static final Path MAIN = Path.of("src/main/java");
    private static final Pattern EVAL = Pattern.compile("\"EVAL\",\\s*[A-Z_]+,\\s*\"(\\d+)\"");
    private static final Pattern KEY_REFERENCE = Pattern.compile("KEYS\\[(\\d+)]");
    private static final List<String> KEYSPACE_WIDE = List.of("\"KEYS\"", "\"SCAN\"", "\"FLUSHALL\"", "\"FLUSHDB\"",
            "\"RANDOMKEY\"", "\"MGET\"", "\"MSET\"", "\"MULTI\"", "\"RENAME\"", "\"SUNIONSTORE\"", "\"EVALSHA\"");

    @Test
    void everyScriptIsEvaluatedWithExactlyOneKeyAndReadsOnlyThatOne() throws IOException {
        List<String> violations = new ArrayList<>();
        int evals = 0;
        for (Path source : sources()) {
            String text = Files.readString(source);
            Matcher eval = EVAL.matcher(text);
            while (eval.find()) {
                evals++;
                if (!eval.group(1).equals("1")) {
                    violations.add(source + ": EVAL with " + eval.group(1) + " keys");
                }
            }
            Matcher key = KEY_REFERENCE.matcher(text);
            while (key.find()) {
                if (!key.group(1).equals("1")) {
                    violations.add(source + ": a script reads KEYS[" + key.group(1) + "]");
                }
            }
        }
        assertEquals(List.of(), violations);
        // the compare-and-delete of the lock, the idempotency get-or-set, the token bucket
        assertEquals(3, evals, "EVAL calls found; a new one must be checked here too");
    }

    @Test
    void noCommandSpansSlotsOrTheWholeKeyspace() throws IOException {
        for (Path source : sources()) {
            String text = Files.readString(source);
            for (String command : KEYSPACE_WIDE) {
                assertFalse(text.contains(command), source + " sends " + command);
            }
        }
    }

    private static List<Path> sources() throws IOException {
        try (var files = Files.walk(MAIN)) {
            return files.filter(p -> p.toString().endsWith(".java")).toList();
        }
    }
}
