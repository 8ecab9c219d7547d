package dev.ledgerline.transfers.faults;

import java.util.ArrayList;
import java.util.List;

/**
 * Every request the load driver made, in the order the answers came back: who, which key, which body
 * (its amount is its fingerprint — a changed body is a changed amount), which instance, and how it ended;
 * plus every client that died of something other than an answer, which is a finding in itself.
 */
final class History {

    /**
     * How a request ended. {@code UNKNOWN} is only what the contract leaves open: a {@code 503} with
     * {@code Retry-After}, a client that gave up waiting, or a connection the suite cut by killing or
     * pausing the instance. Any other answer the contract does not name is {@code UNEXPECTED}.
     */
    enum Outcome { CREATED, REPLAYED, REUSED_422, IN_USE_409, REJECTED_4XX, UNKNOWN, UNEXPECTED }

    /** Why a request's outcome is unknown, so the checker can refuse an excuse the contract does not give. */
    enum Unknown { RETRY_LATER_503, CLIENT_TIMEOUT, CONNECTION_BROKEN }

    /**
     * @param status     the HTTP status, or -1 when none came (client timeout, refused connection)
     * @param transferId the id in a 201 answer, else {@code null}
     * @param why        for an {@code UNKNOWN} outcome, why it is unknown; else {@code null}
     */
    record Request(String principal, String key, long amount, String instance, long startedNanos, long endedNanos,
                   Outcome outcome, int status, String transferId, String note, Unknown why) {
    }

    private final List<Request> requests = new ArrayList<>();
    private final List<String> deadClients = new ArrayList<>();

    synchronized void add(Request request) {
        requests.add(request);
    }

    synchronized List<Request> requests() {
        return List.copyOf(requests);
    }

    /** A client thread ended by an exception: its intents stopped being exercised, so the run is weaker than it looks. */
    synchronized void clientDied(String principal, Throwable cause) {
        deadClients.add(principal + ": " + cause);
    }

    synchronized List<String> deadClients() {
        return List.copyOf(deadClients);
    }
}
