package dev.ledgerline.transfers.conformance;

import com.atlassian.oai.validator.OpenApiInteractionValidator;
import com.atlassian.oai.validator.model.Request;
import com.atlassian.oai.validator.model.SimpleRequest;
import com.atlassian.oai.validator.model.SimpleResponse;
import com.atlassian.oai.validator.report.LevelResolver;
import com.atlassian.oai.validator.report.ValidationReport;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * The provider conformance kit: runs the obligations of {@code provider-api.yaml} against any provider
 * base URL, black-box over HTTP, and tells which hold. Every exchange is also validated against
 * {@code provider-api.yaml} (status, headers, body schema), reported as {@code answers-match-the-contract}.
 *
 * <p>What a black box can show: a second execution under one key is seen through the answer (a repeated
 * send answered {@code 201}, "executed by this send") or the {@code executions} count, when the provider
 * reports it; a provider that answers {@code 200} while moving money again, without reporting
 * {@code executions}, passes here and must be checked on its own books. Rejections can only be checked
 * when the caller says how to provoke one ({@link Rejections}); otherwise that obligation is reported as
 * not checked, never as holding.
 *
 * <p>Run it against a provider with {@code ./mvnw verify -Pprovider-conformance -Dprovider.url=...}
 * ({@link ProviderConformanceCheck}); {@code ProviderConformanceTest} runs it in every build against the
 * sandbox and against deliberately broken stand-ins.
 */
public final class ProviderConformance {

    /** The obligations of {@code provider-api.yaml} ({@code x-obligations}), plus the contract itself. */
    public enum Obligation {
        AT_MOST_ONCE_PER_KEY("at-most-once-per-key"),
        REFUSES_AFTER_DEADLINE("refuses-after-deadline"),
        LOOKUP_REFLECTS_COMPLETION("lookup-reflects-completion"),
        REJECTIONS_ARE_FINAL("rejections-are-final"),
        UNKNOWN_REFERENCE_IS_404("unknown-reference-is-404"),
        ANSWERS_MATCH_THE_CONTRACT("answers-match-the-contract");

        public final String id;

        Obligation(String id) {
            this.id = id;
        }
    }

    public enum State { HOLDS, FAILS, NOT_CHECKED }

    public record Verdict(Obligation obligation, State state, String detail) {
    }

    public record Report(URI base, List<Verdict> verdicts) {

        public Set<Obligation> failing() {
            return verdicts.stream().filter(v -> v.state() == State.FAILS).map(Verdict::obligation)
                    .collect(Collectors.toCollection(() -> EnumSet.noneOf(Obligation.class)));
        }

        public Set<Obligation> holding() {
            return verdicts.stream().filter(v -> v.state() == State.HOLDS).map(Verdict::obligation)
                    .collect(Collectors.toCollection(() -> EnumSet.noneOf(Obligation.class)));
        }

        /** One line per obligation: state, id, what was seen. */
        public String table() {
            StringBuilder out = new StringBuilder("provider conformance of " + base + "\n");
            for (Verdict v : verdicts) {
                out.append(String.format("  %-11s %-27s %s%n", v.state(), v.obligation().id, v.detail()));
            }
            return out.toString();
        }
    }

    /**
     * How to make the provider reject the next send: a test provider's switch, or an order it is known to
     * refuse. {@link #after()} runs before the same reference is sent again, so the repeat would execute
     * if the provider forgot the rejection.
     */
    public interface Rejections {
        void before();

        void after();

        /** The order's amount; some providers reject by amount. */
        default long amount() {
            return 1250;
        }

        /** A provider that rejects every order of {@code amount} (minor units): nothing to switch. */
        static Rejections byAmount(long amount) {
            return new Rejections() {
                @Override
                public void before() {
                }

                @Override
                public void after() {
                }

                @Override
                public long amount() {
                    return amount;
                }
            };
        }
    }

    /**
     * How to make the provider hold the next send of a new reference in transit — queued inside it — for
     * {@link #holdFor()} before it applies it: a test provider's switch. It shows whether the deadline is
     * checked when a send is applied, as the contract requires, or only when it arrives (which lets a send
     * that was in transit while the service gave up on it, looked it up and sent again execute late).
     */
    public interface Holds {
        void before();

        void after();

        Duration holdFor();
    }

    /**
     * @param lookupLag   the provider's stated bound on how far lookups may lag executions
     *                    (the service's {@code ledgerline.provider.lookup-lag})
     * @param rejections  how to provoke a rejection, or empty: {@code rejections-are-final} is then not checked
     * @param holds       how to hold a send in transit, or empty: only a late arrival is checked for the deadline
     * @param timeout     per request
     */
    public record Options(Duration lookupLag, Optional<Rejections> rejections, Optional<Holds> holds, Duration timeout) {

        public static Options defaults() {
            return new Options(Duration.ZERO, Optional.empty(), Optional.empty(), Duration.ofSeconds(10));
        }

        public Options withLookupLag(Duration lag) {
            return new Options(lag, rejections, holds, timeout);
        }

        public Options withRejections(Rejections r) {
            return new Options(lookupLag, Optional.of(r), holds, timeout);
        }

        public Options withHolds(Holds h) {
            return new Options(lookupLag, rejections, Optional.of(h), timeout);
        }
    }

    /** Lookups are polled this often while the stated lag runs, and measured with this much slack. */
    private static final Duration POLL = Duration.ofMillis(50);
    private static final Duration SLACK = Duration.ofMillis(250);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final URI base;
    private final Options options;
    private final HttpClient http;
    private final OpenApiInteractionValidator validator;
    private final Set<String> contractFindings = new java.util.LinkedHashSet<>();
    private int answers;

    private ProviderConformance(URI base, Options options) {
        String b = base.toString();
        this.base = URI.create(b.endsWith("/") ? b.substring(0, b.length() - 1) : b);
        this.options = options;
        this.http = HttpClient.newBuilder().connectTimeout(options.timeout()).build();
        this.validator = OpenApiInteractionValidator.createForInlineApiSpecification(read(contractLocation()))
                .withLevelResolver(LevelResolver.create().withDefaultLevel(ValidationReport.Level.ERROR).build())
                .withStrictOperationPathMatching()
                .build();
    }

    /** {@code provider-api.yaml} at the top of the repository (or {@code -Dprovider.contract=...}). */
    public static Path contractLocation() {
        return Path.of(System.getProperty("provider.contract", "provider-api.yaml"));
    }

    /** Runs every obligation once against {@code base} (the URL the service would call {@code /payments} under). */
    public static Report check(URI base, Options options) {
        ProviderConformance kit = new ProviderConformance(base, options);
        List<Verdict> verdicts = new ArrayList<>();
        verdicts.add(kit.guard(Obligation.AT_MOST_ONCE_PER_KEY, kit::atMostOncePerKey));
        verdicts.add(kit.guard(Obligation.REFUSES_AFTER_DEADLINE, kit::refusesAfterDeadline));
        verdicts.add(kit.guard(Obligation.LOOKUP_REFLECTS_COMPLETION, kit::lookupReflectsCompletion));
        verdicts.add(kit.guard(Obligation.REJECTIONS_ARE_FINAL, kit::rejectionsAreFinal));
        verdicts.add(kit.guard(Obligation.UNKNOWN_REFERENCE_IS_404, kit::unknownReferenceIs404));
        if (!kit.contractFindings.isEmpty()) {
            verdicts.add(new Verdict(Obligation.ANSWERS_MATCH_THE_CONTRACT, State.FAILS, String.join("; ", kit.contractFindings)));
        } else if (kit.answers == 0) {
            // nothing answered, so nothing was compared: not a pass
            verdicts.add(new Verdict(Obligation.ANSWERS_MATCH_THE_CONTRACT, State.NOT_CHECKED, "the provider gave no answer to validate"));
        } else {
            verdicts.add(new Verdict(Obligation.ANSWERS_MATCH_THE_CONTRACT, State.HOLDS,
                    "all " + kit.answers + " answers are documented in provider-api.yaml"));
        }
        return new Report(kit.base, List.copyOf(verdicts));
    }

    private interface Check {
        Verdict run() throws Exception;
    }

    /** A check that cannot even talk to the provider fails, with the reason; it never holds by default. */
    private Verdict guard(Obligation obligation, Check check) {
        try {
            return check.run();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Verdict(obligation, State.FAILS, "interrupted");
        } catch (Exception e) {
            return new Verdict(obligation, State.FAILS, "no usable answer: " + e);
        }
    }

    // ---- the obligations ------------------------------------------------------------------------------

    private Verdict atMostOncePerKey() throws Exception {
        Obligation o = Obligation.AT_MOST_ONCE_PER_KEY;
        String ref = reference();
        Answer first = send(ref, Instant.now().plusSeconds(60), 1250);
        if (!first.completed()) {
            return new Verdict(o, State.FAILS, "the first send was not executed: " + first);
        }
        Answer again = send(ref, Instant.now().plusSeconds(60), 1250);
        if (again.status() == 201) {
            return new Verdict(o, State.FAILS, "a repeated send under one key answered 201 (executed again)" + again.executionsNote());
        }
        if (again.executions().orElse(0) > 1) {
            return new Verdict(o, State.FAILS, "a repeated send under one key executed again" + again.executionsNote());
        }
        if (!again.completed()) {
            return new Verdict(o, State.FAILS, "a repeated send did not answer the first result (completed): " + again);
        }
        Answer lookup = lookup(ref);
        if (lookup.executions().orElse(0) > 1) {
            return new Verdict(o, State.FAILS, "the lookup counts more than one execution" + lookup.executionsNote());
        }
        return new Verdict(o, State.HOLDS, "a repeated send answered " + again.status() + " with the first result"
                + (again.executions().isPresent() ? ", executions stayed " + again.executions().get() : ""));
    }

    private Verdict refusesAfterDeadline() throws Exception {
        Obligation o = Obligation.REFUSES_AFTER_DEADLINE;
        String ref = reference();
        Answer late = send(ref, Instant.now().minusSeconds(1), 1250);
        if (late.status() != 412) {
            return new Verdict(o, State.FAILS, "a send whose Ledgerline-Not-After had passed answered " + late.status()
                    + (late.completed() ? " (executed)" : "") + ", not 412");
        }
        // nothing may appear later either: watch the lookup for the whole stated lag
        Optional<Answer> appeared = stays404(ref, Instant.now());
        if (appeared.isPresent()) {
            return new Verdict(o, State.FAILS, "the send was refused with 412, but a lookup then answered " + appeared.get());
        }
        String arrival = "a send past its deadline answered 412 and its reference stayed unknown (404)";
        if (options.holds().isEmpty()) {
            return new Verdict(o, State.HOLDS, arrival + "; a send held in transit was not tried (no way to hold one)");
        }

        // in transit: the send arrives in time, is held inside the provider past its deadline, then applied
        Holds holds = options.holds().get();
        String held = reference();
        Instant sentAt = Instant.now();
        Instant deadline = sentAt.plus(holds.holdFor().dividedBy(3));
        Answer answer;
        holds.before();
        try {
            answer = send(held, deadline, 1250);
        } finally {
            holds.after();
        }
        if (answer.completed()) {
            return new Verdict(o, State.FAILS, "a send held in transit past its deadline was executed when applied (answered "
                    + answer + "): the deadline is checked on arrival, not when the send is applied");
        }
        Instant applied = sentAt.plus(holds.holdFor());
        appeared = stays404(held, Instant.now().isAfter(applied) ? Instant.now() : applied);
        if (appeared.isPresent()) {
            return new Verdict(o, State.FAILS, "a send held in transit past its deadline answered " + answer
                    + ", but a lookup then answered " + appeared.get() + ": it executed late");
        }
        return new Verdict(o, State.HOLDS, arrival + "; a send held " + holds.holdFor().toMillis()
                + " ms in transit past its deadline answered " + answer.status() + " and never executed");
    }

    /** Looks {@code ref} up until {@code from} plus the stated lag (and slack): the first answer that is not 404. */
    private Optional<Answer> stays404(String ref, Instant from) throws IOException, InterruptedException {
        Instant until = from.plus(options.lookupLag()).plus(SLACK);
        do {
            Answer lookup = lookup(ref);
            if (lookup.status() != 404) {
                return Optional.of(lookup);
            }
            Thread.sleep(POLL.toMillis());
        } while (Instant.now().isBefore(until));
        return Optional.empty();
    }

    private Verdict lookupReflectsCompletion() throws Exception {
        Obligation o = Obligation.LOOKUP_REFLECTS_COMPLETION;
        String ref = reference();
        Answer sent = send(ref, Instant.now().plusSeconds(60), 1250);
        Instant answered = Instant.now();
        if (!sent.completed()) {
            return new Verdict(o, State.FAILS, "the send was not executed: " + sent);
        }
        Answer lookup = lookupWithinLag(ref, Answer::lookupCompleted);
        long tookMs = Duration.between(answered, Instant.now()).toMillis();
        if (!lookup.lookupCompleted()) {
            return new Verdict(o, State.FAILS, "a lookup still answered " + lookup + " " + tookMs
                    + " ms after the send was answered completed (stated lag " + options.lookupLag().toMillis() + " ms)");
        }
        for (int i = 0; i < 3; i++) {
            Answer later = lookup(ref);
            if (!later.lookupCompleted()) {
                return new Verdict(o, State.FAILS, "a lookup said completed, then " + later);
            }
        }
        return new Verdict(o, State.HOLDS, "a lookup said completed within " + tookMs + " ms (stated lag "
                + options.lookupLag().toMillis() + " ms) and kept saying it");
    }

    private Verdict rejectionsAreFinal() throws Exception {
        Obligation o = Obligation.REJECTIONS_ARE_FINAL;
        if (options.rejections().isEmpty()) {
            return new Verdict(o, State.NOT_CHECKED, "no way to provoke a rejection was given (-Dprovider.reject-amount=...)");
        }
        Rejections rejections = options.rejections().get();
        String ref = reference();
        Answer rejected;
        rejections.before();
        try {
            rejected = send(ref, Instant.now().plusSeconds(60), rejections.amount());
        } finally {
            rejections.after();
        }
        if (!rejected.rejected()) {
            return new Verdict(o, State.NOT_CHECKED, "the provider did not reject the send meant to be rejected: " + rejected);
        }
        Answer again = send(ref, Instant.now().plusSeconds(60), rejections.amount());
        if (!again.rejected()) {
            return new Verdict(o, State.FAILS, "a send under a rejected key then answered " + again
                    + (again.completed() ? " (executed)" : ""));
        }
        Answer lookup = lookupWithinLag(ref, Answer::lookupRejected);
        if (!lookup.lookupRejected()) {
            return new Verdict(o, State.FAILS, "a rejected key is looked up as " + lookup);
        }
        if (lookup.executions().orElse(0) > 0) {
            return new Verdict(o, State.FAILS, "a rejected key executed" + lookup.executionsNote());
        }
        return new Verdict(o, State.HOLDS, "a rejected key answered " + again.status() + " rejected again and is looked up as rejected");
    }

    private Verdict unknownReferenceIs404() throws Exception {
        Obligation o = Obligation.UNKNOWN_REFERENCE_IS_404;
        Answer lookup = lookup(reference());
        return lookup.status() == 404
                ? new Verdict(o, State.HOLDS, "a never-sent reference is 404")
                : new Verdict(o, State.FAILS, "a never-sent reference answered " + lookup);
    }

    /** Looks up until the answer is the expected one or the stated lag (plus slack) has run out; the last answer. */
    private Answer lookupWithinLag(String ref, java.util.function.Predicate<Answer> expected)
            throws IOException, InterruptedException {
        Instant bound = Instant.now().plus(options.lookupLag()).plus(SLACK);
        while (true) {
            Answer lookup = lookup(ref);
            if (expected.test(lookup) || Instant.now().isAfter(bound)) {
                return lookup;
            }
            Thread.sleep(POLL.toMillis());
        }
    }

    // ---- HTTP, validated against provider-api.yaml ----------------------------------------------------

    /** What the provider answered; the body parsed when it is JSON. */
    record Answer(int status, JsonNode body) {

        String paymentStatus() {
            return body == null ? null : body.path("status").asText(null);
        }

        boolean completed() {
            return (status == 200 || status == 201) && "completed".equals(paymentStatus());
        }

        boolean rejected() {
            return (status == 402 || status == 422) && "rejected".equals(paymentStatus());
        }

        boolean lookupCompleted() {
            return status == 200 && "completed".equals(paymentStatus());
        }

        boolean lookupRejected() {
            return status == 200 && "rejected".equals(paymentStatus());
        }

        Optional<Integer> executions() {
            return body != null && body.path("executions").isInt() ? Optional.of(body.get("executions").asInt()) : Optional.empty();
        }

        String executionsNote() {
            return executions().map(n -> " (executions=" + n + ")").orElse("");
        }

        @Override
        public String toString() {
            return status + (paymentStatus() == null ? "" : " " + paymentStatus());
        }
    }

    private static String reference() {
        return "ll_" + UUID.randomUUID();
    }

    private Answer send(String reference, Instant notAfter, long amount) throws IOException, InterruptedException {
        String body = "{\"amount\":" + amount + ",\"currency\":\"EUR\",\"destination\":{\"iban\":\"DE89370400440532013000\","
                + "\"name\":\"Conformance Kit\"}}";
        String deadline = notAfter.toString();
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/payments")).timeout(options.timeout())
                .header("Content-Type", "application/json").header("Accept", "application/json")
                .header("Idempotency-Key", reference).header("Ledgerline-Not-After", deadline)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        Request documented = SimpleRequest.Builder.post("/payments").withContentType("application/json")
                .withAccept("application/json").withHeader("Idempotency-Key", reference)
                .withHeader("Ledgerline-Not-After", deadline).withBody(body).build();
        return exchange(request, documented);
    }

    private Answer lookup(String reference) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/payments/" + reference)).timeout(options.timeout())
                .header("Accept", "application/json").GET().build();
        Request documented = SimpleRequest.Builder.get("/payments/" + reference).withAccept("application/json").build();
        return exchange(request, documented);
    }

    private Answer exchange(HttpRequest request, Request documented) throws IOException, InterruptedException {
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        answers++;
        SimpleResponse.Builder answer = SimpleResponse.Builder.status(response.statusCode());
        response.headers().firstValue("Content-Type").ifPresent(answer::withContentType);
        if (!response.body().isEmpty()) {
            answer.withBody(response.body());
        }
        ValidationReport report = validator.validateRequest(documented)
                .merge(validator.validateResponse(documented.getPath(), documented.getMethod(), answer.build()));
        for (ValidationReport.Message m : report.getMessages()) {
            if (m.getLevel() == ValidationReport.Level.ERROR) {
                contractFindings.add(documented.getMethod() + " " + documented.getPath().replaceAll("ll_[0-9a-f-]+", "{reference}")
                        + " -> " + response.statusCode() + ": " + m.getMessage());
            }
        }
        JsonNode body = null;
        if (response.headers().firstValue("Content-Type").orElse("").contains("json") && !response.body().isBlank()) {
            try {
                body = JSON.readTree(response.body());
            } catch (IOException garbled) {
                body = null;
            }
        }
        return new Answer(response.statusCode(), body);
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException("the provider contract " + file.toAbsolutePath() + " cannot be read", e);
        }
    }
}
