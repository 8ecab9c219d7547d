package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.idempotency.IdempotencyService;
import dev.ledgerline.transfers.pipeline.Backlog;
import dev.ledgerline.transfers.pipeline.ClockWatch;
import dev.ledgerline.transfers.pipeline.Dispatcher;
import dev.ledgerline.transfers.pipeline.Sweeper;
import dev.ledgerline.transfers.pipeline.TransferProcessor;
import dev.ledgerline.transfers.provider.ProviderClient;
import dev.ledgerline.transfers.provider.ProviderClock;
import dev.ledgerline.transfers.provider.ProviderHttp;
import dev.ledgerline.transfers.redis.RedisCommands;
import dev.ledgerline.transfers.security.CachingJwtParser;
import dev.ledgerline.transfers.service.TransferService;
import dev.ledgerline.transfers.transfer.TransferRepository;
import io.quarkus.arc.Arc;
import io.quarkus.arc.ClientProxy;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.spi.Bean;
import jakarta.inject.Singleton;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * The beans every request goes through are {@code @Singleton}: called directly, not through a client proxy that looks
 * the context up on each call. The one that cannot be, the request filter Quarkus REST generates around
 * {@link BodySizeFilter#limitBody} (it reads runtime configuration, so it is {@code @ApplicationScoped} and built after
 * static init), is built at start-up: built at the first request instead, a second event loop serving a first request
 * meanwhile waited on its creation lock. A profile of its own starts an application that has served no request.
 */
@QuarkusTest
@TestProfile(RequestPathBeansTest.Fresh.class)
class RequestPathBeansTest {

    /** The default test settings, in an application of its own. */
    public static class Fresh implements QuarkusTestProfile {
    }

    private static final List<Class<?>> REQUEST_PATH = List.of(TransferResource.class, TransferRequestParser.class,
            TransferService.class, IdempotencyService.class, TransferRepository.class,
            RedisCommands.class, CachingJwtParser.class, Dispatcher.class, TransferProcessor.class, ClockWatch.class,
            Backlog.class, Sweeper.class, ProviderClient.class, ProviderHttp.class, ProviderClock.class);

    @Test
    void everyBeanOnTheRequestPathIsASingleton() {
        for (Class<?> type : REQUEST_PATH) {
            assertEquals(Singleton.class, scopeOf(type), type.getName());
        }
    }

    /**
     * The database pool and the Redis data source are Quarkus's {@code @ApplicationScoped} beans, reached through client
     * proxies that look the application context up on each call (two per statement for the Mutiny pool and the pool it
     * wraps): the request path holds the instances themselves.
     */
    @Test
    void theDatabasePoolAndRedisAreCalledWithoutClientProxies() throws ReflectiveOperationException {
        Object pool = field(TransferRepository.class, "pool");
        assertFalse(pool instanceof ClientProxy, pool.getClass().getName());
        Object wrapped = ((Pool) pool).getDelegate();
        assertFalse(wrapped instanceof ClientProxy, wrapped.getClass().getName());
        Object redis = field(RedisCommands.class, "redis");
        assertFalse(redis instanceof ClientProxy, redis.getClass().getName());
    }

    private static Object field(Class<?> bean, String name) throws ReflectiveOperationException {
        Field field = bean.getDeclaredField(name);
        field.setAccessible(true);
        return field.get(Arc.container().instance(bean).get());
    }

    @Test
    void theGeneratedBodySizeFilterIsBuiltBeforeTheFirstRequest() throws ClassNotFoundException {
        Class<?> generated = Class.forName(BodySizeFilter.GENERATED + "ServerRequestFilter$limitBody", false,
                Thread.currentThread().getContextClassLoader());
        assertEquals(ApplicationScoped.class, scopeOf(generated), "behind a client proxy, so built at its first call");
        Bean<?> bean = Arc.container().beanManager().getBeans(generated).iterator().next();
        assertNotNull(Arc.container().getActiveContext(ApplicationScoped.class).get(bean),
                "no request has reached this application, and the filter is built already");
    }

    private static Class<?> scopeOf(Class<?> type) {
        Set<Bean<?>> beans = Arc.container().beanManager().getBeans(type, Any.Literal.INSTANCE);
        assertEquals(1, beans.size(), () -> type.getName() + " resolves to " + beans);
        return beans.iterator().next().getScope();
    }
}
