package dev.ledgerline.transfers.support;

import org.awaitility.Awaitility;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Deadline-based waits on what a user can observe: the transfer's status as stored. */
public final class Await {

    private Await() {
    }

    public static void status(String id, String status, Duration within) {
        Awaitility.await("transfer " + id + " reaches " + status)
                .atMost(within)
                .pollInterval(Duration.ofMillis(50))
                .until(() -> status.equals(dbStatus(id)));
    }

    public static void allTerminal(List<String> ids, Duration within) {
        Awaitility.await(ids.size() + " transfers reach sent or failed")
                .atMost(within)
                .pollInterval(Duration.ofMillis(200))
                .until(() -> Db.count("SELECT count(*) FROM transfers WHERE id = ANY(?::uuid[]) AND status IN ('sent', 'failed')",
                        (Object) ids.toArray(String[]::new)) == ids.size());
    }

    public static String dbStatus(String id) {
        List<Map<String, Object>> rows = Db.query("SELECT status FROM transfers WHERE id = ?::uuid", id);
        return rows.isEmpty() ? null : (String) rows.get(0).get("status");
    }

    public static final Set<String> TERMINAL = Set.of("sent", "failed");
}
