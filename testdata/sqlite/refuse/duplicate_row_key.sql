-- expect: duplicate_row_key
-- A rowid table's TEXT PRIMARY KEY admits NULL, twice.
CREATE TABLE t(k TEXT PRIMARY KEY, v INTEGER);
INSERT INTO t VALUES (NULL, 1), (NULL, 2);
