package dev.ledgerline.transfers.packaged;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledgerline.transfers.local.LocalPostgres;
import dev.ledgerline.transfers.local.LocalStack;
import io.restassured.RestAssured;
import io.restassured.config.EncoderConfig;
import io.restassured.config.RestAssuredConfig;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import io.smallrye.jwt.build.Jwt;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Property-based fuzzing of {@code POST /v1/transfers} (jqwik): arbitrary JSON shapes, Unicode, huge and
 * odd numbers, duplicate keys, unknown fields, deep nesting, non-JSON, random Idempotency-Key bytes, odd
 * content types and broken tokens. The invariant: a 2xx only for a valid request (and then exactly one
 * new row), otherwise a 4xx problem+json — never a 5xx, never a stack trace, and not one row written.
 *
 * <p>Runs against the packaged jar rather than {@code @QuarkusTest}: jqwik's {@code @Property} methods
 * run on jqwik's own JUnit-platform engine, which does not apply Jupiter extensions, so the
 * {@code @QuarkusTest} extension never starts Quarkus for them (a probe class was not run at all).
 * Fixed seed, bounded tries; the numbers are printed at the end.
 */
class FuzzPostIT {

    static final String SEED = "20261129";
    static final int TRIES = 500;
    static final String PRINCIPAL = "fuzz-" + UUID.randomUUID();
    static final ObjectMapper JSON = new ObjectMapper();

    private static LocalStack stack;
    private static PackagedService service;
    private static Path publicKey;
    private static String token;
    private static Connection db;

    private static final AtomicLong tried = new AtomicLong();
    private static final Map<Integer, AtomicLong> byStatus = new java.util.concurrent.ConcurrentSkipListMap<>();
    private static final AtomicLong fiveHundreds = new AtomicLong();
    private static long started;

    /** One request to send, and whether the generator built it to be valid. */
    record Case(String body, Map<String, String> headers, boolean valid, String kind) {
        @Override
        public String toString() {
            return kind + " valid=" + valid + " headers=" + headers + " body=" + (body.length() > 400 ? body.substring(0, 400) + "…" : body);
        }
    }

    @BeforeContainer
    static void service() throws Exception {
        stack = LocalStack.start();
        KeyPair issuer = PackagedService.issuer();
        publicKey = PackagedService.publicKeyFile(issuer);
        Map<String, String> env = PackagedService.env(stack, PackagedService.free(), publicKey);
        // the fuzzer is one principal sending hundreds of requests a second: lift its rate limit
        env.put("LEDGERLINE_RATE_LIMIT_WRITES_PER_SECOND", "100000");
        env.put("LEDGERLINE_RATE_LIMIT_WRITES_BURST", "100000");
        service = PackagedService.start(env, Path.of("target/fuzz-post-it.log"));
        token = Jwt.issuer("https://ledgerline.dev/issuer").audience("ledgerline-transfers").subject(PRINCIPAL)
                .groups(Set.of("transfers.write", "transfers.read")).expiresIn(Duration.ofHours(1)).sign(issuer.getPrivate());
        started = System.nanoTime();
    }

    @AfterContainer
    static void stop() throws Exception {
        long ms = (System.nanoTime() - started) / 1_000_000;
        System.out.printf("FuzzPostIT: seed %s, %d cases in %d ms; statuses %s; 2xx %d, 4xx %d, 5xx %d%n", SEED, tried.get(), ms,
                byStatus, range(200), range(400), fiveHundreds.get());
        if (db != null) {
            db.close();
        }
        if (service != null) {
            service.close();
        }
        if (stack != null) {
            stack.close();
        }
        Files.deleteIfExists(publicKey);
    }

    @Property(tries = TRIES, seed = SEED, shrinking = ShrinkingMode.BOUNDED)
    void onlyValidRequestsSucceedEverythingElseIsA4xxProblemAndWritesNothing(@ForAll("cases") Case c) throws Exception {
        long before = rows();
        RequestSpecification spec = RestAssured.given().port(service.port)
                .config(RestAssuredConfig.config().encoderConfig(EncoderConfig.encoderConfig()
                        .appendDefaultContentCharsetToContentTypeIfUndefined(false)))
                .body(c.body().getBytes(StandardCharsets.UTF_8));
        c.headers().forEach(spec::header);
        Response response = spec.post("/v1/transfers");
        int status = response.statusCode();
        String text = response.asString();
        tried.incrementAndGet();
        byStatus.computeIfAbsent(status, s -> new AtomicLong()).incrementAndGet();
        if (status >= 500) {
            fiveHundreds.incrementAndGet();
        }
        long after = rows();

        assertTrue(status < 500, "never a 5xx: " + status + " " + text);
        assertFalse(text.contains("Exception") || text.contains("\tat ") || text.contains("java."), "never a stack trace: " + text);
        if (c.valid()) {
            assertEquals(201, status, "a valid request is created: " + text);
            assertEquals(before + 1, after, "exactly one row for a created transfer");
        } else {
            assertTrue(status >= 400 && status < 500, "an invalid request is a 4xx: " + status + " " + text);
            assertEquals("application/problem+json", String.valueOf(response.contentType()).split(";")[0], text);
            Map<?, ?> problem = JSON.readValue(text, Map.class);
            assertEquals(status, ((Number) problem.get("status")).intValue(), text);
            assertTrue(String.valueOf(problem.get("type")).startsWith("https://ledgerline.dev/problems/"), text);
            assertEquals(before, after, "a rejected request writes nothing");
        }
    }

    // ---- generators ----

    @Provide
    Arbitrary<Case> cases() {
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(3, validCases()),
                net.jqwik.api.Tuple.of(4, mutatedCases()),
                net.jqwik.api.Tuple.of(2, arbitraryJson().map(b -> new Case(b, headers(UUID.randomUUID().toString()), false, "shape"))),
                net.jqwik.api.Tuple.of(1, rawText().map(b -> new Case(b, headers(UUID.randomUUID().toString()), false, "text"))),
                net.jqwik.api.Tuple.of(2, Combinators.combine(validBody(), hostileHeaders()).as((b, h) -> new Case(b, h, false, "headers"))));
    }

    private Arbitrary<Case> validCases() {
        return validBody().map(b -> new Case(b, headers(UUID.randomUUID().toString()), true, "valid"));
    }

    /** Every valid request: any allowed amount and currency, a real IBAN (in any case and spacing), Unicode text. */
    private Arbitrary<String> validBody() {
        Arbitrary<Long> amount = Arbitraries.longs().between(1, 100_000_000L);
        Arbitrary<String> currency = Arbitraries.of("EUR", "GBP", "USD", "CHF", "SEK", "DKK", "NOK", "PLN", "CZK");
        Arbitrary<String> iban = Arbitraries.of("DE89370400440532013000", "de89 3704 0044 0532 0130 00", "GB29NWBK60161331926819",
                "FR1420041010050500013M02606", "NL91ABNA0417164300", " CH9300762011623852957 ");
        Arbitrary<String> name = unicode(1, 140);
        Arbitrary<Optional<String>> description = unicode(0, 140).optional();
        return Combinators.combine(amount, currency, iban, name, description).as((a, cur, i, n, d) -> {
            Map<String, Object> destination = new LinkedHashMap<>();
            destination.put("iban", i);
            destination.put("name", n);
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("amount", a);
            body.put("currency", cur);
            body.put("destination", destination);
            d.ifPresent(text -> body.put("description", text));
            return write(body);
        }).filter(b -> !b.isEmpty());
    }

    /** A valid request with one change that makes it invalid for sure. */
    private Arbitrary<Case> mutatedCases() {
        Arbitrary<Object> wrongAmount = Arbitraries.oneOf(
                Arbitraries.longs().lessOrEqual(0).map(Object.class::cast),
                Arbitraries.longs().between(100_000_001L, Long.MAX_VALUE).map(Object.class::cast),
                Arbitraries.of("1e400", "123456789012345678901234567890123456789", "-0", "12.5", "0x10", "NaN", "+5",
                        "\"1250\"", "null", "true", "[]", "{}").map(raw -> (Object) new Raw(raw)));
        // definitely wrong for name and description: too long (in code points), not a string, a control or lone surrogate
        Arbitrary<Object> wrongText = Arbitraries.oneOf(
                Arbitraries.strings().alpha().ofMinLength(141).ofMaxLength(300).map(Object.class::cast),
                Arbitraries.of("1", "[]", "{\"a\":1}", "\"\\u0000\"", "\"a\\ud800b\"", "\"\\u001b[31m\"").map(raw -> (Object) new Raw(raw)));
        return Combinators.combine(validBody(), Arbitraries.integers().between(0, 9), wrongAmount, wrongText,
                Arbitraries.strings().alpha().ofMinLength(1).ofMaxLength(20)).as((body, which, amount, text, field) -> {
            String mutated = switch (which) {
                case 0 -> body.replaceFirst("\"amount\":[0-9]+", java.util.regex.Matcher.quoteReplacement("\"amount\":" + raw(amount)));
                case 1 -> body.replaceFirst("\"currency\":\"[A-Z]{3}\"", "\"currency\":\"XTS\"");
                case 2 -> body.replaceFirst("\"name\":\"(\\\\.|[^\"\\\\])*\"", java.util.regex.Matcher.quoteReplacement("\"name\":" + raw(text)));
                case 3 -> body.replaceFirst("\\{", java.util.regex.Matcher.quoteReplacement("{\"" + field + "_unknown\":1,"));
                case 4 -> body.replaceFirst("\\{", "{\"amount\":7,"); // duplicate key
                case 5 -> body.replaceFirst("\"iban\":\"[^\"]*\"", "\"iban\":\"DE89370400440532013001\"");
                case 6 -> body.replaceFirst("\"amount\":[0-9]+,", "");
                case 7 -> body.replaceFirst(",\"description\":\"(\\\\.|[^\"\\\\])*\"", "").replaceFirst("\\}$", java.util.regex.Matcher.quoteReplacement(",\"description\":" + raw(text) + "}"));
                case 8 -> "[".repeat(64) + "]".repeat(64);
                default -> body.substring(0, body.length() / 2);
            };
            return new Case(mutated, headers(UUID.randomUUID().toString()), false, "mutation-" + which);
        }).filter(c -> !c.body().isEmpty());
    }

    /** Arbitrary JSON values (objects, arrays, strings, numbers, literals), nested a few levels. */
    private Arbitrary<String> arbitraryJson() {
        return jsonValue(4).map(FuzzPostIT::write);
    }

    private Arbitrary<Object> jsonValue(int depth) {
        Arbitrary<Object> leaf = Arbitraries.oneOf(
                unicode(0, 40).map(Object.class::cast),
                Arbitraries.longs().map(Object.class::cast),
                Arbitraries.doubles().map(Object.class::cast),
                Arbitraries.bigIntegers().between(java.math.BigInteger.TEN.pow(30).negate(), java.math.BigInteger.TEN.pow(30)).map(Object.class::cast),
                Arbitraries.of(true, false).map(Object.class::cast),
                Arbitraries.just(new Raw("null")).map(Object.class::cast));
        if (depth == 0) {
            return leaf;
        }
        Arbitrary<String> key = Arbitraries.oneOf(Arbitraries.of("amount", "currency", "destination", "description", "iban", "name"),
                unicode(0, 12));
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(3, leaf),
                net.jqwik.api.Tuple.of(2, Arbitraries.maps(key, Arbitraries.lazy(() -> jsonValue(depth - 1))).ofMaxSize(5).map(Object.class::cast)),
                net.jqwik.api.Tuple.of(1, Arbitraries.lazy(() -> jsonValue(depth - 1)).list().ofMaxSize(5).map(Object.class::cast)));
    }

    private Arbitrary<String> rawText() {
        return Arbitraries.oneOf(
                unicode(0, 200),
                Arbitraries.of("", " ", "{", "}", "{\"amount\":", "nul", "\uFEFF{}", "{\"amount\":1}{\"amount\":2}", "/* */{}",
                        "{'amount': 1}", "{\"amount\":1,}", "\u0000"));
    }

    /** Bodies are valid; headers are not: Idempotency-Key of random bytes or lengths, content types, broken tokens. */
    private Arbitrary<Map<String, String>> hostileHeaders() {
        Arbitrary<String> key = Arbitraries.oneOf(
                Arbitraries.strings().withCharRange('\u0020', '\u007e').ofMinLength(256).ofMaxLength(400),
                Arbitraries.strings().withCharRange('\u0080', '\u00ff').ofMinLength(1).ofMaxLength(40),
                // neither a token nor an sf-string can be made of these
                Arbitraries.strings().withChars('\t', ' ', '\\', ',', ';', '(', '@').ofMinLength(1).ofMaxLength(10),
                Arbitraries.of("", "\"\"", "\"unterminated", "a\"b"));
        Arbitrary<Integer> variant = Arbitraries.integers().between(0, 4);
        return Combinators.combine(key, variant).as((k, v) -> {
            Map<String, String> headers = new LinkedHashMap<>();
            headers.put("Authorization", "Bearer " + token);
            headers.put("Content-Type", "application/json");
            switch (v) {
                case 0 -> headers.put("Idempotency-Key", k);
                case 1 -> { } // no key at all
                case 2 -> {
                    headers.put("Idempotency-Key", UUID.randomUUID().toString());
                    headers.put("Content-Type", "text/plain");
                }
                case 3 -> {
                    headers.put("Idempotency-Key", UUID.randomUUID().toString());
                    headers.put("Authorization", "Bearer " + token.substring(0, token.length() - 8) + "AAAAAAAA");
                }
                default -> {
                    headers.put("Idempotency-Key", UUID.randomUUID().toString());
                    // not "application/json; charset=…": RFC 8259 defines no charset for JSON, which is UTF-8 (the service rightly ignores it)
                    headers.put("Content-Type", "application/xml");
                }
            }
            return headers;
        });
    }

    private static Map<String, String> headers(String key) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Authorization", "Bearer " + token);
        headers.put("Content-Type", "application/json");
        headers.put("Idempotency-Key", key);
        return headers;
    }

    /**
     * Valid Unicode text: any plane, combining marks, RTL overrides, zero-width joiners, emoji — but no
     * control characters or lone surrogates (which the service rightly refuses), and not blank.
     */
    private static Arbitrary<String> unicode(int min, int max) {
        return Arbitraries.oneOf(
                Arbitraries.strings().all().ofMinLength(min).ofMaxLength(max),
                Arbitraries.strings().withChars("Ada Lovelace éüßçØ中文日本語עבריתالعربية😀🏦\u200d\u202e\u0301").ofMinLength(min).ofMaxLength(max))
                .map(FuzzPostIT::printable)
                .filter(s -> min == 0 || !s.strip().isEmpty());
    }

    private static String printable(String s) {
        StringBuilder out = new StringBuilder();
        s.codePoints().map(cp -> Character.isISOControl(cp) || Character.getType(cp) == Character.SURROGATE ? 'x' : cp)
                .forEach(out::appendCodePoint);
        return out.toString();
    }

    /** A JSON fragment written as is. */
    record Raw(String json) {
    }

    private static String raw(Object value) {
        return value instanceof Raw r ? r.json() : write(value);
    }

    private static String write(Object value) {
        try {
            if (value instanceof Raw r) {
                return r.json();
            }
            if (value instanceof Map<?, ?> map) {
                List<String> members = new ArrayList<>();
                map.forEach((k, v) -> members.add(write(k) + ":" + write(v)));
                return "{" + String.join(",", members) + "}";
            }
            if (value instanceof List<?> list) {
                return "[" + String.join(",", list.stream().map(FuzzPostIT::write).toList()) + "]";
            }
            return JSON.writeValueAsString(value);
        } catch (Exception e) {
            return "";
        }
    }

    private static long range(int from) {
        return byStatus.entrySet().stream().filter(e -> e.getKey() >= from && e.getKey() < from + 100)
                .mapToLong(e -> e.getValue().get()).sum();
    }

    private static long rows() throws Exception {
        if (db == null) {
            db = DriverManager.getConnection(stack.postgres().jdbcUrl(), LocalPostgres.USER, "");
        }
        try (PreparedStatement st = db.prepareStatement("SELECT count(*) FROM transfers WHERE user_id = ?")) {
            st.setString(1, PRINCIPAL);
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
