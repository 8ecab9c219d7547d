package dev.ledgerline.devstack.sandbox;

/**
 * The sandbox's side of {@code provider-api.yaml}: its own copies of the provider's wire shapes, so that the dev
 * stack depends on nothing in the service. The service's provider adapter has its own; both are held to the same
 * file by the provider contract tests (the adapter) and the conformance kit (the sandbox).
 */
public final class Wire {

    /** The send's deadline header ({@code Ledgerline-Not-After}): a send applied after it is refused with 412. */
    public static final String NOT_AFTER = "Ledgerline-Not-After";

    private Wire() {
    }

    /** {@code PaymentOrder}: what a send asks to pay. */
    public record PaymentOrder(long amount, String currency, Destination destination) {

        /** {@code PaymentOrder.destination}. */
        public record Destination(String iban, String name) {
        }
    }

    /** {@code Payment} (and {@code Rejection}): the provider's record of one reference. */
    public record Payment(String reference, String status, String reason, Integer executions) {
    }
}
