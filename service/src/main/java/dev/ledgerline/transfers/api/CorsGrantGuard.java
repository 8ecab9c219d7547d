package dev.ledgerline.transfers.api;

import io.quarkus.vertx.http.runtime.filters.Filters;
import io.vertx.core.MultiMap;
import io.vertx.core.http.HttpHeaders;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import java.util.List;

/**
 * An answer that grants no origin grants nothing else either: when Quarkus' CORS filter refuses an origin
 * it still writes its allowed methods, headers and exposed headers, which tells a stranger exactly what a
 * listed app may send. Stripping every {@code Access-Control-*} header from an answer without
 * {@code Access-Control-Allow-Origin} leaves a refused origin with no CORS header at all, whatever the allow-list
 * in {@code quarkus.http.cors.*} says. A request without {@code Origin} (mobile apps, services: nearly every request)
 * is not a CORS request, and Quarkus' filter writes nothing for it, so no hook is set for it ({@code CorsTest} checks
 * that such an answer carries no CORS header).
 */
@ApplicationScoped
public class CorsGrantGuard {

    /** Above Quarkus' CORS filter, so the hook is in place before a preflight is answered. */
    static final int PRIORITY = 1000;

    private static final List<String> GRANTS = List.of("Access-Control-Allow-Methods", "Access-Control-Allow-Headers",
            "Access-Control-Expose-Headers", "Access-Control-Allow-Credentials", "Access-Control-Max-Age");

    void register(@Observes Filters filters) {
        filters.register(rc -> {
            if (rc.request().headers().contains(HttpHeaders.ORIGIN)) {
                rc.addHeadersEndHandler(ignored -> {
                    MultiMap headers = rc.response().headers();
                    if (!headers.contains(HttpHeaders.ACCESS_CONTROL_ALLOW_ORIGIN)) {
                        GRANTS.forEach(headers::remove);
                    }
                });
            }
            rc.next();
        }, PRIORITY);
    }
}
