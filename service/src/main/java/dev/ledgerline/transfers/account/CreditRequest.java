package dev.ledgerline.transfers.account;

/**
 * The body of {@code POST /v1/accounts/{principal}/credits}, validated: an amount in minor units, its currency, and
 * the booking service's reference for the incoming money (its statement line, its payment id).
 */
public record CreditRequest(long amount, String currency, String reference) {

    /** The longest reference, in code points. */
    public static final int MAX_REFERENCE_LENGTH = 140;
}
