package dev.ledgerline.transfers;

import org.junit.platform.suite.api.ExcludePackages;
import org.junit.platform.suite.api.SelectPackages;
import org.junit.platform.suite.api.Suite;

/** The third part of the service's tests (see {@link PipelineSuite}): every package the other two do not select. */
@Suite
@SelectPackages("dev.ledgerline.transfers")
@ExcludePackages({"dev.ledgerline.transfers.pipeline", "dev.ledgerline.transfers.api", "dev.ledgerline.transfers.account",
        "dev.ledgerline.transfers.idempotency", "dev.ledgerline.transfers.events", "dev.ledgerline.transfers.redis"})
public class RestSuite {
}
