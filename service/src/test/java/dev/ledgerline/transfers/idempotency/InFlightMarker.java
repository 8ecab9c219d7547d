package dev.ledgerline.transfers.idempotency;

/**
 * What {@link IdempotencyService} puts in Redis while a first request with a key is running, built with
 * the service's own key and entry formats so a test can make a key look in flight without racing.
 */
public final class InFlightMarker {

    private InFlightMarker() {
    }

    /** The Redis key for this principal's Idempotency-Key header value. */
    public static String redisKey(String principal, String idempotencyKeyHeader) {
        return IdempotencyService.redisKey(principal, IdempotencyKey.parse(idempotencyKeyHeader));
    }

    /** An in-flight marker as a first request would leave it. */
    public static String value() {
        return IdempotencyEntry.inFlight("planted-by-a-test", "0".repeat(64)).encode();
    }
}
