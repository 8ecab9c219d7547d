-- The partitions of transfers the retention job keeps attached in the steady state: thirty days back, a week ahead
-- (ledgerline.retention.transfers-retention and transfers-partitions-ahead), made empty by the owner's function of
-- V17. A bench/dbcost.sh schema part, after the migrations.
SELECT ledgerline_create_transfer_partitions(date_trunc('day', now(), 'UTC') - interval '30 days', now() + interval '7 days',
                                             interval '1 day', 100, interval '1 second');
