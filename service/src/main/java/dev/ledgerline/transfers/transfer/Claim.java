package dev.ledgerline.transfers.transfer;

import java.time.OffsetDateTime;
import java.util.UUID;

/**
 * A claimed transfer: what the worker needs to send it, the version that fences its final write, and the
 * deadline its send carries — the provider must not execute it later, and nobody acts on the row before it passed.
 */
public record Claim(UUID id, long version, UUID token, String providerReference, long amount, String currency,
                    String iban, String name, OffsetDateTime createdAt,
                    OffsetDateTime leaseExpiresAt, OffsetDateTime sendNotAfter, int sends, TransferStatus claimedFrom) {

    /**
     * The reference's first send: claimed from {@code pending}, which a transfer leaves at its first claim and never
     * re-enters. Every later send is a resend under a key the provider may have executed already.
     */
    public boolean firstSend() {
        return claimedFrom == TransferStatus.PENDING;
    }
}
