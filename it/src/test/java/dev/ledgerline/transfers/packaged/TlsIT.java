package dev.ledgerline.transfers.packaged;

import dev.ledgerline.devstack.LocalPostgres;
import dev.ledgerline.devstack.LocalRedis;
import dev.ledgerline.devstack.LocalStack;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Issuer;
import dev.ledgerline.transfers.support.Management;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The packaged service against a PostgreSQL and a Redis that speak TLS, with the CA named in its settings, as README
 * "Deploying" sets them for managed servers. PostgreSQL with {@code sslmode=verify-full}: every connection (the
 * reactive pool, the listening one, and Flyway's JDBC one, whose settings follow from the pool's) verifies the
 * server's certificate and host name, and none connects to a server whose certificate another CA signed or that names
 * another host. Redis over {@code rediss://}: the same verification. The certificates are made by the test with the
 * {@code openssl} command.
 */
class TlsIT {

    private static final String HOST = "127.0.0.1";

    @TempDir
    static Path pki;
    private static LocalStack stack;
    private static Issuer issuer;

    private static LocalRedis tlsRedis;

    @BeforeAll
    static void servers() throws Exception {
        openssl("version");
        authority("ca");
        authority("other-ca");
        serverCertificate("server", "ca", "IP:" + HOST + ",DNS:localhost");
        serverCertificate("elsewhere", "ca", "DNS:db.elsewhere.example");
        stack = LocalStack.start();
        issuer = Issuer.fresh();
        serve("server");
        stack.postgres().setReloadable("ssl", "on");
        tlsRedis = LocalRedis.startTls(pki.resolve("server.crt"), pki.resolve("server.key"));
    }

    @AfterAll
    static void stop() throws Exception {
        if (tlsRedis != null) {
            tlsRedis.close();
        }
        if (issuer != null) {
            issuer.close();
        }
        if (stack != null) {
            stack.close();
        }
    }

    @Test
    void connectsWithVerifyFullAgainstTheNamedCaAndEveryConnectionIsEncrypted() throws Exception {
        Path log = pki.resolve("trusted.log");
        try (PackagedService service = PackagedService.start(tlsEnv("ca"), log)) {
            Management.given(service.managementPort).get("/q/health/ready").then().statusCode(200);
            String token = issuer.writer("tls-" + UUID.randomUUID());
            given().port(service.port).auth().oauth2(token).contentType("application/json")
                    .header("Idempotency-Key", UUID.randomUUID().toString())
                    .body("{\"amount\": 5, \"currency\": \"EUR\", \"destination\": {\"iban\": \"DE89370400440532013000\", \"name\": \"Ada\"}}")
                    .post("/v1/transfers").then().statusCode(201);

            // every connection but this query's own is the service's; Flyway's verifies too, as the refusals show
            List<Map<String, Object>> connections = superuser("SELECT a.application_name, s.ssl, s.version FROM pg_stat_ssl s"
                    + " JOIN pg_stat_activity a USING (pid) WHERE a.backend_type = 'client backend' AND a.pid <> pg_backend_pid()");
            assertFalse(connections.isEmpty(), "the service holds connections");
            connections.forEach(c -> assertEquals(true, c.get("ssl"), "an unencrypted connection: " + c));
        }
    }

    @Test
    void refusesAServerWhoseCertificateAnotherCaSigned() throws Exception {
        String output = runToExit(tlsEnv("other-ca"));
        assertTrue(output.contains("PKIX") || output.contains("certificate"), output);
    }

    /**
     * verify-full, not verify-ca: the right CA signed it, but for another host. Flyway's connection refuses it at
     * start; with Flyway pointed elsewhere, the reactive pool refuses it too and the instance never becomes ready.
     */
    @Test
    void refusesACertificateForAnotherHostFromTheRightCa() throws Exception {
        serve("elsewhere");
        try {
            String output = runToExit(tlsEnv("ca"));
            assertTrue(output.contains("hostname") || output.contains("host name"), output);

            Map<String, String> env = tlsEnv("ca");
            env.put("QUARKUS_DATASOURCE_JDBC_URL", stack.postgres().jdbcUrl() + "?sslmode=disable");
            try (PackagedService service = PackagedService.start(env, pki.resolve("reactive-elsewhere.log"))) {
                Awaitility.await("readiness reports the database down").atMost(Duration.ofSeconds(30))
                        .pollInterval(Duration.ofMillis(250))
                        .until(() -> Management.given(service.managementPort).get("/q/health/ready").statusCode() == 503);
                given().port(service.port).auth().oauth2(issuer.writer("tls-" + UUID.randomUUID()))
                        .contentType("application/json").header("Idempotency-Key", UUID.randomUUID().toString())
                        .body("{\"amount\": 5, \"currency\": \"EUR\", \"destination\": {\"iban\": \"DE89370400440532013000\", \"name\": \"Ada\"}}")
                        .post("/v1/transfers").then().statusCode(503);
            }
        } finally {
            serve("server");
        }
    }

    @Test
    void redisOverTlsAnswersWhenItsCertificateVerifiesAndOnlyThen() throws Exception {
        assertEquals("up", redisReadiness(redisTlsEnv("ca"), "redis-trusted.log"),
                "the service's PING over rediss:// with the named CA");
        // another CA: the service still starts and serves (Redis only coordinates), but it never talks to that server
        assertEquals("degraded", redisReadiness(redisTlsEnv("other-ca"), "redis-other-ca.log"));
    }

    /** Redis's part of readiness for an instance started with {@code env}: {@code up} or {@code degraded}. */
    private static String redisReadiness(Map<String, String> env, String log) throws Exception {
        try (PackagedService service = PackagedService.start(env, pki.resolve(log))) {
            AtomicReference<String> redis = new AtomicReference<>();
            Awaitility.await("readiness has checked Redis").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250))
                    .until(() -> {
                        List<Map<String, Object>> checks = Management.given(service.managementPort).get("/q/health/ready")
                                .then().extract().path("checks.findAll { it.name == 'redis' }.data");
                        redis.set(checks == null || checks.isEmpty() ? null : String.valueOf(checks.get(0).get("redis")));
                        return redis.get() != null;
                    });
            return redis.get();
        }
    }

    /** The settings README "Deploying" gives for a managed Redis, trusting {@code ca}'s certificate. */
    private static Map<String, String> redisTlsEnv(String ca) {
        Map<String, String> env = PackagedService.env(stack, PackagedJar.freePort(), issuer.publicKey());
        env.put("QUARKUS_REDIS_HOSTS", tlsRedis.uri());
        env.put("QUARKUS_REDIS_TLS_ENABLED", "true");
        env.put("QUARKUS_REDIS_TLS_TRUST_CERTIFICATE_PEM", "true");
        env.put("QUARKUS_REDIS_TLS_TRUST_CERTIFICATE_PEM_CERTS", pki.resolve(ca + ".crt").toString());
        env.put("QUARKUS_REDIS_TLS_HOSTNAME_VERIFICATION_ALGORITHM", "HTTPS");
        // a first TLS handshake on a loaded machine can take longer than the 250 ms guard on each Redis command,
        // and readiness would say degraded for a server it trusts; what is tested here is the trust, not the guard
        env.put("LEDGERLINE_REDIS_TIMEOUT", "PT5S");
        return env;
    }

    /** The settings README "Deploying" gives for a managed PostgreSQL, trusting {@code ca}'s certificate. */
    private static Map<String, String> tlsEnv(String ca) {
        Map<String, String> env = PackagedService.env(stack, PackagedJar.freePort(), issuer.publicKey());
        env.put("QUARKUS_DATASOURCE_REACTIVE_POSTGRESQL_SSL_MODE", "verify-full");
        env.put("QUARKUS_DATASOURCE_REACTIVE_TRUST_CERTIFICATE_PEM", "true");
        env.put("QUARKUS_DATASOURCE_REACTIVE_TRUST_CERTIFICATE_PEM_CERTS", pki.resolve(ca + ".crt").toString());
        env.put("QUARKUS_DATASOURCE_REACTIVE_HOSTNAME_VERIFICATION_ALGORITHM", "HTTPS");
        return env;
    }

    private static String runToExit(Map<String, String> env) throws Exception {
        Path log = Files.createTempFile(pki, "refused", ".log");
        Process process = PackagedService.launch(env, log);
        assertTrue(process.waitFor(90, TimeUnit.SECONDS), "the service should have refused to start; see " + log);
        String output = Files.readString(log);
        assertTrue(process.exitValue() != 0, "started against a server it cannot verify: " + output);
        return output;
    }

    /** The server's certificate and key, from {@code name}.crt/.key, where PostgreSQL reads them on a reload. */
    private static void serve(String name) throws Exception {
        Path data = stack.postgres().dataDir();
        Files.copy(pki.resolve(name + ".crt"), data.resolve("server.crt"), StandardCopyOption.REPLACE_EXISTING);
        Files.copy(pki.resolve(name + ".key"), data.resolve("server.key"), StandardCopyOption.REPLACE_EXISTING);
        Files.setPosixFilePermissions(data.resolve("server.key"), PosixFilePermissions.fromString("rw-------"));
        try (Connection c = connect(); var st = c.createStatement()) {
            st.execute("SELECT pg_reload_conf()");
        }
    }

    private static List<Map<String, Object>> superuser(String sql) throws SQLException {
        try (Connection c = connect()) {
            return Db.query(c, sql);
        }
    }

    private static Connection connect() throws SQLException {
        return DriverManager.getConnection(stack.postgres().jdbcUrl(), LocalPostgres.USER, "");
    }

    private static void authority(String name) throws Exception {
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=Ledgerline test " + name,
                "-keyout", pki.resolve(name + ".key").toString(), "-out", pki.resolve(name + ".crt").toString());
    }

    private static void serverCertificate(String name, String ca, String subjectAltNames) throws Exception {
        Path extensions = pki.resolve(name + ".ext");
        Files.writeString(extensions, "subjectAltName=" + subjectAltNames + "\n");
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=" + name, "-keyout", pki.resolve(name + ".key").toString(),
                "-out", pki.resolve(name + ".csr").toString());
        openssl("x509", "-req", "-in", pki.resolve(name + ".csr").toString(), "-CA", pki.resolve(ca + ".crt").toString(),
                "-CAkey", pki.resolve(ca + ".key").toString(), "-CAcreateserial", "-days", "2",
                "-extfile", extensions.toString(), "-out", pki.resolve(name + ".crt").toString());
    }

    private static void openssl(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("openssl"));
        command.addAll(List.of(args));
        Process process;
        try {
            process = new ProcessBuilder(command).redirectErrorStream(true).directory(pki.toFile()).start();
        } catch (IOException notInstalled) {
            throw new AssertionError("this test makes its certificates with the openssl command: apt-get install openssl", notInstalled);
        }
        String output = new String(process.getInputStream().readAllBytes());
        assertTrue(process.waitFor(30, TimeUnit.SECONDS), "openssl " + command);
        assertEquals(0, process.exitValue(), command + ": " + output);
    }
}
