-- Probe only: room on each page for updated versions. An update can only be HOT when no indexed column (and no
-- column of a partial index's predicate) changes; every transition changes status, so this should change nothing.
ALTER TABLE transfers SET (fillfactor = 70);
