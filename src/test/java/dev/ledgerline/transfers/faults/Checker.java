package dev.ledgerline.transfers.faults;

import dev.ledgerline.transfers.provider.SandboxLedger;

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
 * Checks a recorded history against the final database and provider state, after the faults healed and
 * the transfers had a bounded time to settle. Each finding is a sentence naming the broken invariant.
 */
final class Checker {

    /** The legal transitions of transfer_events (DESIGN §5): anything else is a violation. */
    static final Map<String, Set<String>> LEGAL = Map.of(
            "pending", Set.of("processing"),
            "processing", Set.of("sent", "failed", "reconciling"),
            "reconciling", Set.of("processing", "sent", "failed", "reconciling"),
            "sent", Set.of(),
            "failed", Set.of());

    record Transfer(String id, String userId, String key, long amount, String status, String reference) {
    }

    record Event(long version, String from, String to, String actor, String reason) {
    }

    /** The per-scenario table row and the violations found. */
    record Report(String scenario, int requests, int unknownRequests, int transfers, int failed, long executions, long duplicates,
                  long fencedMetrics, long fencedLogs, int unresolved, List<String> violations) {

        static String header() {
            return String.format("%-22s %8s %8s %9s %7s %10s %10s %14s %11s %10s %10s",
                    "scenario", "requests", "unknown", "transfers", "failed", "executions", "duplicates", "fenced(metric)",
                    "fenced(log)", "unresolved", "violations");
        }

        String row() {
            return String.format("%-22s %8d %8d %9d %7d %10d %10d %14d %11d %10d %10d", scenario, requests, unknownRequests,
                    transfers, failed, executions, duplicates, fencedMetrics, fencedLogs, unresolved, violations.size());
        }
    }

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

    Report check(String scenario, String principalPrefix, History history, SandboxLedger provider, long fencedMetrics,
                 long fencedLogs, Duration inFlightTtl) {
        List<String> violations = new ArrayList<>();
        List<History.Request> requests = history.requests();
        List<Transfer> transfers = transfers(principalPrefix);
        Map<String, Transfer> byId = transfers.stream().collect(Collectors.toMap(Transfer::id, t -> t));
        Map<String, Transfer> byPrincipalKey = new HashMap<>();
        for (Transfer t : transfers) {
            if (byPrincipalKey.put(t.userId + "|" + t.key, t) != null) {
                violations.add("two transfers for (" + t.userId + ", " + t.key + ")");
            }
        }

        // the provider: at most once per reference, exactly once for sent, never for failed
        long executions = 0;
        long duplicates = 0;
        int unresolved = 0;
        for (Transfer t : transfers) {
            long n = provider.executions(t.reference);
            executions += n;
            duplicates += Math.max(0, n - 1);
            if (n > 1) {
                violations.add("transfer " + t.id + " (" + t.status + ") executed " + n + " times at the provider");
            }
            switch (t.status) {
                case "sent" -> {
                    if (n != 1) {
                        violations.add("transfer " + t.id + " is sent but executed " + n + " times");
                    }
                }
                case "failed" -> {
                    if (n != 0) {
                        violations.add("transfer " + t.id + " is failed but executed " + n + " times");
                    }
                }
                default -> {
                    unresolved++;
                    violations.add("transfer " + t.id + " is still " + t.status + " after the settle time");
                }
            }
        }

        // the history against the final state, per (principal, key)
        Map<String, List<History.Request>> byKey = new LinkedHashMap<>();
        for (History.Request r : requests) {
            byKey.computeIfAbsent(r.principal() + "|" + r.key(), k -> new ArrayList<>()).add(r);
        }
        int unknown = 0;
        for (var entry : byKey.entrySet()) {
            List<History.Request> group = entry.getValue();
            Transfer stored = byPrincipalKey.get(entry.getKey());
            Set<String> createdIds = new TreeSet<>();
            Set<Long> createdAmounts = new TreeSet<>();
            for (History.Request r : group) {
                switch (r.outcome()) {
                    case CREATED, REPLAYED -> {
                        createdIds.add(r.transferId());
                        createdAmounts.add(r.amount());
                        Transfer t = byId.get(r.transferId());
                        if (t == null) {
                            violations.add("201 for " + entry.getKey() + " named transfer " + r.transferId() + ", which does not exist");
                        } else if (!Objects.equals(t.userId + "|" + t.key, entry.getKey()) || t.amount != r.amount()) {
                            violations.add("201 for " + entry.getKey() + " amount " + r.amount() + " named transfer " + t.id
                                    + " of " + t.userId + "/" + t.key + " amount " + t.amount);
                        }
                        if (r.note() != null) {
                            violations.add("201 for " + entry.getKey() + " amount " + r.amount() + " answered " + r.note());
                        }
                    }
                    case REUSED_422 -> {
                        if (stored == null) {
                            violations.add("422 for " + entry.getKey() + " but no transfer holds that key");
                        } else if (stored.amount == r.amount()) {
                            violations.add("422 for " + entry.getKey() + " with the very body the key holds (amount " + r.amount() + ")");
                        }
                    }
                    case IN_USE_409 -> {
                        boolean overlapping = group.stream().anyMatch(q -> q != r && q.startedNanos() <= r.endedNanos()
                                && r.startedNanos() - q.startedNanos() < inFlightTtl.plusSeconds(2).toNanos());
                        if (!overlapping) {
                            violations.add("409 for " + entry.getKey() + " with no other request for the key in flight");
                        }
                    }
                    case UNKNOWN -> {
                        unknown++;
                        long matching = countByKey(r.principal(), r.key());
                        if (matching > 1) {
                            violations.add("unknown request for " + entry.getKey() + " maps to " + matching + " transfers");
                        }
                    }
                    case REJECTED_4XX -> violations.add("unexpected " + r.status() + " for " + entry.getKey() + ": " + r.note());
                }
            }
            if (createdIds.size() > 1) {
                violations.add("201s for " + entry.getKey() + " named different transfers " + createdIds);
            }
            if (createdAmounts.size() > 1) {
                violations.add("201s for " + entry.getKey() + " accepted different bodies, amounts " + createdAmounts);
            }
            if (!createdIds.isEmpty() && (stored == null || !createdIds.contains(stored.id))) {
                violations.add("201s for " + entry.getKey() + " named " + createdIds + " but the key holds "
                        + (stored == null ? "nothing" : stored.id));
            }
        }
        for (Transfer t : transfers) {
            if (!byKey.containsKey(t.userId + "|" + t.key)) {
                violations.add("transfer " + t.id + " has a key no client ever sent");
            }
        }

        // every history is a legal path with versions 0, 1, 2, ...
        Map<String, List<Event>> events = events(principalPrefix);
        for (Transfer t : transfers) {
            List<Event> path = events.getOrDefault(t.id, List.of());
            String problem = illegal(path, t.status);
            if (problem != null) {
                violations.add("transfer " + t.id + " events " + describe(path) + ": " + problem);
            }
        }

        int failed = (int) transfers.stream().filter(t -> t.status.equals("failed")).count();
        return new Report(scenario, requests.size(), unknown, transfers.size(), failed, executions, duplicates, fencedMetrics,
                fencedLogs, unresolved, violations);
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
        query("SELECT id::text, user_id, idempotency_key, amount, status, provider_reference FROM transfers WHERE user_id LIKE ?",
                rs -> result.add(new Transfer(rs.getString(1), rs.getString(2), rs.getString(3), rs.getLong(4), rs.getString(5),
                        rs.getString(6))), principalPrefix + "%");
        return result;
    }

    /** Whether {@code instanceId} holds a lease right now: a send of it is in flight or about to be. */
    boolean holdsALease(String principalPrefix, String instanceId) {
        long[] count = new long[1];
        query("SELECT count(*) FROM transfers WHERE user_id LIKE ? AND status = 'processing' AND claimed_by = ?",
                rs -> count[0] = rs.getLong(1), principalPrefix + "%", instanceId);
        return count[0] > 0;
    }

    private long countByKey(String principal, String key) {
        long[] count = new long[1];
        query("SELECT count(*) FROM transfers WHERE user_id = ? AND idempotency_key = ?", rs -> count[0] = rs.getLong(1),
                principal, key);
        return count[0];
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
                st.setObject(i + 1, params[i]);
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
