-- expect: row_part_too_large
-- args: --part-bytes 1K
-- A row item of about 930 bytes does not fit in a part of 1,024.
CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT);
INSERT INTO t VALUES (1, printf('%0900d', 1));
