package dev.ledgerline.transfers.model;

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
 * reconciler) in {@code src/model/transfer.pml} with spin, exhaustively.
 *
 * <p>The correct model must have no counterexample for any property; every mutant must have one
 * (a trail) for each property it is expected to break. Needs {@code spin} and {@code gcc} on the
 * PATH; without them the test fails, it never skips. Plain JUnit 5 and the JDK only.
 *
 * <p>Run by hand: see the header of transfer.pml. {@code -Dmodel.keep=true} keeps the work
 * directory (pan sources, outputs and trails) and prints where it is.
 */
class ProtocolModelTest {

    private static final Duration SPIN_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration GCC_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration PAN_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration BUILD_WAIT = Duration.ofSeconds(240);

    /** pan options shared by every run: deep enough, 2^22 hash slots (exact storage). */
    private static final List<String> PAN_COMMON = List.of("-m100000", "-w22");

    static final String SAFETY = "safety";
    static final String P1 = "p1_at_most_one_execution";
    static final String P2 = "p2_no_write_after_terminal";
    static final String P3 = "p3_no_stale_write";
    static final String P4 = "p4_eventually_terminal";
    static final String P5 = "p5_outcome_matches_provider";
    static final String W1 = "w1_stale_fence_reachable";
    static final String W2 = "w2_killed_worker_recovered";

    /** A model variant: the correct model or one mutant, built from the same file with -D. */
    record Variant(String name, String define, List<String> mustViolate) {
        List<String> spinDefines() {
            return define == null ? List.of() : List.of("-D" + define);
        }
    }

    static final Variant CORRECT = new Variant("correct", null, List.of());
    // Each mutant must have a counterexample for every property listed (each ltl block on its own).
    // Mutants are only built for the ltl runs (one gcc per mutant keeps the class well under two
    // minutes); their assertion (-DSAFETY) runs fail too, see the hand commands in transfer.pml.
    static final Variant NO_FENCE_VERSION =
            new Variant("no-fence-version", "MUTANT_NO_FENCE_VERSION", List.of(P2, P3));
    static final Variant NO_CLAIM_STATUS =
            new Variant("no-claim-status", "MUTANT_NO_CLAIM_STATUS", List.of(P1, P2, P3, P5));
    static final Variant RESEND_WITHOUT_LOOKUP =
            new Variant("resend-without-lookup", "MUTANT_RESEND_WITHOUT_LOOKUP", List.of(P1, P5));
    static final Variant CLAIM_WITHOUT_EXPECTED_VERSION = new Variant(
            "design-claim-status-in", "MUTANT_CLAIM_WITHOUT_EXPECTED_VERSION", List.of(P1, P3, P5));
    static final Variant NO_LEASE_CHECK =
            new Variant("no-lease-check", "MUTANT_NO_LEASE_CHECK", List.of(P1, P5));
    static final Variant NO_EXPIRE_LEASES =
            new Variant("no-expire-leases", "MUTANT_NO_EXPIRE_LEASES", List.of(P4));

    static final List<Variant> VARIANTS = List.of(CORRECT, NO_FENCE_VERSION, NO_CLAIM_STATUS,
            RESEND_WITHOUT_LOOKUP, CLAIM_WITHOUT_EXPECTED_VERSION, NO_LEASE_CHECK, NO_EXPIRE_LEASES);

    /**
     * Compiled verifiers of a variant: assertions only (-DSAFETY -DNOCLAIM, correct model only;
     * null for mutants) and one for the ltl blocks (-DLTL_ONLY: assertions compiled out, so each
     * never claim is judged on its own).
     */
    record Build(Variant variant, Path safetyDir, Path ltlDir) {}

    /** What one pan run reported. */
    record PanResult(Variant variant, String property, long stored, long transitions, int errors,
                     String firstError, Optional<Path> trail, String trailCheck, String output) {
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
        // witnesses: a stale worker is fenced off; a killed worker's transfer is still finished
        for (String witness : List.of(W1, W2)) {
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

    /** DESIGN.md §5 step 2 as written: claim WHERE status IN ('pending','reconciling'). */
    @Test
    void designClaimWithoutExpectedVersionIsCaught() {
        assertCaught(CLAIM_WITHOUT_EXPECTED_VERSION);
    }

    @Test
    void mutantSendingWithoutLeaseCheckIsCaught() {
        assertCaught(NO_LEASE_CHECK);
    }

    @Test
    void mutantThatNeverExpiresLeasesLeavesTransfersUnfinished() {
        assertCaught(NO_EXPIRE_LEASES);
    }

    // ------------------------------------------------------------------ checks

    private static void assertNoCounterexample(PanResult r) {
        assertEquals(0, r.errors(), () -> r.variant().name() + " / " + r.property() + " has a counterexample: "
                + r.firstError() + "\n" + r.output());
        assertTrue(r.stored() > 0, () -> "no states stored?\n" + r.output());
        assertFalse(r.output().contains("max search depth too small"), () -> "search truncated:\n" + r.output());
        assertFalse(r.output().contains("Search not completed"), () -> "search incomplete:\n" + r.output());
    }

    private static void assertCaught(Variant mutant) {
        List<PanResult> results = new ArrayList<>();
        for (String property : mutant.mustViolate()) {
            results.add(run(mutant, property));
        }
        List<String> missed = results.stream().filter(PanResult::holds).map(PanResult::property).toList();
        assertTrue(missed.isEmpty(), () -> "mutant " + mutant.define() + " passes " + missed
                + " -- the model cannot tell it from the correct protocol");
        for (PanResult r : results) {
            assertTrue(r.trail().isPresent(), () -> "no trail for " + r.variant().name() + " / " + r.property()
                    + "\n" + r.output());
        }
    }

    // ------------------------------------------------------------------ spin / gcc / pan

    private static Build build(Variant v) {
        try {
            Path base = Files.createDirectories(workDir.resolve(v.name()));
            Path safety = null;
            if (v.define() == null) {
                safety = Files.createDirectories(base.resolve("safety"));
                Files.copy(model, safety.resolve("transfer.pml"), StandardCopyOption.REPLACE_EXISTING);
                List<String> spinSafety = new ArrayList<>(List.of("spin"));
                spinSafety.addAll(v.spinDefines());
                spinSafety.addAll(List.of("-a", "transfer.pml"));
                mustSucceed(safety, SPIN_TIMEOUT, spinSafety);
                mustSucceed(safety, GCC_TIMEOUT,
                        List.of("gcc", "-O2", "-DSAFETY", "-DNOCLAIM", "-o", "pan", "pan.c"));
            }
            Path ltl = Files.createDirectories(base.resolve("ltl"));
            Files.copy(model, ltl.resolve("transfer.pml"), StandardCopyOption.REPLACE_EXISTING);
            List<String> spinLtl = new ArrayList<>(List.of("spin"));
            spinLtl.addAll(v.spinDefines());
            spinLtl.addAll(List.of("-DLTL_ONLY", "-a", "transfer.pml"));
            mustSucceed(ltl, SPIN_TIMEOUT, spinLtl);
            mustSucceed(ltl, GCC_TIMEOUT, List.of("gcc", "-O2", "-DNFAIR=3", "-o", "pan", "pan.c"));
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
            fail("no assertion build for " + v.name());
        }
        List<String> cmd = new ArrayList<>(List.of("./pan"));
        cmd.addAll(PAN_COMMON);
        if (!safety) {
            cmd.add("-a");
            if (P4.equals(property)) {
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
        String trailCheck = "";
        if (Files.exists(trail)) {
            Path named = dir.resolve(property + ".trail");
            try {
                Files.move(trail, named, StandardCopyOption.REPLACE_EXISTING);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            kept = Optional.of(named);
            trailCheck = replay(v, dir, safety, named);
        }
        PanResult r = new PanResult(v, property, stored, transitions, errorCount, firstError, kept,
                trailCheck, out);
        synchronized (RESULTS) {
            RESULTS.add(r);
        }
        printRow(r);
        return r;
    }

    /** Replays a trail with spin -t, returns e.g. "trail of 87 steps". */
    private static String replay(Variant v, Path dir, boolean safety, Path trail) {
        List<String> cmd = new ArrayList<>(List.of("spin"));
        cmd.addAll(v.spinDefines());
        if (!safety) {
            cmd.add("-DLTL_ONLY");
        }
        cmd.addAll(List.of("-t", "-k", trail.getFileName().toString(), "transfer.pml"));
        String out = exec(dir, SPIN_TIMEOUT, cmd).output();
        Matcher m = Pattern.compile("trail ends after (\\d+) steps").matcher(out);
        return m.find() ? "trail of " + m.group(1) + " steps" : "trail (replay said: " + lastLine(out) + ")";
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

    private static Path locateModel() {
        Path cwd = Path.of("").toAbsolutePath();
        for (Path dir = cwd; dir != null; dir = dir.getParent()) {
            Path candidate = dir.resolve("src/model/transfer.pml");
            if (Files.isRegularFile(candidate)) {
                return candidate;
            }
        }
        return fail("src/model/transfer.pml not found from the working directory " + cwd
                + " (run the test from the project root)");
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
        if (r.variant().define() == null) {
            if (r.property().startsWith("w")) {
                return r.errors() > 0 ? "reachable (witness)" : "NOT REACHABLE";
            }
            return r.holds() ? "holds" : "VIOLATED: " + r.firstError();
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

    private static final String ROW = "| %-24s | %-28s | %12s | %12s | %6s | %s%n";
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
