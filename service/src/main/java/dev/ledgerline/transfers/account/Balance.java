package dev.ledgerline.transfers.account;

/** One account of a principal: what was posted to it and what its open transfers hold, in minor units. */
public record Balance(String currency, long posted, long held) {

    /**
     * What a new transfer may still take: posted less held. Negative only while the account owes what re-created
     * transfers took past its funds (V13); the account's CHECK then refuses every new hold.
     */
    public long available() {
        return posted - held;
    }
}
