package dev.ledgerline.transfers.metrics;

import jakarta.inject.Qualifier;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The registry the service's own meters ({@link Meters}) are registered on: the one registry that exports them
 * ({@link ServiceMeterRegistry}), not the composite Quarkus injects by default.
 */
@Qualifier
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.PARAMETER, ElementType.FIELD, ElementType.METHOD, ElementType.TYPE})
public @interface ServiceMeters {
}
