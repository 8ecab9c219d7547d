package dev.ledgerline.transfers;

import org.junit.platform.suite.api.SelectPackages;
import org.junit.platform.suite.api.Suite;

/**
 * The first half of the service's tests, which surefire runs beside {@link RestHalfSuite}, one per JVM (see the
 * service's pom): the pipeline and the Redis-specific suites, which wait longest on leases, retries and outages.
 * Between them the two halves select every test class once, and a new package lands in the other half without anyone
 * listing it.
 */
@Suite
@SelectPackages({"dev.ledgerline.transfers.pipeline", "dev.ledgerline.transfers.redis"})
public class BackgroundHalfSuite {
}
