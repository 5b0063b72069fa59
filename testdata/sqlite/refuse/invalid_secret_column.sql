-- expect: invalid_secret_column
-- args: --secret-column users.name
-- A NOT NULL column cannot be left out.
CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT NOT NULL, token TEXT);
