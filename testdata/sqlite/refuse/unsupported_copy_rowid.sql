-- expect: unsupported_copy_rowid
-- A primary key, but every rowid alias shadowed: the producer's snapshot
-- copy needs one of them.
CREATE TABLE t(rowid INTEGER, _rowid_ TEXT, oid BLOB, v TEXT PRIMARY KEY NOT NULL);
INSERT INTO t VALUES (1, 'a', x'01', 'k');
