package dev.ledgerline.transfers.faults;

import dev.ledgerline.transfers.faults.Checker.Account;
import dev.ledgerline.transfers.faults.Checker.Breach;
import dev.ledgerline.transfers.faults.Checker.Crashes;
import dev.ledgerline.transfers.faults.Checker.Event;
import dev.ledgerline.transfers.faults.Checker.Entry;
import dev.ledgerline.transfers.faults.Checker.Facts;
import dev.ledgerline.transfers.faults.Checker.Ledger;
import dev.ledgerline.transfers.faults.Checker.Loss;
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
import static org.junit.jupiter.api.Assertions.assertTrue;

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
    private Crashes crashes;
    /** alice opened with 10,000 and sent 1,250: held, then posted. */
    private static final long OPENING = 10_000;
    private final List<Account> accounts = new ArrayList<>(List.of(new Account(ALICE, Checker.CURRENCY, OPENING - 1250, 0)));
    private final List<Entry> entries = new ArrayList<>(List.of(opening(OPENING), hold(ID, 1250), post(ID, 1250)));
    private final Set<String> holding = new java.util.HashSet<>(Set.of(ID));

    @Test
    void aHealthyLedgerPasses() {
        assertEquals(Set.of(), ledgerBreaches(), "the baseline every ledger mutant below breaks in one way");
    }

    @Test
    void aFenceThatDidNotPostIsCaughtAsPostedBalanceDiffering() {
        // the transfer is sent, its hold was dropped without a posting: the customer kept the money the provider paid out
        entries.remove(2);
        entries.add(new Entry(ALICE, Checker.CURRENCY, "release", 1250, 0, 0, -1250, ID, null));
        accounts.set(0, new Account(ALICE, Checker.CURRENCY, OPENING, 0));
        assertEquals(Set.of(Breach.LEDGER_POSTED_DIFFERS), ledgerBreaches());
    }

    @Test
    void aHoldLeftOnAFailedTransferIsCaught() {
        // the provider rejected it and the fence to failed did not release the hold
        failedTransfer();
        entries.remove(2);
        accounts.set(0, new Account(ALICE, Checker.CURRENCY, OPENING, 1250));
        assertEquals(Set.of(Breach.LEDGER_HELD_DIFFERS), ledgerBreaches());
    }

    @Test
    void aNegativeAvailableBalanceIsCaught() {
        // a funds check that let a transfer through on money the account did not have
        entries.set(0, opening(1000));
        accounts.set(0, new Account(ALICE, Checker.CURRENCY, 1000 - 1250, 0));
        assertEquals(Set.of(Breach.LEDGER_NEGATIVE), ledgerBreaches());
    }

    @Test
    void aReCreatedTransferThatHoldsNothingIsCaught() {
        // the database lost the transfer with its hold; re-created without one, the lookup made it sent, and nothing posted
        holding.clear();
        entries.subList(1, 3).clear();
        accounts.set(0, new Account(ALICE, Checker.CURRENCY, OPENING, 0));
        assertEquals(Set.of(Breach.LEDGER_UNHELD, Breach.LEDGER_POSTED_DIFFERS), ledgerBreaches());
    }

    @Test
    void aReCreationPaidPastTheFundsLeavesADebtThatPasses() {
        // opened with 1,000; the re-created 1,250 was paid by the provider all the same: the account owes 250
        entries.set(0, opening(1000));
        accounts.set(0, new Account(ALICE, Checker.CURRENCY, 1000 - 1250, 0, 250));
        assertEquals(Set.of(), ledgerBreaches());
        // owing more than the shortfall would let nothing through that should pass, and hides a wrong balance
        accounts.set(0, new Account(ALICE, Checker.CURRENCY, 1000 - 1250, 0, 300));
        assertEquals(Set.of(Breach.LEDGER_NEGATIVE), ledgerBreaches());
    }

    @Test
    void legsThatDoNotSumToZeroAreCaught() {
        // the settlement leg of the posting is not the customer leg's opposite: money made or lost in the books
        entries.set(2, new Entry(ALICE, Checker.CURRENCY, "post", 1250, -1250, 1000, -1250, ID, null));
        assertEquals(Set.of(Breach.LEDGER_UNBALANCED), ledgerBreaches());
    }

    @Test
    void aPostingOfATransferTheProviderNeverExecutedIsCaught() {
        // the transfer failed (rejected), yet a stale fence posted it
        failedTransfer();
        assertEquals(Set.of(Breach.LEDGER_POSTING_UNEXECUTED, Breach.LEDGER_POSTED_DIFFERS), ledgerBreaches());
    }

    @Test
    void aTransferPostedTwiceIsCaught() {
        entries.add(post(ID, 1250));
        accounts.set(0, new Account(ALICE, Checker.CURRENCY, OPENING - 2500, 0));
        assertEquals(Set.of(Breach.LEDGER_POSTING_UNEXECUTED, Breach.LEDGER_POSTED_DIFFERS), ledgerBreaches());
    }

    private void failedTransfer() {
        transfers.set(0, row(ID, KEY, 1250, "failed", REF));
        events.put(ID, List.of(event(0, null, "pending"), event(1, "pending", "processing"), event(2, "processing", "failed")));
        orders.set(0, order(REF, 1250, OrderOutcome.REJECTED));
        providerExecutions = 0;
    }

    private static Entry opening(long amount) {
        return new Entry(ALICE, Checker.CURRENCY, "opening", amount, amount, -amount, 0, null, null);
    }

    private static Entry hold(String id, long amount) {
        return new Entry(ALICE, Checker.CURRENCY, "hold", amount, 0, 0, amount, id, null);
    }

    private static Entry post(String id, long amount) {
        return new Entry(ALICE, Checker.CURRENCY, "post", amount, -amount, amount, -amount, id, null);
    }

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
    void aFinalRowRestoredFromItsIdempotencyRecordIsALegalHistoryAndNothingElseIs() {
        // one event, straight to the final status at the version the record kept: what a replay restores
        events.put(ID, List.of(new Event(2, null, "sent", "i-2", Checker.RESTORED_FINAL + " from its idempotency record")));
        assertEquals(Set.of(), breaches());
        // but not under another reason, at a version no final status has, or to an open status
        events.put(ID, List.of(new Event(2, null, "sent", "i-2", "accepted")));
        assertEquals(Set.of(Breach.ILLEGAL_HISTORY), breaches());
        events.put(ID, List.of(new Event(0, null, "sent", "i-2", Checker.RESTORED_FINAL)));
        assertEquals(Set.of(Breach.ILLEGAL_HISTORY), breaches());
        transfers.set(0, row(ID, KEY, 1250, "reconciling", REF));
        events.put(ID, List.of(new Event(2, null, "reconciling", "i-2", Checker.RESTORED_FINAL)));
        assertTrue(breaches().contains(Breach.ILLEGAL_HISTORY));
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

    // PostgreSQL crashed at 100 ms, after the baseline's 201 (answered at 20 ms), and lost that transfer's row;
    // it was up again at 300 ms

    private static final long CRASH_MS = 100;
    private static final long RESTART_MS = 300;
    private static final String ID2 = "6f1c0000-0000-0000-0000-000000000002";
    private static final String REF2 = "ll_6f1c0000000000000000000000000002";

    private void crashLostTheRow() {
        crashes = new Crashes(List.of(new Loss(ALICE, KEY, ID, CRASH_MS * MS, RESTART_MS * MS)), Set.of());
        transfers.clear();
        events.clear();
    }

    @Test
    void aLostIntentNoClientRetriedIsReportedNotHidden() {
        // the row and its events are gone; the payment it sent before the crash is still traced to its intent
        crashLostTheRow();
        Checker.Report report = Checker.verify("mutant", facts(), 0, TTL);
        assertEquals(Set.of(), report.breaches());
        assertEquals(1, report.lost());
        assertEquals(1, report.lostNeverRetried());
        assertTrue(report.row().contains("lost, never retried: 1"), report.row());

        // the same history without the crash's record is a service that lost a 201 and paid for nothing it holds
        crashes = null;
        assertEquals(Set.of(Breach.LOST_CREATED, Breach.CREATED_FOR_ANOTHER_TRANSFER, Breach.UNOWNED_REFERENCE,
                Breach.EXECUTIONS_UNACCOUNTED), Checker.verify("mutant", facts(), 0, TTL).breaches());
    }

    @Test
    void aLostIntentRecreatedUnderItsIdAndReferenceAndReplayedFinishesOnce() {
        // the retry after the crash re-creates the row from the intent: same id, same reference, one execution
        crashLostTheRow();
        transfers.add(row(ID, KEY, 1250, "sent", REF));
        events.put(ID, sentPath());
        requests.add(new Request(ALICE, KEY, 1250, "i-2", 500 * MS, 520 * MS, Outcome.REPLAYED, 201, ID, null, null));
        Checker.Report report = Checker.verify("mutant", facts(), 1, TTL);
        assertEquals(Set.of(), report.breaches());
        assertEquals(1, report.lost());
        assertEquals(0, report.lostNeverRetried());
        assertTrue(report.row().contains("retried and finished once 1"), report.row());
    }

    @Test
    void aLostIntentRetriedIntoANewTransferWithANewReferencePaysTwice() {
        // the retry found the Redis entry without its row, made a new transfer with a new reference and sent it;
        // the lost row's payment had gone out before the crash
        crashLostTheRow();
        transfers.add(row(ID2, KEY, 1250, "sent", REF2));
        events.put(ID2, sentPath());
        requests.add(created(KEY, 1250, ID2, 500));
        orders.add(order(REF2, 1250, OrderOutcome.EXECUTED));
        providerExecutions = 2;
        Checker.Report report = Checker.verify("mutant", facts(), 1, TTL);
        assertEquals(Set.of(Breach.INTENT_PAID_TWICE, Breach.LOST_RETRY_NOT_ONCE, Breach.TWO_CREATED_FOR_ONE_KEY,
                Breach.CREATED_FOR_ANOTHER_TRANSFER), report.breaches());
        assertEquals(1, report.duplicates());
    }

    @Test
    void aLostIntentRetriedIntoANewTransferBeforeItsFirstSendPassesOnlyTheMoneyChecks() {
        // the row was lost before anything was sent: one payment, but the client heard "created" twice, two ids
        crashLostTheRow();
        orders.clear();
        transfers.add(row(ID2, KEY, 1250, "sent", REF2));
        events.put(ID2, sentPath());
        requests.add(created(KEY, 1250, ID2, 500));
        orders.add(order(REF2, 1250, OrderOutcome.EXECUTED));
        assertEquals(Set.of(Breach.TWO_CREATED_FOR_ONE_KEY, Breach.CREATED_FOR_ANOTHER_TRANSFER), breaches());
    }

    @Test
    void aLostIntentRetriedWithoutItsRecordIntoATransferLookedUpFirstFinishesOnce() {
        // the retry could not read the Redis entry and found no row: a new id, the derived reference, a lookup first
        // that found the payment made before the crash. Two 'created' answers, one payment: what the service can do
        crashLostTheRow();
        transfers.add(row(ID2, KEY, 1250, "sent", REF));
        events.put(ID2, List.of(new Event(0, null, "reconciling", "i-2",
                        "accepted without its idempotency record, on a database that may have lost it: look up before any send"),
                event(1, "reconciling", "sent")));
        requests.add(created(KEY, 1250, ID2, 500));
        Checker.Report report = Checker.verify("mutant", facts(), 1, TTL);
        assertEquals(Set.of(), report.breaches());
        assertTrue(report.row().contains("retried and finished once 1"), report.row());

        // the same answers for a row that started pending are a retry the service took for a new intent
        events.put(ID2, sentPath());
        assertEquals(Set.of(Breach.TWO_CREATED_FOR_ONE_KEY, Breach.CREATED_FOR_ANOTHER_TRANSFER), breaches());
        // and a lookup first does not excuse a third 'created'
        events.put(ID2, List.of(new Event(0, null, "reconciling", "i-2", "accepted without its idempotency record"),
                event(1, "reconciling", "sent")));
        requests.add(created(KEY, 1250, ID2, 600));
        assertEquals(Set.of(Breach.TWO_CREATED_FOR_ONE_KEY), breaches());
    }

    @Test
    void aRetryOfALostIntentAnsweredWithoutItsRowIsCaught() {
        // the retry was answered from the cache alone; the row never came back, so the 201 names nothing
        crashLostTheRow();
        requests.add(new Request(ALICE, KEY, 1250, "i-2", 500 * MS, 520 * MS, Outcome.REPLAYED, 201, ID, null, null));
        assertEquals(Set.of(Breach.LOST_CREATED, Breach.LOST_RETRY_NOT_ONCE), Checker.verify("mutant", facts(), 0, TTL).breaches());
    }

    @Test
    void aLostIntentWhoseRetriesWentUnansweredIsReported() {
        crashLostTheRow();
        requests.add(new Request(ALICE, KEY, 1250, "i-2", 500 * MS, 900 * MS, Outcome.UNKNOWN, -1, null, null,
                Unknown.CLIENT_TIMEOUT));
        Checker.Report report = Checker.verify("mutant", facts(), 0, TTL);
        assertEquals(Set.of(), report.breaches());
        assertEquals(0, report.lostNeverRetried());
        assertTrue(report.row().contains("retried without an answer 1"), report.row());
    }

    @Test
    void aLostIntentsKeyStillRefusesAnotherBody() {
        // the user edited the amount after the crash: the key is still the acknowledged intent's, so 422
        crashLostTheRow();
        requests.add(new Request(ALICE, KEY, 1251, "i-2", 500 * MS, 520 * MS, Outcome.REUSED_422, 422, null, null, null));
        assertEquals(Set.of(), Checker.verify("mutant", facts(), 0, TTL).breaches());
        // but not the acknowledged body itself
        requests.add(new Request(ALICE, KEY, 1250, "i-2", 600 * MS, 620 * MS, Outcome.REUSED_422, 422, null, null, null));
        assertEquals(Set.of(Breach.WRONG_422, Breach.LOST_RETRY_NOT_ONCE), Checker.verify("mutant", facts(), 0, TTL).breaches());
    }

    @Test
    void aKeyWhoseUnansweredBodyACrashMayHaveTakenRefusesAnotherBody() {
        // a request whose answer never came (committed, then forgotten by the crash: no client ever saw its id),
        // then the user edits the amount under the same key: the service still holds the first body, so 422
        crashes = new Crashes(List.of(), Set.of());
        String key = "edited-after-a-lost-commit";
        requests.add(new Request(ALICE, key, 1300, "i-1", 50 * MS, 400 * MS, Outcome.UNKNOWN, -1, null, null,
                Unknown.CLIENT_TIMEOUT));
        requests.add(new Request(ALICE, key, 1301, "i-2", 500 * MS, 520 * MS, Outcome.REUSED_422, 422, null, null, null));
        assertEquals(Set.of(), Checker.verify("mutant", facts(), 0, TTL).breaches());
        // not for the unanswered body itself, and not where nothing crashed
        requests.add(new Request(ALICE, key, 1300, "i-2", 600 * MS, 620 * MS, Outcome.REUSED_422, 422, null, null, null));
        assertEquals(Set.of(Breach.WRONG_422), Checker.verify("mutant", facts(), 0, TTL).breaches());
        requests.remove(requests.size() - 1);
        crashes = null;
        assertEquals(Set.of(Breach.WRONG_422), Checker.verify("mutant", facts(), 0, TTL).breaches());
    }

    @Test
    void afterACrashAnExecutionNoIntentSentIsStillUnowned() {
        crashes = new Crashes(List.of(), Set.of());
        orders.add(order("ll_6f1c0000000000000000000000000099", 7777, OrderOutcome.EXECUTED));
        providerExecutions = 2;
        assertEquals(Set.of(Breach.UNOWNED_REFERENCE, Breach.EXECUTIONS_UNACCOUNTED), breaches());
    }

    @Test
    void afterACrashAnExecutionWhoseAmountTwoIntentsSentIsStillUnowned() {
        // the amount alone cannot say which intent it paid
        crashes = new Crashes(List.of(), Set.of());
        requests.add(new Request(ALICE, "key-2", 1250, "i-1", 30 * MS, 400 * MS, Outcome.UNKNOWN, -1, null, null,
                Unknown.CLIENT_TIMEOUT));
        orders.add(order("ll_6f1c0000000000000000000000000099", 1250, OrderOutcome.EXECUTED));
        providerExecutions = 2;
        assertEquals(Set.of(Breach.UNOWNED_REFERENCE, Breach.EXECUTIONS_UNACCOUNTED), breaches());
    }

    @Test
    void aCrashExcusesAnEarlierDeadlineOnlyForTransfersThatExistedBeforeIt() {
        // the claim whose send executed was taken back by the crash; the row was claimed again with a new deadline
        orders.set(0, new Order(REF, 1250, Checker.CURRENCY, Checker.IBAN, Checker.NAME, DEADLINE.minusSeconds(3),
                OrderOutcome.EXECUTED));
        crashes = new Crashes(List.of(), Set.of(REF));
        assertEquals(Set.of(), breaches());
        crashes = new Crashes(List.of(), Set.of());
        assertEquals(Set.of(Breach.EXECUTED_UNDER_ANOTHER_DEADLINE), breaches());
    }

    @Test
    void aLostIntentIsStillPaidOnlyOnce() {
        // the lost row's payment executed twice under its one reference (a lost claim, sent again)
        crashLostTheRow();
        orders.add(order(REF, 1250, OrderOutcome.EXECUTED));
        providerExecutions = 2;
        Checker.Report report = Checker.verify("mutant", facts(), 0, TTL);
        assertEquals(2, report.executions());
        assertEquals(1, report.duplicates());
        assertEquals(Set.of(Breach.DUPLICATE_EXECUTION), report.breaches());
    }

    private Set<Breach> breaches() {
        return Checker.verify("mutant", facts(), 1, TTL).breaches();
    }

    /** The breaches with the ledger's invariants checked too (the other mutants leave the ledger out). */
    private Set<Breach> ledgerBreaches() {
        Facts facts = facts().withLedger(new Ledger(accounts, entries, holding));
        return Checker.verify("mutant", facts, 1, TTL).breaches();
    }

    private Facts facts() {
        return new Facts(transfers, events, requests, deadClients, orders, providerExecutions, brokenInstances, crashes);
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
