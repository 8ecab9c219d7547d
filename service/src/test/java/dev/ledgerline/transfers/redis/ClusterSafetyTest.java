package dev.ledgerline.transfers.redis;

import dev.ledgerline.transfers.idempotency.IdempotencyKey;
import dev.ledgerline.transfers.idempotency.IdempotencyService;
import dev.ledgerline.transfers.ratelimit.RateLimiter;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.util.JedisClusterCRC16;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The rules that keep the service correct on Redis Cluster (docs/operating.md "Redis Cluster"), checked over the main
 * sources so a new command or script cannot break them unnoticed: every {@code EVAL} declares exactly one
 * key and its script reads no other key — except the admission, whose second key is an idempotency entry of the same
 * principal, and both carry the principal's hash tag, so one slot — and nothing walks or clears the whole keyspace.
 * {@link RedisClusterTest} runs the same code on a real cluster.
 */
class ClusterSafetyTest {

    private static final Path MAIN = Path.of("src/main/java");
    private static final Path ADMISSION = Path.of("dev/ledgerline/transfers/ratelimit/RateLimiter.java");
    private static final Pattern EVAL = Pattern.compile("\\beval\\(\\s*[A-Z_]+,\\s*(\\d+),");
    private static final Path COMMANDS = Path.of("dev/ledgerline/transfers/redis/RedisCommands.java");
    private static final Pattern KEY_REFERENCE = Pattern.compile("KEYS\\[(\\d+)]");
    private static final List<String> KEYSPACE_WIDE = List.of("\"KEYS\"", "\"SCAN\"", "\"FLUSHALL\"", "\"FLUSHDB\"",
            "\"RANDOMKEY\"", "\"MGET\"", "\"MSET\"", "\"MULTI\"", "\"RENAME\"", "\"SUNIONSTORE\"");

    @Test
    void everyScriptIsEvaluatedWithExactlyOneKeyAndReadsOnlyThatOneButTheAdmission() throws IOException {
        List<String> violations = new ArrayList<>();
        int evals = 0;
        for (Path source : sources()) {
            String text = Files.readString(source);
            // the admission (RateLimiter.admitAndRead): its two keys share the principal's slot, checked below
            int allowedKeys = source.endsWith(ADMISSION) ? 2 : 1;
            Matcher eval = EVAL.matcher(text);
            while (eval.find()) {
                evals++;
                if (Integer.parseInt(eval.group(1)) > allowedKeys) {
                    violations.add(source + ": EVAL with " + eval.group(1) + " keys");
                }
            }
            Matcher key = KEY_REFERENCE.matcher(text);
            while (key.find()) {
                if (Integer.parseInt(key.group(1)) > allowedKeys) {
                    violations.add(source + ": a script reads KEYS[" + key.group(1) + "]");
                }
            }
        }
        assertEquals(List.of(), violations);
        // the compare-and-delete of the lock, the idempotency get-or-set, the token bucket alone, with the entry, and
        // with the entry and its in-flight marker
        assertEquals(5, evals, "script calls found; a new one must be checked here too");
    }

    /** A script runs through {@code RedisCommands.eval} alone, where its key count is the one checked above. */
    @Test
    void scriptsAreSentOnlyByTheOneCallThatTakesTheirKeyCount() throws IOException {
        for (Path source : sources()) {
            if (source.endsWith(COMMANDS)) {
                continue;
            }
            String text = Files.readString(source);
            assertFalse(text.contains("\"EVAL\"") || text.contains("\"EVALSHA\""), source + " sends a script by itself");
        }
    }

    /** The admission's two keys: a principal's bucket and each of its idempotency entries are in one slot. */
    @Test
    void theBucketAndTheEntriesOfOnePrincipalShareASlotAndPrincipalsSpreadOverSlots() {
        Set<Integer> slots = new HashSet<>();
        for (int p = 0; p < 200; p++) {
            String principal = "principal-" + p + "-" + UUID.randomUUID();
            int bucket = JedisClusterCRC16.getSlot(RateLimiter.redisKey(principal, RateLimiter.Kind.WRITE));
            assertEquals(bucket, JedisClusterCRC16.getSlot(RateLimiter.redisKey(principal, RateLimiter.Kind.READ)));
            for (int k = 0; k < 5; k++) {
                IdempotencyKey key = IdempotencyKey.parse("key-" + k + "-" + UUID.randomUUID());
                assertEquals(bucket, JedisClusterCRC16.getSlot(IdempotencyService.redisKey(principal, key)),
                        "entry and bucket of " + principal + " in one slot");
            }
            slots.add(bucket);
        }
        assertTrue(slots.size() > 150, "principals spread over the slots: " + slots.size() + " of 200 distinct");
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
