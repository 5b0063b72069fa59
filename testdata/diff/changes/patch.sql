-- ndarc diff --format sql: from before.ndjson to after.ndjson
PRAGMA foreign_keys = OFF;
BEGIN TRANSACTION;
DROP TABLE IF EXISTS "users";
DROP TABLE IF EXISTS "old_stuff";
DELETE FROM "notes" WHERE rowid = 5;
UPDATE "legacy" SET "value" = 3 WHERE _rowid_ = 2;
UPDATE "notes" SET "body" = 'First' WHERE rowid = 1;
UPDATE "notes" SET "body" = 'The quick red fox jumps over the lazy dog, then naps in the warm afternoon sun by the new mill.' WHERE rowid = 6;
CREATE TABLE audit_log(at INTEGER, what TEXT);
CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT NOT NULL, avatar BLOB, bio TEXT, email TEXT);
INSERT INTO "audit_log"("at","what",rowid) VALUES(100,'login',1);
INSERT INTO "audit_log"("at","what",rowid) VALUES(200,'logout',2);
INSERT INTO "users"("avatar","email","id","name") VALUES(X'89504E470D0A1A0A','ada@example.com',7,'Ada');
INSERT INTO "users"("avatar","email","id","name") VALUES(NULL,NULL,8,'Bøb');
INSERT INTO "notes"("body","user_id",rowid) VALUES('tab	and "quotes"',8,9);
COMMIT;
