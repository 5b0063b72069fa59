-- expect: row_type
-- A DATETIME column has NUMBER affinity: text such as a date is refused.
CREATE TABLE events(id INTEGER PRIMARY KEY, at DATETIME);
INSERT INTO events VALUES (1, 1700000000), (2, '2024-01-02 03:04:05');
