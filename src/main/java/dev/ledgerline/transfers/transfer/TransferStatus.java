package dev.ledgerline.transfers.transfer;

import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/**
 * The state machine of a transfer. {@code sent} and {@code failed} are terminal; {@code reconciling}
 * means "the provider's answer is unknown" and is resolved only by a lookup, never by a blind resend.
 */
public enum TransferStatus {
    PENDING, PROCESSING, SENT, FAILED, RECONCILING;

    public String db() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static TransferStatus fromDb(String value) {
        return valueOf(value.toUpperCase(Locale.ROOT));
    }

    public boolean isTerminal() {
        return this == SENT || this == FAILED;
    }

    /**
     * The transitions the pipeline may make; {@code transfer_events} must be a path through these.
     * {@code reconciling → reconciling} is the reconciler parking a transfer for an operator.
     */
    public Set<TransferStatus> next() {
        return switch (this) {
            case PENDING -> EnumSet.of(PROCESSING, SENT, FAILED);
            case RECONCILING -> EnumSet.of(PROCESSING, SENT, FAILED, RECONCILING);
            case PROCESSING -> EnumSet.of(SENT, FAILED, RECONCILING);
            case SENT, FAILED -> EnumSet.noneOf(TransferStatus.class);
        };
    }
}
