//! `pack`: valid archives from databases, and every refusal.

mod common;

use common::*;

#[test]
fn packs_a_small_database_into_a_valid_archive() {
    let (_d, p) = db("
        CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT NOT NULL, avatar BLOB, score REAL);
        CREATE TABLE notes(body TEXT, user_id INTEGER REFERENCES USERS(id));
        INSERT INTO users VALUES(7,'Ada',x'89504e47',1.5),(3,'Bob',NULL,-0.0);
        INSERT INTO notes(rowid, body, user_id) VALUES(5,NULL,NULL),(1,'first',7);
        CREATE TABLE t(a INTEGER PRIMARY KEY AUTOINCREMENT); INSERT INTO t VALUES(1);
        CREATE TABLE _cf_KV(k, v);
    ");
    let (bytes, s) = pack_vec(&p, &opts()).unwrap();
    let r = assert_valid(&bytes);
    assert_eq!(r.content_hash.as_deref(), Some(s.content_hash.as_str()));
    let text = String::from_utf8(bytes).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    assert!(
        lines[0].contains(r#""excludedTables":["_cf_KV","sqlite_sequence"]"#),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].contains(r#""dependencies":["users"]"#),
        "{}",
        lines[0]
    );
    assert_eq!(
        lines[1],
        r#"{"index":0,"items":[{"index":0,"kind":"row","row":{"body":"first","user_id":7},"rowid":1,"table":"notes"},{"index":1,"kind":"row","row":{"body":null,"user_id":null},"rowid":5,"table":"notes"}],"kind":"part"}"#
    );
    assert_eq!(
        lines[3],
        r#"{"index":2,"items":[{"index":0,"kind":"row","row":{"avatar":null,"id":3,"name":"Bob","score":0},"table":"users"},{"index":1,"kind":"row","row":{"avatar":{"blob":"iVBORw=="},"id":7,"name":"Ada","score":1.5},"table":"users"}],"kind":"part"}"#
    );
    assert_eq!(
        s.tables,
        vec![
            ("notes".to_string(), 2),
            ("t".to_string(), 1),
            ("users".to_string(), 2)
        ]
    );
}
