package dev.ledgerline.transfers.faults;

import dev.ledgerline.devstack.LocalPostgres;
import dev.ledgerline.devstack.LocalStack;
import dev.ledgerline.transfers.packaged.PackagedJar;
import dev.ledgerline.transfers.support.Issuer;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * One account, three packaged instances, and more transfers at once than the account can pay: 50 POSTs of 100,000
 * against a credit of 1,000,000, spread over the instances. The funds check is PostgreSQL's (the account's CHECK, the
 * account row serialising the holds), so exactly 10 are accepted, whichever instance each reached, the other 40 are
 * refused with {@code 422 insufficient-funds} having written nothing, and once the 10 are sent the account has posted
 * all of it: 0 left, nothing held, each transfer executed once at the provider.
 */
class FundsRaceIT {

    private static final int INSTANCES = 3;
    private static final int POSTS = 50;
    private static final long CREDIT = 1_000_000;
    private static final long AMOUNT = 100_000;
    private static final String PRINCIPAL = "funds-race-" + UUID.randomUUID();

    private static LocalStack stack;
    private static ProviderServer provider;
    private static Issuer issuer;
    private static final List<ServiceInstance> instances = new ArrayList<>();

    @BeforeAll
    static void instances() throws Exception {
        stack = LocalStack.start();
        provider = ProviderServer.start();
        issuer = Issuer.fresh();
        Map<String, String> env = ServiceInstance.suiteEnv(stack, provider.url(), issuer.publicKey());
        // an account has what was credited to it, nothing more; and one principal's burst is not rate limited
        env.put("LEDGERLINE_LEDGER_OPENING_BALANCE", "0");
        env.put("LEDGERLINE_RATE_LIMIT_WRITES_PER_SECOND", "100000");
        env.put("LEDGERLINE_RATE_LIMIT_WRITES_BURST", "100000");
        Path logs = Files.createDirectories(Path.of("target/faults"));
        for (int i = 0; i < INSTANCES; i++) {
            ServiceInstance instance = new ServiceInstance("funds-" + i, PackagedJar.freePort(),
                    logs.resolve("funds-race-" + i + ".log"), env, List.of());
            instances.add(instance);
            instance.start();
        }
        for (ServiceInstance instance : instances) {
            instance.awaitReady(Duration.ofSeconds(120));
        }
    }

    @AfterAll
    static void stop() throws Exception {
        for (ServiceInstance instance : instances) {
            instance.close();
        }
        if (provider != null) {
            provider.close();
        }
        if (stack != null) {
            stack.close();
        }
        if (issuer != null) {
            issuer.close();
        }
    }

    @Test
    void threeInstancesAcceptExactlyWhatTheCreditCoversAndPostAllOfIt() throws Exception {
        String booking = issuer.token("ledger-booking", Set.of("accounts.credit"));
        RestAssured.given().port(instances.get(0).port).auth().oauth2(booking).contentType(ContentType.JSON)
                .header("Idempotency-Key", UUID.randomUUID().toString())
                .body("{\"amount\": " + CREDIT + ", \"currency\": \"EUR\", \"reference\": \"race\"}")
                .post("/v1/accounts/" + PRINCIPAL + "/credits").then().statusCode(201);

        String token = issuer.writer(PRINCIPAL);
        // every instance warm (its token cache, pools and statements) so the race is between them, not against a cold start
        for (ServiceInstance instance : instances) {
            for (int i = 0; i < 5; i++) {
                RestAssured.given().port(instance.port).auth().oauth2(token).get("/v1/accounts/me").then().statusCode(200);
                RestAssured.given().port(instance.port).auth().oauth2(token).contentType(ContentType.JSON)
                        .header("Idempotency-Key", UUID.randomUUID().toString())
                        .body("{\"amount\": " + (CREDIT + 1) + ", \"currency\": \"EUR\", \"destination\": "
                                + "{\"iban\": \"DE89370400440532013000\", \"name\": \"Ada\"}}")
                        .post("/v1/transfers").then().statusCode(422);
            }
        }
        Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
        Map<Integer, Set<Integer>> acceptedBy = new ConcurrentHashMap<>();
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(POSTS);
        List<Future<?>> calls = new ArrayList<>();
        for (int i = 0; i < POSTS; i++) {
            int instance = i % INSTANCES;
            int port = instances.get(instance).port;
            calls.add(pool.submit(() -> {
                go.await();
                int status = RestAssured.given().port(port).auth().oauth2(token).contentType(ContentType.JSON)
                        .header("Idempotency-Key", UUID.randomUUID().toString())
                        .body("{\"amount\": " + AMOUNT + ", \"currency\": \"EUR\", \"destination\": "
                                + "{\"iban\": \"DE89370400440532013000\", \"name\": \"Ada\"}}")
                        .post("/v1/transfers").statusCode();
                statuses.computeIfAbsent(status, s -> new AtomicInteger()).incrementAndGet();
                acceptedBy.computeIfAbsent(status, s -> ConcurrentHashMap.newKeySet()).add(instance);
                return null;
            }));
        }
        go.countDown();
        for (Future<?> call : calls) {
            call.get(60, TimeUnit.SECONDS);
        }
        pool.shutdown();
        System.out.printf("FundsRaceIT: %d POSTs of %d over %d instances on a credit of %d: %s, accepted by instances %s%n",
                POSTS, AMOUNT, INSTANCES, CREDIT, statuses, acceptedBy.get(201));
        assertEquals(Set.of(201, 422), statuses.keySet(), "only accepted or refused for funds: " + statuses);
        assertEquals(10, statuses.get(201).get(), "as many accepted as the credit covers: " + statuses);
        assertEquals(40, statuses.get(422).get());

        try (Connection db = DriverManager.getConnection(stack.postgres().jdbcUrl(), LocalPostgres.USER, "")) {
            String mine = " WHERE user_id = '" + PRINCIPAL + "'";
            assertEquals(10, single(db, "SELECT count(*) FROM transfers" + mine), "a refused POST writes no row");
            Awaitility.await("the 10 transfers are sent").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                    .until(() -> single(db, "SELECT count(*) FROM transfers" + mine + " AND status = 'sent'") == 10);
            String account = " FROM accounts WHERE principal = '" + PRINCIPAL + "' AND currency = 'EUR'";
            assertEquals(0, single(db, "SELECT posted" + account), "the whole credit posted");
            assertEquals(0, single(db, "SELECT held" + account), "nothing held");
            assertEquals(10, single(db, "SELECT count(*) FROM ledger_entries WHERE principal = '" + PRINCIPAL
                    + "' AND kind = 'post'"), "one posting per transfer");
            try (var st = db.createStatement(); ResultSet rs = st.executeQuery("SELECT provider_reference FROM transfers" + mine)) {
                while (rs.next()) {
                    assertEquals(1, provider.ledger().executions(rs.getString(1)), "executions of " + rs.getString(1));
                }
            }
        }
    }

    private static long single(Connection db, String sql) throws Exception {
        try (var st = db.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
