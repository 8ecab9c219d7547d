package dev.ledgerline.transfers;

import org.junit.platform.suite.api.SelectPackages;
import org.junit.platform.suite.api.Suite;

/**
 * One of the three parts of the service's tests, which surefire runs side by side, one per JVM (see the service's
 * pom): the pipeline's tests, which wait longest on leases, retries, outages and restarts. With {@link RequestsSuite}
 * and {@link RestSuite} it selects every test class once, and a new package lands in {@link RestSuite} without anyone
 * listing it.
 */
@Suite
@SelectPackages("dev.ledgerline.transfers.pipeline")
public class PipelineSuite {
}
