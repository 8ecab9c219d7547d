package dev.ledgerline.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Model-checks the transfer protocol (lock, claim, send, fence, release, plus the sweeper and
 * reconciler) in {@code model/transfer.pml} with spin, exhaustively. A send there is a
 * dispatch, an effect the provider may apply until the request's deadline, and a resolution, so a
 * request can still execute after its caller gave up on it.
 *
 * <p>The correct model must have no counterexample for any property. Every mutant must have one (a
 * trail) for each ltl property it is expected to break, and its assertion run must stop at the
 * assertion of the property it is expected to break first. The old in-transit rule's trail must
 * show the reconciler deciding on a lookup while an earlier request was still on the wire. Needs
 * {@code spin} and {@code gcc} on the PATH; without them the test fails, it never skips. Plain
 * JUnit 5 and the JDK only.
 *
 * <p>Three fault models, each behind its own define (see FAULT MODELS in transfer.pml), are checked the same way,
 * with smaller bounds: a database that loses acknowledged commits ({@code LOST_COMMIT}), a provider whose clock is
 * behind ({@code PROVIDER_CLOCK_BEHIND}), and a key-idempotent provider that forgets keys ({@code KEY_EXPIRY}). Each
 * has a fixed variant that must hold every property, reach its witnesses and never get stuck, and mutants (one
 * rule of the fix taken away, or today's rules) that must each be caught with a trail that shows their failure.
 *
 * <p>Run by hand: see the header of transfer.pml. {@code -Dmodel.keep=true} keeps the work
 * directory (pan sources, outputs and trails) and prints where it is.
 */
class ProtocolModelTest {

    private static final Duration SPIN_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration GCC_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration PAN_TIMEOUT = Duration.ofSeconds(150);
    private static final Duration BUILD_WAIT = Duration.ofSeconds(300);

    /** pan options shared by every run: deep enough, 2^22 hash slots (exact storage). */
    private static final List<String> PAN_COMMON = List.of("-m100000", "-w22");

    static final String SAFETY = "safety";
    static final String P1 = "p1_at_most_one_execution";
    static final String P2 = "p2_no_write_after_terminal";
    static final String P3 = "p3_no_stale_write";
    static final String P4 = "p4_eventually_terminal";
    static final String P5 = "p5_outcome_matches_provider";
    static final String P6 = "p6_cancelled_never_executed";
    /** The ledger: a hold is resolved at most once, posted exactly for sent, released exactly for failed or cancelled. */
    static final String L1 = "l1_hold_follows_status";
    static final String W1 = "w1_stale_fence_reachable";
    static final String W2 = "w2_killed_worker_recovered";
    static final String W3 = "w3_effect_after_give_up";
    static final String W4 = "w4_lost_claim_executes";
    static final String W5 = "w5_recreated_row_sent";
    static final String W6 = "w6_executes_after_db_deadline";
    static final String W7 = "w7_resend_answered_by_key";
    static final String W8 = "w8_parked";
    static final String W9 = "w9_cancel_wins";
    static final String W10 = "w10_cancel_loses_race";
    /** P4 where parking is part of the protocol: eventually sent, failed or parked. */
    static final String P4_OR_PARKED = "p4_finished_or_parked";
    /** What pan reports when the assertion run ends with every process blocked: a stuck transfer. */
    static final String STUCK = "stuck (invalid end state)";

    /**
     * A model variant: the correct model, a fault model's fixed rules, or one mutant, built from the same
     * file with -D.
     *
     * @param correct true for a protocol that must hold every property (the correct model, a fixed variant)
     * @param mustViolate ltl blocks that must each have a counterexample
     * @param safetyBreaks the property whose assertion the assertion (-DSAFETY) run must stop at,
     *     or {@link #STUCK}; null = no assertion run for this variant
     * @param mustHold ltl blocks that must hold (a correct variant: all it is checked for)
     * @param witnesses ltl blocks that must be violated by a correct variant: what it is about is reachable
     * @param optimise compile with -O1 (most of -O2's speed for less compile time on a loaded machine):
     *     for the large state spaces; small ones and verifiers that stop at their first trail use -O0
     */
    record Variant(String name, List<String> defines, boolean correct, List<String> mustViolate, String safetyBreaks,
                   List<String> mustHold, List<String> witnesses, boolean optimise) {
        static Variant mutant(String name, List<String> defines, String assertionRunStopsAt,
                              List<String> ltlBroken) {
            return new Variant(name, defines, false, ltlBroken, assertionRunStopsAt, List.of(), List.of(), false);
        }

        /** A fault model with its fixed rules: every property in mustHold holds, every witness is reachable. */
        static Variant fixed(String name, List<String> defines, List<String> mustHold, List<String> witnesses) {
            return new Variant(name, defines, true, List.of(), null, mustHold, witnesses, false);
        }

        boolean needsLtlBuild() {
            return correct || !mustViolate.isEmpty() || !mustHold.isEmpty();
        }

        List<String> spinDefines() {
            return defines.stream().map(d -> "-D" + d).toList();
        }
    }

    static final Variant CORRECT = new Variant("correct", List.of(), true, List.of(), null,
            List.of(P1, P2, P3, P5, P4, L1), List.of(W1, W2, W3), true);
    /** The ledger's write not tied to the row the fence wrote: a stale fence posts (or releases) too. */
    static final Variant POST_ON_STALE_FENCE =
            Variant.mutant("post-on-stale-fence", List.of("MUTANT_POST_ON_STALE_FENCE"), L1, List.of(L1));
    /** The fence to reconciling releases the hold although the provider may still have paid. */
    static final Variant RELEASE_WHILE_UNKNOWN =
            Variant.mutant("release-while-unknown", List.of("MUTANT_RELEASE_WHILE_UNKNOWN"), L1, List.of(L1));
    // Each mutant's assertion run must stop at the assertion of the property named first, and every
    // ltl block in the list must have a counterexample (each run on its own).
    static final Variant NO_FENCE_VERSION =
            Variant.mutant("no-fence-version", List.of("MUTANT_NO_FENCE_VERSION"), P2, List.of(P2, P3));
    static final Variant NO_CLAIM_STATUS =
            Variant.mutant("no-claim-status", List.of("MUTANT_NO_CLAIM_STATUS"), P2, List.of(P1, P2, P3, P5));
    static final Variant RESEND_WITHOUT_LOOKUP =
            Variant.mutant("resend-without-lookup", List.of("MUTANT_RESEND_WITHOUT_LOOKUP"), P1, List.of(P1, P5));
    static final Variant CLAIM_WITHOUT_EXPECTED_VERSION = Variant.mutant("first-claim-status-in",
            List.of("MUTANT_CLAIM_WITHOUT_EXPECTED_VERSION"), P3, List.of(P1, P3, P5));
    static final Variant NO_EXPIRE_LEASES =
            Variant.mutant("no-expire-leases", List.of("MUTANT_NO_EXPIRE_LEASES"), STUCK, List.of(P4));
    /**
     * Today's rule before the in-transit fix, with a provider whose lookup never lags, so the trail
     * can only be a request still on the wire when the reconciler decides.
     */
    static final Variant OLD_DEADLINE_RULE = Variant.mutant("old-deadline-rule",
            List.of("MUTANT_OLD_DEADLINE_RULE", "NO_LOOKUP_LAG"), P1, List.of(P1, P5));
    static final Variant LOOKUP_LAG_NOT_WAITED = Variant.mutant("lookup-lag-not-waited",
            List.of("MUTANT_LOOKUP_LAG_NOT_WAITED"), P1, List.of(P1, P5));
    static final Variant PROVIDER_IGNORES_DEADLINE = Variant.mutant("provider-ignores-deadline",
            List.of("MUTANT_PROVIDER_IGNORES_DEADLINE"), P1, List.of(P1, P5));
    /** Safe on purpose: a lease ends after the send deadline, so the deadline alone fences the send. */
    static final Variant NO_LEASE_CHECK = new Variant("no-lease-check", List.of("MUTANT_NO_LEASE_CHECK"), false,
            List.of(), null, List.of(P1, P5), List.of(), true);

    // ---- the fault models: smaller bounds (one dispatch worker beside the sweeper, FAULTS=1, PAUSES=1)
    // so that all of them fit the test's time budget; each mutant keeps its fixed variant's bounds.
    // A fixed variant's assertion run checks P1 (asserted at every effect, the only step that counts an
    // execution) and P3 (asserted at every write that sets its flag), which is what their ltl blocks check;
    // the ltl runs add P2 (a sent/failed row stays so, whatever writes it), P5 at every moment, and P4.
    // The mutants that take away one part of a fix have their assertion run and its trail only.

    static final List<String> FIXED_LTL = List.of(P2, P5, P4);

    private static List<String> defines(String faultModel, String... more) {
        List<String> all = new ArrayList<>(List.of(faultModel, "ONE_WORKER", "FAULTS=1", "PAUSES=1"));
        all.addAll(List.of(more));
        return List.copyOf(all);
    }

    static final String LC = "LOST_COMMIT";
    /** A lost claim and a lost INSERT, with claim tokens, the epoch rule and re-creation in reconciling. */
    static final Variant LOST_COMMIT = Variant.fixed("lost-commit", defines(LC), FIXED_LTL, List.of(W1, W4, W5));
    /**
     * {@link #LOST_COMMIT} with the accept's first claim taken by its INSERT: nothing acts on the row before that
     * claim (a lost claim, a stale fence and a re-created row all stay reachable).
     */
    static final Variant CLAIM_ON_INSERT = Variant.fixed("claim-on-insert", defines(LC, "CLAIM_ON_INSERT"), FIXED_LTL,
            List.of(W1, W4, W5));
    static final Variant LC_FENCE_WITHOUT_TOKEN = Variant.mutant("lc-fence-version-only",
            defines(LC, "MUTANT_FENCE_WITHOUT_TOKEN"), P3, List.of(P3));
    /** Today: no epoch rule at all (neither the claim's EXISTS nor ADOPT_EPOCH). */
    static final Variant LC_NO_EPOCH = Variant.mutant("lc-no-epoch", defines(LC, "MUTANT_NO_EPOCH"), P1,
            List.of(P1, P5));
    static final Variant LC_CLAIM_WITHOUT_EPOCH = Variant.mutant("lc-claim-without-epoch",
            defines(LC, "MUTANT_CLAIM_WITHOUT_EPOCH"), P1, List.of());
    static final Variant LC_ADOPT_WITHOUT_WINDOW = Variant.mutant("lc-adopt-without-window",
            defines(LC, "MUTANT_ADOPT_WITHOUT_WINDOW"), P1, List.of());
    /** Today's cache_stale path: a fresh pending row with a new random id and reference. */
    static final Variant LC_RECREATE_FRESH = Variant.mutant("lc-recreate-fresh", defines(LC, "MUTANT_RECREATE_FRESH"),
            P1, List.of(P1, P5));
    static final Variant LC_RECREATE_PENDING = Variant.mutant("lc-recreate-pending",
            defines(LC, "MUTANT_RECREATE_PENDING"), P1, List.of());
    static final Variant LC_RECREATE_WITHOUT_WINDOW = Variant.mutant("lc-recreate-without-window",
            defines(LC, "MUTANT_RECREATE_WITHOUT_WINDOW"), P1, List.of());
    /** The retry whose Redis read did not answer, before: the key's row inserted pending, as any new one. */
    static final Variant LC_UNSEEN_PENDING = Variant.mutant("lc-unseen-pending", defines(LC, "MUTANT_UNSEEN_PENDING"), P1,
            List.of());

    static final String PCB = "PROVIDER_CLOCK_BEHIND";
    /** Settle includes the skew bound, and no claim while the measured offset exceeds it. */
    static final Variant CLOCK_BEHIND = Variant.fixed("clock-behind", defines(PCB), FIXED_LTL, List.of(W6));
    /** Today: settle = margin + lookup lag, and nothing holds the sends while the offset is too large. */
    static final Variant CLOCK_BEHIND_TODAY = Variant.mutant("clock-behind-today",
            defines(PCB, "MUTANT_NO_SKEW_BOUND", "MUTANT_NO_SKEW_HOLD"), P1, List.of(P1, P5));
    static final Variant CLOCK_BEHIND_NO_HOLD = Variant.mutant("clock-behind-no-hold",
            defines(PCB, "MUTANT_NO_SKEW_HOLD"), P1, List.of());

    static final String KE = "KEY_EXPIRY";
    /** No send once the first send is older than the key window less the margin; parked instead. */
    static final Variant KEY_EXPIRY = Variant.fixed("key-expiry", defines(KE), List.of(P2, P5, P4_OR_PARKED),
            List.of(W7, W8));
    static final Variant KEY_WITHOUT_AGE_LIMIT = Variant.mutant("key-without-age-limit",
            defines(KE, "MUTANT_NO_KEY_WINDOW"), P1, List.of(P1, P5));

    // ---- the owner's cancel (-DCANCEL): a Canceller process reads the row and cancels it by a conditional UPDATE
    // while Worker1 (the dispatch after the accept) and the sweeper claim it; one dispatch worker, the default
    // bounds. Its mutant cancels by id alone.
    static final Variant CANCEL = Variant.fixed("cancel", List.of("CANCEL", "ONE_WORKER"),
            List.of(P1, P2, P3, P5, P6, P4), List.of(W9, W10));
    static final Variant CANCEL_WITHOUT_CHECK = Variant.mutant("cancel-without-check",
            List.of("CANCEL", "ONE_WORKER", "MUTANT_CANCEL_WITHOUT_CHECK"), P3, List.of(P6, P3, P2));

    static final List<Variant> FIXED = List.of(LOST_COMMIT, CLAIM_ON_INSERT, CLOCK_BEHIND, KEY_EXPIRY, CANCEL);

    static final List<Variant> VARIANTS = List.of(CORRECT, NO_LEASE_CHECK, OLD_DEADLINE_RULE,
            LOOKUP_LAG_NOT_WAITED, PROVIDER_IGNORES_DEADLINE, NO_FENCE_VERSION, NO_CLAIM_STATUS,
            RESEND_WITHOUT_LOOKUP, CLAIM_WITHOUT_EXPECTED_VERSION, NO_EXPIRE_LEASES,
            LOST_COMMIT, CLAIM_ON_INSERT, CLOCK_BEHIND, KEY_EXPIRY,
            LC_FENCE_WITHOUT_TOKEN, LC_NO_EPOCH, LC_CLAIM_WITHOUT_EPOCH, LC_ADOPT_WITHOUT_WINDOW, LC_RECREATE_FRESH,
            LC_RECREATE_PENDING, LC_RECREATE_WITHOUT_WINDOW, LC_UNSEEN_PENDING, CLOCK_BEHIND_TODAY, CLOCK_BEHIND_NO_HOLD,
            KEY_WITHOUT_AGE_LIMIT, CANCEL, CANCEL_WITHOUT_CHECK, POST_ON_STALE_FENCE, RELEASE_WHILE_UNKNOWN);

    /**
     * Compiled verifiers of a variant: assertions only (-DSAFETY -DNOCLAIM; null when the variant has
     * no assertion run) and one for the ltl blocks (-DLTL_ONLY: assertions compiled out, so each
     * never claim is judged on its own).
     */
    record Build(Variant variant, Path safetyDir, Path ltlDir) {}

    /** What one pan run reported. */
    record PanResult(Variant variant, String property, long stored, long transitions, int errors,
                     String firstError, Optional<Path> trail, String trailCheck, List<String> narrative,
                     String output) {
        boolean holds() {
            return errors == 0;
        }
    }

    private static Path model;
    private static Path workDir;
    private static ExecutorService builders;
    private static final Map<Variant, CompletableFuture<Build>> BUILDS = new LinkedHashMap<>();
    private static final List<PanResult> RESULTS = new ArrayList<>();
    private static final AtomicInteger LOGS = new AtomicInteger();

    @BeforeAll
    static void compileAllVariants() throws IOException {
        requireOnPath("spin", "spin is not installed: apt-get install spin");
        requireOnPath("gcc", "gcc is not installed (spin needs it to compile pan.c): apt-get install gcc");
        model = locateModel();
        workDir = Files.createTempDirectory("transfer-model-");
        // spin -a + gcc for every variant, two at a time, while the first runs start
        builders = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "spin-build");
            t.setDaemon(true);
            return t;
        });
        for (Variant v : VARIANTS) {
            BUILDS.put(v, CompletableFuture.supplyAsync(() -> build(v), builders));
        }
    }

    @AfterAll
    static void printSummaryAndCleanUp() throws IOException {
        if (builders != null) {
            builders.shutdownNow();
        }
        if (!RESULTS.isEmpty()) {
            printTable("Summary of all pan runs", RESULTS);
        }
        if (workDir == null) {
            return;
        }
        if (Boolean.getBoolean("model.keep")) {
            System.out.println("model work directory kept: " + workDir);
        } else {
            try (Stream<Path> files = Files.walk(workDir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    // ------------------------------------------------------------------ correct model

    @Test
    void correctModelHasNoCounterexampleForAnySafetyAssertion() {
        PanResult r = run(CORRECT, SAFETY);
        assertNoCounterexample(r);
        assertFalse(r.output().contains("pan:1: invalid end state"), "a transfer can get stuck:\n" + r.output());
    }

    @TestFactory
    Stream<DynamicTest> correctModelSatisfiesEveryLtlPropertyOnItsOwn() {
        return Stream.of(P1, P2, P3, P5, P4).map(property -> DynamicTest.dynamicTest(
                "correct model satisfies " + property + (P4.equals(property) ? " under weak fairness" : ""),
                () -> assertNoCounterexample(run(CORRECT, property))));
    }

    @Test
    void correctModelReachesTheInterleavingsThePropertiesAreAbout() {
        // witnesses: a stale worker is fenced off; a killed worker's transfer is still finished;
        // a request executes after its caller gave up on it
        for (String witness : List.of(W1, W2, W3)) {
            PanResult r = run(CORRECT, witness);
            assertTrue(r.errors() > 0, "witness " + witness + " not reachable, the model is vacuous:\n"
                    + r.output());
        }
    }

    // ------------------------------------------------------------------ mutants

    @Test
    void mutantWithoutFenceVersionIsCaught() {
        assertCaught(NO_FENCE_VERSION);
    }

    @Test
    void mutantWithoutClaimStatusConditionIsCaught() {
        assertCaught(NO_CLAIM_STATUS);
    }

    @Test
    void mutantResendingWithoutLookupIsCaught() {
        assertCaught(RESEND_WITHOUT_LOOKUP);
    }

    /** The first design's claim: WHERE status IN ('pending','reconciling'). */
    @Test
    void firstClaimWithoutExpectedVersionIsCaught() {
        assertCaught(CLAIM_WITHOUT_EXPECTED_VERSION);
    }

    @Test
    void mutantThatNeverExpiresLeasesLeavesTransfersUnfinished() {
        assertCaught(NO_EXPIRE_LEASES);
    }

    /**
     * The rule before the in-transit fix executes twice, and the trail is the in-transit case: a
     * lookup said "not found" while a request dispatched before it was still on the wire, and that
     * request executed afterwards.
     */
    @Test
    void oldDeadlineRuleExecutesARequestStillInTransitTwice() {
        List<PanResult> results = assertCaught(OLD_DEADLINE_RULE);
        PanResult safety = results.get(0);
        System.out.println("counterexample of " + OLD_DEADLINE_RULE.name() + " (" + safety.trailCheck() + "):");
        safety.narrative().forEach(line -> System.out.println("    " + line));
        Optional<String> late = requestOnTheWireDuringNotFound(safety.narrative());
        assertTrue(late.isPresent(), () -> "the trail does not show a request in transit during a lookup:\n"
                + String.join("\n", safety.narrative()));
    }

    /** Its trail shows a lookup saying "not found" after the payment had executed. */
    @Test
    void reconcilerThatForgetsTheLookupLagIsCaught() {
        PanResult safety = assertCaught(LOOKUP_LAG_NOT_WAITED).get(0);
        List<String> narrative = safety.narrative();
        int firstExecution = indexOf(narrative, "provider executes");
        assertTrue(firstExecution >= 0 && narrative.subList(firstExecution, narrative.size()).stream()
                        .anyMatch(l -> l.contains("lookup: not found")),
                () -> "the trail does not show a lookup missing an execution:\n" + String.join("\n", narrative));
    }

    private static int indexOf(List<String> narrative, String text) {
        for (int i = 0; i < narrative.size(); i++) {
            if (narrative.get(i).contains(text)) {
                return i;
            }
        }
        return -1;
    }

    @Test
    void providerThatIgnoresTheDeadlineIsCaught() {
        assertCaught(PROVIDER_IGNORES_DEADLINE);
    }

    /** The deadline, not the lease check, is what fences a send: without the check nothing breaks. */
    @Test
    void sendingWithoutLeaseCheckIsStillSafeBecauseOfTheDeadline() {
        for (String property : NO_LEASE_CHECK.mustHold()) {
            assertNoCounterexample(run(NO_LEASE_CHECK, property));
        }
    }

    // ------------------------------------------------------------------ fault models: fixed rules

    /**
     * Each fault model with its fixed rules: no assertion fails (P1 at every effect, P2 and P3 at every write, P5 at
     * the end) and no transfer gets stuck, every ltl property it is checked for holds on its own, and every witness
     * is reachable (the fault the model is about does happen).
     */
    @TestFactory
    Stream<DynamicTest> faultModelsWithTheirFixedRulesKeepEveryProperty() {
        return FIXED.stream().flatMap(v -> Stream.concat(
                Stream.of(DynamicTest.dynamicTest(v.name() + ": no assertion (P1, P2, P3, P5) fails, nothing stuck", () -> {
                    PanResult r = run(v, SAFETY);
                    assertNoCounterexample(r);
                    assertFalse(r.output().contains("pan:1: invalid end state"),
                            () -> "a transfer can get stuck:\n" + r.output());
                })),
                Stream.concat(
                        v.mustHold().stream().map(property -> DynamicTest.dynamicTest(v.name() + " satisfies " + property,
                                () -> assertNoCounterexample(run(v, property)))),
                        v.witnesses().stream().map(witness -> DynamicTest.dynamicTest(v.name() + " reaches " + witness,
                                () -> {
                                    PanResult r = run(v, witness);
                                    assertTrue(r.errors() > 0, () -> "witness " + witness + " not reachable in "
                                            + v.name() + ", the fault model is vacuous:\n" + r.output());
                                })))));
    }

    // ------------------------------------------------------------------ the owner's cancel

    /**
     * A cancel by id alone (no {@code status = 'pending' AND version = $seen}) lands after a claim: the assertion run
     * stops at the stale write, and the ltl runs find a cancelled transfer whose request executed (P6) and a cancel
     * written over a sent row (P2).
     */
    @Test
    void cancelWithoutTheStatusAndVersionCheckIsCaught() {
        List<PanResult> results = assertCaught(CANCEL_WITHOUT_CHECK);
        PanResult p6 = results.stream().filter(r -> r.property().equals(P6)).findFirst().orElseThrow();
        List<String> narrative = p6.narrative();
        assertTrue(narrative.stream().anyMatch(l -> l.contains("owner cancels"))
                        && narrative.stream().anyMatch(l -> l.contains("provider executes")),
                () -> "the P6 trail shows a cancel and an execution:\n" + String.join("\n", narrative));
    }

    /** A stale fence that posts: the hold is resolved twice, or posted for a transfer that is not sent. */
    @Test
    void aLedgerThatPostsOnAStaleFenceIsCaught() {
        assertCaught(POST_ON_STALE_FENCE);
    }

    /** A release on the fence to reconciling: the hold is gone while the provider may still pay. */
    @Test
    void aLedgerThatReleasesWhileTheOutcomeIsUnknownIsCaught() {
        assertCaught(RELEASE_WHILE_UNKNOWN);
    }

    // ------------------------------------------------------------------ fault models: mutants

    /**
     * A lost claim reissues version 1; with the fence matching the version alone, the lost claim's holder writes
     * over the row that ADOPT_EPOCH wrote at that version.
     */
    @Test
    void lostClaimWithAFenceOnTheVersionAloneLandsOnAReissuedVersion() {
        List<String> narrative = assertCaught(LC_FENCE_WITHOUT_TOKEN).get(0).narrative();
        int loss = indexOf(narrative, "database loses claim");
        int landing = indexOf(narrative, "lands on a row it does not hold");
        assertTrue(loss >= 0 && landing > loss, () -> "the trail does not show a fence landing on a reissued version "
                + "after a lost claim:\n" + String.join("\n", narrative));
    }

    /** Without the epoch rule the row is pending again after the loss and is claimed and sent a second time. */
    @Test
    void lostClaimWithoutTheEpochRuleIsSentTwice() {
        assertExecutesTwiceAfter(LC_NO_EPOCH, "database loses claim");
    }

    /** ADOPT_EPOCH alone is not enough: a claim between the loss and the adoption sends again. */
    @Test
    void claimThatDoesNotWaitForTheAdoptedEpochIsSentTwice() {
        List<String> narrative = assertExecutesTwiceAfter(LC_CLAIM_WITHOUT_EPOCH, "database loses claim");
        int loss = indexOf(narrative, "database loses claim");
        int adopted = indexOf(narrative, "epoch adopted");
        int reclaim = indexOfAfter(narrative, loss, "claim k=");
        assertTrue(reclaim > loss && (adopted < 0 || reclaim < adopted), () -> "the trail does not show a claim "
                + "between the loss and the adoption:\n" + String.join("\n", narrative));
    }

    /** ADOPT_EPOCH without pushing send_not_after: looked up before the lost claim's send settled. */
    @Test
    void adoptionThatKeepsTheOldDeadlineIsSentTwice() {
        assertExecutesTwiceAfter(LC_ADOPT_WITHOUT_WINDOW, "database loses claim");
    }

    /** Today's cache_stale path: the lost row comes back as a fresh pending row with a new reference. */
    @Test
    void lostInsertRecreatedAsAFreshRowIsSentTwice() {
        List<String> narrative = assertExecutesTwiceAfter(LC_RECREATE_FRESH, "database loses the INSERT");
        assertTrue(indexOf(narrative, "row re-created PENDING") >= 0,
                () -> "the trail does not re-create the row:\n" + String.join("\n", narrative));
    }

    /** The derived reference alone does not help a provider that is not idempotent: the lookup must come first. */
    @Test
    void lostInsertRecreatedPendingWithTheSameReferenceIsSentTwice() {
        assertExecutesTwiceAfter(LC_RECREATE_PENDING, "database loses the INSERT");
    }

    /** Re-created reconciling but looked up at once: before the earlier execution shows. */
    @Test
    void lostInsertRecreatedWithoutTheSendWindowIsSentTwice() {
        assertExecutesTwiceAfter(LC_RECREATE_WITHOUT_WINDOW, "database loses the INSERT");
    }

    /**
     * A retry whose read of the Redis entry did not answer finds no row for the key: inserted pending, with the same
     * derived reference, it is sent again to a provider that is not idempotent.
     */
    @Test
    void lostInsertRetriedWithoutARedisAnswerAndInsertedPendingIsSentTwice() {
        List<String> narrative = assertExecutesTwiceAfter(LC_UNSEEN_PENDING, "database loses the INSERT");
        assertTrue(indexOf(narrative, "Redis does not answer: row inserted PENDING") >= 0,
                () -> "the trail does not take the unseen retry:\n" + String.join("\n", narrative));
    }

    /**
     * Today's settle time with a provider whose clock is behind: the service's settle passed, the provider still
     * executed the request before its own deadline, and the lookup that decided the resend had missed it.
     */
    @Test
    void providerClockBehindWithTodaysSettleTimeExecutesTwice() {
        PanResult safety = assertCaught(CLOCK_BEHIND_TODAY).get(0);
        System.out.println("counterexample of " + CLOCK_BEHIND_TODAY.name() + " (" + safety.trailCheck() + "):");
        safety.narrative().forEach(line -> System.out.println("    " + line));
        assertTrue(executionAfterItsSettle(safety.narrative()).isPresent(), () -> "the trail does not show an execution"
                + " after its settle time passed:\n" + String.join("\n", safety.narrative()));
    }

    /** The skew bound in the settle time is not enough while sends are claimed beyond it. */
    @Test
    void claimsWhileTheOffsetExceedsTheBoundExecuteTwice() {
        PanResult safety = assertCaught(CLOCK_BEHIND_NO_HOLD).get(0);
        assertTrue(executionAfterItsSettle(safety.narrative()).isPresent(), () -> "the trail does not show an execution"
                + " after its settle time passed:\n" + String.join("\n", safety.narrative()));
        assertTrue(indexOf(safety.narrative(), "offset exceeds the skew bound") >= 0,
                () -> "the trail never has the offset beyond the bound:\n" + String.join("\n", safety.narrative()));
    }

    /** A resend after the provider forgot the key is a second payment. */
    @Test
    void resendAfterTheProviderForgotTheKeyExecutesTwice() {
        assertExecutesTwiceAfter(KEY_WITHOUT_AGE_LIMIT, "the provider forgets the key");
    }

    /**
     * Catches the mutant; its assertion run's trail has the event, and after it the execution that makes two
     * (the second execution always comes after the event). Returns that trail's narrative.
     */
    private static List<String> assertExecutesTwiceAfter(Variant mutant, String event) {
        List<String> narrative = assertCaught(mutant).get(0).narrative();
        int at = indexOf(narrative, event);
        int second = indexOf(narrative, "(executions=2)");
        assertTrue(at >= 0 && second > at, () -> "the trail of " + mutant.name() + " does not show '" + event
                + "' before the second execution:\n" + String.join("\n", narrative));
        return narrative;
    }

    private static int indexOfAfter(List<String> narrative, int from, String text) {
        for (int i = from + 1; i < narrative.size(); i++) {
            if (narrative.get(i).contains(text)) {
                return i;
            }
        }
        return -1;
    }

    private static final Pattern SETTLE_PASSES = Pattern.compile("D_(\\d+) \\+ settle passes");

    /** In a trail narrative, a request k that executes after "D_k + settle passes": k, if there is one. */
    static Optional<String> executionAfterItsSettle(List<String> narrative) {
        List<String> settled = new ArrayList<>();
        for (String line : narrative) {
            Matcher s = SETTLE_PASSES.matcher(line);
            Matcher e = EXECUTES.matcher(line);
            if (s.find()) {
                settled.add(s.group(1));
            } else if (e.find() && settled.contains(e.group(1))) {
                return Optional.of("k=" + e.group(1));
            }
        }
        return Optional.empty();
    }

    // ------------------------------------------------------------------ checks

    private static void assertNoCounterexample(PanResult r) {
        assertEquals(0, r.errors(), () -> r.variant().name() + " / " + r.property() + " has a counterexample: "
                + r.firstError() + "\n" + r.output());
        assertTrue(r.stored() > 0, () -> "no states stored?\n" + r.output());
        assertFalse(r.output().contains("max search depth too small"), () -> "search truncated:\n" + r.output());
        assertFalse(r.output().contains("Search not completed"), () -> "search incomplete:\n" + r.output());
    }

    /** Runs the assertion run first, then every ltl block the mutant must break; returns them in that order. */
    private static List<PanResult> assertCaught(Variant mutant) {
        List<PanResult> results = new ArrayList<>();
        PanResult safety = run(mutant, SAFETY);
        results.add(safety);
        for (String property : mutant.mustViolate()) {
            results.add(run(mutant, property));
        }
        List<String> missed = results.stream().filter(PanResult::holds).map(PanResult::property).toList();
        assertTrue(missed.isEmpty(), () -> "mutant " + mutant.defines() + " passes " + missed
                + " -- the model cannot tell it from the correct protocol");
        for (PanResult r : results) {
            assertTrue(r.trail().isPresent(), () -> "no trail for " + r.variant().name() + " / " + r.property()
                    + "\n" + r.output());
        }
        assertEquals(mutant.safetyBreaks(), brokenBy(safety.firstError()),
                () -> "the assertion run of " + mutant.name() + " stopped at another check: " + safety.firstError());
        return results;
    }

    /** Which property an assertion run's first error belongs to (assert texts as pan prints them). */
    static String brokenBy(String firstError) {
        if (firstError.startsWith("invalid end state")) {
            return STUCK;
        }
        if (!firstError.startsWith("assertion violated")) {
            return "unexpected: " + firstError;
        }
        if (firstError.contains("executions<=1")) {
            return P1;
        }
        if (firstError.contains("p2_write_after_terminal")) {
            return P2;
        }
        if (firstError.contains("p3_stale_write")) {
            return P3;
        }
        if (firstError.contains("hold==")) {
            return L1;
        }
        if (firstError.contains("p6_cancelled_executed") || firstError.contains("CANCELLED")) {
            return P6;
        }
        if (firstError.contains("executions==1") || firstError.contains("executions==0")) {
            return P5;
        }
        return "unexpected: " + firstError;
    }

    private static final Pattern DISPATCH = Pattern.compile("dispatch k=(\\d+)");
    private static final Pattern EXECUTES = Pattern.compile("provider executes k=(\\d+)");

    /**
     * In a trail narrative, a request dispatched before a "lookup: not found" and executed after it:
     * the lookup's verdict was decided while that request was still in transit.
     */
    static Optional<String> requestOnTheWireDuringNotFound(List<String> narrative) {
        for (int i = 0; i < narrative.size(); i++) {
            if (!narrative.get(i).contains("lookup: not found")) {
                continue;
            }
            List<String> before = new ArrayList<>();
            for (String line : narrative.subList(0, i)) {
                Matcher d = DISPATCH.matcher(line);
                Matcher e = EXECUTES.matcher(line);
                if (d.find()) {
                    before.add(d.group(1));
                } else if (e.find()) {
                    before.remove(e.group(1));
                }
            }
            for (String line : narrative.subList(i + 1, narrative.size())) {
                Matcher e = EXECUTES.matcher(line);
                if (e.find() && before.contains(e.group(1))) {
                    return Optional.of("k=" + e.group(1));
                }
            }
        }
        return Optional.empty();
    }

    // ------------------------------------------------------------------ spin / gcc / pan

    private static Build build(Variant v) {
        try {
            Path base = Files.createDirectories(workDir.resolve(v.name()));
            Path safety = null;
            String optimise = v.optimise() ? "-O1" : "-O0";
            if (v.correct() || v.safetyBreaks() != null) {
                safety = Files.createDirectories(base.resolve("safety"));
                Files.copy(model, safety.resolve("transfer.pml"), StandardCopyOption.REPLACE_EXISTING);
                List<String> spinSafety = new ArrayList<>(List.of("spin"));
                spinSafety.addAll(v.spinDefines());
                spinSafety.addAll(List.of("-a", "transfer.pml"));
                mustSucceed(safety, SPIN_TIMEOUT, spinSafety);
                mustSucceed(safety, GCC_TIMEOUT,
                        List.of("gcc", optimise, "-DSAFETY", "-DNOCLAIM", "-o", "pan", "pan.c"));
            }
            Path ltl = null;
            if (v.needsLtlBuild()) {
                ltl = Files.createDirectories(base.resolve("ltl"));
                Files.copy(model, ltl.resolve("transfer.pml"), StandardCopyOption.REPLACE_EXISTING);
                List<String> spinLtl = new ArrayList<>(List.of("spin"));
                spinLtl.addAll(v.spinDefines());
                spinLtl.addAll(List.of("-DLTL_ONLY", "-a", "transfer.pml"));
                mustSucceed(ltl, SPIN_TIMEOUT, spinLtl);
                mustSucceed(ltl, GCC_TIMEOUT, List.of("gcc", optimise, "-DNFAIR=3", "-o", "pan", "pan.c"));
            }
            return new Build(v, safety, ltl);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Build awaitBuild(Variant v) {
        try {
            return BUILDS.get(v).get(BUILD_WAIT.toSeconds(), TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            return fail("building the verifier for " + v.name() + " took longer than " + BUILD_WAIT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return fail("interrupted");
        } catch (ExecutionException | CompletionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            if (cause instanceof AssertionError ae) {
                throw ae;
            }
            return fail("building the verifier for " + v.name() + " failed: " + cause, cause);
        }
    }

    private static final Pattern ERRORS = Pattern.compile("errors: (\\d+)");
    private static final Pattern STORED = Pattern.compile("(\\d+) states, stored");
    private static final Pattern TRANSITIONS = Pattern.compile("(\\d+) transitions");
    private static final Pattern FIRST_ERROR = Pattern.compile("pan:1: (.*)");

    private static PanResult run(Variant v, String property) {
        Build b = awaitBuild(v);
        boolean safety = SAFETY.equals(property);
        Path dir = safety ? b.safetyDir() : b.ltlDir();
        if (dir == null) {
            fail("no " + (safety ? "assertion" : "ltl") + " build for " + v.name());
        }
        List<String> cmd = new ArrayList<>(List.of("./pan"));
        cmd.addAll(PAN_COMMON);
        if (!safety) {
            cmd.add("-a");
            if (property.startsWith("p4")) {
                cmd.add("-f"); // weak fairness
            }
            cmd.addAll(List.of("-N", property));
        }
        Path trail = dir.resolve("transfer.pml.trail");
        try {
            Files.deleteIfExists(trail);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String out = exec(dir, PAN_TIMEOUT, cmd).output();
        Matcher errors = ERRORS.matcher(out);
        if (!errors.find()) {
            fail("pan printed no 'errors: N' line for " + v.name() + " / " + property + ":\n" + out);
        }
        int errorCount = Integer.parseInt(errors.group(1));
        long stored = firstLong(STORED, out);
        long transitions = firstLong(TRANSITIONS, out);
        Matcher first = FIRST_ERROR.matcher(out);
        String firstError = first.find() ? first.group(1).trim() : "";

        Optional<Path> kept = Optional.empty();
        Replay replay = new Replay("", List.of());
        if (Files.exists(trail)) {
            Path named = dir.resolve(property + ".trail");
            try {
                Files.move(trail, named, StandardCopyOption.REPLACE_EXISTING);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            kept = Optional.of(named);
            replay = replay(v, dir, safety, named);
        }
        PanResult r = new PanResult(v, property, stored, transitions, errorCount, firstError, kept,
                replay.summary(), replay.narrative(), out);
        synchronized (RESULTS) {
            RESULTS.add(r);
        }
        printRow(r);
        return r;
    }

    /** A replayed trail: e.g. "trail of 87 steps", and the model's "@ ..." narrative lines. */
    record Replay(String summary, List<String> narrative) {}

    private static Replay replay(Variant v, Path dir, boolean safety, Path trail) {
        List<String> cmd = new ArrayList<>(List.of("spin"));
        cmd.addAll(v.spinDefines());
        if (!safety) {
            cmd.add("-DLTL_ONLY");
        }
        cmd.addAll(List.of("-t", "-k", trail.getFileName().toString(), "transfer.pml"));
        String out = exec(dir, SPIN_TIMEOUT, cmd).output();
        Matcher m = Pattern.compile("trail ends after (\\d+) steps").matcher(out);
        String summary = m.find() ? "trail of " + m.group(1) + " steps" : "trail (replay said: " + lastLine(out) + ")";
        List<String> narrative = out.lines().map(String::strip).filter(l -> l.startsWith("@ "))
                .map(l -> l.substring(2)).toList();
        return new Replay(summary, narrative);
    }

    record Exec(int exitCode, String output) {}

    private static Exec mustSucceed(Path dir, Duration timeout, List<String> cmd) {
        Exec e = exec(dir, timeout, cmd);
        if (e.exitCode() != 0) {
            fail(String.join(" ", cmd) + " failed in " + dir + " (exit " + e.exitCode() + "):\n" + e.output());
        }
        return e;
    }

    private static Exec exec(Path dir, Duration timeout, List<String> cmd) {
        Path log = dir.resolve("cmd-" + LOGS.incrementAndGet() + ".log");
        ProcessBuilder pb = new ProcessBuilder(cmd)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        try {
            Process p = pb.start();
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                p.waitFor(5, TimeUnit.SECONDS);
                fail(String.join(" ", cmd) + " in " + dir + " did not finish within " + timeout
                        + " -- the state space is larger than this test allows");
            }
            return new Exec(p.exitValue(), Files.readString(log));
        } catch (IOException e) {
            return fail("cannot run " + String.join(" ", cmd) + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return fail("interrupted while running " + String.join(" ", cmd));
        }
    }

    // ------------------------------------------------------------------ helpers

    private static void requireOnPath(String tool, String message) {
        String path = Optional.ofNullable(System.getenv("PATH")).orElse("");
        for (String dir : path.split(Pattern.quote(File.pathSeparator))) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, tool))) {
                return;
            }
        }
        fail(message);
    }

    /** The model beside this module's pom, found from the working directory (the module's, or the repository root). */
    private static Path locateModel() {
        Path cwd = Path.of("").toAbsolutePath();
        for (Path candidate : List.of(cwd.resolve("transfer.pml"), cwd.resolve("model/transfer.pml"))) {
            if (Files.isRegularFile(candidate)) {
                return candidate;
            }
        }
        return fail("transfer.pml not found in " + cwd + " nor in its model/ folder");
    }

    private static long firstLong(Pattern p, String text) {
        Matcher m = p.matcher(text);
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }

    private static String lastLine(String s) {
        String[] lines = s.strip().split("\n");
        return lines.length == 0 ? "" : lines[lines.length - 1];
    }

    private static String verdict(PanResult r) {
        if (r.variant().correct() || (r.variant().mustViolate().isEmpty() && r.variant().safetyBreaks() == null)) {
            if (r.property().startsWith("w")) {
                return r.errors() > 0 ? "reachable (witness)" : "NOT REACHABLE";
            }
            return r.holds() ? "holds" : "VIOLATED: " + r.firstError();
        }
        if (SAFETY.equals(r.property())) {
            return r.holds() ? "NOT CAUGHT" : "caught, " + r.trailCheck() + ": " + brokenBy(r.firstError());
        }
        return r.holds() ? "NOT CAUGHT" : "caught, " + r.trailCheck() + ": " + shortError(r);
    }

    /** pan reports a violated safety ltl block as an assertion inside the never claim. */
    private static String shortError(PanResult r) {
        if (!SAFETY.equals(r.property()) && r.firstError().startsWith("assertion violated")) {
            return "never claim violated" + r.firstError().replaceFirst("^.*(\\(at depth \\d+\\))$", " $1");
        }
        return r.firstError();
    }

    private static final String ROW = "| %-26s | %-30s | %12s | %12s | %6s | %s%n";
    private static final String HEADER =
            String.format(ROW, "model / mutant", "property", "states stored", "transitions", "errors", "verdict");
    private static boolean headerPrinted;

    private static String row(PanResult r) {
        return String.format(ROW, r.variant().name(), r.property(), r.stored(), r.transitions(), r.errors(),
                verdict(r));
    }

    private static synchronized void printRow(PanResult r) {
        System.out.print((headerPrinted ? "" : HEADER) + row(r));
        headerPrinted = true;
    }

    private static void printTable(String title, List<PanResult> rows) {
        StringBuilder sb = new StringBuilder(System.lineSeparator()).append(title).append(System.lineSeparator())
                .append(HEADER);
        synchronized (RESULTS) {
            rows.forEach(r -> sb.append(row(r)));
        }
        System.out.print(sb);
    }
}
