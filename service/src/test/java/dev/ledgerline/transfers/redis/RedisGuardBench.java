package dev.ledgerline.transfers.redis;

import dev.ledgerline.transfers.provider.ProviderGuards;
import io.quarkus.redis.datasource.ReactiveRedisDataSource;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.vertx.UniHelper;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The guards' A/B (bench/FT-AB.md): the per-call cost of the Redis guard ({@link RedisCommands#guarded}: a timeout and
 * the breaker) and of the provider sends' guards ({@link ProviderGuards#send}: a timeout, a breaker and a bulkhead),
 * each with the test profile's settings, against the operation unguarded. SmallRye Fault Tolerance's variants (its
 * {@code Guard}, {@code TypedGuard} and annotations) left with the dependency; FT-AB.md keeps what they measured.
 *
 * <p>Not part of the suite (the name does not end in Test); run it with {@code bench/ft-ab.sh}. Every variant
 * runs in every round, in a rotated order, on one Vert.x event loop as the service's calls do; two guarded
 * operations: an already completed {@code Uni} (the guard's own cost, nothing else; 64 at a time) and a real {@code GET} to the
 * test's own Redis (the guard next to a round trip, 32 calls in flight). "none" is the operation unguarded.
 */
@QuarkusTest
class RedisGuardBench {

    private static final int ROUNDS = Integer.getInteger("ab.rounds", 7);
    private static final int COMPLETED_CALLS = Integer.getInteger("ab.completed-calls", 200_000);
    private static final int REDIS_CALLS = Integer.getInteger("ab.redis-calls", 20_000);

    @Inject
    RedisCommands commands;

    @Inject
    ProviderGuards providerGuards;

    @Inject
    ReactiveRedisDataSource redis;

    @Inject
    Vertx vertx;

    private Context loop;

    /**
     * One batch: wall and process-CPU nanoseconds per call, event-loop-thread bytes allocated per call, calls that
     * failed (a timeout on a starved machine), and the share of calls that completed before the call returned.
     */
    record Sample(double wallNs, double cpuNs, double bytes, int failed, double synchronous) {
    }

    @Test
    void compareTheGuards() throws Exception {
        Map<String, Function<Supplier<Uni<String>>, Uni<String>>> variants = new LinkedHashMap<>();
        variants.put("none", Supplier::get);
        variants.put("breaker", op -> commands.guarded("bench", () -> UniHelper.toFuture(op.get())));
        variants.put("provider-guards", providerGuards::send);

        Supplier<Uni<String>> completed = () -> Uni.createFrom().item("v");
        Supplier<Uni<String>> redisGet = () -> redis.execute("GET", "bench:ft-ab").map(r -> r == null ? "" : r.toString());
        loop = vertx.getOrCreateContext();

        StringBuilder log = new StringBuilder();
        log.append("load ").append(LocalTime.now().withNano(0)).append(" start ").append(loadAverage()).append('\n');
        for (var v : variants.entrySet()) { // warm-up: JIT and connections, not recorded
            run(v.getValue(), completed, COMPLETED_CALLS, 64);
            run(v.getValue(), redisGet, REDIS_CALLS / 2, 32);
        }
        Map<String, List<Sample>> completedSamples = new LinkedHashMap<>();
        Map<String, List<Sample>> redisSamples = new LinkedHashMap<>();
        List<String> order = new ArrayList<>(variants.keySet());
        for (int round = 0; round < ROUNDS; round++) {
            Collections.rotate(order, 1);
            for (String name : order) {
                completedSamples.computeIfAbsent(name, k -> new ArrayList<>())
                        .add(run(variants.get(name), completed, COMPLETED_CALLS, 64));
                redisSamples.computeIfAbsent(name, k -> new ArrayList<>())
                        .add(run(variants.get(name), redisGet, REDIS_CALLS, 32));
            }
            log.append("load ").append(LocalTime.now().withNano(0)).append(" round ").append(round + 1).append(' ')
                    .append(loadAverage()).append('\n');
        }
        String report = table("completed Uni (" + COMPLETED_CALLS + " calls per batch)", completedSamples)
                + table("Redis GET, 32 in flight (" + REDIS_CALLS + " calls per batch)", redisSamples) + log;
        System.out.println(report);
        Files.createDirectories(Path.of("target"));
        Files.writeString(Path.of("target/ft-ab.md"), report);
    }

    /**
     * {@code calls} guarded operations from the event loop, at most {@code window} in flight and at most {@code window}
     * started per event-loop task (the loop stays free for timers and answers, as in the service).
     */
    private Sample run(Function<Supplier<Uni<String>>, Uni<String>> variant, Supplier<Uni<String>> operation,
                       int calls, int window) throws Exception {
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        CompletableFuture<Sample> done = new CompletableFuture<>();
        loop.runOnContext(ignored -> new Object() {
            final long wall0 = System.nanoTime();
            final long cpu0 = os.getProcessCpuTime();
            final long bytes0 = threads.getCurrentThreadAllocatedBytes();
            int started;
            int finished;
            int failed;
            int synchronous;
            boolean launching;

            void launch() {
                launching = true;
                int issued = 0;
                while (started < calls && started - finished < window && issued < window) {
                    started++;
                    issued++;
                    variant.apply(operation).subscribe().with(item -> finish(false), failure -> finish(true));
                }
                launching = false;
                if (started < calls && started - finished < window) {
                    loop.runOnContext(v -> launch()); // room left: yield the loop first
                }
            }

            void finish(boolean failure) {
                if (Vertx.currentContext() != loop) {
                    loop.runOnContext(v -> finish(failure)); // a completion elsewhere is counted on the loop, like the service's
                    return;
                }
                finished++;
                failed += failure ? 1 : 0;
                synchronous += launching ? 1 : 0;
                if (finished == calls) {
                    done.complete(new Sample((System.nanoTime() - wall0) / (double) calls,
                            (os.getProcessCpuTime() - cpu0) / (double) calls,
                            (threads.getCurrentThreadAllocatedBytes() - bytes0) / (double) calls,
                            failed, synchronous / (double) calls));
                } else if (!launching) {
                    launch();
                }
            }
        }.launch());
        return done.get(5, TimeUnit.MINUTES);
    }

    private static String table(String title, Map<String, List<Sample>> samples) {
        List<Sample> base = samples.get("breaker");
        List<Sample> none = samples.get("none");
        StringBuilder out = new StringBuilder("### ").append(title).append("\n\n")
                .append("| variant | wall ns/call (median) | CPU ns/call (median) | vs breaker, wall (median of rounds, min–max) "
                        + "| vs breaker, CPU | guard's own CPU ns/call (minus none) | bytes/call on the loop | failed calls (all rounds) "
                        + "| completed synchronously |\n")
                .append("|---|---|---|---|---|---|---|---|---|\n");
        for (var e : samples.entrySet()) {
            List<Sample> s = e.getValue();
            List<Double> wallRatio = new ArrayList<>();
            List<Double> cpuRatio = new ArrayList<>();
            List<Double> own = new ArrayList<>();
            for (int i = 0; i < s.size(); i++) {
                wallRatio.add(s.get(i).wallNs() / base.get(i).wallNs());
                cpuRatio.add(s.get(i).cpuNs() / base.get(i).cpuNs());
                own.add(s.get(i).cpuNs() - none.get(i).cpuNs());
            }
            out.append(String.format("| %s | %.0f | %.0f | %.2f (%.2f–%.2f) | %.2f (%.2f–%.2f) | %.0f | %.0f | %d | %.0f %% |%n", e.getKey(),
                    median(s.stream().map(Sample::wallNs).toList()), median(s.stream().map(Sample::cpuNs).toList()),
                    median(wallRatio), Collections.min(wallRatio), Collections.max(wallRatio),
                    median(cpuRatio), Collections.min(cpuRatio), Collections.max(cpuRatio),
                    median(own), median(s.stream().map(Sample::bytes).toList()),
                    s.stream().mapToInt(Sample::failed).sum(), 100 * median(s.stream().map(Sample::synchronous).toList())));
        }
        return out.append('\n').toString();
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    private static String loadAverage() throws Exception {
        String[] parts = Files.readString(Path.of("/proc/loadavg")).split(" ");
        return parts[0] + " " + parts[1] + " " + parts[2];
    }
}
