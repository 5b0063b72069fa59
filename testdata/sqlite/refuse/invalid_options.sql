-- expect: invalid_options
-- args: --exported-at yesterday
-- exit: 2
-- An option the producer refuses: exportedAt is not an ISO time.
CREATE TABLE t(id INTEGER PRIMARY KEY);
