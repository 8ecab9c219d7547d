package dev.ledgerline.transfers.faults;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Checks a recorded history against the final database state and every order the provider saw, after the
 * faults healed and the transfers had a bounded time to settle. It counts money, not rows: every execution
 * at the provider must belong to exactly one transfer, match that transfer's row and the client's request,
 * and add up to the provider's own total. Each finding names the invariant it breaks ({@link Breach}), and
 * {@code CheckerTest} feeds it one broken service per breach to show it is caught.
 */
final class Checker {

    /** The legal transitions of transfer_events (README "How a transfer moves"): anything else is a violation. */
    static final Map<String, Set<String>> LEGAL = Map.of(
            "pending", Set.of("processing"),
            "processing", Set.of("sent", "failed", "reconciling"),
            "reconciling", Set.of("processing", "sent", "failed", "reconciling"),
            "sent", Set.of(),
            "failed", Set.of());

    /** Every invariant the checker holds a service to, each with the sentence a report names it by. */
    enum Breach {
        TWO_TRANSFERS_FOR_ONE_KEY("two transfers hold one (principal, key)"),
        DUPLICATE_EXECUTION("a transfer's money moved more than once"),
        SENT_WITHOUT_ONE_EXECUTION("a sent transfer did not execute exactly once"),
        FAILED_BUT_EXECUTED("a failed transfer moved money"),
        FAILED_WITHOUT_REJECTION("a transfer failed although the provider never rejected it"),
        UNRESOLVED("a transfer is not final after the settle time"),
        UNOWNED_REFERENCE("the provider was paid under a reference no transfer holds"),
        EXECUTIONS_UNACCOUNTED("the provider's execution count differs from the sum over the transfers"),
        WRONG_PAYMENT("the provider executed an order that differs from the transfer's row"),
        SENT_WITHOUT_DEADLINE("a send reached the provider without its Ledgerline-Not-After deadline"),
        EXECUTED_UNDER_ANOTHER_DEADLINE("the executed send's deadline is not the one the transfer's latest claim stored"),
        ROW_DIFFERS_FROM_REQUEST("a stored transfer differs from every request sent under its key"),
        LOST_CREATED("a 201 named a transfer that does not exist"),
        CREATED_FOR_ANOTHER_TRANSFER("a 201 named a transfer the key does not hold, or a different body"),
        TWO_CREATED_FOR_ONE_KEY("a key was answered 'created' twice (a replay without Idempotent-Replayed)"),
        WRONG_422("a 422 for a key that holds nothing, or that holds this very body"),
        UNEXPLAINED_409("a 409 while no other request for the key could be in flight"),
        UNEXCUSED_UNKNOWN("an outcome counted as unknown that the contract does not leave open"),
        UNEXPECTED_ANSWER("an answer the contract does not give for this request"),
        ORPHAN_TRANSFER("a transfer under a key no client sent"),
        ILLEGAL_HISTORY("a transfer's events are not a path of the state machine"),
        DEAD_CLIENT("a simulated client died of an exception"),
        TOO_LITTLE_LOAD("the scenario made fewer transfers than it needs to mean anything");

        final String sentence;

        Breach(String sentence) {
            this.sentence = sentence;
        }
    }

    record Violation(Breach breach, String detail) {
        @Override
        public String toString() {
            return breach + " (" + breach.sentence + "): " + detail;
        }
    }

    /** A row as stored; {@code sendNotAfter} is the deadline its latest claim gave the send ({@code null} if never claimed). */
    record Transfer(String id, String userId, String key, long amount, String currency, String iban, String name,
                    String status, String reference, java.time.Instant sendNotAfter) {
    }

    record Event(long version, String from, String to, String actor, String reason) {
    }

    /** What the provider did with a send it applied. */
    enum OrderOutcome { EXECUTED, REJECTED, EXPIRED }

    /** One send as the provider applied it: what it was asked to pay, by when, and what it did. */
    record Order(String reference, long amount, String currency, String iban, String name, java.time.Instant notAfter,
                 OrderOutcome outcome) {
    }

    /**
     * Everything observed in one scenario.
     *
     * @param providerExecutions executions the provider itself counted during the scenario
     * @param brokenInstances    instance ids the scenario killed or paused: a broken connection to them is unknown,
     *                           to any other instance it is a finding
     */
    record Facts(List<Transfer> transfers, Map<String, List<Event>> events, List<History.Request> requests,
                 List<String> deadClients, List<Order> orders, long providerExecutions, Set<String> brokenInstances) {
    }

    /** The per-scenario table row and the violations found. */
    record Report(String scenario, int requests, int unknownRequests, int transfers, int failed, long executions,
                  long providerExecutions, long duplicates, long fencedMetrics, long fencedLogs, int unresolved,
                  List<Violation> violations, String evidence) {

        static String header() {
            return String.format("%-22s %8s %8s %9s %7s %10s %10s %10s %14s %11s %10s %10s  %s",
                    "scenario", "requests", "unknown", "transfers", "failed", "executions", "prov.execs", "duplicates",
                    "fenced(metric)", "fenced(log)", "unresolved", "violations", "fault landed");
        }

        String row() {
            return String.format("%-22s %8d %8d %9d %7d %10d %10d %10d %14d %11d %10d %10d  %s", scenario, requests,
                    unknownRequests, transfers, failed, executions, providerExecutions, duplicates, fencedMetrics, fencedLogs,
                    unresolved, violations.size(), evidence);
        }

        Report withFencing(long metric, long logs, String landed) {
            return new Report(scenario, requests, unknownRequests, transfers, failed, executions, providerExecutions,
                    duplicates, metric, logs, unresolved, violations, landed);
        }

        Set<Breach> breaches() {
            return violations.stream().map(Violation::breach).collect(Collectors.toCollection(TreeSet::new));
        }
    }

    /** Every body the load driver sends carries these; only the amount varies. */
    static final String CURRENCY = "EUR";
    static final String IBAN = "DE89370400440532013000";
    static final String NAME = "Ada Lovelace";

    private final String jdbcUrl;
    private final String user;

    Checker(String jdbcUrl, String user) {
        this.jdbcUrl = jdbcUrl;
        this.user = user;
    }

    /** Polls until every transfer of these principals is sent or failed, or the deadline passes. */
    void awaitTerminal(String principalPrefix, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (System.nanoTime() < deadline) {
            try {
                if (transfers(principalPrefix).stream().allMatch(t -> t.status.equals("sent") || t.status.equals("failed"))) {
                    return;
                }
            } catch (IllegalStateException databaseNotBackYet) {
                // PostgreSQL may still be starting after a restart scenario
            }
            Thread.sleep(250);
        }
    }

    /** Reads the database state of these principals' transfers. */
    Facts facts(String principalPrefix, History history, List<Order> orders, long providerExecutions,
                Set<String> brokenInstances) {
        return new Facts(transfers(principalPrefix), events(principalPrefix), history.requests(), history.deadClients(),
                orders, providerExecutions, brokenInstances);
    }

    /**
     * The verdict on one scenario.
     *
     * @param minTransfers below this many transfers the scenario exercised too little to count as a pass
     * @param inFlightTtl  how long an in-flight marker lives at most (bounds when a 409 is explained)
     */
    static Report verify(String scenario, Facts facts, int minTransfers, Duration inFlightTtl) {
        List<Violation> violations = new ArrayList<>();
        List<Transfer> transfers = facts.transfers();
        Map<String, Transfer> byId = transfers.stream().collect(Collectors.toMap(Transfer::id, t -> t));
        Map<String, Transfer> byPrincipalKey = new HashMap<>();
        Map<String, Transfer> byReference = new HashMap<>();
        for (Transfer t : transfers) {
            if (byPrincipalKey.put(t.userId + "|" + t.key, t) != null) {
                violations.add(new Violation(Breach.TWO_TRANSFERS_FOR_ONE_KEY, "(" + t.userId + ", " + t.key + ")"));
            }
            byReference.put(t.reference, t);
        }

        // the money: every order the provider saw belongs to one transfer and pays what that transfer says
        Map<String, List<Order>> ordersByReference = new HashMap<>();
        long executedOrders = 0;
        for (Order o : facts.orders()) {
            Transfer owner = byReference.get(o.reference());
            if (o.outcome() == OrderOutcome.EXECUTED) {
                executedOrders++;
            }
            if (owner == null) {
                if (o.outcome() == OrderOutcome.EXECUTED) {
                    violations.add(new Violation(Breach.UNOWNED_REFERENCE, "executed " + o));
                }
                continue;
            }
            ordersByReference.computeIfAbsent(o.reference(), r -> new ArrayList<>()).add(o);
            if (o.notAfter() == null) {
                violations.add(new Violation(Breach.SENT_WITHOUT_DEADLINE, "transfer " + owner.id + ": " + o));
            } else if (o.outcome() == OrderOutcome.EXECUTED && !o.notAfter().equals(owner.sendNotAfter)) {
                // nobody claims again before an earlier send's deadline passed, so only the latest claim's send can execute
                violations.add(new Violation(Breach.EXECUTED_UNDER_ANOTHER_DEADLINE, "transfer " + owner.id + " stores "
                        + owner.sendNotAfter + " but the provider executed " + o));
            }
            if (o.outcome() == OrderOutcome.EXECUTED && (o.amount() != owner.amount || !Objects.equals(o.currency(), owner.currency)
                    || !Objects.equals(o.iban(), owner.iban) || !Objects.equals(o.name(), owner.name))) {
                violations.add(new Violation(Breach.WRONG_PAYMENT, "transfer " + owner.id + " is " + owner.amount + " "
                        + owner.currency + " to " + owner.iban + " (" + owner.name + ") but the provider executed " + o));
            }
        }
        long executions = 0;
        long duplicates = 0;
        int unresolved = 0;
        for (Transfer t : transfers) {
            List<Order> sends = ordersByReference.getOrDefault(t.reference, List.of());
            long n = sends.stream().filter(o -> o.outcome() == OrderOutcome.EXECUTED).count();
            boolean rejected = sends.stream().anyMatch(o -> o.outcome() == OrderOutcome.REJECTED);
            executions += n;
            duplicates += Math.max(0, n - 1);
            if (n > 1) {
                violations.add(new Violation(Breach.DUPLICATE_EXECUTION, "transfer " + t.id + " (" + t.status + ") executed " + n + " times"));
            }
            switch (t.status) {
                case "sent" -> {
                    if (n != 1) {
                        violations.add(new Violation(Breach.SENT_WITHOUT_ONE_EXECUTION, "transfer " + t.id + " executed " + n + " times"));
                    }
                }
                case "failed" -> {
                    if (n != 0) {
                        violations.add(new Violation(Breach.FAILED_BUT_EXECUTED, "transfer " + t.id + " executed " + n + " times"));
                    } else if (!rejected) {
                        violations.add(new Violation(Breach.FAILED_WITHOUT_REJECTION, "transfer " + t.id + ", provider saw "
                                + sends.stream().map(o -> o.outcome().name()).toList()));
                    }
                }
                default -> {
                    unresolved++;
                    violations.add(new Violation(Breach.UNRESOLVED, "transfer " + t.id + " is still " + t.status));
                }
            }
        }
        if (facts.providerExecutions() != executions || executedOrders != executions) {
            violations.add(new Violation(Breach.EXECUTIONS_UNACCOUNTED, "the provider counted " + facts.providerExecutions()
                    + " executions and recorded " + executedOrders + " executed orders; the transfers account for " + executions));
        }

        // the history against the final state, per (principal, key)
        Map<String, List<History.Request>> byKey = new LinkedHashMap<>();
        for (History.Request r : facts.requests()) {
            byKey.computeIfAbsent(r.principal() + "|" + r.key(), k -> new ArrayList<>()).add(r);
        }
        int unknown = 0;
        for (var entry : byKey.entrySet()) {
            String key = entry.getKey();
            List<History.Request> group = entry.getValue();
            Transfer stored = byPrincipalKey.get(key);
            Set<String> createdIds = new TreeSet<>();
            Set<Long> createdAmounts = new TreeSet<>();
            int created = 0;
            for (History.Request r : group) {
                switch (r.outcome()) {
                    case CREATED, REPLAYED -> {
                        if (r.outcome() == History.Outcome.CREATED) {
                            created++;
                        }
                        createdIds.add(r.transferId());
                        createdAmounts.add(r.amount());
                        Transfer t = byId.get(r.transferId());
                        if (t == null) {
                            violations.add(new Violation(Breach.LOST_CREATED, "201 for " + key + " named " + r.transferId()));
                        } else if (!Objects.equals(t.userId + "|" + t.key, key) || t.amount != r.amount()) {
                            violations.add(new Violation(Breach.CREATED_FOR_ANOTHER_TRANSFER, "201 for " + key + " amount "
                                    + r.amount() + " named transfer " + t.id + " of " + t.userId + "/" + t.key + " amount " + t.amount));
                        }
                        if (r.note() != null) {
                            violations.add(new Violation(Breach.CREATED_FOR_ANOTHER_TRANSFER, "201 for " + key + " amount "
                                    + r.amount() + " answered " + r.note()));
                        }
                    }
                    case REUSED_422 -> {
                        if (stored == null || stored.amount == r.amount()) {
                            violations.add(new Violation(Breach.WRONG_422, "422 for " + key + " amount " + r.amount()
                                    + ", the key holds " + (stored == null ? "nothing" : "amount " + stored.amount)));
                        }
                    }
                    case IN_USE_409 -> {
                        if (group.stream().noneMatch(q -> q != r && couldHoldTheMarker(q, r, inFlightTtl))) {
                            violations.add(new Violation(Breach.UNEXPLAINED_409, "409 for " + key));
                        }
                    }
                    case UNKNOWN -> {
                        unknown++;
                        String excuse = excuse(r, facts.brokenInstances());
                        if (excuse != null) {
                            violations.add(new Violation(Breach.UNEXCUSED_UNKNOWN, "request for " + key + " to " + r.instance()
                                    + ": " + excuse));
                        }
                    }
                    case REJECTED_4XX, UNEXPECTED -> violations.add(new Violation(Breach.UNEXPECTED_ANSWER,
                            r.status() + " for " + key + ": " + r.note()));
                }
            }
            if (created > 1) {
                violations.add(new Violation(Breach.TWO_CREATED_FOR_ONE_KEY, created + " answers without Idempotent-Replayed for " + key));
            }
            if (createdIds.size() > 1 || createdAmounts.size() > 1) {
                violations.add(new Violation(Breach.CREATED_FOR_ANOTHER_TRANSFER, "201s for " + key + " named " + createdIds
                        + " with amounts " + createdAmounts));
            }
            if (!createdIds.isEmpty() && (stored == null || !createdIds.contains(stored.id))) {
                violations.add(new Violation(Breach.CREATED_FOR_ANOTHER_TRANSFER, "201s for " + key + " named " + createdIds
                        + " but the key holds " + (stored == null ? "nothing" : stored.id)));
            }
            if (stored != null && (!CURRENCY.equals(stored.currency) || !IBAN.equals(stored.iban) || !NAME.equals(stored.name)
                    || group.stream().noneMatch(r -> r.amount() == stored.amount))) {
                violations.add(new Violation(Breach.ROW_DIFFERS_FROM_REQUEST, "transfer " + stored.id + " is " + stored.amount
                        + " " + stored.currency + " to " + stored.iban + " (" + stored.name + "); the client sent amounts "
                        + group.stream().map(History.Request::amount).collect(Collectors.toCollection(TreeSet::new))));
            }
        }
        for (Transfer t : transfers) {
            if (!byKey.containsKey(t.userId + "|" + t.key)) {
                violations.add(new Violation(Breach.ORPHAN_TRANSFER, "transfer " + t.id + " under " + t.userId + "/" + t.key));
            }
        }

        // every history is a legal path with versions 0, 1, 2, ...
        for (Transfer t : transfers) {
            List<Event> path = facts.events().getOrDefault(t.id, List.of());
            String problem = illegal(path, t.status);
            if (problem != null) {
                violations.add(new Violation(Breach.ILLEGAL_HISTORY, "transfer " + t.id + " events " + describe(path) + ": " + problem));
            }
        }
        facts.deadClients().forEach(d -> violations.add(new Violation(Breach.DEAD_CLIENT, d)));
        if (transfers.size() < minTransfers) {
            violations.add(new Violation(Breach.TOO_LITTLE_LOAD, transfers.size() + " transfers, at least " + minTransfers + " needed"));
        }

        int failed = (int) transfers.stream().filter(t -> t.status.equals("failed")).count();
        return new Report(scenario, facts.requests().size(), unknown, transfers.size(), failed, executions,
                facts.providerExecutions(), duplicates, 0, 0, unresolved, violations, "");
    }

    /**
     * Whether {@code q} can explain the in-flight marker that made {@code r} a 409. The marker is set when
     * {@code q} reaches the service — at or after {@code q} was sent — so {@code q} must have been sent before
     * {@code r} was answered. If {@code q} got a definitive answer, its marker was set by then and lives at most
     * the in-flight TTL; a request its client gave up on may still reach the service later, so it bounds nothing.
     */
    static boolean couldHoldTheMarker(History.Request q, History.Request r, Duration inFlightTtl) {
        if (q.startedNanos() > r.endedNanos()) {
            return false;
        }
        return q.status() == -1 || r.startedNanos() <= q.endedNanos() + inFlightTtl.toNanos();
    }

    /** {@code null} when the contract leaves this request's outcome open, else why it does not. */
    static String excuse(History.Request r, Set<String> brokenInstances) {
        if (r.why() == null) {
            return "answered " + r.status() + " without a reason to be unknown";
        }
        return switch (r.why()) {
            case RETRY_LATER_503 -> r.status() == 503 ? null : "a " + r.status() + " is not '503 with Retry-After'";
            case CLIENT_TIMEOUT -> r.status() == -1 ? null : "a client timeout cannot carry status " + r.status();
            case CONNECTION_BROKEN -> brokenInstances.contains(r.instance()) ? null
                    : "the connection broke although the scenario left this instance alone (" + r.note() + ")";
        };
    }

    static String illegal(List<Event> path, String finalStatus) {
        if (path.isEmpty()) {
            return "no events";
        }
        Event first = path.get(0);
        if (first.version != 0 || first.from != null || !first.to.equals("pending")) {
            return "does not start with version 0 → pending";
        }
        for (int i = 1; i < path.size(); i++) {
            Event previous = path.get(i - 1);
            Event e = path.get(i);
            if (e.version != previous.version + 1) {
                return "version " + e.version + " follows " + previous.version;
            }
            if (!previous.to.equals(e.from)) {
                return "version " + e.version + " starts from " + e.from + " but the row was " + previous.to;
            }
            if (!LEGAL.getOrDefault(e.from, Set.of()).contains(e.to)) {
                return "illegal transition " + e.from + " → " + e.to + " at version " + e.version;
            }
        }
        if (!path.get(path.size() - 1).to.equals(finalStatus)) {
            return "ends in " + path.get(path.size() - 1).to + " but the row is " + finalStatus;
        }
        return null;
    }

    private static String describe(List<Event> path) {
        return path.stream().map(e -> e.version + ":" + e.from + "→" + e.to + "(" + e.actor + ", " + e.reason + ")")
                .collect(Collectors.joining(" "));
    }

    List<Transfer> transfers(String principalPrefix) {
        List<Transfer> result = new ArrayList<>();
        query("""
                SELECT id::text, user_id, idempotency_key, amount, currency, destination_iban, destination_name, status,
                       provider_reference, send_not_after
                  FROM transfers WHERE user_id LIKE ?""",
                rs -> result.add(new Transfer(rs.getString(1), rs.getString(2), rs.getString(3), rs.getLong(4), rs.getString(5),
                        rs.getString(6), rs.getString(7), rs.getString(8), rs.getString(9),
                        rs.getTimestamp(10) == null ? null : rs.getTimestamp(10).toInstant())), principalPrefix + "%");
        return result;
    }

    /** Transfers {@code instanceId} holds a lease on right now: a send of each is in flight or about to be. */
    List<String> leasedBy(String principalPrefix, String instanceId) {
        List<String> ids = new ArrayList<>();
        query("SELECT id::text FROM transfers WHERE user_id LIKE ? AND status = 'processing' AND claimed_by = ?",
                rs -> ids.add(rs.getString(1)), principalPrefix + "%", instanceId);
        return ids;
    }

    /** Of these transfers, the ones whose final transition was not made by {@code actor}. */
    List<String> finishedByOthers(List<String> ids, String actor) {
        List<String> result = new ArrayList<>();
        query("""
                SELECT e.transfer_id::text FROM transfer_events e JOIN transfers t ON t.id = e.transfer_id
                 WHERE t.id::text = ANY(?) AND e.version = t.version AND t.status IN ('sent', 'failed') AND e.actor <> ?""",
                rs -> result.add(rs.getString(1)), ids.toArray(String[]::new), actor);
        return result;
    }

    private Map<String, List<Event>> events(String principalPrefix) {
        Map<String, List<Event>> result = new HashMap<>();
        query("""
                SELECT e.transfer_id::text, e.version, e.from_status, e.to_status, e.actor, e.reason
                  FROM transfer_events e JOIN transfers t ON t.id = e.transfer_id
                 WHERE t.user_id LIKE ? ORDER BY e.transfer_id, e.version""",
                rs -> result.computeIfAbsent(rs.getString(1), k -> new ArrayList<>())
                        .add(new Event(rs.getLong(2), rs.getString(3), rs.getString(4), rs.getString(5), rs.getString(6))),
                principalPrefix + "%");
        return result;
    }

    private interface RowReader {
        void read(ResultSet rs) throws SQLException;
    }

    private void query(String sql, RowReader reader, Object... params) {
        try (Connection c = DriverManager.getConnection(jdbcUrl, user, ""); PreparedStatement st = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                if (params[i] instanceof String[] array) {
                    st.setArray(i + 1, c.createArrayOf("text", array));
                } else {
                    st.setObject(i + 1, params[i]);
                }
            }
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    reader.read(rs);
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
