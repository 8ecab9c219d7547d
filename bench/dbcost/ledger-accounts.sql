-- The accounts the ledger's pgbench scripts spend from, opened before the run (bench/dbcost/ledger_pgbench.py): the
-- service opens an account on first use and runs a statement again when two first uses collide, which pgbench
-- cannot. 'bench-user' for the hot account, 'bench-0' .. 'bench-63' for pgbench's clients.
INSERT INTO accounts (principal, currency, posted, held)
SELECT p, 'EUR', 1000000000000000, 0
  FROM (SELECT 'bench-user' AS p UNION ALL SELECT 'bench-' || g FROM generate_series(0, 63) g) principals;
INSERT INTO ledger_entries (principal, currency, kind, amount, account_leg, settlement_leg, held_change)
SELECT principal, currency, 'opening', posted, posted, -posted, 0 FROM accounts;
