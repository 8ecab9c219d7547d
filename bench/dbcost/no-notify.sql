-- Probe only (not a candidate: the long polls need it): the schema without the pg_notify trigger, to show what
-- the notifying commits cost.
DROP TRIGGER transfers_notify ON transfers;
