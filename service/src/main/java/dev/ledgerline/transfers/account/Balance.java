package dev.ledgerline.transfers.account;

/** One account of a principal: what was posted to it and what its open transfers hold, in minor units. */
public record Balance(String currency, long posted, long held) {

    /** What a new transfer may still take: posted less held, never negative (the account's CHECK, V12). */
    public long available() {
        return posted - held;
    }
}
