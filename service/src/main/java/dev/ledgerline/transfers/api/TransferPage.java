package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.service.TransferService;
import dev.ledgerline.transfers.transfer.Transfer;

import java.util.List;
import java.util.function.Function;

/**
 * One page of a listing, or the lookup's zero or one transfer; {@code nextCursor} is null on the last page
 * (openapi.yaml {@code TransferPage}).
 */
public record TransferPage(List<TransferView> items, String nextCursor) {

    /** {@code position}: where the listing's order places a row, {@link PageCursor#byUpdate} or {@link PageCursor#byCreation}. */
    static TransferPage of(TransferService.Page page, Function<Transfer, PageCursor> position) {
        return new TransferPage(page.rows().stream().map(TransferView::of).toList(),
                page.continueAfter() == null ? null : position.apply(page.continueAfter()).encode());
    }
}
