package dev.ledgerline.transfers.account;

import java.time.OffsetDateTime;
import java.util.UUID;

/**
 * One entry of a principal's ledger: an {@code opening}, a {@code credit}, or a transfer's {@code hold}, {@code post}
 * or {@code release}. {@code postedChange} is the entry's leg on the customer's account (the other leg, on the
 * currency's settlement account, is its negation); {@code heldChange} what it moved in {@code held}.
 */
public record LedgerEntry(long id, String kind, String currency, long amount, long postedChange, long heldChange,
                          UUID transferId, UUID creditId, OffsetDateTime at) {
}
