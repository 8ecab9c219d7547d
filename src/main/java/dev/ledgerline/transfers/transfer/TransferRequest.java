package dev.ledgerline.transfers.transfer;

/** A validated, normalised {@code POST /v1/transfers} body. */
public record TransferRequest(long amount, String currency, Destination destination, String description) {

    public record Destination(String iban, String name) {
    }
}
