package dev.ledgerline.transfers.support;

import io.quarkus.test.common.QuarkusTestResource;

/** Registers the local stack for every {@code @QuarkusTest} in the suite. */
@QuarkusTestResource(LocalStackResource.class)
public final class GlobalTestResources {

    private GlobalTestResources() {
    }
}
