package dev.ledgerline.transfers.local;

import io.smallrye.config.ConfigSourceContext;
import io.smallrye.config.ConfigSourceFactory;
import io.smallrye.config.PropertiesConfigSource;
import org.eclipse.microprofile.config.spi.ConfigSource;

import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

/**
 * In the dev profile, when no database or Redis address is configured, starts the local stack and
 * points the service at it. The addresses are also kept as system properties, which both guards
 * against a second stack on live reload and lets every later configuration see them.
 */
public class LocalStackConfigSourceFactory implements ConfigSourceFactory {

    private static final Object LOCK = new Object();

    @Override
    public Iterable<ConfigSource> getConfigSources(ConfigSourceContext context) {
        if (!context.getProfiles().contains("dev")) {
            return List.of();
        }
        synchronized (LOCK) {
            if (configured(context, "quarkus.datasource.reactive.url") || configured(context, "quarkus.redis.hosts")) {
                return List.of();
            }
            System.out.println("No datasource or Redis configured: starting local PostgreSQL and Redis...");
            LocalStack stack = LocalStack.start();
            Map<String, String> props = stack.quarkusProperties();
            props.forEach(System::setProperty);
            Runtime.getRuntime().addShutdownHook(new Thread(stack::close, "local-stack-stop"));
            System.out.printf("Local PostgreSQL on %s, Redis on %s%n", stack.postgres().reactiveUrl(), stack.redis().uri());
            return List.of(new PropertiesConfigSource(props, "ledgerline-local-stack", 275));
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
