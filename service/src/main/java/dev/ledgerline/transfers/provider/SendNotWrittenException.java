package dev.ledgerline.transfers.provider;

/**
 * A send that was never written to the wire because its deadline had passed by the time it would have left
 * the process (it waited in the bulkhead queue, or for a connection). The provider cannot have executed it.
 */
public class SendNotWrittenException extends RuntimeException {

    public SendNotWrittenException(String message) {
        super(message, null, false, false);
    }
}
