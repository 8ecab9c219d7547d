package dev.ledgerline.devstack.sandbox;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * How the sandbox provider misbehaves. Rates are probabilities in [0, 1], drawn per call.
 *
 * <p>Besides answers that come late or wrong, the sandbox models effects that outlive their caller: a send
 * held in transit that the provider applies after the caller's timeout ({@code holdMs}), a send answered
 * with an error and applied later anyway ({@code errorThenExecuteRate}), and lookups that lag behind
 * executions ({@code lookupLagMs}). A held send still honours its {@code Ledgerline-Not-After} deadline
 * at the moment it is applied, as the provider contract requires — by the sandbox's own clock, which
 * {@code clockOffsetMs} can put behind or ahead of the real one.
 *
 * <p>{@code executeBeforeDeadlineMs} opens the in-transit window the service's database rule guards: a held
 * send (first sends at {@code holdRate}, and {@code errorThenExecuteRate} sends) is applied that many ms before
 * its deadline by the sandbox's clock, instead of after {@code holdMs}. It then executes long after its caller
 * gave up, yet inside its deadline, and a lookup lagging {@code lookupLagMs} does not see it yet.
 *
 * @param latencyMs              delay before answering a send, applied after the payment executed
 * @param timeoutRate            the send executes, then the answer never comes in time (held for {@code hangMs})
 * @param rejectRate             the send is definitively rejected, nothing executes
 * @param errorBeforeExecuteRate 503 before anything executes
 * @param errorAfterExecuteRate  the payment executes, then 500
 * @param lookupErrorRate        a lookup answers 503
 * @param idempotent             {@code true}: a repeated reference returns the first result; {@code false}: every send executes again
 * @param hangMs                 how long a "timed out" send holds its answer
 * @param holdMs                 how long a held send travels before the sandbox applies it (and then answers)
 * @param holdRate               share of references whose FIRST send is held {@code holdMs}; later sends are not held
 * @param errorThenExecuteRate   503 at once, and the send is applied {@code holdMs} later all the same
 * @param lookupLagMs            a lookup does not see an execution younger than this (answers 404)
 * @param refuseWith             a 4xx status every send is answered with, nothing executed (0: none)
 * @param clockOffsetMs          the sandbox's clock is the real one plus this (negative: behind); it decides the
 *                               deadline check (applied while its clock is at or before {@code Ledgerline-Not-After})
 *                               and is the {@code Date} header of every send and lookup answer
 * @param executeBeforeDeadlineMs when &gt; 0, a held send is applied this many ms before its deadline (by the sandbox's
 *                               clock; at once if that moment has passed) rather than {@code holdMs} after it arrived;
 *                               a send without a deadline is still held {@code holdMs}
 */
@JsonIgnoreProperties(ignoreUnknown = false)
public record SandboxFaults(Long latencyMs, Double timeoutRate, Double rejectRate, Double errorBeforeExecuteRate,
                            Double errorAfterExecuteRate, Double lookupErrorRate, Boolean idempotent, Long hangMs,
                            Long holdMs, Double holdRate, Double errorThenExecuteRate, Long lookupLagMs,
                            Integer refuseWith, Long clockOffsetMs, Long executeBeforeDeadlineMs) {

    public static final SandboxFaults NONE = new SandboxFaults(0L, 0.0, 0.0, 0.0, 0.0, 0.0, true, 30_000L, 0L, 0.0, 0.0, 0L, 0,
            0L, 0L);

    /** The faults without any in-transit behaviour. */
    public SandboxFaults(Long latencyMs, Double timeoutRate, Double rejectRate, Double errorBeforeExecuteRate,
                         Double errorAfterExecuteRate, Double lookupErrorRate, Boolean idempotent, Long hangMs) {
        this(latencyMs, timeoutRate, rejectRate, errorBeforeExecuteRate, errorAfterExecuteRate, lookupErrorRate, idempotent,
                hangMs, null, null, null, null, null, null, null);
    }

    /** The faults with a true clock and held sends applied {@code holdMs} after they arrived. */
    public SandboxFaults(Long latencyMs, Double timeoutRate, Double rejectRate, Double errorBeforeExecuteRate,
                         Double errorAfterExecuteRate, Double lookupErrorRate, Boolean idempotent, Long hangMs,
                         Long holdMs, Double holdRate, Double errorThenExecuteRate, Long lookupLagMs, Integer refuseWith) {
        this(latencyMs, timeoutRate, rejectRate, errorBeforeExecuteRate, errorAfterExecuteRate, lookupErrorRate, idempotent,
                hangMs, holdMs, holdRate, errorThenExecuteRate, lookupLagMs, refuseWith, null, null);
    }

    /** These faults, with sends and lookups that outlive their callers. */
    public SandboxFaults inTransit(long holdMs, double holdRate, double errorThenExecuteRate, long lookupLagMs) {
        return new SandboxFaults(latencyMs, timeoutRate, rejectRate, errorBeforeExecuteRate, errorAfterExecuteRate,
                lookupErrorRate, idempotent, hangMs, holdMs, holdRate, errorThenExecuteRate, lookupLagMs, refuseWith,
                clockOffsetMs, executeBeforeDeadlineMs);
    }

    /** These faults, with the sandbox's clock {@code offsetMs} off the real one (negative: behind). */
    public SandboxFaults withClockOffset(long offsetMs) {
        return new SandboxFaults(latencyMs, timeoutRate, rejectRate, errorBeforeExecuteRate, errorAfterExecuteRate,
                lookupErrorRate, idempotent, hangMs, holdMs, holdRate, errorThenExecuteRate, lookupLagMs, refuseWith,
                offsetMs, executeBeforeDeadlineMs);
    }

    /** These faults, with held sends applied {@code marginMs} before their deadline. */
    public SandboxFaults executingBeforeDeadline(long marginMs) {
        return new SandboxFaults(latencyMs, timeoutRate, rejectRate, errorBeforeExecuteRate, errorAfterExecuteRate,
                lookupErrorRate, idempotent, hangMs, holdMs, holdRate, errorThenExecuteRate, lookupLagMs, refuseWith,
                clockOffsetMs, marginMs);
    }

    /** Fields left out of a PUT keep their defaults. */
    public SandboxFaults withDefaults() {
        return new SandboxFaults(
                latencyMs == null ? NONE.latencyMs : latencyMs,
                timeoutRate == null ? NONE.timeoutRate : timeoutRate,
                rejectRate == null ? NONE.rejectRate : rejectRate,
                errorBeforeExecuteRate == null ? NONE.errorBeforeExecuteRate : errorBeforeExecuteRate,
                errorAfterExecuteRate == null ? NONE.errorAfterExecuteRate : errorAfterExecuteRate,
                lookupErrorRate == null ? NONE.lookupErrorRate : lookupErrorRate,
                idempotent == null ? NONE.idempotent : idempotent,
                hangMs == null ? NONE.hangMs : hangMs,
                holdMs == null ? NONE.holdMs : holdMs,
                holdRate == null ? NONE.holdRate : holdRate,
                errorThenExecuteRate == null ? NONE.errorThenExecuteRate : errorThenExecuteRate,
                lookupLagMs == null ? NONE.lookupLagMs : lookupLagMs,
                refuseWith == null ? NONE.refuseWith : refuseWith,
                clockOffsetMs == null ? NONE.clockOffsetMs : clockOffsetMs,
                executeBeforeDeadlineMs == null ? NONE.executeBeforeDeadlineMs : executeBeforeDeadlineMs);
    }
}
