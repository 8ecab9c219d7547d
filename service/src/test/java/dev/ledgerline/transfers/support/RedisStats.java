package dev.ledgerline.transfers.support;

import dev.ledgerline.transfers.redis.RedisCommands;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Counts the commands the tests' Redis server ran, from {@code INFO commandstats}, as an operator would read them. */
public final class RedisStats {

    private RedisStats() {
    }

    /** How many times the server has run {@code command} (lower case, e.g. {@code get}). */
    public static long calls(RedisCommands redis, String command) {
        String stats = redis.execute("INFO", "commandstats").await().atMost(Duration.ofSeconds(5)).toString();
        Matcher m = Pattern.compile("cmdstat_" + command + ":calls=(\\d+)").matcher(stats);
        return m.find() ? Long.parseLong(m.group(1)) : 0L;
    }

    /**
     * How many times the Redis on {@code port} has read from its clients' sockets ({@code total_reads_processed}):
     * commands that arrive together on one connection are read together.
     */
    public static long readsProcessed(int port) {
        try (redis.clients.jedis.Jedis admin = new redis.clients.jedis.Jedis("127.0.0.1", port)) {
            Matcher m = Pattern.compile("total_reads_processed:(\\d+)").matcher(admin.info("stats"));
            if (!m.find()) {
                throw new AssertionError("INFO stats has no total_reads_processed");
            }
            return Long.parseLong(m.group(1));
        }
    }

    /** How many scripts the server has been asked to run: by their digest ({@code EVALSHA}) or by their text ({@code EVAL}). */
    public static long scripts(RedisCommands redis) {
        return calls(redis, "evalsha") + calls(redis, "eval");
    }
}
