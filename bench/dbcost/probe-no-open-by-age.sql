-- Probe only: what the operations listing's index (V2's transfers_open_by_age, two entries per transfer) costs.
DROP INDEX transfers_open_by_age;
