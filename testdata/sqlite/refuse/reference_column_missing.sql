-- expect: reference_column_missing
-- args: --bucket-dir files=/nonexistent --object-references files=docs.file
-- objectReferences names docs.file; docs has no such column. Refused from
-- the schema, before the bucket's directory is listed.
CREATE TABLE docs(id INTEGER PRIMARY KEY, path TEXT);
