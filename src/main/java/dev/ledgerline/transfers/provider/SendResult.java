package dev.ledgerline.transfers.provider;

/** A definitive answer to a send: the provider executed the payment, or rejected it for a reason. */
public record SendResult(boolean executed, String reason) {

    public static SendResult completed() {
        return new SendResult(true, null);
    }

    public static SendResult rejected(String reason) {
        return new SendResult(false, reason);
    }
}
