//! Fixtures of SPEC.md §15: the base archive, valid, checked against a
//! policy (`options.policy` of the sidecar); for `objectReferences`, with
//! the rows or exclusions edited to meet or miss it. No file alone shows
//! these codes, so there is no mutation of them
//! ([`POLICY_ONLY`](super::POLICY_ONLY)).

use super::edit::R;
use super::fixture::{build, case, Fixture, Recs, CLOSING, M, NOTES, USERS};

/// The fixtures of `testdata/invalid` for these rules: the base archive
/// (as it is, or with its rows or exclusions edited), with a policy it
/// does not meet.
pub(super) fn fixtures(r: &Recs) -> R<Vec<Fixture>> {
    let c = |name, line, ptr, policy: &str| case(r, name, line, ptr).option("policy", policy);
    let zeros = "0".repeat(64);
    // A bucket's objectReferences: its objects are exactly the distinct
    // non-null values of a column.
    let refs = |table: &str, column: &str| {
        format!(
            r#"{{"buckets":{{"files":{{"objectReferences":{{"table":"{table}","keyColumn":"{column}"}}}}}}}}"#
        )
    };
    let bodies = |case: super::fixture::Case, values: [&str; 3]| {
        values.iter().enumerate().fold(case, |c, (i, v)| {
            c.set(NOTES, &format!("/items/{i}/row/body"), v)
        })
    };
    build(vec![
        c("policy_product", 1, "/product", r#"{"product":"shop"}"#)
            .note("the archive is an export of corpus; the policy expects shop"),
        c(
            "policy_schema",
            1,
            "/schema",
            &format!(r#"{{"acceptedSchemas":["{zeros}"]}}"#),
        )
        .note("the importer accepts one schema identity, not this archive's"),
        c(
            "policy_content_hash",
            CLOSING,
            "/contentHash",
            &format!(r#"{{"contentHash":"{zeros}"}}"#),
        )
        .note("the server reported another contentHash than the archive carries"),
        c(
            "policy_exclusion",
            1,
            "/tables/0/name",
            r#"{"excludeTables":["NOTE%"]}"#,
        )
        .note("notes matches the policy's exclusion NOTE% (ASCII case-insensitive, % a prefix)"),
        c(
            "policy_exclusion-secret",
            1,
            "/tables/1/columns/3/name",
            r#"{"secretColumns":{"users":["Score"]}}"#,
        )
        .note("users.score is a secret column under the policy but is not in excludedColumns"),
        c(
            "policy_configuration",
            1,
            "/requiredConfiguration",
            r#"{"requiredConfiguration":["MAIL_KEY","DB_URL"]}"#,
        )
        .note("the policy provides MAIL_KEY and DB_URL; the archive names only MAIL_KEY"),
        c(
            "policy_exclusion-derived",
            1,
            "/tables/1/name",
            r#"{"derivedTables":["users"]}"#,
        )
        .note("users is a derived table under the policy: the producer excludes it"),
        c(
            "policy_table_missing",
            1,
            "/tables",
            r#"{"includeTables":["audit"]}"#,
        )
        .note("the policy includes table audit, but the archive does not hold it"),
        c(
            "policy_bucket",
            1,
            "/objects/0/bucket",
            r#"{"buckets":{"images":{}}}"#,
        )
        .note("the objects are in bucket files; the policy exports only images"),
        c(
            "policy_bucket-prefix",
            1,
            "/objects/0/key",
            r#"{"buckets":{"files":{"prefix":"logo"}}}"#,
        )
        .note("greeting.txt is outside the prefix logo of bucket files"),
        c(
            "policy_payload",
            1,
            "/payloads/0/name",
            r#"{"extraPayloads":{"kv":{}}}"#,
        )
        .note("payload kv cache is not one of the policy's extra payloads (kv)"),
        bodies(
            c("object_references", 2, "/items/1/row/body", &refs("notes", "body")),
            [r#""greeting.txt""#, r#""missing.png""#, r#""logo.bin""#],
        )
        .note("notes.body holds the keys of bucket files; the row at rowid 5 references missing.png, which is not an object of the bucket"),
        bodies(
            c(
                "object_references-unreferenced",
                1,
                "/objects/1/key",
                &refs("notes", "body"),
            ),
            [r#""greeting.txt""#, "null", r#""greeting.txt""#],
        )
        .note("every row of notes references greeting.txt (or nothing); logo.bin of bucket files is referenced by no row"),
        c(
            "reference_column_missing",
            1,
            "/tables/0/columns",
            &refs("notes", "title"),
        )
        .note("the policy's objectReferences names notes.title; notes has no column title"),
        c(
            "reference_column_missing-table",
            1,
            "/tables",
            &refs("attachments", "key"),
        )
        .note("the policy's objectReferences names table attachments, which the archive does not hold"),
        c(
            "reference_column_excluded",
            1,
            "/excludedTables/0",
            &refs("sessions", "file"),
        )
        .note("the policy's objectReferences names table sessions, which the archive excludes"),
        c(
            "reference_column_excluded-secret",
            1,
            "/excludedColumns/users/0",
            &refs("users", "avatar"),
        )
        .set(M, "/excludedColumns", r#"{"users":["avatar"]}"#)
        .del(USERS, "/items/0/row/avatar")
        .del(USERS, "/items/1/row/avatar")
        .note("the policy's objectReferences names users.avatar, an excluded (secret) column the rows do not carry"),
    ])
}
