package dev.ledgerline.transfers.faults;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledgerline.devstack.sandbox.SandboxFaults;
import dev.ledgerline.devstack.sandbox.SandboxLedger;
import dev.ledgerline.devstack.sandbox.Wire;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The sandbox provider's HTTP contract (docs/provider.md "The sandbox provider", {@code /sandbox/provider/*}) served from the suite's own JVM over
 * {@link SandboxLedger} — the class the dev/test sandbox uses — because the packaged prod jar must not
 * contain the sandbox. Routes sit at the root: point {@code QUARKUS_REST_CLIENT_PROVIDER_URL} at {@link #url()}.
 */
public final class ProviderServer implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final SandboxLedger ledger = new SandboxLedger();
    private final Vertx vertx = Vertx.vertx();
    private HttpServer server;

    private ProviderServer() {
    }

    public static ProviderServer start() throws Exception {
        ProviderServer provider = new ProviderServer();
        try {
            provider.server = provider.vertx.createHttpServer()
                    .requestHandler(provider::handle)
                    .listen(0, "127.0.0.1")
                    .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            provider.close();
            throw e;
        }
        return provider;
    }

    public SandboxLedger ledger() {
        return ledger;
    }

    public String url() {
        return "http://127.0.0.1:" + server.actualPort();
    }

    private void handle(HttpServerRequest request) {
        String path = request.path();
        try {
            if (path.equals("/payments") && request.method() == HttpMethod.POST) {
                String reference = request.getHeader("Idempotency-Key");
                String notAfter = request.getHeader(Wire.NOT_AFTER);
                request.body().onSuccess(body -> {
                    Wire.PaymentOrder order;
                    try {
                        order = body == null || body.length() == 0 ? null
                                : JSON.readValue(body.getBytes(), Wire.PaymentOrder.class);
                    } catch (Exception unreadable) {
                        order = null;
                    }
                    // a held send is applied on the ledger's own timer, whether or not the service still waits
                    var context = vertx.getOrCreateContext();
                    ledger.send(reference, order, notAfter).whenComplete((answer, failure) -> context.runOnContext(v -> {
                        if (failure != null) {
                            respond(request, 500, null);
                        } else {
                            respond(request, answer.status(), answer.body());
                        }
                    }));
                });
            } else if (path.startsWith("/payments/") && request.method() == HttpMethod.GET) {
                SandboxLedger.Answer answer = ledger.lookup(path.substring("/payments/".length()));
                respond(request, answer.status(), answer.body());
            } else if (path.equals("/orders") && request.method() == HttpMethod.GET) {
                respond(request, 200, ledger.orders());
            } else if (path.equals("/faults") && request.method() == HttpMethod.PUT) {
                request.body().onSuccess(body -> {
                    try {
                        respond(request, 200, ledger.setFaults(JSON.readValue(body.getBytes(), SandboxFaults.class)));
                    } catch (Exception e) {
                        respond(request, 400, null);
                    }
                });
            } else if (path.equals("/faults") && request.method() == HttpMethod.GET) {
                respond(request, 200, ledger.faults());
            } else if (path.equals("/faults") && request.method() == HttpMethod.DELETE) {
                ledger.reset();
                respond(request, 204, null);
            } else if (path.equals("/stats") && request.method() == HttpMethod.GET) {
                respond(request, 200, ledger.stats());
            } else {
                respond(request, 404, null);
            }
        } catch (RuntimeException e) {
            respond(request, 500, null);
        }
    }

    /**
     * Every send the provider applied, as the checker reads it: what was paid, to whom, under which deadline,
     * and whether it executed, was rejected or came past its deadline. {@code orders().size()} marks the start
     * of a scenario.
     */
    List<Checker.Order> orders() {
        return ledger.orders().stream().map(o -> new Checker.Order(o.reference(), o.amount(), o.currency(), o.iban(), o.name(),
                o.notAfter(), switch (o.outcome()) {
                    case "executed" -> Checker.OrderOutcome.EXECUTED;
                    case "rejected" -> Checker.OrderOutcome.REJECTED;
                    case "expired" -> Checker.OrderOutcome.EXPIRED;
                    default -> throw new IllegalStateException("an order outcome the checker does not know: " + o);
                })).toList();
    }

    /** Every answer is dated by the sandbox's own clock ({@code clockOffsetMs}), as a real provider's would be. */
    private void respond(HttpServerRequest request, int status, Object body) {
        var response = request.response().setStatusCode(status).putHeader("Date", ledger.httpDate());
        if (body == null) {
            response.end();
            return;
        }
        try {
            response.putHeader("Content-Type", "application/json").end(JSON.writeValueAsString(body));
        } catch (Exception e) {
            response.setStatusCode(500).end();
        }
    }

    @Override
    public void close() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
}
