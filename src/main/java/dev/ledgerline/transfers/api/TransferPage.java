package dev.ledgerline.transfers.api;

import java.util.List;

/** One page of the operations listing; {@code nextCursor} is null on the last page (openapi.yaml {@code TransferPage}). */
public record TransferPage(List<TransferView> items, String nextCursor) {
}
