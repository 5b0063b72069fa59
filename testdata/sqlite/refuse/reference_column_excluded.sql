-- expect: reference_column_excluded
-- args: --bucket-dir files=/nonexistent --object-references files=docs.path --secret-column docs.path
-- objectReferences names docs.path, a secret column: the archive would not
-- show which objects the rows reference. Refused from the schema, before
-- the bucket's directory is listed.
CREATE TABLE docs(id INTEGER PRIMARY KEY, path TEXT);
