-- expect: unsupported_rowid
-- No primary key, and columns named rowid, _rowid_ and oid: the rowid
-- cannot be read.
CREATE TABLE t(rowid INTEGER, _rowid_ TEXT, oid BLOB, v TEXT);
INSERT INTO t VALUES (1, 'a', x'01', 'v');
