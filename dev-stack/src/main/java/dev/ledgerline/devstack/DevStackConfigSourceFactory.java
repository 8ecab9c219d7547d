package dev.ledgerline.devstack;

import io.smallrye.config.ConfigSourceContext;
import io.smallrye.config.ConfigSourceFactory;
import io.smallrye.config.PropertiesConfigSource;
import org.eclipse.microprofile.config.spi.ConfigSource;

import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

/**
 * In the dev profile, when no database or Redis address is configured, has the local stack started and
 * points the service at it. It is a config source factory because only configuration knows the profile
 * this early (before Quarkus starts, the launch mode is not set yet).
 *
 * <p>The local stack itself ({@code local/}) and its server artifacts are not in the packaged application
 * (docs/operating.md "The artifact"): this hook reaches it by name, only in the dev profile, so a prod run never looks it up.
 */
public class DevStackConfigSourceFactory implements ConfigSourceFactory {

    private static final String DEV_STACK = "dev.ledgerline.devstack.DevStack";

    @Override
    public Iterable<ConfigSource> getConfigSources(ConfigSourceContext context) {
        if (!context.getProfiles().contains("dev")
                || configured(context, "quarkus.datasource.reactive.url") || configured(context, "quarkus.redis.hosts")) {
            return List.of();
        }
        return List.of(new PropertiesConfigSource(startDevStack(), "ledgerline-local-stack", 275));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, String> startDevStack() {
        try {
            return (Map<String, String>) Class.forName(DEV_STACK).getMethod("start").invoke(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("The dev profile needs the local stack (" + DEV_STACK + "), which only "
                    + "quarkus:dev and the tests have on their class path", e);
        }
    }

    private static boolean configured(ConfigSourceContext context, String name) {
        var value = context.getValue(name);
        return (value != null && value.getValue() != null && !value.getValue().isBlank()) || System.getProperty(name) != null;
    }

    @Override
    public OptionalInt getPriority() {
        return OptionalInt.of(275);
    }
}
