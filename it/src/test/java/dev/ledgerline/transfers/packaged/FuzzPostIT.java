package dev.ledgerline.transfers.packaged;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledgerline.devstack.LocalPostgres;
import dev.ledgerline.devstack.LocalStack;
import dev.ledgerline.transfers.support.Issuer;
import io.restassured.RestAssured;
import io.restassured.config.EncoderConfig;
import io.restassured.config.RestAssuredConfig;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Randomised fuzzing of {@code POST /v1/transfers}: arbitrary JSON shapes, Unicode, huge and
 * odd numbers, duplicate keys, unknown fields named as no field can be, deep nesting, non-JSON, random Idempotency-Key bytes, odd
 * content types and broken tokens; and around it, of the edges a black-box review found: invented and
 * unlisted methods on every resource, invalid UTF-8 and foreign charsets, duplicated and odd headers
 * (two keys, padded tokens, odd {@code Prefer}), and listing durations up to and past their bound.
 * The invariant: a 2xx only for a valid request (and then exactly one new row for a POST), otherwise a
 * 4xx problem+json — never a 5xx, never a stack trace, and not one row written.
 *
 * <p>Runs against the packaged jar, like the other ITs: one service, hundreds of requests. The cases come
 * from a {@link Random} with a fixed seed (no property-testing library), so a failure names its case
 * number and replays exactly; the numbers are printed at the end.
 */
class FuzzPostIT {

    static final long SEED = 20261129L;
    static final int TRIES = 1200;
    static final String PRINCIPAL = "fuzz-" + UUID.randomUUID();
    static final ObjectMapper JSON = new ObjectMapper();

    private static LocalStack stack;
    private static PackagedService service;
    private static Issuer issuer;
    private static String token;
    private static String operator;
    private static Connection db;

    private static final AtomicLong tried = new AtomicLong();
    private static final Map<Integer, AtomicLong> byStatus = new java.util.concurrent.ConcurrentSkipListMap<>();
    private static final AtomicLong fiveHundreds = new AtomicLong();
    private static final Map<String, AtomicLong> byKind = new java.util.concurrent.ConcurrentSkipListMap<>();
    private static long started;

    /**
     * One request to send, and whether the generator built it to be valid (a 2xx; for a POST, one new row).
     * A header name written {@code Name#2} is sent as a second {@code Name} header.
     */
    record Case(String method, String path, byte[] bytes, Map<String, String> headers, boolean valid, String kind) {
        Case(String body, Map<String, String> headers, boolean valid, String kind) {
            this("POST", "/v1/transfers", body.getBytes(StandardCharsets.UTF_8), headers, valid, kind);
        }

        @Override
        public String toString() {
            String body = bytes == null ? "" : new String(bytes, StandardCharsets.UTF_8);
            return kind + " " + method + " " + path + " valid=" + valid + " headers=" + headers + " body="
                    + (body.length() > 400 ? body.substring(0, 400) + "…" : body);
        }
    }

    @BeforeAll
    static void service() throws Exception {
        stack = LocalStack.start();
        issuer = Issuer.fresh();
        Map<String, String> env = PackagedService.env(stack, PackagedJar.freePort(), issuer.publicKey());
        // the fuzzer is one principal sending hundreds of requests a second: lift its rate limit
        env.put("LEDGERLINE_RATE_LIMIT_WRITES_PER_SECOND", "100000");
        env.put("LEDGERLINE_RATE_LIMIT_WRITES_BURST", "100000");
        service = PackagedService.start(env, Path.of("target/fuzz-post-it.log"));
        token = issuer.writer(PRINCIPAL);
        operator = issuer.token(PRINCIPAL + "-ops", Set.of("transfers.read.all"));
        started = System.nanoTime();
    }

    @AfterAll
    static void stop() throws Exception {
        long ms = (System.nanoTime() - started) / 1_000_000;
        System.out.printf("FuzzPostIT: seed %s, %d cases in %d ms; statuses %s; 2xx %d, 4xx %d, 5xx %d; kinds %s%n", SEED,
                tried.get(), ms, byStatus, range(200), range(400), fiveHundreds.get(), byKind);
        if (db != null) {
            db.close();
        }
        if (service != null) {
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
    void onlyValidRequestsSucceedEverythingElseIsA4xxProblemAndWritesNothing() throws Exception {
        Random random = new Random(SEED);
        for (int n = 0; n < TRIES; n++) {
            Case c = cases(random);
            try {
                check(c);
            } catch (AssertionError e) {
                throw new AssertionError("case " + n + " of seed " + SEED + ": " + c + "\n" + e.getMessage(), e);
            }
        }
    }

    private void check(Case c) throws Exception {
        long before = rows();
        RequestSpecification spec = RestAssured.given().port(service.port)
                .config(RestAssuredConfig.config().encoderConfig(EncoderConfig.encoderConfig()
                        .appendDefaultContentCharsetToContentTypeIfUndefined(false)));
        if (c.kind().startsWith("method")) {
            // methods the contract does not list: past the contract check every other exchange gets
            spec.noFilters();
        }
        if (c.bytes() != null) {
            spec.body(c.bytes());
        }
        c.headers().forEach((name, value) -> spec.header(name.split("#")[0], value));
        Response response = spec.request(c.method(), c.path());
        byKind.computeIfAbsent(c.kind().replaceAll("-.*", ""), k -> new AtomicLong()).incrementAndGet();
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
        if (c.valid() && c.method().equals("POST")) {
            assertEquals(201, status, "a valid request is created: " + text);
            assertEquals(before + 1, after, "exactly one row for a created transfer");
        } else if (c.valid()) {
            assertTrue(status >= 200 && status < 300, "a valid request succeeds: " + status + " " + text);
            assertEquals(before, after, "a read writes nothing");
        } else if (c.method().equals("HEAD")) {
            assertTrue(status >= 400 && status < 500, "an invalid request is a 4xx: " + status);
            assertEquals(before, after, "a rejected request writes nothing");
        } else {
            assertTrue(status >= 400 && status < 500, "an invalid request is a 4xx: " + status + " " + text);
            assertEquals("application/problem+json", String.valueOf(response.contentType()).split(";")[0], text);
            Map<?, ?> problem = JSON.readValue(text, Map.class);
            assertEquals(status, ((Number) problem.get("status")).intValue(), text);
            assertTrue(String.valueOf(problem.get("type")).startsWith("https://ledgerline.dev/problems/"), text);
            assertEquals(before, after, "a rejected request writes nothing");
        }
    }

    // ---- generators: each takes the one seeded Random, so a run is a pure function of SEED ----

    /**
     * Weighted like 3 valid : 4 mutated : 2 arbitrary JSON : 1 raw text : 2 hostile headers, then as much again
     * spread over methods, encodings, duplicated and odd headers, and listing durations.
     */
    Case cases(Random r) {
        switch (r.nextInt(24)) {
            case 12, 13, 14 -> {
                return methodCase(r);
            }
            case 15, 16, 17 -> {
                return encodingCase(r);
            }
            case 18, 19, 20 -> {
                return headerCase(r);
            }
            case 21, 22, 23 -> {
                return durationCase(r);
            }
            default -> {
            }
        }
        int pick = r.nextInt(12);
        if (pick < 3) {
            return new Case(validBody(r), headers(UUID.randomUUID().toString()), true, "valid");
        }
        if (pick < 7) {
            return mutatedCase(r);
        }
        if (pick < 9) {
            return new Case(write(jsonValue(r, 4)), headers(UUID.randomUUID().toString()), false, "shape");
        }
        if (pick < 10) {
            return new Case(rawText(r), headers(UUID.randomUUID().toString()), false, "text");
        }
        return new Case(validBody(r), hostileHeaders(r), false, "headers");
    }

    private static final String[] METHODS = {"GET", "HEAD", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "POST"};

    /**
     * A method a resource does not answer — one of RFC 9110's or an invented one, with or without a token —
     * on any resource path, transfer ids included: a 4xx (a 405 names the allowed methods), never a 5xx.
     */
    private static Case methodCase(Random r) {
        String id = UUID.randomUUID().toString();
        String path = oneOf(r, "/v1/transfers/" + id, "/v1/transfers/" + id + "/events", "/v1/transfers", "/v1/transfers/"
                + alpha(r, 1, 40));
        boolean invented = r.nextBoolean();
        String method = invented ? "X" + fromChars(r, 1, 3000, "ABCDEFGHIJKLMNOPQRSTUVWXYZ-_0123456789") : oneOf(r, METHODS);
        if (!invented && method.equals("OPTIONS")) {
            return new Case(method, path, null, Map.of(), true, "method-options"); // 204 with Allow
        }
        if (!invented && (method.equals("GET") || method.equals("HEAD") || (method.equals("POST") && path.equals("/v1/transfers")))) {
            method = "PATCH"; // the ones a resource answers are covered elsewhere
        }
        Map<String, String> headers = new LinkedHashMap<>();
        if (r.nextBoolean()) {
            headers.put("Authorization", "Bearer " + token);
        }
        byte[] body = r.nextBoolean() ? null : validBody(r).getBytes(StandardCharsets.UTF_8);
        if (body != null) {
            headers.put("Content-Type", "application/json");
        }
        return new Case(method, path, body, headers, false, "method-" + (invented ? "invented" : method.toLowerCase()));
    }

    /**
     * A valid request in a wrong encoding: an invalid UTF-8 sequence somewhere in the body (400), or a declared
     * charset other than UTF-8 (415). A declared {@code charset=utf-8} on a valid body is valid.
     */
    private static Case encodingCase(Random r) {
        byte[] body = validBody(r).getBytes(StandardCharsets.UTF_8);
        Map<String, String> headers = headers(UUID.randomUUID().toString());
        switch (r.nextInt(4)) {
            case 0 -> {
                headers.put("Content-Type", "application/json; charset=" + oneOf(r, "utf-8", "UTF-8", "\"utf-8\""));
                return new Case("POST", "/v1/transfers", body, headers, true, "encoding-utf8");
            }
            case 1 -> {
                headers.put("Content-Type", "application/json; charset=" + oneOf(r, "iso-8859-1", "utf-16", "windows-1252", "us-ascii", "x"));
                return new Case("POST", "/v1/transfers", body, headers, false, "encoding-charset");
            }
            default -> {
                byte[] broken = java.util.Arrays.copyOf(body, body.length);
                // inside the name's string: the bytes after "name":"
                int at = new String(body, StandardCharsets.ISO_8859_1).indexOf("\"name\":\"") + 8;
                byte[] bad = oneOf(r, new byte[] {(byte) 0xff}, new byte[] {(byte) 0xfe}, new byte[] {(byte) 0xc3},
                        new byte[] {(byte) 0xed, (byte) 0xa0, (byte) 0x80}, new byte[] {(byte) 0xc0, (byte) 0xaf},
                        new byte[] {(byte) 0xf8, (byte) 0x88, (byte) 0x80, (byte) 0x80, (byte) 0x80});
                byte[] out = new byte[broken.length + bad.length];
                System.arraycopy(broken, 0, out, 0, at);
                System.arraycopy(bad, 0, out, at, bad.length);
                System.arraycopy(broken, at, out, at + bad.length, broken.length - at);
                return new Case("POST", "/v1/transfers", out, headers, false, "encoding-invalid-utf8");
            }
        }
    }

    /**
     * A valid body with a header that makes it invalid — two Idempotency-Keys, a token in a non-canonical
     * spelling — or that must not hurt: an odd {@code Prefer} (ignored, or cut to the longest wait).
     */
    private static Case headerCase(Random r) {
        Map<String, String> headers = headers(UUID.randomUUID().toString());
        String body = validBody(r);
        switch (r.nextInt(4)) {
            case 0 -> {
                headers.put("Idempotency-Key#2", UUID.randomUUID().toString());
                return new Case(body, headers, false, "headers-two-keys");
            }
            case 1 -> {
                headers.put("Authorization", "Bearer " + token + "=".repeat(1 + r.nextInt(3)));
                return new Case(body, headers, false, "headers-padded-token");
            }
            case 2 -> {
                String[] parts = token.split("\\.");
                String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
                String sig = parts[2];
                int last = alphabet.indexOf(sig.charAt(sig.length() - 1));
                String sameBytes = sig.substring(0, sig.length() - 1) + alphabet.charAt((last & 0x30) | (1 + r.nextInt(15)));
                headers.put("Authorization", "Bearer " + parts[0] + "." + parts[1] + "." + sameBytes);
                return new Case(body, headers, false, "headers-unused-bits");
            }
            default -> {
                headers.put("Prefer", oneOf(r, "wait=-1", "wait=abc", "wait=0", "wait", "wait=99999999999999999999", "respond-async",
                        "wait=0, wait=1", "wait=\"0\""));
                return new Case(body, headers, true, "headers-prefer");
            }
        }
    }

    /** {@code GET /v1/transfers?olderThan=…}: within ten years a 200, anything else (huge, negative, junk) a 400. */
    private static Case durationCase(Random r) {
        boolean valid = r.nextBoolean();
        String age = valid
                ? oneOf(r, "PT" + r.nextInt(100_000) + "S", "P" + r.nextInt(3651) + "D", "PT" + r.nextInt(1000) + "M", "PT0S", "P3650D")
                : oneOf(r, "P" + (3651 + r.nextInt(1_000_000_000)) + "D", "PT" + Long.MAX_VALUE + "S", "PT" + r.nextLong() + "S",
                        "-PT" + (1 + r.nextInt(1000)) + "M", "P1Y", "PT99999999999999999999S", "P" + alpha(r, 1, 10), alpha(r, 1, 20),
                        "PT" + r.nextInt(100) + "H" + Long.MAX_VALUE + "S");
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Authorization", "Bearer " + operator);
        String query = java.net.URLEncoder.encode(age, StandardCharsets.UTF_8);
        return new Case("GET", "/v1/transfers?olderThan=" + query + "&limit=1", null, headers, valid, "duration-" + (valid ? "ok" : "bad"));
    }

    /** Every valid request: any allowed amount and currency, a real IBAN (in any case and spacing), Unicode text. */
    private static String validBody(Random r) {
        Map<String, Object> destination = new LinkedHashMap<>();
        destination.put("iban", oneOf(r, "DE89370400440532013000", "de89 3704 0044 0532 0130 00", "GB29NWBK60161331926819",
                "FR1420041010050500013M02606", "NL91ABNA0417164300", " CH9300762011623852957 "));
        destination.put("name", unicode(r, 1, 140));
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("amount", between(r, 1, 100_000_000L));
        body.put("currency", oneOf(r, "EUR", "GBP", "USD", "CHF", "SEK", "DKK", "NOK", "PLN", "CZK"));
        body.put("destination", destination);
        if (r.nextBoolean()) {
            body.put("description", unicode(r, 0, 140));
        }
        return write(body);
    }

    /** A valid request with one change that makes it invalid for sure. */
    private static Case mutatedCase(Random r) {
        String body = validBody(r);
        int which = r.nextInt(10);
        Object amount = switch (r.nextInt(3)) {
            case 0 -> -between(r, 0, Long.MAX_VALUE - 1);
            case 1 -> between(r, 100_000_001L, Long.MAX_VALUE - 1);
            default -> new Raw(oneOf(r, "1e400", "123456789012345678901234567890123456789", "-0", "12.5", "0x10", "NaN", "+5",
                    "\"1250\"", "null", "true", "[]", "{}"));
        };
        // definitely wrong for name and description: too long (in code points), not a string, a control or lone surrogate
        Object text = r.nextBoolean()
                ? alpha(r, 141, 300)
                : new Raw(oneOf(r, "1", "[]", "{\"a\":1}", "\"\\u0000\"", "\"a\\ud800b\"", "\"\\u001b[31m\""));
        String field = alpha(r, 1, 20);
        String mutated = switch (which) {
            case 0 -> body.replaceFirst("\"amount\":[0-9]+", java.util.regex.Matcher.quoteReplacement("\"amount\":" + raw(amount)));
            case 1 -> body.replaceFirst("\"currency\":\"[A-Z]{3}\"", "\"currency\":\"XTS\"");
            case 2 -> body.replaceFirst("\"name\":\"(\\\\.|[^\"\\\\])*\"", java.util.regex.Matcher.quoteReplacement("\"name\":" + raw(text)));
            // an unknown name no /v1 field can have (not lowerCamelCase): refused; a lowerCamelCase one would be ignored
            case 3 -> body.replaceFirst("\\{", java.util.regex.Matcher.quoteReplacement("{\"" + field + "_unknown\":1,"));
            case 4 -> body.replaceFirst("\\{", "{\"amount\":7,"); // duplicate key
            case 5 -> body.replaceFirst("\"iban\":\"[^\"]*\"", "\"iban\":\"DE89370400440532013001\"");
            case 6 -> body.replaceFirst("\"amount\":[0-9]+,", "");
            case 7 -> body.replaceFirst(",\"description\":\"(\\\\.|[^\"\\\\])*\"", "")
                    .replaceFirst("\\}$", java.util.regex.Matcher.quoteReplacement(",\"description\":" + raw(text) + "}"));
            case 8 -> "[".repeat(64) + "]".repeat(64);
            default -> body.substring(0, body.length() / 2);
        };
        return new Case(mutated, headers(UUID.randomUUID().toString()), false, "mutation-" + which);
    }

    /** Arbitrary JSON values (objects, arrays, strings, numbers, literals), nested up to {@code depth} levels. */
    private static Object jsonValue(Random r, int depth) {
        int pick = depth == 0 ? 0 : r.nextInt(6);
        if (pick < 3) {
            return switch (r.nextInt(6)) {
                case 0 -> unicode(r, 0, 40);
                case 1 -> r.nextLong();
                case 2 -> r.nextBoolean() ? r.nextDouble() * Math.pow(10, r.nextInt(600) - 300) : r.nextGaussian();
                case 3 -> new java.math.BigInteger(100, r).multiply(java.math.BigInteger.valueOf(r.nextBoolean() ? 1 : -1));
                case 4 -> r.nextBoolean();
                default -> new Raw("null");
            };
        }
        if (pick < 5) {
            Map<String, Object> object = new LinkedHashMap<>();
            for (int i = r.nextInt(6); i > 0; i--) {
                String key = r.nextBoolean() ? oneOf(r, "amount", "currency", "destination", "description", "iban", "name") : unicode(r, 0, 12);
                object.put(key, jsonValue(r, depth - 1));
            }
            return object;
        }
        List<Object> array = new ArrayList<>();
        for (int i = r.nextInt(6); i > 0; i--) {
            array.add(jsonValue(r, depth - 1));
        }
        return array;
    }

    private static String rawText(Random r) {
        return r.nextBoolean()
                ? unicode(r, 0, 200)
                : oneOf(r, "", " ", "{", "}", "{\"amount\":", "nul", "\uFEFF{}", "{\"amount\":1}{\"amount\":2}", "/* */{}",
                        "{'amount': 1}", "{\"amount\":1,}", "\u0000");
    }

    /** Bodies are valid; headers are not: Idempotency-Key of random bytes or lengths, content types, broken tokens. */
    private static Map<String, String> hostileHeaders(Random r) {
        String key = switch (r.nextInt(4)) {
            case 0 -> chars(r, 256, 400, '\u0020', '\u007e');
            case 1 -> chars(r, 1, 40, '\u0080', '\u00ff');
            // neither a token nor an sf-string can be made of these
            case 2 -> fromChars(r, 1, 10, "\t \\,;(@");
            default -> oneOf(r, "", "\"\"", "\"unterminated", "a\"b");
        };
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Authorization", "Bearer " + token);
        headers.put("Content-Type", "application/json");
        switch (r.nextInt(5)) {
            case 0 -> headers.put("Idempotency-Key", key);
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
                // a foreign charset on JSON is its own case (encodingCase)
                headers.put("Content-Type", "application/xml");
            }
        }
        return headers;
    }

    private static Map<String, String> headers(String key) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Authorization", "Bearer " + token);
        headers.put("Content-Type", "application/json");
        headers.put("Idempotency-Key", key);
        return headers;
    }

    private static final int[] SAMPLE_CODE_POINTS = "Ada Lovelace éüßçØ中文日本語עבריתالعربية😀🏦\u200d\u202e\u0301".codePoints().toArray();

    /**
     * Valid Unicode text: any plane, combining marks, RTL overrides, zero-width joiners, emoji — but no
     * control characters or lone surrogates (which the service rightly refuses), and not blank.
     */
    private static String unicode(Random r, int min, int max) {
        while (true) {
            int length = min + r.nextInt(max - min + 1);
            StringBuilder out = new StringBuilder();
            boolean anyPlane = r.nextBoolean();
            for (int i = 0; i < length; i++) {
                out.appendCodePoint(anyPlane ? r.nextInt(Character.MAX_CODE_POINT + 1) : SAMPLE_CODE_POINTS[r.nextInt(SAMPLE_CODE_POINTS.length)]);
            }
            // in NFC first: the service checks a name's length and combining marks on its NFC form, which a few
            // code points (composition exclusions) make longer than they are
            String text = printable(Normalizer.normalize(out.toString(), Normalizer.Form.NFC));
            // a supplementary code point is two chars: keep the length limit in code points, as the service counts
            if (text.codePointCount(0, text.length()) > max) {
                text = text.substring(0, text.offsetByCodePoints(0, max));
            }
            if (min == 0 || !text.strip().isEmpty()) {
                return text;
            }
        }
    }

    private static String alpha(Random r, int min, int max) {
        return fromChars(r, min, max, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
    }

    private static String chars(Random r, int min, int max, char from, char to) {
        StringBuilder out = new StringBuilder();
        for (int i = min + r.nextInt(max - min + 1); i > 0; i--) {
            out.append((char) (from + r.nextInt(to - from + 1)));
        }
        return out.toString();
    }

    private static String fromChars(Random r, int min, int max, String alphabet) {
        StringBuilder out = new StringBuilder();
        for (int i = min + r.nextInt(max - min + 1); i > 0; i--) {
            out.append(alphabet.charAt(r.nextInt(alphabet.length())));
        }
        return out.toString();
    }

    @SafeVarargs
    private static <T> T oneOf(Random r, T... choices) {
        return choices[r.nextInt(choices.length)];
    }

    private static long between(Random r, long min, long max) {
        return min + (long) (r.nextDouble() * (max - min));
    }

    /** Text the service takes: no control, format (bidi, zero-width) or surrogate code points, at most 4 marks in a row. */
    private static String printable(String s) {
        StringBuilder out = new StringBuilder();
        int[] marks = {0};
        s.codePoints().map(cp -> {
            int type = Character.getType(cp);
            if (Character.isISOControl(cp) || type == Character.SURROGATE || type == Character.FORMAT) {
                return 'x';
            }
            boolean mark = type == Character.NON_SPACING_MARK || type == Character.ENCLOSING_MARK || type == Character.COMBINING_SPACING_MARK;
            marks[0] = mark ? marks[0] + 1 : 0;
            if (marks[0] > 4) {
                marks[0] = 0;
                return 'x';
            }
            return cp;
        }).forEach(out::appendCodePoint);
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
