package dev.ledgerline.transfers.hashing;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The key set up once and its MAC cloned per call: still RFC 4231's HMAC-SHA256, call after call, thread after thread. */
class HmacSha256Test {

    /** RFC 4231, test case 2. */
    private static final String KEY = "Jefe";
    private static final String DATA = "what do ya want for nothing?";
    private static final String MAC = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";

    @Test
    void theRfcVectorOnEveryCallFromManyThreads() throws Exception {
        HmacSha256 hmac = new HmacSha256(KEY);
        assertEquals(MAC, hmac.hex(DATA));
        assertEquals(MAC, hmac.hex(DATA), "a second call starts from the key, not from the first call's state");
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Callable<String>> calls = IntStream.range(0, 2_000)
                    .<Callable<String>>mapToObj(i -> () -> i % 2 == 0 ? hmac.hex(DATA) : hmac.hex(DATA + i)).toList();
            List<Future<String>> answers = pool.invokeAll(calls);
            for (int i = 0; i < answers.size(); i += 2) {
                assertEquals(MAC, answers.get(i).get());
            }
            assertEquals(new HmacSha256(KEY).hex(DATA + 1), answers.get(1).get());
        } finally {
            pool.shutdownNow();
        }
    }
}
