-- expect: object_unreadable
-- args: --payload kv=/dev/null
-- exit: 2
-- A payload that is not a regular file (a character device): it has no
-- fixed content, so pack cannot read it (exit 2, no archive).
CREATE TABLE t(id INTEGER PRIMARY KEY);
