package dev.ledgerline.transfers.provider;

/**
 * The provider did not give a definitive answer (5xx, unexpected status, garbled body). The payment may
 * have executed: the transfer must be reconciled by lookup, never failed and never blindly resent.
 */
public class ProviderUnknownOutcomeException extends RuntimeException {

    public ProviderUnknownOutcomeException(String message) {
        super(message, null, false, false);
    }
}
