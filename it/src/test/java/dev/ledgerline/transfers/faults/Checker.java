package dev.ledgerline.transfers.faults;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
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

    /** The legal transitions of transfer_events (docs/safety.md "How a transfer moves"): anything else is a violation. */
    static final Map<String, Set<String>> LEGAL = Map.of(
            // pending → reconciling: the adoption of a database server that may have lost claims (a lookup first)
            "pending", Set.of("processing", "reconciling"),
            "processing", Set.of("sent", "failed", "reconciling"),
            "reconciling", Set.of("processing", "sent", "failed", "reconciling"),
            "sent", Set.of(),
            "failed", Set.of());

    /** Every invariant the checker holds a service to, each with the sentence a report names it by. */
    enum Breach {
        TWO_TRANSFERS_FOR_ONE_KEY("two transfers hold one (principal, key)"),
        DUPLICATE_EXECUTION("a transfer's money moved more than once"),
        INTENT_PAID_TWICE("one intent (principal, key) moved money under more than one reference"),
        LOST_RETRY_NOT_ONCE("a lost intent was retried but did not end as one final transfer that moved money at most once"),
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
        LEDGER_POSTED_DIFFERS("an account's posted balance is not its credits less the amounts of its sent transfers"),
        LEDGER_HELD_DIFFERS("an account's held amount is not the sum of its open transfers"),
        LEDGER_NEGATIVE("an account's available balance is negative beyond what it owes (or its held amount is negative)"),
        LEDGER_UNHELD("a sent or open transfer moves no balance although the ledger was on"),
        LEDGER_UNBALANCED("an entry's legs, or a currency's accounts with its settlement account, do not sum to zero"),
        LEDGER_POSTING_UNEXECUTED("a posting does not belong to exactly one transfer the provider executed"),
        TOO_LITTLE_LOAD("the scenario made fewer transfers than it needs to mean anything");

        final String sentence;

        Breach(String sentence) {
            this.sentence = sentence;
        }
    }

    /**
     * Whether a transfer's events start as a row inserted for a lookup first because its request was accepted without
     * its idempotency record ({@code reconciling} at version 0, the reason saying so).
     */
    static boolean startsWithALookup(List<Event> events) {
        return events != null && !events.isEmpty() && events.get(0).version() == 0 && "reconciling".equals(events.get(0).to())
                && events.get(0).reason() != null && events.get(0).reason().startsWith("accepted without its idempotency record");
    }

    record Violation(Breach breach, String detail) {
        @Override
        public String toString() {
            return breach + " (" + breach.sentence + "): " + detail;
        }
    }

    /** A row as stored; {@code sendNotAfter} is the deadline its latest claim gave the send ({@code null} if never claimed). */
    record Transfer(String id, String userId, String key, long amount, String currency, String iban, String name,
                    String status, String reference, Instant sendNotAfter) {
    }

    record Event(long version, String from, String to, String actor, String reason) {
    }

    /**
     * An account as stored: what was posted to it, what its open transfers hold, and what it owes (what transfers the
     * database lost and re-created took beyond its funds).
     */
    record Account(String principal, String currency, long posted, long held, long debt) {

        Account(String principal, String currency, long posted, long held) {
            this(principal, currency, posted, held, 0);
        }
    }

    /** One ledger entry as stored ({@code transferId} for a hold, post or release; {@code creditId} for a credit). */
    record Entry(String principal, String currency, String kind, long amount, long accountLeg, long settlementLeg,
                 long heldChange, String transferId, String creditId) {
    }

    /**
     * The ledger of the scenario's principals: their accounts, their entries, and the ids of their transfers that hold
     * funds (accepted, or re-created after the database lost them, while the ledger was on: all of a scenario's).
     */
    record Ledger(List<Account> accounts, List<Entry> entries, Set<String> holding) {
    }

    /** What the provider did with a send it applied. */
    enum OrderOutcome { EXECUTED, REJECTED, EXPIRED }

    /** One send as the provider applied it: what it was asked to pay, by when, and what it did. */
    record Order(String reference, long amount, String currency, String iban, String name, Instant notAfter,
                 OrderOutcome outcome) {
    }

    /**
     * An intent a client had been answered 201 for before PostgreSQL came back from a crash, whose row was gone
     * right after the restart: a commit the database acknowledged and then forgot.
     *
     * @param transferId     the id the 201 named
     * @param crashNanos     when the crashed server was gone (the history's clock): a request for the intent sent later is a retry
     * @param restartedNanos when PostgreSQL started again: a 201 answered before could only name a row committed
     *                       before the crash
     */
    record Loss(String principal, String key, String transferId, long crashNanos, long restartedNanos) {
        String intent() {
            return principal + "|" + key;
        }
    }

    /**
     * What the scenario's PostgreSQL crashes took away.
     *
     * @param losses             the 201-acknowledged intents whose rows the crashes lost
     * @param existedBeforeCrash references of transfers that existed before a crash: a crash can take back the
     *                           claim that sent, so their stored deadline need not be the one the executed send carried
     */
    record Crashes(List<Loss> losses, Set<String> existedBeforeCrash) {
    }

    /**
     * Everything observed in one scenario.
     *
     * @param providerExecutions executions the provider itself counted during the scenario
     * @param brokenInstances    instance ids the scenario killed or paused: a broken connection to them is unknown,
     *                           to any other instance it is a finding
     * @param crashes            what PostgreSQL crashes lost, {@code null} in a scenario without one. With it an
     *                           execution no row accounts for is traced to its intent by its amount (each intent's
     *                           amounts are its own, see {@link LoadDriver}), and a lost intent that no client
     *                           retried is counted in the report instead of being a violation
     */
    record Facts(List<Transfer> transfers, Map<String, List<Event>> events, List<History.Request> requests,
                 List<String> deadClients, List<Order> orders, long providerExecutions, Set<String> brokenInstances,
                 Crashes crashes, Ledger ledger) {

        /** Facts without the ledger: its invariants are not checked. */
        Facts(List<Transfer> transfers, Map<String, List<Event>> events, List<History.Request> requests,
              List<String> deadClients, List<Order> orders, long providerExecutions, Set<String> brokenInstances,
              Crashes crashes) {
            this(transfers, events, requests, deadClients, orders, providerExecutions, brokenInstances, crashes, null);
        }

        Facts withLedger(Ledger ledger) {
            return new Facts(transfers, events, requests, deadClients, orders, providerExecutions, brokenInstances, crashes, ledger);
        }

        Facts(List<Transfer> transfers, Map<String, List<Event>> events, List<History.Request> requests,
              List<String> deadClients, List<Order> orders, long providerExecutions, Set<String> brokenInstances) {
            this(transfers, events, requests, deadClients, orders, providerExecutions, brokenInstances, null);
        }
    }

    /**
     * The per-scenario table row and the violations found. {@code lost} counts the 201-acknowledged intents a
     * PostgreSQL crash lost, {@code lostNeverRetried} those of them no client sent again with the acknowledged body
     * (an edited body is another request): their outcome is what the loss left, reported here rather than hidden;
     * {@code evidence} says what became of the rest.
     */
    record Report(String scenario, int requests, int unknownRequests, int transfers, int failed, long executions,
                  long providerExecutions, long duplicates, long fencedMetrics, long fencedLogs, int unresolved,
                  int lost, int lostNeverRetried, List<Violation> violations, String evidence, long postings,
                  long releases, long heldAtEnd) {

        static String header() {
            return String.format("%-22s %8s %8s %9s %7s %10s %10s %10s %14s %11s %10s %9s %13s %8s %8s %8s %10s  %s",
                    "scenario", "requests", "unknown", "transfers", "failed", "executions", "prov.execs", "duplicates",
                    "fenced(metric)", "fenced(log)", "unresolved", "lost(201)", "never-retried", "postings", "releases",
                    "held", "violations", "fault landed");
        }

        String row() {
            return String.format("%-22s %8d %8d %9d %7d %10d %10d %10d %14d %11d %10d %9d %13d %8d %8d %8d %10d  %s", scenario,
                    requests, unknownRequests, transfers, failed, executions, providerExecutions, duplicates, fencedMetrics,
                    fencedLogs, unresolved, lost, lostNeverRetried, postings, releases, heldAtEnd, violations.size(), evidence);
        }

        /** Adds the fencing counts and what the faults showed to the checker's own evidence. */
        Report withFencing(long metric, long logs, String landed) {
            String both = evidence.isEmpty() ? landed : landed.isEmpty() ? evidence : landed + "; " + evidence;
            return new Report(scenario, requests, unknownRequests, transfers, failed, executions, providerExecutions,
                    duplicates, metric, logs, unresolved, lost, lostNeverRetried, violations, both, postings, releases, heldAtEnd);
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
        return facts(principalPrefix, history, orders, providerExecutions, brokenInstances, null);
    }

    /** The same, for a scenario whose PostgreSQL crashes lost what {@code crashes} records. */
    Facts facts(String principalPrefix, History history, List<Order> orders, long providerExecutions,
                Set<String> brokenInstances, Crashes crashes) {
        return new Facts(transfers(principalPrefix), events(principalPrefix), history.requests(), history.deadClients(),
                orders, providerExecutions, brokenInstances, crashes, ledger(principalPrefix));
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

        Crashes crashes = facts.crashes();
        Map<String, Loss> losses = new HashMap<>();
        if (crashes != null) {
            crashes.losses().forEach(l -> losses.putIfAbsent(l.intent(), l));
        }
        // after a crash a row can be gone while its payment went out: the amount names the intent it was for
        Map<Long, Set<String>> intentsByAmount = new HashMap<>();
        for (History.Request r : facts.requests()) {
            intentsByAmount.computeIfAbsent(r.amount(), a -> new TreeSet<>()).add(r.principal() + "|" + r.key());
        }

        // the money: every order the provider saw belongs to one transfer and pays what that transfer says
        Map<String, List<Order>> ordersByReference = new HashMap<>();
        Map<String, Long> executionsByIntent = new HashMap<>();
        Map<String, Set<String>> executedReferencesByIntent = new HashMap<>();
        long executedOrders = 0;
        long executionsOfLostRows = 0;
        for (Order o : facts.orders()) {
            Transfer owner = byReference.get(o.reference());
            boolean executed = o.outcome() == OrderOutcome.EXECUTED;
            if (executed) {
                executedOrders++;
            }
            if (owner == null) {
                Set<String> sentBy = intentsByAmount.getOrDefault(o.amount(), Set.of());
                if (crashes != null && sentBy.size() == 1) {
                    if (executed) {
                        String intent = sentBy.iterator().next();
                        executionsOfLostRows++;
                        executionsByIntent.merge(intent, 1L, Long::sum);
                        executedReferencesByIntent.computeIfAbsent(intent, i -> new TreeSet<>()).add(o.reference());
                        if (!CURRENCY.equals(o.currency()) || !IBAN.equals(o.iban()) || !NAME.equals(o.name())) {
                            violations.add(new Violation(Breach.WRONG_PAYMENT, "intent " + intent + " (its row is gone) sent "
                                    + o.amount() + " " + CURRENCY + " to " + IBAN + " (" + NAME + ") but the provider executed " + o));
                        }
                    }
                } else if (executed) {
                    violations.add(new Violation(Breach.UNOWNED_REFERENCE, "executed " + o
                            + (crashes != null ? "; its amount was sent under " + sentBy.size() + " intents" : "")));
                }
                continue;
            }
            String ownerIntent = owner.userId + "|" + owner.key;
            if (executed) {
                executionsByIntent.merge(ownerIntent, 1L, Long::sum);
                executedReferencesByIntent.computeIfAbsent(ownerIntent, i -> new TreeSet<>()).add(o.reference());
            }
            ordersByReference.computeIfAbsent(o.reference(), r -> new ArrayList<>()).add(o);
            // a crash can take back the claim whose send executed: then the row no longer stores that send's deadline
            boolean deadlineMayBeGone = crashes != null
                    && (crashes.existedBeforeCrash().contains(o.reference()) || losses.containsKey(ownerIntent));
            // the adoption of a restarted database server pushes every open row's deadline out past any send in flight
            // (TransferSql.ADOPT_EPOCH): a send that left before it carries the earlier deadline it was claimed with
            boolean deadlinePushedByAdoption = o.notAfter() != null && owner.sendNotAfter != null
                    && o.notAfter().isBefore(owner.sendNotAfter)
                    && facts.events().getOrDefault(owner.id, List.of()).stream()
                            .anyMatch(e -> e.reason() != null && e.reason().startsWith("database server changed"));
            deadlineMayBeGone = deadlineMayBeGone || deadlinePushedByAdoption;
            if (o.notAfter() == null) {
                violations.add(new Violation(Breach.SENT_WITHOUT_DEADLINE, "transfer " + owner.id + ": " + o));
            } else if (executed && !deadlineMayBeGone && !o.notAfter().equals(owner.sendNotAfter)) {
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
        long executions = executionsOfLostRows;
        int unresolved = 0;
        for (Transfer t : transfers) {
            List<Order> sends = ordersByReference.getOrDefault(t.reference, List.of());
            long n = sends.stream().filter(o -> o.outcome() == OrderOutcome.EXECUTED).count();
            boolean rejected = sends.stream().anyMatch(o -> o.outcome() == OrderOutcome.REJECTED);
            executions += n;
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
        // duplicates count per intent: a second payment under a second reference is as much a duplicate
        long duplicates = 0;
        for (var entry : executionsByIntent.entrySet()) {
            duplicates += Math.max(0, entry.getValue() - 1);
            Set<String> references = executedReferencesByIntent.get(entry.getKey());
            if (references.size() > 1) {
                violations.add(new Violation(Breach.INTENT_PAID_TWICE, "intent " + entry.getKey() + " executed "
                        + entry.getValue() + " times under " + references));
            } else if (entry.getValue() > 1 && !byReference.containsKey(references.iterator().next())) {
                // a transfer's row catches this in the loop above; one a crash took away is caught here
                violations.add(new Violation(Breach.DUPLICATE_EXECUTION, "intent " + entry.getKey() + " (its row is gone) executed "
                        + entry.getValue() + " times under " + references));
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
        int lostRetriedOnce = 0;
        int lostNeverRetried = 0;
        int lostRetriesUnanswered = 0;
        for (var entry : byKey.entrySet()) {
            String key = entry.getKey();
            List<History.Request> group = entry.getValue();
            Transfer stored = byPrincipalKey.get(key);
            Loss loss = losses.get(key);
            // the body the lost 201 acknowledged: sending it again is a retry, another one is an edit
            Long lostAmount = loss == null ? null : group.stream().filter(q -> loss.transferId().equals(q.transferId()))
                    .map(History.Request::amount).findFirst().orElse(null);
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
                        boolean answeredBeforeItsLoss = loss != null && r.endedNanos() < loss.restartedNanos()
                                && r.transferId().equals(loss.transferId());
                        if (t == null) {
                            if (!answeredBeforeItsLoss) { // else the crash's record already counts it as lost
                                violations.add(new Violation(Breach.LOST_CREATED, "201 for " + key + " named " + r.transferId()));
                            }
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
                        // a lost intent's key still holds its acknowledged body wherever the database forgot it
                        boolean lostWithAnotherBody = lostAmount != null && stored == null && lostAmount != r.amount();
                        // and so does an earlier body whose answer never came: the service may have committed it
                        // (and recorded it in Redis) before a crash took the row back, unseen by any client
                        boolean unansweredWithAnotherBody = crashes != null && stored == null && group.stream()
                                .anyMatch(q -> q.outcome() == History.Outcome.UNKNOWN && q.amount() != r.amount()
                                        && q.startedNanos() < r.startedNanos());
                        if (!lostWithAnotherBody && !unansweredWithAnotherBody && (stored == null || stored.amount == r.amount())) {
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
            // a lost intent retried when no record of it could be read (its row gone, Redis not answering): the service
            // cannot tell it was accepted before, and answers it 'created' as a new transfer of the same intent whose
            // first step is a provider lookup; its payment is checked below like every lost intent's
            boolean createdAgainUnseen = loss != null && stored != null && createdAmounts.size() == 1
                    && !stored.id.equals(loss.transferId()) && createdIds.equals(new TreeSet<>(Set.of(loss.transferId(), stored.id)))
                    && startsWithALookup(facts.events().get(stored.id));
            if (created > (createdAgainUnseen ? 2 : 1)) {
                violations.add(new Violation(Breach.TWO_CREATED_FOR_ONE_KEY, created + " answers without Idempotent-Replayed for " + key));
            }
            if (!createdAgainUnseen && (createdIds.size() > 1 || createdAmounts.size() > 1)) {
                violations.add(new Violation(Breach.CREATED_FOR_ANOTHER_TRANSFER, "201s for " + key + " named " + createdIds
                        + " with amounts " + createdAmounts));
            }
            boolean onlyTheLostRow = loss != null && stored == null && createdIds.equals(Set.of(loss.transferId()));
            if (!createdIds.isEmpty() && !onlyTheLostRow && (stored == null || !createdIds.contains(stored.id))) {
                violations.add(new Violation(Breach.CREATED_FOR_ANOTHER_TRANSFER, "201s for " + key + " named " + createdIds
                        + " but the key holds " + (stored == null ? "nothing" : stored.id)));
            }
            if (stored != null && (!CURRENCY.equals(stored.currency) || !IBAN.equals(stored.iban) || !NAME.equals(stored.name)
                    || group.stream().noneMatch(r -> r.amount() == stored.amount))) {
                violations.add(new Violation(Breach.ROW_DIFFERS_FROM_REQUEST, "transfer " + stored.id + " is " + stored.amount
                        + " " + stored.currency + " to " + stored.iban + " (" + stored.name + "); the client sent amounts "
                        + group.stream().map(History.Request::amount).collect(Collectors.toCollection(TreeSet::new))));
            }
            if (loss != null) {
                List<History.Request> retries = group.stream()
                        .filter(r -> r.startedNanos() > loss.crashNanos() && Objects.equals(r.amount(), lostAmount)).toList();
                boolean answered = retries.stream().anyMatch(r -> r.outcome() == History.Outcome.CREATED
                        || r.outcome() == History.Outcome.REPLAYED || r.outcome() == History.Outcome.REUSED_422);
                long n = executionsByIntent.getOrDefault(key, 0L);
                if (retries.isEmpty()) {
                    lostNeverRetried++;
                } else if (!answered) {
                    lostRetriesUnanswered++;
                } else if (stored != null && (stored.status.equals("sent") && n == 1 || stored.status.equals("failed") && n == 0)) {
                    lostRetriedOnce++;
                } else {
                    violations.add(new Violation(Breach.LOST_RETRY_NOT_ONCE, "intent " + key + " lost " + loss.transferId()
                            + ", retried " + retries.size() + " times; it ends " + (stored == null ? "with no row"
                            : "as transfer " + stored.id + " (" + stored.status + ")") + " and executed " + n + " times"));
                }
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
        String lostEvidence = losses.isEmpty() ? "" : "lost 201s " + losses.size() + ": retried and finished once "
                + lostRetriedOnce + ", lost, never retried: " + lostNeverRetried + ", retried without an answer "
                + lostRetriesUnanswered;
        Ledger ledger = facts.ledger();
        if (ledger != null) {
            violations.addAll(ledger(ledger, transfers, facts.orders()));
        }
        return new Report(scenario, facts.requests().size(), unknown, transfers.size(), failed, executions,
                facts.providerExecutions(), duplicates, 0, 0, unresolved, losses.size(), lostNeverRetried, violations,
                lostEvidence,
                ledger == null ? 0 : ledger.entries().stream().filter(e -> e.kind().equals("post")).count(),
                ledger == null ? 0 : ledger.entries().stream().filter(e -> e.kind().equals("release")).count(),
                ledger == null ? 0 : ledger.accounts().stream().mapToLong(Account::held).sum());
    }

    /** A transfer that still holds its funds: not yet sent, failed or cancelled. */
    private static boolean open(Transfer t) {
        return !Set.of("sent", "failed", "cancelled").contains(t.status);
    }

    /**
     * The ledger's invariants (docs/safety.md "Money the customer has"), counted in money: per account, posted is what
     * came in (opening and credits) less the amounts of its sent transfers, and held the sum of its open ones;
     * available and held are never negative; every entry's two legs, and per currency all accounts with the
     * settlement account, sum to zero; every posting belongs to exactly one transfer the provider executed.
     */
    static List<Violation> ledger(Ledger ledger, List<Transfer> transfers, List<Order> orders) {
        List<Violation> violations = new ArrayList<>();
        Map<String, Transfer> byId = transfers.stream().collect(Collectors.toMap(Transfer::id, t -> t));
        Map<String, Long> cameIn = new HashMap<>();
        Map<String, Long> settlement = new HashMap<>();
        Map<String, Long> postsByTransfer = new HashMap<>();
        for (Entry e : ledger.entries()) {
            String account = e.principal() + "/" + e.currency();
            if (e.accountLeg() + e.settlementLeg() != 0) {
                violations.add(new Violation(Breach.LEDGER_UNBALANCED, "a " + e.kind() + " entry of " + account + " has legs "
                        + e.accountLeg() + " and " + e.settlementLeg()));
            }
            settlement.merge(e.currency(), e.settlementLeg(), Long::sum);
            if (e.kind().equals("opening") || e.kind().equals("credit")) {
                cameIn.merge(account, e.amount(), Long::sum);
            }
            if (e.kind().equals("post")) {
                postsByTransfer.merge(String.valueOf(e.transferId()), 1L, Long::sum);
            }
        }
        Set<String> executed = orders.stream().filter(o -> o.outcome() == OrderOutcome.EXECUTED).map(Order::reference)
                .collect(Collectors.toSet());
        for (var posted : postsByTransfer.entrySet()) {
            Transfer t = byId.get(posted.getKey());
            if (posted.getValue() != 1 || t == null || !executed.contains(t.reference)) {
                violations.add(new Violation(Breach.LEDGER_POSTING_UNEXECUTED, posted.getValue() + " posting(s) of transfer "
                        + posted.getKey() + (t == null ? ", which does not exist" : " (" + t.status + "), executed by the provider: "
                        + executed.contains(t.reference))));
            }
        }
        for (Transfer t : transfers) {
            if ((t.status.equals("sent") || open(t)) && !ledger.holding().contains(t.id)) {
                violations.add(new Violation(Breach.LEDGER_UNHELD, "transfer " + t.id + " (" + t.status + ") holds no funds"));
            }
        }
        Map<String, Long> accountsByCurrency = new HashMap<>();
        for (Account a : ledger.accounts()) {
            String account = a.principal() + "/" + a.currency();
            accountsByCurrency.merge(a.currency(), a.posted(), Long::sum);
            // every transfer counts, holding or not: a sent one that holds nothing left money the account still has
            List<Transfer> own = transfers.stream().filter(t -> t.userId.equals(a.principal()) && t.currency.equals(a.currency()))
                    .toList();
            long sent = own.stream().filter(t -> t.status.equals("sent")).mapToLong(Transfer::amount).sum();
            long expectedPosted = cameIn.getOrDefault(account, 0L) - sent;
            if (a.posted() != expectedPosted) {
                violations.add(new Violation(Breach.LEDGER_POSTED_DIFFERS, account + " has posted " + a.posted() + ", credits "
                        + cameIn.getOrDefault(account, 0L) + " less sent " + sent + " is " + expectedPosted));
            }
            long open = own.stream().filter(Checker::open).mapToLong(Transfer::amount).sum();
            if (a.held() != open) {
                violations.add(new Violation(Breach.LEDGER_HELD_DIFFERS, account + " holds " + a.held() + ", its open transfers "
                        + open));
            }
            // available may be below zero only by what the account owes, and it owes no more than its shortfall
            if (a.held() < 0 || a.debt() < 0 || a.posted() - a.held() + a.debt() < 0
                    || a.debt() > Math.max(0, a.held() - a.posted())) {
                violations.add(new Violation(Breach.LEDGER_NEGATIVE, account + " has posted " + a.posted() + ", held " + a.held()
                        + ", owes " + a.debt()));
            }
        }
        for (String currency : new TreeSet<>(settlement.keySet())) {
            long sum = accountsByCurrency.getOrDefault(currency, 0L) + settlement.get(currency);
            if (sum != 0) {
                violations.add(new Violation(Breach.LEDGER_UNBALANCED, currency + ": the accounts hold "
                        + accountsByCurrency.getOrDefault(currency, 0L) + ", the settlement account " + settlement.get(currency)
                        + ", together " + sum));
            }
        }
        return violations;
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

    /** The reason of the one event of a final row restored from its idempotency record (TransferSql.INSERT_RESTORED). */
    static final String RESTORED_FINAL = "row lost by the database, restored in its final state";

    static String illegal(List<Event> path, String finalStatus) {
        if (path.isEmpty()) {
            return "no events";
        }
        Event first = path.get(0);
        // a final row the database lost and a replay restored from its idempotency record: one event, straight to the
        // final status at the version the record kept (a final status is never reached before version 2)
        if (path.size() == 1 && first.from == null && first.version >= 2 && (first.to.equals("sent") || first.to.equals("failed"))
                && first.reason != null && first.reason.startsWith(RESTORED_FINAL)) {
            return first.to.equals(finalStatus) ? null : "restored as " + first.to + " but the row is " + finalStatus;
        }
        // a row the database lost and a retry re-created from its idempotency record starts in reconciling
        if (first.version != 0 || first.from != null || !(first.to.equals("pending") || first.to.equals("reconciling"))) {
            return "does not start with version 0 → pending (or → reconciling, re-created for a lookup)";
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

    /** The accounts, entries and fund-holding transfers of these principals. */
    Ledger ledger(String principalPrefix) {
        List<Account> accounts = new ArrayList<>();
        query("SELECT principal, currency, posted, held, debt FROM accounts WHERE principal LIKE ?",
                rs -> accounts.add(new Account(rs.getString(1), rs.getString(2), rs.getLong(3), rs.getLong(4), rs.getLong(5))),
                principalPrefix + "%");
        List<Entry> entries = new ArrayList<>();
        query("""
                SELECT principal, currency, kind, amount, account_leg, settlement_leg, held_change, transfer_id::text, credit_id::text
                  FROM ledger_entries WHERE principal LIKE ? ORDER BY id""",
                rs -> entries.add(new Entry(rs.getString(1), rs.getString(2), rs.getString(3), rs.getLong(4), rs.getLong(5),
                        rs.getLong(6), rs.getLong(7), rs.getString(8), rs.getString(9))), principalPrefix + "%");
        Set<String> holding = new TreeSet<>();
        query("SELECT id::text FROM transfers WHERE user_id LIKE ? AND holds_funds",
                rs -> holding.add(rs.getString(1)), principalPrefix + "%");
        return new Ledger(accounts, entries, holding);
    }

    /** A row's reference and version at one moment. */
    record RowState(String reference, long version) {
    }

    /** Every transfer of these principals right now, by id: what a crash a moment later can take back. */
    Map<String, RowState> snapshot(String principalPrefix) {
        Map<String, RowState> rows = new HashMap<>();
        query("SELECT id::text, provider_reference, version FROM transfers WHERE user_id LIKE ?",
                rs -> rows.put(rs.getString(1), new RowState(rs.getString(2), rs.getLong(3))), principalPrefix + "%");
        return rows;
    }

    /**
     * What PostgreSQL kept through its last restart: the versions of the rows that existed before it, by id, and
     * when it started. A row created since (a retry re-created a lost one, maybe under the same id) is not among
     * them: its created_at or its first event is not older than the server.
     */
    record Survivors(Map<String, Long> versions, Instant restartedAt) {
    }

    Survivors survivorsOfRestart(String principalPrefix) {
        Map<String, Long> versions = new HashMap<>();
        query("""
                SELECT t.id::text, t.version FROM transfers t
                 WHERE t.user_id LIKE ? AND t.created_at < pg_postmaster_start_time()
                   AND NOT EXISTS (SELECT 1 FROM transfer_events e
                                    WHERE e.transfer_id = t.id AND e.version = 0 AND e.at >= pg_postmaster_start_time())""",
                rs -> versions.put(rs.getString(1), rs.getLong(2)), principalPrefix + "%");
        List<Instant> started = new ArrayList<>();
        query("SELECT pg_postmaster_start_time()", rs -> started.add(rs.getTimestamp(1).toInstant()));
        return new Survivors(versions, started.get(0));
    }

    /** References of these principals' transfers created before {@code instant}. */
    Set<String> referencesCreatedBefore(String principalPrefix, Instant instant) {
        Set<String> references = new TreeSet<>();
        query("SELECT provider_reference FROM transfers WHERE user_id LIKE ? AND created_at < ?",
                rs -> references.add(rs.getString(1)), principalPrefix + "%", Timestamp.from(instant));
        return references;
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
