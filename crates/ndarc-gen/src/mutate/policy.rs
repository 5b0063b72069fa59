//! Fixtures of SPEC.md §15: the base archive, valid, checked against a
//! policy (`options.policy` of the sidecar). No file alone shows these
//! codes, so there is no mutation of them ([`POLICY_ONLY`](super::POLICY_ONLY)).

use super::edit::R;
use super::fixture::{build, case, Fixture, Recs, CLOSING};

/// The fixtures of `testdata/invalid` for these rules: the base archive as
/// it is, with a policy it does not meet.
pub(super) fn fixtures(r: &Recs) -> R<Vec<Fixture>> {
    let c = |name, line, ptr, policy: &str| case(r, name, line, ptr).option("policy", policy);
    let zeros = "0".repeat(64);
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
    ])
}
