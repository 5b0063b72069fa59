-- expect: row_not_null
-- SQLite enforces NOT NULL on insert; a NOT NULL column holds NULL only
-- when the schema was edited after the rows were written, as here.
CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);
INSERT INTO t VALUES (1, 'a'), (2, NULL);
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = 'CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT NOT NULL)' WHERE name = 't';
PRAGMA writable_schema = OFF;
