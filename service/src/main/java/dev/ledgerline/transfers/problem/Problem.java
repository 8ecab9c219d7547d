package dev.ledgerline.transfers.problem;

import com.fasterxml.jackson.annotation.JsonInclude;

import java.util.List;

/**
 * An RFC 9457 problem document; {@code errors} lists field violations when there are any, {@code transferStatus} (an
 * extension member) the status of the transfer a refused operation was about, when that is what the client needs.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Problem(String type, String title, int status, String detail, String instance, List<FieldError> errors,
                      String transferStatus) {

    public static final String MEDIA_TYPE = "application/problem+json";

    /** One violated field: a JSON pointer-like path and what is wrong with it. */
    public record FieldError(String field, String message) {
    }
}
