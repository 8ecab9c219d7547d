-- A send can outlive its caller: a request still in transit when the provider timeout fires may reach the
-- provider later and execute. Each claim therefore records the deadline its send carries
-- (Ledgerline-Not-After): the provider must not execute the send after it. Until that deadline plus the clock
-- margin (and the provider's lookup lag) has passed, nobody may claim the row again or decide anything from a
-- lookup: the earlier send could still move money. README "Why it is safe" states the rule.
ALTER TABLE transfers ADD COLUMN send_not_after timestamptz;

-- Sends the provider refused with a 4xx it did not explain (401, 403, 409, 429, ...). After
-- ledgerline.pipeline.max-refused-sends of them, and a lookup that does not know the payment, the reconciler
-- parks the transfer for an operator instead of resending forever.
ALTER TABLE transfers ADD COLUMN refused_sends integer NOT NULL DEFAULT 0;
