package dev.ledgerline.transfers;

import org.junit.platform.suite.api.ExcludePackages;
import org.junit.platform.suite.api.SelectPackages;
import org.junit.platform.suite.api.Suite;

/** The second half of the service's tests: every package that {@link BackgroundHalfSuite} does not select. */
@Suite
@SelectPackages("dev.ledgerline.transfers")
@ExcludePackages({"dev.ledgerline.transfers.pipeline", "dev.ledgerline.transfers.redis"})
public class RestHalfSuite {
}
