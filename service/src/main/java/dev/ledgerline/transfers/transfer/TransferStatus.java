package dev.ledgerline.transfers.transfer;

import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/**
 * The state machine of a transfer. {@code sent}, {@code failed} and {@code cancelled} are terminal; {@code reconciling}
 * means "the provider's answer is unknown" and is resolved only by a lookup, never by a blind resend. {@code cancelled}
 * is reached from {@code pending} only, by its owner, before any claim: nothing was sent.
 */
public enum TransferStatus {
    PENDING, PROCESSING, SENT, FAILED, RECONCILING, CANCELLED;

    /** The column's spelling, built once: every row written and every view answered names a status. */
    private final String db = name().toLowerCase(Locale.ROOT);

    public String db() {
        return db;
    }

    /** The status a column (or a kept entry) spells, in any case; the lower case the service writes is matched first. */
    public static TransferStatus fromDb(String value) {
        return switch (value) {
            case "pending" -> PENDING;
            case "processing" -> PROCESSING;
            case "sent" -> SENT;
            case "failed" -> FAILED;
            case "reconciling" -> RECONCILING;
            case "cancelled" -> CANCELLED;
            default -> valueOf(value.toUpperCase(Locale.ROOT));
        };
    }

    public boolean isTerminal() {
        return this == SENT || this == FAILED || this == CANCELLED;
    }

    /**
     * The transitions the pipeline may make; {@code transfer_events} must be a path through these.
     * {@code reconciling → reconciling} is the reconciler parking a transfer for an operator, or the adoption of a
     * database server that may have lost commits; {@code pending → reconciling} is that adoption too: a transfer that
     * may have been sent by a claim the database forgot is looked up before it is sent.
     */
    public Set<TransferStatus> next() {
        return switch (this) {
            case PENDING -> EnumSet.of(PROCESSING, SENT, FAILED, RECONCILING, CANCELLED);
            case RECONCILING -> EnumSet.of(PROCESSING, SENT, FAILED, RECONCILING);
            case PROCESSING -> EnumSet.of(SENT, FAILED, RECONCILING);
            case SENT, FAILED, CANCELLED -> EnumSet.noneOf(TransferStatus.class);
        };
    }
}
