package dev.ledgerline.transfers.provider;

/**
 * A definitive answer to a send: the provider executed the payment, or rejected it for a reason.
 *
 * <p>{@code status} is the provider's HTTP status of a rejection ({@code 0} when the adapter has none to give).
 * It matters because a rejection is not equally final everywhere: a {@code 402} always means "not executed",
 * while a {@code 400} or {@code 422} is final only when it answers the <em>first</em> send of a reference. To a
 * resend, real providers answer them for a key they already executed (a key reused with another body, Stripe's
 * {@code idempotency_error}), so there they say nothing about whether money moved: see
 * {@link #finalOnlyOnFirstSend()}.
 *
 * @param executed {@code true}: money moved, by this send or an earlier one under the same reference
 * @param reason   why it was rejected, stripped of control characters and at most {@link ProviderText#MAX_LENGTH}
 *                 characters ({@code null} when executed)
 * @param status   the provider's HTTP status for a rejection; {@code 0} when there is none
 */
public record SendResult(boolean executed, String reason, int status) {

    /** A result without a provider status: a completion, or a rejection the adapter vouches for as final. */
    public SendResult(boolean executed, String reason) {
        this(executed, reason, 0);
    }

    public static SendResult completed() {
        return new SendResult(true, null, 0);
    }

    /** A rejection that is final whatever the send it answers: nothing executed, and nothing will. */
    public static SendResult rejected(String reason) {
        return new SendResult(false, reason, 0);
    }

    /** A rejection answered with {@code status}; for 400 and 422 see {@link #finalOnlyOnFirstSend()}. */
    public static SendResult rejected(String reason, int status) {
        return new SendResult(false, reason, status);
    }

    /**
     * A {@code 400} or {@code 422} rejection: definitive when it answers the first send of a reference (claimed
     * from {@code pending}), and an unknown outcome when it answers a resend, for which the lookup decides. The
     * provider contract ({@code provider-api.yaml}, obligation {@code refusal-means-not-executed}) lets a provider
     * answer them to a reused key only if it did not execute, but providers in the field do not keep that.
     */
    public boolean finalOnlyOnFirstSend() {
        return !executed && (status == 400 || status == 422);
    }
}
