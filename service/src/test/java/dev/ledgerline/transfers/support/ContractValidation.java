package dev.ledgerline.transfers.support;

import com.atlassian.oai.validator.OpenApiInteractionValidator;
import com.atlassian.oai.validator.model.Request;
import com.atlassian.oai.validator.report.LevelResolver;
import com.atlassian.oai.validator.report.SimpleValidationReportFormat;
import com.atlassian.oai.validator.report.ValidationReport;
import com.atlassian.oai.validator.restassured.RestAssuredRequest;
import com.atlassian.oai.validator.restassured.RestAssuredResponse;
import io.restassured.RestAssured;
import io.restassured.filter.FilterContext;
import io.restassured.filter.OrderedFilter;
import io.restassured.http.Header;
import io.restassured.response.Response;
import io.restassured.specification.FilterableRequestSpecification;
import io.restassured.specification.FilterableResponseSpecification;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Validates every REST Assured exchange under {@code /v1} against {@code openapi.yaml}, so an
 * undocumented status code, response header or field — or a documented required one that is missing —
 * fails the test that provoked it. Installed as a global REST Assured filter for every test
 * ({@link ContractValidationExtension}, and {@link Api}'s static initialiser), so tests that call
 * {@code given()} directly are covered too. {@code /dev/tokens}, {@code /sandbox/provider/*} and
 * {@code /q/*} are not part of the contract and pass through unchecked.
 *
 * <p>Responses are validated strictly: status, content type, body schema (the schemas forbid
 * additional properties), required headers, and no response header beyond those documented for that
 * status plus the framing headers of HTTP itself. Requests are validated too, but their findings
 * count only when the service <em>accepted</em> the request (any status but 4xx): negative tests send
 * invalid bodies and headers on purpose, and a 4xx is the service agreeing that they are invalid. A
 * request to a path or method the contract does not describe always fails, whatever the answer.
 *
 * <p>Every validated exchange is recorded as (operationId, status), so the drift check can prove that
 * each documented answer was really observed.
 */
public final class ContractValidation implements OrderedFilter {

    /** Headers of HTTP framing that no contract lists; any other response header must be documented. */
    static final Set<String> FRAMING_HEADERS = Set.of("content-type", "content-length", "transfer-encoding", "connection",
            "keep-alive", "date");

    /** Request findings that mean "this exchange is not in the contract at all": never excused. */
    private static final Set<String> UNDOCUMENTED_OPERATION = Set.of("validation.request.path.missing",
            "validation.request.operation.notAllowed");

    private static final ContractValidation INSTANCE = new ContractValidation();

    private final Set<String> observed = ConcurrentHashMap.newKeySet();
    private volatile OpenApiInteractionValidator validator;

    private ContractValidation() {
    }

    /** Adds the filter to REST Assured's global filters unless it is already there; safe to call often. */
    public static synchronized void install() {
        boolean present = RestAssured.filters().stream()
                .anyMatch(f -> f.getClass().getName().equals(ContractValidation.class.getName()));
        if (!present) {
            RestAssured.filters(INSTANCE);
        }
    }

    /** Whether this class loader's REST Assured validates (used by the extension and by a test of it). */
    public static boolean installed() {
        return RestAssured.filters().contains(INSTANCE);
    }

    /** (operationId, status) pairs seen since the last {@link #forgetObservations()}, as {@code "getTransfer 200"}. */
    public static Set<String> observations() {
        return Set.copyOf(INSTANCE.observed);
    }

    public static void forgetObservations() {
        INSTANCE.observed.clear();
    }

    @Override
    public int getOrder() {
        // last before the request is sent, so the request it sees is the one other filters finished
        return OrderedFilter.LOWEST_PRECEDENCE;
    }

    @Override
    public Response filter(FilterableRequestSpecification requestSpec, FilterableResponseSpecification responseSpec,
                           FilterContext ctx) {
        Response response = ctx.next(requestSpec, responseSpec);
        String path = URI.create(requestSpec.getURI()).getRawPath();
        if (path.equals("/v1") || path.startsWith("/v1/")) {
            check(requestSpec, response, path);
        }
        return response;
    }

    private void check(FilterableRequestSpecification requestSpec, Response response, String path) {
        Request request = RestAssuredRequest.of(requestSpec);
        int status = response.statusCode();
        List<String> findings = new ArrayList<>();

        ValidationReport requestReport = validator().validateRequest(request);
        boolean rejected = status >= 400 && status < 500;
        for (ValidationReport.Message m : requestReport.getMessages()) {
            if (m.getLevel() == ValidationReport.Level.ERROR && (!rejected || UNDOCUMENTED_OPERATION.contains(m.getKey()))) {
                findings.add(format(m));
            }
        }
        ValidationReport responseReport = validator().validateResponse(path, request.getMethod(), RestAssuredResponse.of(response));
        for (ValidationReport.Message m : responseReport.getMessages()) {
            if (m.getLevel() == ValidationReport.Level.ERROR) {
                findings.add(format(m));
            }
        }

        Optional<Contract.Operation> operation = Contract.standard().operation(requestSpec.getMethod(), path);
        if (operation.isPresent()) {
            observed.add(operation.get().id() + " " + status);
            Set<String> documented = Contract.standard().responseHeaders(operation.get(), status);
            Set<String> undocumented = new TreeSet<>();
            for (Header h : response.getHeaders()) {
                String name = h.getName().toLowerCase(Locale.ROOT);
                if (!FRAMING_HEADERS.contains(name) && !documented.contains(name)) {
                    undocumented.add(h.getName());
                }
            }
            if (!undocumented.isEmpty()) {
                findings.add("[ERROR] response headers not documented for " + status + " of " + operation.get().id()
                        + ": " + undocumented);
            }
        }

        if (!findings.isEmpty()) {
            String body = response.asString();
            throw new AssertionError("The exchange does not match the API contract " + Contract.standard().source() + ":\n  "
                    + String.join("\n  ", findings)
                    + "\nrequest:  " + requestSpec.getMethod() + " " + requestSpec.getURI()
                    + "\nresponse: " + response.getStatusLine() + "\n" + response.getHeaders()
                    + "\n" + (body.length() > 2000 ? body.substring(0, 2000) + "…" : body));
        }
    }

    private static String format(ValidationReport.Message m) {
        String parameter = m.getContext().flatMap(ValidationReport.MessageContext::getParameter)
                .map(p -> " (" + p.getIn() + " parameter " + p.getName() + ")").orElse("");
        return SimpleValidationReportFormat.getInstance().apply(ValidationReport.singleton(m)).strip()
                .replace("Validation failed.\n", "").replace("\n", "\n  ") + parameter + "  {" + m.getKey() + "}";
    }

    private OpenApiInteractionValidator validator() {
        OpenApiInteractionValidator v = validator;
        if (v == null) {
            synchronized (this) {
                v = validator;
                if (v == null) {
                    try {
                        String spec = Files.readString(Contract.standard().source());
                        v = OpenApiInteractionValidator.createForInlineApiSpecification(spec)
                                .withLevelResolver(LevelResolver.create().withDefaultLevel(ValidationReport.Level.ERROR).build())
                                .withStrictOperationPathMatching()
                                .build();
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                    validator = v;
                }
            }
        }
        return v;
    }
}
