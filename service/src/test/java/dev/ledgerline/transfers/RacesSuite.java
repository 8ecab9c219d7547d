package dev.ledgerline.transfers;

import org.junit.platform.suite.api.SelectClasses;
import org.junit.platform.suite.api.SelectPackages;
import org.junit.platform.suite.api.Suite;

/**
 * The fourth part of the service's tests (see {@link PipelineSuite}): the cancel race, the longest class of the
 * pipeline's, and the provider conformance kit, the longest of what {@link RestSuite} would take, so that no part
 * runs much longer than the others.
 */
@Suite
@SelectClasses(names = "dev.ledgerline.transfers.pipeline.CancelRaceTest")
@SelectPackages("dev.ledgerline.transfers.conformance")
public class RacesSuite {
}
