package dev.ledgerline.transfers.account;

import java.time.OffsetDateTime;
import java.util.UUID;

/** Incoming money booked to a principal's account, as stored; {@code requestFingerprint} decides a key's replays. */
public record Credit(UUID id, String principal, long amount, String currency, String reference,
                     String requestFingerprint, OffsetDateTime createdAt) {
}
