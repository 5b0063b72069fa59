-- expect: virtual_table
-- A full-text index is a virtual table (and fts5 makes shadow tables).
CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT);
CREATE VIRTUAL TABLE notes_fts USING fts5(body);
INSERT INTO notes_fts(body) VALUES ('hello');
