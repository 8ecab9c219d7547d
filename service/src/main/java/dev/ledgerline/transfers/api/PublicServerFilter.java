package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import io.quarkus.smallrye.openapi.OpenApiFilter;
import io.smallrye.config.SmallRyeConfig;
import org.eclipse.microprofile.config.ConfigProvider;
import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.OASFilter;
import org.eclipse.microprofile.openapi.models.OpenAPI;

import java.util.List;

/**
 * Points the served contract at the API: the document at {@code /q/openapi} is read on the management port, so the
 * contract's relative server {@code /} would send Swagger UI's "Try it out" to the management port, where no
 * {@code /v1} route exists. When {@code ledgerline.api-docs.public-url} is set, the served document's only server is
 * that URL; the contract file itself keeps {@code /} (docs/operating.md "Ports").
 *
 * <p>Runs once at start-up, on the document built from {@code openapi.yaml}: the URL is run-time configuration, so one
 * build serves every environment.
 */
@OpenApiFilter(stages = OpenApiFilter.RunStage.RUNTIME_STARTUP)
public class PublicServerFilter implements OASFilter {

    @Override
    public void filterOpenAPI(OpenAPI openAPI) {
        LedgerlineConfig config = ConfigProvider.getConfig().unwrap(SmallRyeConfig.class).getConfigMapping(LedgerlineConfig.class);
        config.apiDocs().publicUrl().ifPresent(url -> openAPI.setServers(List.of(OASFactory.createServer()
                .url(url)
                .description("the API of this deployment (ledgerline.api-docs.public-url)"))));
    }
}
