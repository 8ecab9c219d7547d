package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.service.TransferService;

import java.util.List;

/** One page of the operations listing; {@code nextCursor} is null on the last page (openapi.yaml {@code TransferPage}). */
public record TransferPage(List<TransferView> items, String nextCursor) {

    static TransferPage of(TransferService.Page page) {
        return new TransferPage(page.rows().stream().map(TransferView::of).toList(),
                page.continueAfter() == null ? null : ListQuery.cursor(page.continueAfter()));
    }
}
