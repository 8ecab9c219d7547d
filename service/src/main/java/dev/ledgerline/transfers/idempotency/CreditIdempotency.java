package dev.ledgerline.transfers.idempotency;

import dev.ledgerline.transfers.account.AccountRepository;
import dev.ledgerline.transfers.account.Credit;
import dev.ledgerline.transfers.account.CreditRequest;
import dev.ledgerline.transfers.problem.ProblemException;
import dev.ledgerline.transfers.problem.ProblemType;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.UUID;

/**
 * The duplicate decision for credits, with the transfers' meaning of an {@link IdempotencyKey}: the first request
 * under a key books, a repeat with the same body replays the original, another body is {@code 422}. The key belongs
 * to the booking service (the token's subject). PostgreSQL alone decides: the credit, its key and the money are
 * written by one statement, so there is no moment where a key is taken and its credit not yet readable. A repeat
 * arriving while the first is being written waits for that commit on the key's unique index and then replays it,
 * which is why a credit is never answered {@code 409}.
 */
@ApplicationScoped
public class CreditIdempotency {

    /** The credit and whether it is a replay of an earlier request's. */
    public record Booked(Credit credit, boolean replayed) {
    }

    private final AccountRepository accounts;

    public CreditIdempotency(AccountRepository accounts) {
        this.accounts = accounts;
    }

    public Uni<Booked> book(String createdBy, IdempotencyKey key, String principal, CreditRequest request) {
        String fingerprint = Fingerprint.of(principal, request);
        return accounts.credit(UUID.randomUUID(), principal, request.amount(), request.currency(), request.reference(),
                        createdBy, key.value(), fingerprint)
                .flatMap(booked -> booked != null ? Uni.createFrom().item(new Booked(booked, false))
                        : accounts.findCredit(createdBy, key.value()).map(original -> {
                            if (original == null) {
                                throw new IllegalStateException("conflict on (created_by, idempotency_key) without a row");
                            }
                            if (!original.requestFingerprint().equals(fingerprint)) {
                                throw new ProblemException(ProblemType.IDEMPOTENCY_KEY_REUSED,
                                        "This Idempotency-Key was already used with a different request body; use a new key for a new credit.");
                            }
                            return new Booked(original, true);
                        }));
    }
}
