-- expect: unsupported_column
-- The prefix rer_portability_ is the producer's own.
CREATE TABLE t(id INTEGER PRIMARY KEY, rer_portability_state TEXT);
