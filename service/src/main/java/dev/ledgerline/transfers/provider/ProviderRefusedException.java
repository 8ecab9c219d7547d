package dev.ledgerline.transfers.provider;

/**
 * The provider answered a send with a 4xx it does not explain as a rejection (401, 403, 404, 429, …; not 409, which says a request under the key is still in progress).
 * Nothing says whether the payment executed, so it is an unknown outcome like any other; but the reconciler
 * counts these per transfer ({@code ledgerline.pipeline.max-refused-sends}) so that a provider refusing every
 * send cannot keep a transfer looping lookup → resend without end.
 */
public class ProviderRefusedException extends ProviderUnknownOutcomeException {

    private final int status;

    public ProviderRefusedException(int status) {
        super("provider refused a send with " + status);
        this.status = status;
    }

    public int status() {
        return status;
    }
}
