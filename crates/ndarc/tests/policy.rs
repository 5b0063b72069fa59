//! Issue 12 §2: `verify --policy FILE`, `--expect-content-hash`,
//! `--expect-product` and `--accept-schema` (SPEC.md §15).

mod common;

use common::{example, ndarc, s, Scratch};

const CONTENT: &str = "6d5f30061640eb03e628acc45a8f36240c2d80acbfd31931fec91184c12abeec";
const ZEROS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The example's schema identity, read from its manifest.
fn schema() -> String {
    let text = std::fs::read_to_string(example()).unwrap();
    let first = text.lines().next().unwrap();
    let v: serde_json::Value = serde_json::from_str(first).unwrap();
    v["schema"].as_str().unwrap().to_string()
}

fn codes(stdout: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(stdout).expect("JSON output");
    v["files"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_policy_the_archive_meets_is_recorded_in_the_receipt() {
    let dir = Scratch::new("policy-ok");
    let policy = format!(
        r#"{{"product":"example","contentHash":"{CONTENT}","acceptedSchemas":["{}"],
            "excludeTables":["sessions","oa_%"],"requiredConfiguration":["MAIL_KEY"]}}"#,
        schema()
    );
    let p = dir.write("policy.json", policy.as_bytes());
    let receipt = dir.path("receipt.json");
    let ex = example();
    let r = ndarc(&[
        "verify",
        "--policy",
        s(&p),
        "--receipt",
        s(&receipt),
        s(&ex),
    ]);
    assert_eq!(r.code, 0, "{}", r.out());
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&receipt).unwrap()).unwrap();
    assert_eq!(v["ndarc"]["policy"]["product"], "example");
    assert_eq!(v["ndarc"]["policy"]["contentHash"], CONTENT);
    assert_eq!(v["ndarc"]["policy"]["excludeTables"][1], "oa_%");
}

#[test]
fn each_breach_is_a_finding_with_its_code() {
    let dir = Scratch::new("policy-breach");
    let p = dir.write(
        "policy.json",
        br#"{"excludeTables":["NOTE%"],"requiredConfiguration":["MAIL_KEY","DB_URL"]}"#,
    );
    let ex = example();
    let r = ndarc(&[
        "verify",
        "--format",
        "json",
        "--policy",
        s(&p),
        "--expect-product",
        "shop",
        "--expect-content-hash",
        ZEROS,
        "--accept-schema",
        ZEROS,
        s(&ex),
    ]);
    assert_eq!(r.code, 1, "{}", r.out());
    let mut got = codes(&r.out());
    got.sort();
    assert_eq!(
        got,
        [
            "policy_configuration",
            "policy_content_hash",
            "policy_exclusion",
            "policy_product",
            "policy_schema"
        ]
    );
    // The human form names the code, the line and what the policy wanted.
    let r = ndarc(&["verify", "--expect-product", "shop", s(&ex)]);
    assert_eq!(r.code, 1);
    assert!(
        r.out().contains(":1:498: policy_product: the archive is an export of \"example\"; the policy expects \"shop\""),
        "{}",
        r.out()
    );
    // GitHub annotations carry it too.
    let r = ndarc(&[
        "verify",
        "--format",
        "github",
        "--expect-product",
        "shop",
        s(&ex),
    ]);
    assert_eq!(r.code, 1);
    assert!(r.out().contains("title=policy_product"), "{}", r.out());
}

#[test]
fn the_options_override_and_extend_the_file() {
    let dir = Scratch::new("policy-override");
    let p = dir.write(
        "policy.json",
        format!(r#"{{"product":"shop","acceptedSchemas":["{ZEROS}"]}}"#).as_bytes(),
    );
    let ex = example();
    let schema = schema();
    let r = ndarc(&[
        "verify",
        "--policy",
        s(&p),
        "--expect-product",
        "example",
        "--accept-schema",
        &schema,
        s(&ex),
    ]);
    assert_eq!(r.code, 0, "{}", r.out());
}

#[test]
fn an_unusable_policy_cannot_run() {
    let dir = Scratch::new("policy-bad");
    let ex = example();
    let typo = dir.write("typo.json", br#"{"prodcut":"x"}"#);
    let r = ndarc(&["verify", "--policy", s(&typo), s(&ex)]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("prodcut: unknown member"), "{}", r.out());
    let dup = dir.write("dup.json", br#"{"product":"a","product":"b"}"#);
    let r = ndarc(&["verify", "--policy", s(&dup), s(&ex)]);
    assert_eq!(r.code, 2, "{}", r.out());
    let r = ndarc(&["verify", "--expect-content-hash", "ABC", s(&ex)]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("--expect-content-hash: expected a SHA-256"),
        "{}",
        r.out()
    );
    let missing = dir.path("missing.json");
    let r = ndarc(&["verify", "--policy", s(&missing), s(&ex)]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("cannot read"), "{}", r.out());
}

/// Issue 24 §2: the producer's configuration, as `JSON.stringify` writes
/// it (maps kept, functions dropped), is a policy the example meets.
#[test]
fn a_producer_configuration_verifies() {
    let dir = Scratch::new("policy-producer");
    let policy = format!(
        r#"{{"product":"example","excludeTables":["sessions"],"includeTables":["notes"],
            "derivedTables":["notes_fts"],"secretColumns":{{"users":["password"]}},
            "replaceableTables":["notes"],"requiredConfiguration":["MAIL_KEY"],
            "acceptedSchemas":{{"{}":{{}}}},"buckets":{{"files":{{"prefix":""}}}},
            "extraPayloads":{{"kv":{{}}}},"partBytes":16777216}}"#,
        schema()
    );
    let p = dir.write("config.json", policy.as_bytes());
    let receipt = dir.path("receipt.json");
    let ex = example();
    let r = ndarc(&[
        "verify",
        "--policy",
        s(&p),
        "--receipt",
        s(&receipt),
        s(&ex),
    ]);
    assert_eq!(r.code, 0, "{}", r.out());
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&receipt).unwrap()).unwrap();
    assert_eq!(v["ndarc"]["policy"]["acceptedSchemas"][0], schema());
    assert_eq!(v["ndarc"]["policy"]["extraPayloads"][0], "kv");
    assert_eq!(v["ndarc"]["policy"]["partBytes"], 16777216);
    // A configuration naming a bucket the archive's objects are not in.
    let other = dir.write(
        "other.json",
        br#"{"buckets":{"images":{"prefix":"a/"}},"extraPayloads":[]}"#,
    );
    let r = ndarc(&["verify", "--format", "json", "--policy", s(&other), s(&ex)]);
    assert_eq!(r.code, 1, "{}", r.out());
    assert_eq!(codes(&r.out()), vec!["policy_bucket", "policy_payload"]);
    // Each member is checked as the producer's policy() checks it.
    let bad = dir.write(
        "bad.json",
        br#"{"buckets":{"files":{"objectReferences":{"table":"notes"}}}}"#,
    );
    let r = ndarc(&["verify", "--policy", s(&bad), s(&ex)]);
    assert_eq!(r.code, 2, "{}", r.out());
    assert!(
        r.stderr.contains("(invalid_object_references)"),
        "{}",
        r.out()
    );
}
