package dev.ledgerline.transfers.packaged;

import dev.ledgerline.devstack.LocalPostgres;
import dev.ledgerline.devstack.LocalStack;
import dev.ledgerline.transfers.support.Issuer;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One account, three packaged instances, and more transfers at once than the account can pay: the funds check is
 * PostgreSQL's (the account's CHECK, the account row serialising the holds), so exactly as many transfers are
 * accepted as the credited money covers, whichever instance each request reached, and the rest are refused with
 * {@code 422 insufficient-funds} having written nothing.
 */
class FundsRaceIT {

    private static final int INSTANCES = 3;
    private static final int PER_INSTANCE = 20;
    private static final long CREDIT = 10_000;
    private static final long AMOUNT = 700;
    private static final String PRINCIPAL = "funds-race-" + UUID.randomUUID();

    private static LocalStack stack;
    private static Issuer issuer;
    private static final List<PackagedService> services = new ArrayList<>();

    @BeforeAll
    static void instances() throws Exception {
        stack = LocalStack.start();
        issuer = Issuer.fresh();
        // started side by side: each waits for its own start-up
        List<CompletableFuture<PackagedService>> starting = new ArrayList<>();
        for (int i = 0; i < INSTANCES; i++) {
            Map<String, String> env = PackagedService.env(stack, PackagedJar.freePort(), issuer.publicKey());
            // an account has what was credited to it, nothing more; and one principal's burst is not rate limited
            env.put("LEDGERLINE_LEDGER_OPENING_BALANCE", "0");
            env.put("LEDGERLINE_RATE_LIMIT_WRITES_PER_SECOND", "100000");
            env.put("LEDGERLINE_RATE_LIMIT_WRITES_BURST", "100000");
            Path log = Path.of("target/funds-race-it-" + i + ".log");
            starting.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return PackagedService.start(env, log);
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }));
        }
        CompletableFuture.allOf(starting.toArray(CompletableFuture[]::new)).handle((ok, failed) -> null).get(150, TimeUnit.SECONDS);
        for (CompletableFuture<PackagedService> s : starting) {
            if (!s.isCompletedExceptionally()) {
                services.add(s.get()); // closed after all, even when another one failed to start
            }
        }
        for (CompletableFuture<PackagedService> s : starting) {
            s.get();
        }
    }

    @AfterAll
    static void stop() throws Exception {
        for (PackagedService service : services) {
            service.close();
        }
        if (stack != null) {
            stack.close();
        }
        if (issuer != null) {
            issuer.close();
        }
    }

    @Test
    void threeInstancesAcceptExactlyWhatTheCreditCovers() throws Exception {
        String booking = issuer.token("ledger-booking", Set.of("accounts.credit"));
        RestAssured.given().port(services.get(0).port).auth().oauth2(booking).contentType(ContentType.JSON)
                .header("Idempotency-Key", UUID.randomUUID().toString())
                .body("{\"amount\": " + CREDIT + ", \"currency\": \"EUR\", \"reference\": \"race\"}")
                .post("/v1/accounts/" + PRINCIPAL + "/credits").then().statusCode(201);

        String token = issuer.writer(PRINCIPAL);
        Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(INSTANCES * PER_INSTANCE);
        List<Future<?>> calls = new ArrayList<>();
        for (int i = 0; i < INSTANCES * PER_INSTANCE; i++) {
            int port = services.get(i % INSTANCES).port;
            calls.add(pool.submit(() -> {
                go.await();
                int status = RestAssured.given().port(port).auth().oauth2(token).contentType(ContentType.JSON)
                        .header("Idempotency-Key", UUID.randomUUID().toString())
                        .body("{\"amount\": " + AMOUNT + ", \"currency\": \"EUR\", \"destination\": "
                                + "{\"iban\": \"DE89370400440532013000\", \"name\": \"Ada\"}}")
                        .post("/v1/transfers").statusCode();
                statuses.computeIfAbsent(status, s -> new AtomicInteger()).incrementAndGet();
                return null;
            }));
        }
        go.countDown();
        for (Future<?> call : calls) {
            call.get(60, TimeUnit.SECONDS);
        }
        pool.shutdown();

        long fits = CREDIT / AMOUNT;
        System.out.printf("FundsRaceIT: %d POSTs over %d instances on %d of credit, %d each: %s%n",
                INSTANCES * PER_INSTANCE, INSTANCES, CREDIT, AMOUNT, statuses);
        assertEquals(Set.of(201, 422), statuses.keySet(), "only accepted or refused for funds: " + statuses);
        assertEquals(fits, statuses.get(201).get(), "as many accepted as the credit covers: " + statuses);
        try (Connection db = DriverManager.getConnection(stack.postgres().jdbcUrl(), LocalPostgres.USER, "")) {
            assertEquals(fits, single(db, "SELECT count(*) FROM transfers WHERE user_id = '" + PRINCIPAL + "'"));
            assertEquals(fits, single(db, "SELECT count(*) FROM ledger_entries WHERE principal = '" + PRINCIPAL
                    + "' AND kind = 'hold'"));
            // whatever became of them meanwhile (no provider answers here): the open ones hold, the sent ones posted
            long held = single(db, "SELECT held FROM accounts WHERE principal = '" + PRINCIPAL + "'");
            long posted = single(db, "SELECT posted FROM accounts WHERE principal = '" + PRINCIPAL + "'");
            long open = single(db, "SELECT count(*) FROM transfers WHERE user_id = '" + PRINCIPAL
                    + "' AND status NOT IN ('sent', 'failed', 'cancelled')");
            long sent = single(db, "SELECT count(*) FROM transfers WHERE user_id = '" + PRINCIPAL + "' AND status = 'sent'");
            assertEquals(open * AMOUNT, held, "held is the open transfers' amounts");
            assertEquals(CREDIT - sent * AMOUNT, posted, "posted is the credit less the sent transfers");
            assertTrue(posted - held >= 0, "available never negative: posted " + posted + ", held " + held);
        }
    }

    private static long single(Connection db, String sql) throws Exception {
        try (var st = db.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
