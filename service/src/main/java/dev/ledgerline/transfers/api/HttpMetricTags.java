package dev.ledgerline.transfers.api;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.config.MeterFilter;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Keeps the tags of the HTTP server meters to a fixed, small set of values, whatever clients send: a method
 * outside RFC 9110's nine becomes {@code OTHER}, and a path that no route template describes — what a 405,
 * a 400 or a 431 is labelled with — becomes its template when it has one ({@code /v1/transfers/{id}}) and
 * {@code UNMATCHED} otherwise. Without this every invented method name and every junk path was a new,
 * permanent time series, created by anyone without a token, and transfer ids appeared in the metrics.
 */
@Singleton
public class HttpMetricTags {

    static final String OTHER_METHOD = "OTHER";
    static final String UNMATCHED_URI = "UNMATCHED";

    private static final Set<String> METHODS = Set.of("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT");
    /** Labels Quarkus itself uses for requests that matched nothing. */
    private static final Set<String> KEYWORDS = Set.of("NOT_FOUND", "REDIRECTION", "UNKNOWN", "root", "/");
    private static final Set<String> STATIC_PATHS = Set.of("/v1/transfers", "/v1/me/transfers", "/dev/tokens",
            "/q/health", "/q/health/live", "/q/health/ready", "/q/health/started", "/q/metrics", "/q/openapi", "/q/swagger-ui");
    private static final Pattern TRANSFER = Pattern.compile("/v1/transfers/[^/]+/?");
    private static final Pattern TRANSFER_EVENTS = Pattern.compile("/v1/transfers/[^/]+/events/?");
    private static final Pattern TRANSFER_CANCEL = Pattern.compile("/v1/transfers/[^/]+/cancel/?");

    @Produces
    @Singleton
    MeterFilter boundedHttpServerTags() {
        return new MeterFilter() {
            @Override
            public Meter.Id map(Meter.Id id) {
                if (!id.getName().startsWith("http.server")) {
                    return id;
                }
                List<Tag> tags = new ArrayList<>();
                boolean changed = false;
                for (Tag tag : id.getTagsAsIterable()) {
                    String bounded = switch (tag.getKey()) {
                        case "method" -> method(tag.getValue());
                        case "uri" -> uri(tag.getValue());
                        default -> tag.getValue();
                    };
                    changed |= !bounded.equals(tag.getValue());
                    tags.add(Tag.of(tag.getKey(), bounded));
                }
                return changed ? id.replaceTags(tags) : id;
            }
        };
    }

    static String method(String method) {
        return METHODS.contains(method) ? method : OTHER_METHOD;
    }

    static String uri(String uri) {
        if (uri.indexOf('{') >= 0 || KEYWORDS.contains(uri) || STATIC_PATHS.contains(uri)) {
            return uri;
        }
        if (TRANSFER_EVENTS.matcher(uri).matches()) {
            return "/v1/transfers/{id}/events";
        }
        if (TRANSFER_CANCEL.matcher(uri).matches()) {
            return "/v1/transfers/{id}/cancel";
        }
        if (TRANSFER.matcher(uri).matches()) {
            return "/v1/transfers/{id}";
        }
        return UNMATCHED_URI;
    }
}
