-- The seed's minimal schema (/work/shared/seeds/000: "Keep the database in charge"), verbatim: one plain table,
-- no trigger, no history, two indexes (the primary key and the provider reference). bench/dbcost.sh measures the
-- service's SQL against this floor.
CREATE TABLE transfers (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL,
  amount bigint NOT NULL,
  currency text NOT NULL,
  provider_reference text NOT NULL UNIQUE,
  status text NOT NULL CHECK (status IN (
    'pending', 'processing', 'sent', 'failed', 'reconciling'
  )),
  version bigint NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now()
);
