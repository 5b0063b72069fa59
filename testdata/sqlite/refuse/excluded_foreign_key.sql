-- expect: excluded_foreign_key
-- oa_% is excluded by default; an archived table may not depend on it.
CREATE TABLE oa_clients(id INTEGER PRIMARY KEY);
CREATE TABLE grants(id INTEGER PRIMARY KEY, client INTEGER REFERENCES oa_clients(id));
