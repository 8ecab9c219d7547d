-- Step 1 of bench/DBCOST.md's table: V1-V4 and only the foreign key from transfer_events dropped.
ALTER TABLE transfer_events DROP CONSTRAINT transfer_events_transfer_id_fkey;
