package dev.ledgerline.transfers.metrics;

import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** How the service's meters are built from {@link Meters}. */
class MetersTest {

    /**
     * A second application in one JVM registers its gauges in the global registry the first one left its own in
     * (Quarkus outside dev mode): the export must read the second one's state, not the stopped one's.
     */
    @Test
    void aGaugeRegisteredAgainReadsTheNewStateNotTheOneLeftBehind() {
        CompositeMeterRegistry global = new CompositeMeterRegistry();
        SimpleMeterRegistry first = new SimpleMeterRegistry();
        global.add(first);
        AtomicLong stopped = new AtomicLong(0);
        Meters.OVERLOAD_PENDING.gauge(global, stopped, AtomicLong::get);
        global.remove(first); // what Quarkus does with the registry of an application that stopped (but not with its meters)

        SimpleMeterRegistry second = new SimpleMeterRegistry();
        global.add(second);
        AtomicLong running = new AtomicLong(7);
        Meters.OVERLOAD_PENDING.gauge(global, running, AtomicLong::get);

        assertEquals(7.0, second.get(Meters.OVERLOAD_PENDING.meterName()).gauge().value());
        assertEquals(7.0, global.get(Meters.OVERLOAD_PENDING.meterName()).gauge().value());
        running.set(9);
        assertEquals(9.0, second.get(Meters.OVERLOAD_PENDING.meterName()).gauge().value());
        assertEquals(1, global.find(Meters.OVERLOAD_PENDING.meterName()).gauges().size());
    }

    @Test
    void aGaugeOfTaggedSeriesReplacesOnlyItsOwnSeries() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        AtomicLong postgres = new AtomicLong(1);
        AtomicLong provider = new AtomicLong(2);
        Meters.CLOCK_OFFSET.gauge(registry, postgres, AtomicLong::get, "postgres");
        Meters.CLOCK_OFFSET.gauge(registry, provider, AtomicLong::get, "provider");
        Meters.CLOCK_OFFSET.gauge(registry, new AtomicLong(3), AtomicLong::get, "provider");

        assertEquals(1.0, registry.get(Meters.CLOCK_OFFSET.meterName()).tag("peer", "postgres").gauge().value());
        assertEquals(3.0, registry.get(Meters.CLOCK_OFFSET.meterName()).tag("peer", "provider").gauge().value());
    }

    @Test
    void theServicesMetersGoToTheOneRegistryUnderTheCompositeAndOtherwiseToTheComposite() {
        CompositeMeterRegistry composite = new CompositeMeterRegistry();
        assertSame(composite, ServiceMeterRegistry.direct(composite));
        SimpleMeterRegistry only = new SimpleMeterRegistry();
        composite.add(only);
        assertSame(only, ServiceMeterRegistry.direct(composite));
        composite.add(new SimpleMeterRegistry());
        assertSame(composite, ServiceMeterRegistry.direct(composite));
        assertSame(only, ServiceMeterRegistry.direct(only));
    }

    @Test
    void aMeterTakesExactlyItsTagKeys() {
        assertThrows(IllegalArgumentException.class, () -> Meters.CLOCK_OFFSET.gauge(Metrics.globalRegistry, new AtomicLong(), AtomicLong::get));
        assertThrows(IllegalArgumentException.class, () -> Meters.REPLAYS_EARLY.counter("extra"));
    }
}
