-- Webhooks: the event feed pushed to HTTP endpoints that operators register (docs/webhooks.md).
--
-- Each endpoint follows the feed with its own cursor, exactly like a GET /v1/events follower: the cursor is the
-- (feed_xid, transfer_id, version) of the last event the endpoint acknowledged with a 2xx, and delivery reads the
-- next page past it with the feed's own statement. The cursor only moves after a 2xx, so an event is delivered at
-- least once, in the feed's order, and a transfer's versions in version order.
--
-- One instance at a time delivers to an endpoint: it takes a lease (lease_token, lease_expires_at) with a
-- FOR UPDATE SKIP LOCKED claim, and every later write (cursor advance, failure, release) matches that token and an
-- unexpired lease. An instance that dies mid-delivery leaves the lease to expire; the next instance re-sends from the
-- cursor, which never moved past the unacknowledged event.
--
-- The secret is stored as issued (it must be at hand to sign every delivery); only the service's database roles read
-- this table, and the API shows the secret once, in the answer to the POST that created the endpoint.
CREATE TABLE webhook_endpoints (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    url              text NOT NULL CHECK (length(url) <= 2048),
    description      text CHECK (length(description) <= 256),
    secret           text NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    -- the last event delivered (or the feed's horizon when the endpoint was created)
    cursor_xid       xid8 NOT NULL,
    cursor_transfer  uuid NOT NULL,
    cursor_version   bigint NOT NULL,
    cursor_at        timestamptz NOT NULL,
    -- when the next attempt is due; back-off after a failure moves it out
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    -- failed attempts at the event after the cursor, and since when it has been failing
    attempts         integer NOT NULL DEFAULT 0,
    failing_since    timestamptz,
    -- set once failing_since is older than ledgerline.webhooks.give-up-after; cleared by the next 2xx
    failing          boolean NOT NULL DEFAULT false,
    leased_by        text,
    lease_token      uuid,
    lease_expires_at timestamptz
);

CREATE INDEX webhook_endpoints_due ON webhook_endpoints (next_attempt_at);

-- every attempt, for GET /v1/webhook-endpoints/{id}/deliveries; pruned to the newest
-- ledgerline.webhooks.keep-attempts per endpoint
CREATE TABLE webhook_deliveries (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    event_id    text NOT NULL,
    attempt     integer NOT NULL,
    status_code integer,
    latency_ms  bigint NOT NULL,
    error       text CHECK (length(error) <= 512),
    instance    text NOT NULL,
    at          timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id DESC);
