package dev.ledgerline.transfers.support;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Installs {@link ContractValidation} before every test class and test, whatever the test calls first.
 * Registered for the whole suite through {@code META-INF/services} and JUnit's extension autodetection
 * (enabled by quarkus-junit-config and, explicitly, in the Surefire configuration), so no test can forget it.
 *
 * <p>A {@code @QuarkusTest} runs in Quarkus' class loader, which has its own copy of REST Assured's
 * static configuration; the filter is therefore installed reflectively through the class loader of the
 * test class (and of the test instance and the thread), not only through the one that loaded this class.
 */
public class ContractValidationExtension implements BeforeAllCallback, BeforeEachCallback {

    @Override
    public void beforeAll(ExtensionContext context) {
        install(context);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        install(context);
    }

    private static void install(ExtensionContext context) {
        Set<ClassLoader> loaders = new LinkedHashSet<>();
        context.getTestClass().ifPresent(c -> loaders.add(c.getClassLoader()));
        context.getTestInstance().ifPresent(i -> loaders.add(i.getClass().getClassLoader()));
        loaders.add(Thread.currentThread().getContextClassLoader());
        loaders.add(ContractValidationExtension.class.getClassLoader());
        for (ClassLoader loader : loaders) {
            if (loader == null) {
                continue;
            }
            try {
                Class.forName(ContractValidation.class.getName(), true, loader).getMethod("install").invoke(null);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("Could not install the contract validation filter in " + loader, e);
            }
        }
    }
}
