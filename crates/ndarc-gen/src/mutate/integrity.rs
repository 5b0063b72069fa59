//! Fixtures of `verify --integrity` (SPEC.md §11): the base archive, whose
//! `notes.user_id` REFERENCES `users(id)`, with rows or a foreign key that
//! a database with `foreign_keys=ON` refuses (`options.integrity` of the
//! sidecar). The format alone allows them, so there is no mutation of
//! these codes ([`INTEGRITY_ONLY`](super::INTEGRITY_ONLY)).

use super::edit::R;
use super::fixture::{build, case, Fixture, Recs, M, NOTES};

/// The fixtures of `testdata/invalid` for these rules.
pub(super) fn fixtures(r: &Recs) -> R<Vec<Fixture>> {
    let c = |name, line, ptr| case(r, name, line, ptr).option("integrity", "true");
    build(vec![
        c("foreign_key_violation", 2, "/items/2/row/user_id")
            .set(NOTES, "/items/2/row/user_id", "12345")
            .note("notes row 2 has user_id 12345; users has ids 3 and 7 only: a database with foreign_keys=ON refuses the row"),
        c("foreign_key_violation-both", 2, "/items/0/row/user_id")
            .set(NOTES, "/items/0/row/user_id", "4")
            .set(NOTES, "/items/2/row/user_id", "8")
            .also(&["foreign_key_violation"])
            .note("two rows of notes name users 4 and 8, which do not exist: each is a finding, in line order"),
        c("foreign_key_mismatch", 1, "/tables/0/sql")
            .set(
                M,
                "/tables/0/sql",
                r#""CREATE TABLE notes(body TEXT, user_id INTEGER REFERENCES users(name))""#,
            )
            .note("notes.user_id references users(name), which is neither the primary key of users nor UNIQUE: SQLite calls the foreign key a mismatch and refuses every change to notes"),
    ])
}
