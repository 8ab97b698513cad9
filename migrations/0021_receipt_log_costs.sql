-- What a terminal transition's receipts cost Postgres (docs/performance.md, the receipts row).
--
-- A log leaf row (the signed canonical bytes and the artifact, about 1 KB each) passes the 2 KB at which Postgres
-- tries to compress a row's values: every append paid a pglz compression of both, and some leaves moved out of line
-- into the TOAST table. Rows below the largest target stay as they are, uncompressed; a receipt row likewise.
ALTER TABLE transparency_log_leaves SET (toast_tuple_target = 8160);
ALTER TABLE protocol_receipts SET (toast_tuple_target = 8160);

-- Leaves are found by index (the primary key), by time (audit exports) and never by artifact id since a receipt's
-- leaf index is assigned in the statement that stores it: the index only cost every append an insert.
DROP INDEX transparency_log_leaves_by_artifact;
