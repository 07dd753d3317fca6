-- Leases are made and ended by the thousand and the table is refilled as soon as it empties. A
-- vacuum (the store's own after every thousand ended leases, or autovacuum) that hands its empty
-- end pages back must first take an exclusive lock on it, and waited for one, up to seconds, while
-- claims and records held the table.
ALTER TABLE leases SET (vacuum_truncate = false);
