-- expect: object_references
-- args: --bucket-dir files=../../testdata/sqlite/refuse --object-references files=docs.path
-- The objects of bucket files are exactly the distinct non-null values of
-- docs.path (the producer's objectReferences); the row at rowid 2
-- references missing.png, which is no file of the bucket (the bucket is
-- this directory, relative to crates/ndarc where the tests run).
CREATE TABLE docs(id INTEGER PRIMARY KEY, path TEXT);
INSERT INTO docs VALUES (1, NULL), (2, 'missing.png');
