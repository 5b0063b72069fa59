-- ndarc diff --format sql: from before.ndjson to after.ndjson
PRAGMA foreign_keys = OFF;
BEGIN TRANSACTION;
DROP TABLE IF EXISTS "tags";
DROP TABLE IF EXISTS "people";
DROP TABLE IF EXISTS "items";
CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT, color TEXT);
CREATE TABLE people(id INTEGER PRIMARY KEY, name TEXT, age INTEGER);
CREATE TABLE tags(label TEXT);
INSERT INTO "items"("color","id","name") VALUES('red',1,'pen');
INSERT INTO "items"("color","id","name") VALUES(NULL,2,'mug');
INSERT INTO "items"("color","id","name") VALUES('blue',4,'bag');
INSERT INTO "people"("age","id","name") VALUES(36,1,'Ada Lovelace');
INSERT INTO "people"("age","id","name") VALUES(40,2,'Bob');
INSERT INTO "tags"("label",rowid) VALUES('red',1);
INSERT INTO "tags"("label",rowid) VALUES('green',2);
INSERT INTO "tags"("label",rowid) VALUES('blue',3);
COMMIT;
