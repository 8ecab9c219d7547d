package dev.ledgerline.transfers;

import org.junit.platform.suite.api.SelectPackages;
import org.junit.platform.suite.api.Suite;

/** The second part of the service's tests (see {@link PipelineSuite}): a request's way in, through Redis and PostgreSQL. */
@Suite
@SelectPackages({"dev.ledgerline.transfers.api", "dev.ledgerline.transfers.account", "dev.ledgerline.transfers.idempotency",
        "dev.ledgerline.transfers.events", "dev.ledgerline.transfers.redis"})
public class RequestsSuite {
}
