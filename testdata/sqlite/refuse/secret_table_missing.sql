-- expect: secret_table_missing
-- args: --secret-column accounts.token
CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT NOT NULL, token TEXT);
