package dev.ledgerline.transfers.conformance;

import dev.ledgerline.transfers.support.Repo;

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
import java.net.http.HttpTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
 * <p>Time is judged by the provider's own clock: the kit reads it off the {@code Date} header first (to tens of
 * milliseconds, by watching its second tick over) and writes every deadline it sends in that clock. So a clock
 * that is off fails {@code clock-within-bound} alone, and a deadline check that ignores the header, or is made
 * by another clock than the one that dates the answers, fails {@code refuses-after-deadline}.
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
        CLOCK_WITHIN_BOUND("clock-within-bound"),
        LOOKUP_COVERS_UNANSWERED_SENDS("lookup-covers-unanswered-sends"),
        REFUSAL_MEANS_NOT_EXECUTED("refusal-means-not-executed"),
        IN_FLIGHT_REPEAT_ANSWERS_THE_RESULT("in-flight-repeat-answers-the-result"),
        ERRORS_ARE_NOT_REPLAYED("errors-are-not-replayed"),
        KEEPS_KEYS_FOR_THE_STATED_WINDOW("keeps-keys-for-the-stated-window"),
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
                out.append(String.format("  %-11s %-36s %s%n", v.state(), v.obligation().id, v.detail()));
            }
            return out.toString();
        }

        public State state(Obligation obligation) {
            return verdicts.stream().filter(v -> v.obligation() == obligation).map(Verdict::state).findFirst()
                    .orElse(State.NOT_CHECKED);
        }
    }

    /**
     * Several providers side by side: one row per provider, one column per obligation (numbered as in
     * {@code provider-api.yaml}; the contract itself last): {@code ok} holds, {@code FAIL} fails, {@code -} not
     * checked. A legend of the numbers follows.
     */
    public static String matrix(Map<String, Report> reports) {
        int width = Math.max(12, reports.keySet().stream().mapToInt(String::length).max().orElse(0));
        StringBuilder out = new StringBuilder(String.format("%-" + width + "s", "provider"));
        Obligation[] all = Obligation.values();
        for (int i = 0; i < all.length; i++) {
            out.append(String.format(" %4s", all[i] == Obligation.ANSWERS_MATCH_THE_CONTRACT ? "api" : Integer.toString(i + 1)));
        }
        out.append('\n');
        reports.forEach((name, report) -> {
            out.append(String.format("%-" + width + "s", name));
            for (Obligation o : all) {
                out.append(String.format(" %4s", switch (report.state(o)) {
                    case HOLDS -> "ok";
                    case FAILS -> "FAIL";
                    case NOT_CHECKED -> "-";
                }));
            }
            out.append('\n');
        });
        for (int i = 0; i < all.length; i++) {
            out.append(String.format("  %3s %s%n", all[i] == Obligation.ANSWERS_MATCH_THE_CONTRACT ? "api" : Integer.toString(i + 1), all[i].id));
        }
        return out.toString();
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

    /** How to make the provider answer the next send with a 5xx before anything executes: a test provider's switch. */
    public interface Errors {
        void before();

        void after();
    }

    /**
     * @param lookupLag      the provider's stated bound on how far lookups may lag executions
     *                       (the service's {@code ledgerline.provider.lookup-lag})
     * @param rejections     how to provoke a rejection, or empty: {@code rejections-are-final} is then not checked
     * @param holds          how to hold a send in transit, or empty: only a late arrival is checked for the deadline,
     *                       and a repeat while a send is in flight is tried with two concurrent sends
     * @param timeout        per request
     * @param clockSkewBound how far the provider's clock may be from the kit's (the service's
     *                       {@code ledgerline.pipeline.clock-skew-bound})
     * @param answerHolds    how to make the provider hold the answer of the next send after it executed, so the kit
     *                       can drop the connection before it; empty: the kit drops after {@link #DROP_AFTER}
     * @param errors         how to make the next send fail with a 5xx before it executes, or empty:
     *                       {@code errors-are-not-replayed} is then not checked
     * @param keyWindow      how long the provider states it keeps an idempotency key, or empty (none stated):
     *                       {@code keeps-keys-for-the-stated-window} is then not checked
     * @param keyWindowWait  the longest the kit waits to check the key window; a longer window is checked this far
     */
    public record Options(Duration lookupLag, Optional<Rejections> rejections, Optional<Holds> holds, Duration timeout,
                          Duration clockSkewBound, Optional<Holds> answerHolds, Optional<Errors> errors,
                          Optional<Duration> keyWindow, Duration keyWindowWait) {

        public static Options defaults() {
            return new Options(Duration.ZERO, Optional.empty(), Optional.empty(), Duration.ofSeconds(10),
                    Duration.ofSeconds(1), Optional.empty(), Optional.empty(), Optional.empty(), Duration.ofSeconds(10));
        }

        public Options withLookupLag(Duration lag) {
            return new Options(lag, rejections, holds, timeout, clockSkewBound, answerHolds, errors, keyWindow, keyWindowWait);
        }

        public Options withRejections(Rejections r) {
            return new Options(lookupLag, Optional.of(r), holds, timeout, clockSkewBound, answerHolds, errors, keyWindow, keyWindowWait);
        }

        public Options withHolds(Holds h) {
            return new Options(lookupLag, rejections, Optional.of(h), timeout, clockSkewBound, answerHolds, errors, keyWindow, keyWindowWait);
        }

        public Options withClockSkewBound(Duration bound) {
            return new Options(lookupLag, rejections, holds, timeout, bound, answerHolds, errors, keyWindow, keyWindowWait);
        }

        public Options withAnswerHolds(Holds h) {
            return new Options(lookupLag, rejections, holds, timeout, clockSkewBound, Optional.of(h), errors, keyWindow, keyWindowWait);
        }

        public Options withErrors(Errors e) {
            return new Options(lookupLag, rejections, holds, timeout, clockSkewBound, answerHolds, Optional.of(e), keyWindow, keyWindowWait);
        }

        public Options withKeyWindow(Duration window) {
            return new Options(lookupLag, rejections, holds, timeout, clockSkewBound, answerHolds, errors, Optional.of(window), keyWindowWait);
        }

        public Options withKeyWindowWait(Duration wait) {
            return new Options(lookupLag, rejections, holds, timeout, clockSkewBound, answerHolds, errors, keyWindow, wait);
        }
    }

    /** Without a way to hold an answer, the kit drops the connection this soon after sending. */
    public static final Duration DROP_AFTER = Duration.ofMillis(50);

    /** Lookups are polled this often while the stated lag runs, and measured with this much slack. */
    private static final Duration POLL = Duration.ofMillis(50);
    private static final Duration SLACK = Duration.ofMillis(250);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final URI base;
    private final Options options;
    private final HttpClient http;
    private final OpenApiInteractionValidator validator;
    private final Set<String> contractFindings = Collections.synchronizedSet(new LinkedHashSet<>());
    private final AtomicInteger answers = new AtomicInteger();
    /** The provider's clock as its Date header tells, or empty when it sends none (then the kit's clock is used). */
    private Optional<ClockReading> clock = Optional.empty();

    private ProviderConformance(URI base, Options options) {
        String b = base.toString();
        this.base = URI.create(b.endsWith("/") ? b.substring(0, b.length() - 1) : b);
        this.options = options;
        // HTTP/1.1, as the service speaks it: a request given up on closes its connection
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(options.timeout()).build();
        this.validator = OpenApiInteractionValidator.createForInlineApiSpecification(read(contractLocation()))
                .withLevelResolver(LevelResolver.create().withDefaultLevel(ValidationReport.Level.ERROR).build())
                .withStrictOperationPathMatching()
                .build();
    }

    /** {@code provider-api.yaml} at the top of the repository (or {@code -Dprovider.contract=...}). */
    public static Path contractLocation() {
        return System.getProperty("provider.contract") != null ? Path.of(System.getProperty("provider.contract")) : Repo.file("provider-api.yaml");
    }

    /** Runs every obligation once against {@code base} (the URL the service would call {@code /payments} under). */
    public static Report check(URI base, Options options) {
        ProviderConformance kit = new ProviderConformance(base, options);
        List<Verdict> verdicts = new ArrayList<>();
        // first, so that every deadline below is written in the provider's own clock
        Verdict clock = kit.guard(Obligation.CLOCK_WITHIN_BOUND, kit::clockWithinBound);
        verdicts.add(kit.guard(Obligation.AT_MOST_ONCE_PER_KEY, kit::atMostOncePerKey));
        verdicts.add(kit.guard(Obligation.REFUSES_AFTER_DEADLINE, kit::refusesAfterDeadline));
        verdicts.add(kit.guard(Obligation.LOOKUP_REFLECTS_COMPLETION, kit::lookupReflectsCompletion));
        verdicts.add(kit.guard(Obligation.REJECTIONS_ARE_FINAL, kit::rejectionsAreFinal));
        verdicts.add(kit.guard(Obligation.UNKNOWN_REFERENCE_IS_404, kit::unknownReferenceIs404));
        verdicts.add(clock);
        verdicts.add(kit.guard(Obligation.LOOKUP_COVERS_UNANSWERED_SENDS, kit::lookupCoversUnansweredSends));
        verdicts.add(kit.guard(Obligation.REFUSAL_MEANS_NOT_EXECUTED, kit::refusalMeansNotExecuted));
        verdicts.add(kit.guard(Obligation.IN_FLIGHT_REPEAT_ANSWERS_THE_RESULT, kit::inFlightRepeatAnswersTheResult));
        verdicts.add(kit.guard(Obligation.ERRORS_ARE_NOT_REPLAYED, kit::errorsAreNotReplayed));
        verdicts.add(kit.guard(Obligation.KEEPS_KEYS_FOR_THE_STATED_WINDOW, kit::keepsKeysForTheStatedWindow));
        if (!kit.contractFindings.isEmpty()) {
            verdicts.add(new Verdict(Obligation.ANSWERS_MATCH_THE_CONTRACT, State.FAILS, String.join("; ", kit.contractFindings)));
        } else if (kit.answers.get() == 0) {
            // nothing answered, so nothing was compared: not a pass
            verdicts.add(new Verdict(Obligation.ANSWERS_MATCH_THE_CONTRACT, State.NOT_CHECKED, "the provider gave no answer to validate"));
        } else {
            verdicts.add(new Verdict(Obligation.ANSWERS_MATCH_THE_CONTRACT, State.HOLDS,
                    "all " + kit.answers.get() + " answers are documented in provider-api.yaml"));
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
        Answer late = send(ref, providerNow().minusSeconds(1), 1250);
        if (late.status() != 412) {
            return new Verdict(o, State.FAILS, "a send whose Ledgerline-Not-After had passed answered " + late.status()
                    + (late.completed() ? " (executed)" : "") + ", not 412");
        }
        // nothing may appear later either: watch the lookup for the whole stated lag
        Optional<Answer> appeared = stays404(ref, Instant.now());
        if (appeared.isPresent()) {
            return new Verdict(o, State.FAILS, "the send was refused with 412, but a lookup then answered " + appeared.get());
        }
        String arrival = "a send past its deadline by the provider's clock answered 412 and its reference stayed unknown (404)";
        if (options.holds().isEmpty()) {
            return new Verdict(o, State.HOLDS, arrival + "; a send held in transit was not tried (no way to hold one)");
        }

        // in transit: the send arrives in time, is held inside the provider past its deadline, then applied
        Holds holds = options.holds().get();
        String held = reference();
        Instant sentAt = Instant.now();
        Instant deadline = providerNow().plus(holds.holdFor().dividedBy(3));
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

    /**
     * The provider's Date within the bound of the kit's clock. Read precisely (see {@link #readClock()}), so the
     * bound is not blurred by Date's whole seconds; what is left of the measurement's own error is given.
     */
    private Verdict clockWithinBound() throws Exception {
        Obligation o = Obligation.CLOCK_WITHIN_BOUND;
        clock = readClock();
        if (clock.isEmpty()) {
            return new Verdict(o, State.FAILS, "the provider's answers carry no readable Date header: its clock cannot be watched");
        }
        ClockReading reading = clock.get();
        long offset = reading.offset().toMillis();
        long bound = options.clockSkewBound().toMillis();
        String seen = "its Date is " + Math.abs(offset) + " ms " + (offset < 0 ? "behind" : "ahead of") + " the kit's clock (±"
                + reading.uncertainty().toMillis() + " ms), bound " + bound + " ms";
        if (Math.abs(offset) - reading.uncertainty().toMillis() > bound) {
            return new Verdict(o, State.FAILS, seen + (offset < 0
                    ? ": a clock behind executes sends after the deadline the service set"
                    : ": a clock ahead refuses sends before their deadline"));
        }
        return new Verdict(o, State.HOLDS, seen);
    }

    /**
     * Every execution is seen by a lookup, answered or not: the kit sends, gives up on the answer (the provider
     * holds it, when the kit can make it), then looks the reference up for the stated lag. A 404 after that is
     * only a breach if the payment did execute, which a repeat under the key then tells (answered as a replay,
     * or executed twice); a repeat that executes afresh means the dropped send never ran, and nothing is shown.
     */
    private Verdict lookupCoversUnansweredSends() throws Exception {
        Obligation o = Obligation.LOOKUP_COVERS_UNANSWERED_SENDS;
        String ref = reference();
        Duration dropAfter = options.answerHolds().map(h -> h.holdFor().dividedBy(3)).orElse(DROP_AFTER);
        Optional<Answer> answered;
        options.answerHolds().ifPresent(Holds::before);
        try {
            answered = sendDropping(ref, Instant.now().plusSeconds(60), dropAfter);
        } finally {
            options.answerHolds().ifPresent(Holds::after);
        }
        if (answered.isPresent()) {
            return new Verdict(o, State.NOT_CHECKED, "the provider answered (" + answered.get() + ") before the kit dropped the"
                    + " connection after " + dropAfter.toMillis() + " ms" + (options.answerHolds().isEmpty()
                    ? "; no way to hold an answer was given" : ", although it was to hold the answer"));
        }
        Instant dropped = Instant.now();
        Answer lookup = lookupWithinLag(ref, Answer::lookupCompleted);
        long tookMs = Duration.between(dropped, Instant.now()).toMillis();
        if (lookup.lookupCompleted()) {
            return new Verdict(o, State.HOLDS, "a send whose connection the kit dropped after " + dropAfter.toMillis()
                    + " ms, before its answer, was looked up as completed within " + tookMs + " ms of the drop");
        }
        if (lookup.status() != 404) {
            return new Verdict(o, State.FAILS, "a send whose connection the kit dropped was then looked up as " + lookup);
        }
        Answer again = send(ref, Instant.now().plusSeconds(60), 1250);
        if ((again.status() == 200 && again.completed()) || again.executions().orElse(0) > 1) {
            return new Verdict(o, State.FAILS, "a send whose answer the kit never read was looked up as 404 for " + tookMs
                    + " ms after the drop (stated lag " + options.lookupLag().toMillis() + " ms), yet it had executed: a repeat"
                    + " under its key answered " + again + again.executionsNote());
        }
        return new Verdict(o, State.NOT_CHECKED, "the dropped send did not execute (a repeat under its key answered " + again
                + "): nothing to look up");
    }

    /**
     * A 400/422 means "not executed" where the contract says it does: to the first use of a key (a malformed send,
     * whose reference must then stay unknown) and to a key reused after it executed (with another body), which
     * must not be answered 400/422 at all.
     */
    private Verdict refusalMeansNotExecuted() throws Exception {
        Obligation o = Obligation.REFUSAL_MEANS_NOT_EXECUTED;
        String malformed = reference();
        Answer refused = sendUnchecked(malformed, "{\"amount\":1250,\"currency\":\"EUR\"}");
        String firstUse;
        if (refused.status() == 400 || refused.status() == 422) {
            Optional<Answer> appeared = stays404(malformed, Instant.now());
            if (appeared.isPresent()) {
                return new Verdict(o, State.FAILS, "a first send answered " + refused.status() + " was then looked up as "
                        + appeared.get());
            }
            firstUse = "a malformed first send answered " + refused.status() + " and its reference stayed unknown";
        } else {
            firstUse = "a malformed first send answered " + refused + " (not 400/422: nothing to check)";
        }
        String used = reference();
        Answer first = send(used, Instant.now().plusSeconds(60), 1250);
        if (!first.completed()) {
            return new Verdict(o, State.FAILS, firstUse + "; the first send of a key was not executed: " + first);
        }
        Answer other = send(used, Instant.now().plusSeconds(60), 1251);
        if (other.status() == 400 || other.status() == 422) {
            return new Verdict(o, State.FAILS, firstUse + "; a key that executed, sent again with another amount, answered "
                    + other.status() + reasonNote(other) + ": a 400/422 to a reused key must mean nothing executed under it");
        }
        return new Verdict(o, State.HOLDS, firstUse + "; a key that executed, reused with another amount, answered " + other);
    }

    /**
     * A repeat while the first send under its key is still in flight is answered with the payment's result, not
     * with 409. The kit holds the first send inside the provider when it can; otherwise it sends two at once.
     */
    private Verdict inFlightRepeatAnswersTheResult() throws Exception {
        Obligation o = Obligation.IN_FLIGHT_REPEAT_ANSWERS_THE_RESULT;
        String ref = reference();
        Instant deadline = Instant.now().plusSeconds(60);
        CompletableFuture<Answer> first;
        Answer repeat;
        if (options.holds().isPresent()) {
            Holds holds = options.holds().get();
            holds.before();
            try {
                first = sendAsync(ref, deadline);
                Thread.sleep(holds.holdFor().dividedBy(3).toMillis());
                repeat = send(ref, deadline, 1250);
            } finally {
                holds.after();
            }
        } else {
            first = sendAsync(ref, deadline);
            repeat = send(ref, deadline, 1250);
        }
        Answer held = first.get(options.timeout().toMillis() * 2, TimeUnit.MILLISECONDS);
        for (Answer answer : List.of(repeat, held)) {
            if (answer.status() == 409) {
                return new Verdict(o, State.FAILS, "a repeat while the first send under its key was in flight answered 409"
                        + " (the service reads it as unknown and waits for a lookup); the other answered "
                        + (answer == repeat ? held : repeat));
            }
            if (!answer.completed()) {
                return new Verdict(o, State.FAILS, "a send and its repeat in flight under one key answered " + held + " and "
                        + repeat + ", not the payment's result");
            }
        }
        if (options.holds().isEmpty()) {
            return new Verdict(o, State.NOT_CHECKED, "two concurrent sends under one key answered " + held + " and " + repeat
                    + "; without a way to hold one, they may not have overlapped");
        }
        return new Verdict(o, State.HOLDS, "a repeat while the first send was held in flight answered " + repeat
                + ", the held send " + held);
    }

    /** After a 5xx that executed nothing, a repeat under the key is applied afresh, not answered with a saved error. */
    private Verdict errorsAreNotReplayed() throws Exception {
        Obligation o = Obligation.ERRORS_ARE_NOT_REPLAYED;
        if (options.errors().isEmpty()) {
            return new Verdict(o, State.NOT_CHECKED, "no way to make the provider fail a send with a 5xx was given");
        }
        Errors errors = options.errors().get();
        String ref = reference();
        Answer failed;
        errors.before();
        try {
            failed = send(ref, Instant.now().plusSeconds(60), 1250);
        } finally {
            errors.after();
        }
        if (failed.status() < 500) {
            return new Verdict(o, State.NOT_CHECKED, "the send meant to fail with a 5xx answered " + failed);
        }
        Answer lookup = lookupWithinLag(ref, Answer::lookupCompleted);
        Answer again = send(ref, Instant.now().plusSeconds(60), 1250);
        if (again.status() >= 500) {
            return new Verdict(o, State.FAILS, "a send answered " + failed.status() + ", looked up as " + lookup
                    + ", and a repeat under its key answered " + again.status() + " again: a saved error replayed for ever");
        }
        if (!again.completed()) {
            return new Verdict(o, State.FAILS, "after a " + failed.status() + " and a lookup " + lookup + ", a repeat answered " + again);
        }
        return new Verdict(o, State.HOLDS, "after a " + failed.status() + " and a lookup " + lookup + ", a repeat under the key answered "
                + again);
    }

    /** Within the stated key window a repeat answers the first result; checked as far as the kit waits. */
    private Verdict keepsKeysForTheStatedWindow() throws Exception {
        Obligation o = Obligation.KEEPS_KEYS_FOR_THE_STATED_WINDOW;
        if (options.keyWindow().isEmpty()) {
            return new Verdict(o, State.NOT_CHECKED, "the provider states no key window (-Dprovider.key-window=PT24H); set"
                    + " ledgerline.provider.key-window to what it keeps, or rely on the deadline alone");
        }
        Duration window = options.keyWindow().get();
        Duration wait = window.minus(SLACK);
        boolean whole = wait.compareTo(options.keyWindowWait()) <= 0;
        if (!whole) {
            wait = options.keyWindowWait();
        }
        String ref = reference();
        Answer first = send(ref, Instant.now().plusSeconds(60), 1250);
        if (!first.completed()) {
            return new Verdict(o, State.FAILS, "the first send was not executed: " + first);
        }
        Thread.sleep(wait.toMillis());
        Answer again = send(ref, Instant.now().plusSeconds(60), 1250);
        if (again.status() == 201 || again.executions().orElse(0) > 1) {
            return new Verdict(o, State.FAILS, "a repeat " + wait.toMillis() + " ms after the first send executed again ("
                    + again + again.executionsNote() + "): the key was forgotten inside the stated window of " + window);
        }
        if (!again.completed()) {
            return new Verdict(o, State.FAILS, "a repeat " + wait.toMillis() + " ms after the first send answered " + again);
        }
        String kept = "a repeat " + wait.toMillis() + " ms after the first send answered " + again + " with the first result";
        return whole
                ? new Verdict(o, State.HOLDS, kept + " (stated window " + window + ")")
                : new Verdict(o, State.NOT_CHECKED, kept + "; the stated window " + window + " is longer than the kit waits");
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

    private static String reasonNote(Answer answer) {
        String reason = answer.body() == null ? null : answer.body().path("reason").asText(null);
        return reason == null ? "" : " (" + reason + ")";
    }

    // ---- the provider's clock -------------------------------------------------------------------------

    /** The provider's clock minus the kit's, within {@code uncertainty}. */
    record ClockReading(Duration offset, Duration uncertainty) {
    }

    private static final Duration CLOCK_WATCH = Duration.ofMillis(1500);
    private static final Duration CLOCK_POLL = Duration.ofMillis(10);

    /** Now by the provider's clock as the kit read it; the kit's own clock when the provider sends no Date. */
    private Instant providerNow() {
        return clock.map(c -> Instant.now().plus(c.offset())).orElseGet(Instant::now);
    }

    /**
     * Reads the provider's clock off its {@code Date} header, beyond the header's whole seconds: lookups of a
     * never-sent reference, close together, until the second ticks over. The provider's clock read exactly the
     * new Date somewhere between the previous request leaving and this answer arriving, so the offset is known
     * to half that interval. If the second never ticks (it must within one), one reading with a half-second error.
     */
    private Optional<ClockReading> readClock() throws IOException, InterruptedException {
        String ref = reference();
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/payments/" + ref)).timeout(options.timeout())
                .header("Accept", "application/json").GET().build();
        Instant until = Instant.now().plus(CLOCK_WATCH);
        Instant previousSent = null;
        Instant previousDate = null;
        Instant lastSent = null;
        Instant lastReceived = null;
        do {
            Instant sent = Instant.now();
            HttpResponse<Void> response = http.send(request, HttpResponse.BodyHandlers.discarding());
            Instant received = Instant.now();
            Optional<Instant> date = response.headers().firstValue("Date").flatMap(ProviderConformance::httpDate);
            if (date.isEmpty()) {
                return Optional.empty();
            }
            if (previousDate != null && date.get().isAfter(previousDate)) {
                Duration interval = Duration.between(previousSent, received);
                Instant tick = previousSent.plus(interval.dividedBy(2));
                return Optional.of(new ClockReading(Duration.between(tick, date.get()), interval.dividedBy(2)));
            }
            previousSent = sent;
            previousDate = date.get();
            lastSent = sent;
            lastReceived = received;
            Thread.sleep(CLOCK_POLL.toMillis());
        } while (Instant.now().isBefore(until));
        Duration roundTrip = Duration.between(lastSent, lastReceived);
        Instant midpoint = lastSent.plus(roundTrip.dividedBy(2));
        return Optional.of(new ClockReading(Duration.between(midpoint, previousDate).plusMillis(500),
                roundTrip.dividedBy(2).plusMillis(500)));
    }

    private static Optional<Instant> httpDate(String header) {
        try {
            return Optional.of(ZonedDateTime.parse(header.trim(), DateTimeFormatter.RFC_1123_DATE_TIME).toInstant());
        } catch (DateTimeParseException unreadable) {
            return Optional.empty();
        }
    }

    private Answer send(String reference, Instant notAfter, long amount) throws IOException, InterruptedException {
        return exchange(sendRequest(reference, notAfter, amount, options.timeout()), documentedSend(reference, notAfter, amount));
    }

    /** The send on another thread: for a repeat while it is in flight. */
    private CompletableFuture<Answer> sendAsync(String reference, Instant notAfter) {
        CompletableFuture<Answer> answer = new CompletableFuture<>();
        Thread sender = new Thread(() -> {
            try {
                answer.complete(send(reference, notAfter, 1250));
            } catch (Exception e) {
                answer.completeExceptionally(e);
            }
        }, "conformance-kit-send");
        sender.setDaemon(true);
        sender.start();
        return answer;
    }

    /** A send the kit gives up on after {@code dropAfter}, closing its connection: empty if no answer came by then. */
    private Optional<Answer> sendDropping(String reference, Instant notAfter, Duration dropAfter)
            throws IOException, InterruptedException {
        try {
            return Optional.of(exchange(sendRequest(reference, notAfter, 1250, dropAfter), documentedSend(reference, notAfter, 1250)));
        } catch (HttpTimeoutException dropped) {
            return Optional.empty();
        }
    }

    /** A deliberately malformed send: outside the contract, so neither it nor its answer is validated. */
    private Answer sendUnchecked(String reference, String body) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/payments")).timeout(options.timeout())
                .header("Content-Type", "application/json").header("Accept", "application/json")
                .header("Idempotency-Key", reference).header("Ledgerline-Not-After", providerNow().plusSeconds(60).toString())
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        return new Answer(response.statusCode(), json(response));
    }

    private static String orderBody(long amount) {
        return "{\"amount\":" + amount + ",\"currency\":\"EUR\",\"destination\":{\"iban\":\"DE89370400440532013000\","
                + "\"name\":\"Conformance Kit\"}}";
    }

    private HttpRequest sendRequest(String reference, Instant notAfter, long amount, Duration timeout) {
        return HttpRequest.newBuilder(URI.create(base + "/payments")).timeout(timeout)
                .header("Content-Type", "application/json").header("Accept", "application/json")
                .header("Idempotency-Key", reference).header("Ledgerline-Not-After", notAfter.toString())
                .POST(HttpRequest.BodyPublishers.ofString(orderBody(amount))).build();
    }

    private static Request documentedSend(String reference, Instant notAfter, long amount) {
        return SimpleRequest.Builder.post("/payments").withContentType("application/json")
                .withAccept("application/json").withHeader("Idempotency-Key", reference)
                .withHeader("Ledgerline-Not-After", notAfter.toString()).withBody(orderBody(amount)).build();
    }

    private Answer lookup(String reference) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/payments/" + reference)).timeout(options.timeout())
                .header("Accept", "application/json").GET().build();
        Request documented = SimpleRequest.Builder.get("/payments/" + reference).withAccept("application/json").build();
        return exchange(request, documented);
    }

    private Answer exchange(HttpRequest request, Request documented) throws IOException, InterruptedException {
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        answers.incrementAndGet();
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
        return new Answer(response.statusCode(), json(response));
    }

    private static JsonNode json(HttpResponse<String> response) {
        if (response.headers().firstValue("Content-Type").orElse("").contains("json") && !response.body().isBlank()) {
            try {
                return JSON.readTree(response.body());
            } catch (IOException garbled) {
                return null;
            }
        }
        return null;
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException("the provider contract " + file.toAbsolutePath() + " cannot be read", e);
        }
    }
}
