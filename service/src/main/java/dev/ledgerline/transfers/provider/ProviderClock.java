package dev.ledgerline.transfers.provider;

import jakarta.inject.Singleton;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

/**
 * How far the provider's clock is from this JVM's, as its answers tell: every send and lookup answer carries a
 * {@code Date} header (RFC 9110), which {@link ProviderHttp} hands in here with the moment the request left
 * and how long the exchange took. The provider stamped {@code Date} somewhere inside that round trip, so the
 * sample is taken at its local midpoint.
 *
 * <p>Resolution: {@code Date} has whole seconds, truncated, so the provider's clock read between {@code Date} and
 * {@code Date + 1 s}. The offset adds half a second to centre that error: {@code offset = Date + 500 ms - midpoint},
 * and the true offset lies within {@link Sample#uncertaintyMillis()} = 500 ms + half the round trip of it. An
 * exchange longer than {@link #MAX_ROUND_TRIP} (a held or slow send) is not sampled: its midpoint says too little.
 * The latest sample wins, so a step of the provider's clock shows at its next answer.
 *
 * <p>Why it matters: a provider clock <em>behind</em> ours executes a send after the deadline the service set in
 * {@code Ledgerline-Not-After}; ahead, it only refuses early. Thread-safe; read it from any thread.
 */
@Singleton
public class ProviderClock {

    /** Exchanges slower than this are not sampled; the midpoint's own error would exceed the header's resolution. */
    public static final Duration MAX_ROUND_TRIP = Duration.ofMillis(500);

    /**
     * The most a reading can be off while the clocks agree exactly: its offset (half a second of {@code Date}'s
     * resolution plus half the round trip) and its uncertainty (the same again), plus a millisecond of rounding in
     * each. A skew bound checked against
     * readings must exceed it, or it would hold sends for clocks that agree.
     */
    public static final Duration WORST_READING_AT_ZERO_SKEW = Duration.ofSeconds(1).plus(MAX_ROUND_TRIP).plusMillis(2);

    private static final long HALF_A_SECOND = 500;

    /**
     * One reading of the provider's clock.
     *
     * @param offsetMillis      provider clock minus local clock (negative: the provider is behind)
     * @param uncertaintyMillis the true offset is within this of {@code offsetMillis}
     * @param at                the local instant of the reading (the exchange's midpoint)
     */
    public record Sample(long offsetMillis, long uncertaintyMillis, Instant at) {
    }

    private final AtomicReference<Sample> last = new AtomicReference<>();

    /**
     * Records one answer's {@code Date}; {@code sentAt} is the local instant the request left and {@code roundTrip}
     * how long until its answer arrived. Returns whether it was taken as a sample.
     */
    public boolean record(Instant providerDate, Instant sentAt, Duration roundTrip) {
        if (providerDate == null || roundTrip.isNegative() || roundTrip.compareTo(MAX_ROUND_TRIP) > 0) {
            return false;
        }
        Instant midpoint = sentAt.plus(roundTrip.dividedBy(2));
        long offset = Duration.between(midpoint, providerDate).toMillis() + HALF_A_SECOND;
        last.set(new Sample(offset, HALF_A_SECOND + roundTrip.toMillis() / 2 + 1, midpoint));
        return true;
    }

    /** The latest reading, or empty before the provider first answered with a {@code Date}. */
    public Optional<Sample> last() {
        return Optional.ofNullable(last.get());
    }

    /** Provider clock minus local clock, in ms, by the latest reading; 0 before any (see {@link #lastSampleAt()}). */
    public long offsetMillis() {
        Sample sample = last.get();
        return sample == null ? 0 : sample.offsetMillis();
    }

    /** When the latest reading was taken; empty before any, when {@link #offsetMillis()} means nothing. */
    public Optional<Instant> lastSampleAt() {
        return last().map(Sample::at);
    }
}
