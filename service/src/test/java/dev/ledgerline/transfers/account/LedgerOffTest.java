package dev.ledgerline.transfers.account;

import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.SideSettings;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.UUID;

import static dev.ledgerline.transfers.support.Api.as;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@code ledgerline.ledger.enabled=false}, for balances kept in a core-banking system: a transfer is accepted whatever
 * the balance, as before the ledger, holds nothing, and ends without moving any account.
 */
@QuarkusTest
@TestProfile(SideSettings.class)
class LedgerOffTest {

    @Test
    void withTheLedgerOffATransferBeyondAnyBalanceIsAcceptedAndHoldsNothing() {
        String p = "ledger-off-" + UUID.randomUUID();
        String token = Api.writer(p);
        String id = Api.post(token, Api.newKey(), Api.body(AccountsTest.OPENING + 1)).then().statusCode(201).extract().path("id");
        Await.status(id, "sent", Duration.ofSeconds(30));
        as(token).get("/v1/accounts/me").then().statusCode(200).body("balances.size()", equalTo(0));
        assertEquals(0, Db.count("SELECT count(*) FROM ledger_entries WHERE principal = ?", p));
        assertEquals(0, Db.count("SELECT count(*) FROM transfers WHERE user_id = ? AND holds_funds", p));
    }
}
