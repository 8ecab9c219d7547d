package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.account.Balance;
import dev.ledgerline.transfers.account.Credit;
import dev.ledgerline.transfers.account.LedgerEntry;
import dev.ledgerline.transfers.service.AccountService;

import java.time.OffsetDateTime;
import java.util.List;
import java.util.UUID;

/** The bodies of the account endpoints (openapi.yaml {@code Balances}, {@code LedgerEntryPage}, {@code Credit}). */
public final class AccountViews {

    private AccountViews() {
    }

    public record BalanceView(String currency, long posted, long held, long available) {
        static BalanceView of(Balance b) {
            return new BalanceView(b.currency(), b.posted(), b.held(), b.available());
        }
    }

    public record Balances(List<BalanceView> balances) {
        static Balances of(List<Balance> balances) {
            return new Balances(balances.stream().map(BalanceView::of).toList());
        }
    }

    /** An entry; {@code id} is a string so a client never does arithmetic on it. */
    public record EntryView(String id, String kind, String currency, long amount, long postedChange, long heldChange,
                            UUID transferId, UUID creditId, OffsetDateTime at) {
        static EntryView of(LedgerEntry e) {
            return new EntryView(Long.toString(e.id()), e.kind(), e.currency(), e.amount(), e.postedChange(),
                    e.heldChange(), e.transferId(), e.creditId(), e.at());
        }
    }

    /** A page of entries, newest first; {@code nextCursor} is null on the last page. */
    public record EntryPage(List<EntryView> items, String nextCursor) {
        static EntryPage of(AccountService.EntryPage page) {
            return new EntryPage(page.rows().stream().map(EntryView::of).toList(),
                    page.continueAfter() == null ? null : Long.toString(page.continueAfter().id()));
        }
    }

    public record CreditView(UUID id, String principal, long amount, String currency, String reference,
                             OffsetDateTime createdAt) {
        static CreditView of(Credit c) {
            return new CreditView(c.id(), c.principal(), c.amount(), c.currency(), c.reference(), c.createdAt());
        }
    }
}
