-- Probe only: what UNIQUE (provider_reference) costs (one entry per row version). Not a candidate as it stands:
-- the reference is a random value of its own (IdempotencyService), so this index is what keeps it one per transfer.
ALTER TABLE transfers DROP CONSTRAINT transfers_provider_reference;
