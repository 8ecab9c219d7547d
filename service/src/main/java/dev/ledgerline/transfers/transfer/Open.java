package dev.ledgerline.transfers.transfer;

/**
 * How many transfers in an open status the pipeline still works on, and how long ago the oldest of them was
 * created; and how many more are parked for an operator (reconciling only), which neither count nor age includes.
 */
public record Open(TransferStatus status, long count, double oldestSeconds, long parked) {
}
