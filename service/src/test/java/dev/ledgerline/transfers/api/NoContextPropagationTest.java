package dev.ledgerline.transfers.api;

import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;
import java.util.function.Function;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * Mutiny hands every callback of every operator to the context-propagation decorator; in this service it has nothing
 * to capture (no CDI context propagation, the JTA transaction left unchanged), so the callback comes back as it went
 * in. An extension that brings a context provider of its own, or a setting that propagates one again, makes every
 * {@code Uni} of the request paths capture and restore it: this test then fails. With nothing to propagate, the
 * decorator itself is taken off ({@code MutinyCallbacks}), so no callback pays even for the look-up.
 */
@QuarkusTest
class NoContextPropagationTest {

    @Test
    void mutinyCallbacksAreNotWrappedForContextPropagation() {
        Supplier<String> supplier = () -> "kept";
        Function<String, String> function = s -> s;
        assertSame(supplier, Infrastructure.decorate(supplier));
        assertSame(function, Infrastructure.decorate(function));
    }

    @Test
    void mutinyHasNoCallbackDecoratorLeft() throws Exception {
        Field decorators = Infrastructure.class.getDeclaredField("CALLBACK_DECORATORS");
        decorators.setAccessible(true);
        assertEquals(0, ((Object[]) decorators.get(null)).length);
    }
}
