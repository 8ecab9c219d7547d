package dev.ledgerline.transfers.faults;

import java.util.ArrayList;
import java.util.List;

/**
 * Every request the load driver made, in the order the answers came back: who, which key, which body
 * (its amount is its fingerprint — a changed body is a changed amount), which instance, and how it ended.
 */
final class History {

    /** How a request ended; {@code UNKNOWN} when the client gave up or got no definitive answer. */
    enum Outcome { CREATED, REPLAYED, REUSED_422, IN_USE_409, REJECTED_4XX, UNKNOWN }

    /**
     * @param status     the HTTP status, or -1 when none came (client timeout, refused connection)
     * @param transferId the id in a 201 answer, else {@code null}
     */
    record Request(String principal, String key, long amount, String instance, long startedNanos, long endedNanos,
                   Outcome outcome, int status, String transferId, String note) {
    }

    private final List<Request> requests = new ArrayList<>();

    synchronized void add(Request request) {
        requests.add(request);
    }

    synchronized List<Request> requests() {
        return List.copyOf(requests);
    }
}
