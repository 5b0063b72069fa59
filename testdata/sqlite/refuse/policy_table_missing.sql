-- expect: policy_table_missing
-- args: --include-table oa_settings
CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT);
