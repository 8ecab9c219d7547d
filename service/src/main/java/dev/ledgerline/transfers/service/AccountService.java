package dev.ledgerline.transfers.service;

import dev.ledgerline.transfers.account.AccountRepository;
import dev.ledgerline.transfers.account.Balance;
import dev.ledgerline.transfers.account.CreditRequest;
import dev.ledgerline.transfers.account.LedgerEntry;
import dev.ledgerline.transfers.idempotency.CreditIdempotency;
import dev.ledgerline.transfers.idempotency.IdempotencyKey;
import dev.ledgerline.transfers.ratelimit.RateLimiter;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.List;
import java.util.function.Supplier;

/**
 * The caller's balances and ledger, and credits booked by an internal service: admission (the caller's rate limit),
 * then the read or the idempotent booking. A principal reads only its own accounts.
 */
@ApplicationScoped
public class AccountService {

    /** One page of entries; {@code continueAfter} is the last one when more may follow. */
    public record EntryPage(List<LedgerEntry> rows, LedgerEntry continueAfter) {
    }

    /** A credit request as read from HTTP: the key and the validated body. */
    public record CreditSubmission(IdempotencyKey key, CreditRequest request) {
    }

    private final AccountRepository accounts;
    private final CreditIdempotency credits;
    private final RateLimiter limiter;

    public AccountService(AccountRepository accounts, CreditIdempotency credits, RateLimiter limiter) {
        this.accounts = accounts;
        this.credits = credits;
        this.limiter = limiter;
    }

    public Uni<List<Balance>> balances(String principal) {
        return limiter.admit(principal, RateLimiter.Kind.READ).chain(() -> accounts.balances(principal));
    }

    /** Entries older than the entry {@code beforeId} (the previous page's last), newest first. */
    public Uni<EntryPage> entries(String principal, long beforeId, int limit) {
        return limiter.admit(principal, RateLimiter.Kind.READ)
                .chain(() -> accounts.entries(principal, beforeId, limit + 1))
                .map(rows -> rows.size() > limit ? new EntryPage(rows.subList(0, limit), rows.get(limit - 1))
                        : new EntryPage(rows, null));
    }

    /** Books a credit to {@code principal} under the booking service's key; parsed only once the caller is admitted. */
    public Uni<CreditIdempotency.Booked> credit(String createdBy, String principal, Supplier<CreditSubmission> read) {
        return limiter.admit(createdBy, RateLimiter.Kind.WRITE).chain(() -> {
            CreditSubmission submission = read.get();
            return credits.book(createdBy, submission.key(), principal, submission.request());
        });
    }
}
