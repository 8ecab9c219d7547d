package dev.ledgerline.transfers.problem;

import com.fasterxml.jackson.annotation.JsonInclude;

import java.util.List;

/** An RFC 9457 problem document; {@code errors} lists field violations when there are any. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Problem(String type, String title, int status, String detail, String instance, List<FieldError> errors) {

    public static final String MEDIA_TYPE = "application/problem+json";

    /** One violated field: a JSON pointer-like path and what is wrong with it. */
    public record FieldError(String field, String message) {
    }
}
