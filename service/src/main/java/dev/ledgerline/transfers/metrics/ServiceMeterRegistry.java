package dev.ledgerline.transfers.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import java.util.Set;

/**
 * Produces the {@link ServiceMeters} registry. Quarkus injects a composite registry, which forwards every increment
 * and every recording to each registry under it: a walk over an identity map and a second meter per count, 2–3 % of a
 * request's CPU for the dozen meters a transfer touches (bench/CPU-AB.md). With one registry under it (Prometheus, as
 * this service ships) the service registers its meters on that registry itself, where the scrape reads them; with
 * more, or none yet, on the composite, as before. Meters registered here are therefore not found through the
 * composite: tests look them up through this registry too.
 */
public class ServiceMeterRegistry {

    @Produces
    @Singleton
    @ServiceMeters
    MeterRegistry serviceMeters(MeterRegistry injected) {
        return direct(injected);
    }

    /** The one registry under {@code registry} when it is a composite of exactly one; else {@code registry}. */
    static MeterRegistry direct(MeterRegistry registry) {
        if (registry instanceof CompositeMeterRegistry composite) {
            Set<MeterRegistry> under = composite.getRegistries();
            if (under.size() == 1) {
                return under.iterator().next();
            }
        }
        return registry;
    }
}
