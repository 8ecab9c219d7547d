package dev.ledgerline.transfers.faults;

import dev.ledgerline.transfers.faults.Checker.Breach;
import dev.ledgerline.transfers.faults.Checker.Event;
import dev.ledgerline.transfers.faults.Checker.Facts;
import dev.ledgerline.transfers.faults.Checker.Order;
import dev.ledgerline.transfers.faults.Checker.OrderOutcome;
import dev.ledgerline.transfers.faults.Checker.Transfer;
import dev.ledgerline.transfers.faults.History.Outcome;
import dev.ledgerline.transfers.faults.History.Request;
import dev.ledgerline.transfers.faults.History.Unknown;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The fault suite's own mutants: each test feeds the {@link Checker} the history, rows and provider orders a
 * particular broken service would leave behind, and asserts that the checker names exactly that breach. A
 * checker that accepts one of these would let FaultsIT pass a service that moves money wrongly.
 */
class CheckerTest {

    private static final Duration TTL = Duration.ofSeconds(3);
    private static final String ALICE = "s-user-0";
    private static final String KEY = "key-1";
    private static final String ID = "6f1c0000-0000-0000-0000-000000000001";
    private static final String REF = "ll_6f1c0000000000000000000000000001";
    private static final long MS = 1_000_000;
    private static final Instant DEADLINE = Instant.parse("2026-11-30T12:00:05Z");

    private final List<Transfer> transfers = new ArrayList<>(List.of(row(ID, KEY, 1250, "sent", REF)));
    private final Map<String, List<Event>> events = new java.util.HashMap<>(Map.of(ID, sentPath()));
    private final List<Request> requests = new ArrayList<>(List.of(created(KEY, 1250, ID, 0)));
    private final List<String> deadClients = new ArrayList<>();
    private final List<Order> orders = new ArrayList<>(List.of(order(REF, 1250, OrderOutcome.EXECUTED)));
    private long providerExecutions = 1;
    private Set<String> brokenInstances = Set.of();

    @Test
    void aHealthyHistoryPasses() {
        assertEquals(Set.of(), breaches(), "the baseline every mutant below breaks in one way");
    }

    @Test
    void aNewReferencePerResendIsCaughtAsMoneyNoTransferAccountsFor() {
        // the service minted a new reference after a lease expired, found it "not found" and paid again
        String second = "ll_6f1c0000000000000000000000000099";
        orders.add(order(second, 1250, OrderOutcome.EXECUTED));
        transfers.set(0, row(ID, KEY, 1250, "sent", second));
        providerExecutions = 2;
        assertEquals(Set.of(Breach.UNOWNED_REFERENCE, Breach.EXECUTIONS_UNACCOUNTED), breaches());
    }

    @Test
    void aWrongAmountAtTheProviderIsCaught() {
        orders.set(0, order(REF, 0, OrderOutcome.EXECUTED));
        assertEquals(Set.of(Breach.WRONG_PAYMENT), breaches());
    }

    @Test
    void anotherCurrencyOrBeneficiaryAtTheProviderIsCaught() {
        orders.set(0, new Order(REF, 1250, "USD", Checker.IBAN, Checker.NAME, DEADLINE, OrderOutcome.EXECUTED));
        assertEquals(Set.of(Breach.WRONG_PAYMENT), breaches());
        orders.set(0, new Order(REF, 1250, Checker.CURRENCY, "GB33BUKB20201555555555", Checker.NAME, DEADLINE, OrderOutcome.EXECUTED));
        assertEquals(Set.of(Breach.WRONG_PAYMENT), breaches());
    }

    @Test
    void aRowThatStoredADifferentAmountThanTheClientSentIsCaught() {
        transfers.set(0, row(ID, KEY, 1251, "sent", REF));
        orders.set(0, order(REF, 1251, OrderOutcome.EXECUTED));
        // the 201 shows the client's amount against a row that holds another
        assertEquals(Set.of(Breach.ROW_DIFFERS_FROM_REQUEST, Breach.CREATED_FOR_ANOTHER_TRANSFER), breaches());
    }

    @Test
    void aSendWithoutItsDeadlineIsCaught() {
        // without Ledgerline-Not-After a send delayed in transit could execute after another worker resent it
        orders.set(0, new Order(REF, 1250, Checker.CURRENCY, Checker.IBAN, Checker.NAME, null, OrderOutcome.EXECUTED));
        assertEquals(Set.of(Breach.SENT_WITHOUT_DEADLINE), breaches());
    }

    @Test
    void anExecutionUnderAnEarlierClaimsDeadlineIsCaught() {
        // the send of claim 1 was still in transit when claim 2 resent; claim 1's send is the one that executed
        orders.set(0, new Order(REF, 1250, Checker.CURRENCY, Checker.IBAN, Checker.NAME, DEADLINE.minusSeconds(3),
                OrderOutcome.EXECUTED));
        assertEquals(Set.of(Breach.EXECUTED_UNDER_ANOTHER_DEADLINE), breaches());
    }

    @Test
    void aTransferFailedOnAnOutageIsCaught() {
        // the provider answered 503 before applying anything; the service called that a failure
        transfers.set(0, row(ID, KEY, 1250, "failed", REF));
        events.put(ID, List.of(event(0, null, "pending"), event(1, "pending", "processing"), event(2, "processing", "failed")));
        orders.clear();
        providerExecutions = 0;
        assertEquals(Set.of(Breach.FAILED_WITHOUT_REJECTION), breaches());
    }

    @Test
    void aFailedTransferTheProviderRejectedPasses() {
        transfers.set(0, row(ID, KEY, 1250, "failed", REF));
        events.put(ID, List.of(event(0, null, "pending"), event(1, "pending", "processing"), event(2, "processing", "failed")));
        orders.set(0, order(REF, 1250, OrderOutcome.REJECTED));
        providerExecutions = 0;
        assertEquals(Set.of(), breaches());
    }

    @Test
    void aSecondExecutionOfOneReferenceIsCaught() {
        orders.add(order(REF, 1250, OrderOutcome.EXECUTED));
        providerExecutions = 2;
        assertEquals(Set.of(Breach.DUPLICATE_EXECUTION, Breach.SENT_WITHOUT_ONE_EXECUTION), breaches());
    }

    @Test
    void twoCreatedAnswersForOneKeyAreCaught() {
        // the retry was answered 201 again, without Idempotent-Replayed: a client would book it twice
        requests.add(created(KEY, 1250, ID, 500));
        assertEquals(Set.of(Breach.TWO_CREATED_FOR_ONE_KEY), breaches());
    }

    @Test
    void aReplayMarkedAsSuchPasses() {
        requests.add(new Request(ALICE, KEY, 1250, "i-2", 500 * MS, 520 * MS, Outcome.REPLAYED, 201, ID, null, null));
        assertEquals(Set.of(), breaches());
    }

    @Test
    void a500DressedAsAnUnknownOutcomeIsCaught() {
        requests.add(new Request(ALICE, KEY, 1250, "i-1", 500 * MS, 520 * MS, Outcome.UNKNOWN, 500, null, null,
                Unknown.RETRY_LATER_503));
        assertEquals(Set.of(Breach.UNEXCUSED_UNKNOWN), breaches());
    }

    @Test
    void a500ReportedAsWhatItIsIsCaughtAsAnUnexpectedAnswer() {
        requests.add(new Request(ALICE, KEY, 1250, "i-1", 500 * MS, 520 * MS, Outcome.UNEXPECTED, 500, null, "boom", null));
        assertEquals(Set.of(Breach.UNEXPECTED_ANSWER), breaches());
    }

    @Test
    void aBrokenConnectionIsUnknownOnlyOnAnInstanceTheScenarioBroke() {
        requests.add(new Request(ALICE, KEY, 1250, "i-1", 500 * MS, 520 * MS, Outcome.UNKNOWN, -1, null, "ConnectException",
                Unknown.CONNECTION_BROKEN));
        assertEquals(Set.of(Breach.UNEXCUSED_UNKNOWN), breaches());
        brokenInstances = Set.of("i-1");
        assertEquals(Set.of(), breaches());
    }

    @Test
    void aLost201IsCaught() {
        // the client was told "created" but the row never committed
        transfers.clear();
        events.clear();
        orders.clear();
        providerExecutions = 0;
        assertEquals(Set.of(Breach.LOST_CREATED, Breach.CREATED_FOR_ANOTHER_TRANSFER),
                Checker.verify("mutant", facts(), 0, TTL).breaches());
    }

    @Test
    void aDeadClientThreadIsCaught() {
        deadClients.add(ALICE + ": java.lang.NullPointerException");
        assertEquals(Set.of(Breach.DEAD_CLIENT), breaches());
    }

    @Test
    void tooLittleLoadIsCaught() {
        Checker.Report report = Checker.verify("mutant", facts(), 2, TTL);
        assertEquals(Set.of(Breach.TOO_LITTLE_LOAD), report.breaches());
    }

    @Test
    void aTransferLeftInReconcilingIsCaught() {
        transfers.set(0, row(ID, KEY, 1250, "reconciling", REF));
        events.put(ID, List.of(event(0, null, "pending"), event(1, "pending", "processing"), event(2, "processing", "reconciling")));
        assertEquals(Set.of(Breach.UNRESOLVED), breaches());
    }

    @Test
    void anIllegalTransitionIsCaught() {
        events.put(ID, List.of(event(0, null, "pending"), event(1, "pending", "sent")));
        assertEquals(Set.of(Breach.ILLEGAL_HISTORY), breaches());
    }

    @Test
    void a409IsExplainedOnlyByARequestThatCouldStillHoldTheMarker() {
        // the 201 ended at 20 ms; its marker is gone 3 s later, so a 409 at 5 s has no cause
        requests.add(new Request(ALICE, KEY, 1250, "i-2", 5_000 * MS, 5_010 * MS, Outcome.IN_USE_409, 409, null, null, null));
        assertEquals(Set.of(Breach.UNEXPLAINED_409), breaches());

        // a request its client gave up on may reach the service at any later time
        requests.add(new Request(ALICE, KEY, 1250, "i-1", 100 * MS, 400 * MS, Outcome.UNKNOWN, -1, null, null,
                Unknown.CLIENT_TIMEOUT));
        assertEquals(Set.of(), breaches());
    }

    private Set<Breach> breaches() {
        return Checker.verify("mutant", facts(), 1, TTL).breaches();
    }

    private Facts facts() {
        return new Facts(transfers, events, requests, deadClients, orders, providerExecutions, brokenInstances);
    }

    private static Transfer row(String id, String key, long amount, String status, String reference) {
        return new Transfer(id, ALICE, key, amount, Checker.CURRENCY, Checker.IBAN, Checker.NAME, status, reference, DEADLINE);
    }

    private static Order order(String reference, long amount, OrderOutcome outcome) {
        return new Order(reference, amount, Checker.CURRENCY, Checker.IBAN, Checker.NAME, DEADLINE, outcome);
    }

    private static Request created(String key, long amount, String id, long startedMs) {
        return new Request(ALICE, key, amount, "i-1", startedMs * MS, (startedMs + 20) * MS, Outcome.CREATED, 201, id, null, null);
    }

    private static List<Event> sentPath() {
        return List.of(event(0, null, "pending"), event(1, "pending", "processing"), event(2, "processing", "sent"));
    }

    private static Event event(long version, String from, String to) {
        return new Event(version, from, to, "i-1", "test");
    }
}
