package dev.ledgerline.transfers.provider;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * How the sandbox provider misbehaves. Rates are probabilities in [0, 1], drawn per call.
 *
 * @param latencyMs              delay before answering a send, applied after the payment executed
 * @param timeoutRate            the send executes, then the answer never comes in time (held for {@code hangMs})
 * @param rejectRate             the send is definitively rejected, nothing executes
 * @param errorBeforeExecuteRate 503 before anything executes
 * @param errorAfterExecuteRate  the payment executes, then 500
 * @param lookupErrorRate        a lookup answers 503
 * @param idempotent             {@code true}: a repeated reference returns the first result; {@code false}: every send executes again
 * @param hangMs                 how long a "timed out" send holds its answer
 */
@JsonIgnoreProperties(ignoreUnknown = false)
public record SandboxFaults(Long latencyMs, Double timeoutRate, Double rejectRate, Double errorBeforeExecuteRate,
                            Double errorAfterExecuteRate, Double lookupErrorRate, Boolean idempotent, Long hangMs) {

    public static final SandboxFaults NONE = new SandboxFaults(0L, 0.0, 0.0, 0.0, 0.0, 0.0, true, 30_000L);

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
                hangMs == null ? NONE.hangMs : hangMs);
    }
}
