-- Rotating an endpoint's secret without a gap (POST /v1/webhook-endpoints/{id}/secret): the new secret signs every
-- delivery at once, and the one it replaced goes on signing beside it (a second v1 in Ledgerline-Signature) until
-- previous_secret_expires_at, so a receiver can switch to the new one at its own pace. One rotation at a time: a
-- second one replaces the previous secret, which then stops signing.
ALTER TABLE webhook_endpoints
    ADD COLUMN previous_secret text,
    ADD COLUMN previous_secret_expires_at timestamptz,
    ADD CONSTRAINT webhook_endpoints_previous_secret_expires
        CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL));
