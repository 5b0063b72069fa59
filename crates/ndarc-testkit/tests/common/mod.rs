//! An independent re-computation of what a generated archive must satisfy,
//! written from FORMAT-BRIEF rather than from the generator's code: it
//! parses every line and recomputes hashes, counts, indexes and binary
//! digests from the parsed values.

#![allow(dead_code)]

use std::collections::BTreeMap;

use base64::Engine as _;
use ndarc_json::{Object, OwnedValue, Value};
use sha2::{Digest, Sha256};

pub fn sha(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

pub fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// What the check learned.
#[derive(Debug)]
pub struct Checked {
    pub manifest: Object<'static>,
    pub closing: Object<'static>,
    pub part_count: usize,
    pub content_hash: String,
    pub archive_hash: String,
    /// Row key (as `diff.mjs`) → canonical row, per table.
    pub rows: BTreeMap<String, BTreeMap<String, String>>,
}

pub fn lines(bytes: &[u8]) -> Vec<&[u8]> {
    assert_eq!(bytes.last(), Some(&b'\n'), "the archive ends with LF");
    bytes[..bytes.len() - 1].split(|&b| b == b'\n').collect()
}

fn obj(v: OwnedValue) -> Object<'static> {
    match v {
        Value::Object(o) => o,
        other => panic!("expected an object, got {other:?}"),
    }
}

/// Checks an archive and returns what it holds. `part_bytes` bounds every
/// part line.
pub fn check(bytes: &[u8], part_bytes: usize) -> Checked {
    let lines = lines(bytes);
    assert!(lines.len() >= 2);
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(
            ndarc_json::check_canonical(l).expect("line parses"),
            None,
            "line {} is canonical",
            i + 1
        );
    }
    let manifest = obj(ndarc_json::parse(lines[0]).unwrap().into_owned());
    let closing = obj(ndarc_json::parse(lines[lines.len() - 1])
        .unwrap()
        .into_owned());
    let parts = &lines[1..lines.len() - 1];
    let get_n = |o: &Object<'_>, k: &str| o.get(k).and_then(Value::as_safe_integer).unwrap();
    assert_eq!(get_n(&manifest, "partCount") as usize, parts.len());
    assert_eq!(get_n(&closing, "partCount") as usize, parts.len());
    assert_eq!(closing.len(), 4);
    assert_eq!(closing.get("kind").and_then(Value::as_str), Some("closing"));

    // archiveHash.
    let mut outer = Sha256::new();
    for l in &lines[..lines.len() - 1] {
        outer.update(sha(l));
    }
    let archive_hash = hex(&outer.finalize());

    // Header.
    let mut header = Object::new();
    for k in [
        "format",
        "version",
        "product",
        "schema",
        "tables",
        "objects",
        "payloads",
        "excludedTables",
        "excludedColumns",
        "requiredConfiguration",
    ] {
        header.insert(k, manifest.get(k).unwrap().clone());
    }
    let mut content = Sha256::new();
    content.update(sha(&ndarc_json::to_canonical_vec(&Value::Object(header))));

    // Schema identity.
    let tables = manifest.get("tables").and_then(Value::as_array).unwrap();
    let pairs: Vec<OwnedValue> = tables
        .iter()
        .map(|t| {
            let mut o = Object::new();
            o.insert("name", t.get("name").unwrap().clone());
            o.insert("sql", t.get("sql").unwrap().clone());
            Value::Object(o)
        })
        .collect();
    assert_eq!(
        manifest.get("schema").and_then(Value::as_str).unwrap(),
        hex(&sha(&ndarc_json::to_canonical_vec(&Value::Array(pairs))))
    );

    let mut rows: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut counts: Vec<u64> = vec![0; tables.len()];
    let mut table_at = 0usize;
    let mut binaries: Vec<(String, Vec<u8>)> = Vec::new();
    let mut seen_binary = false;
    for (i, l) in parts.iter().enumerate() {
        assert!(
            l.len() <= part_bytes,
            "part {i} has {} > {part_bytes} bytes",
            l.len()
        );
        let p = obj(ndarc_json::parse(l).unwrap().into_owned());
        assert_eq!(get_n(&p, "index") as usize, i);
        assert_eq!(p.len(), 3);
        let items = p.get("items").and_then(Value::as_array).unwrap();
        assert!(!items.is_empty());
        let kinds: Vec<&str> = items
            .iter()
            .map(|it| it.get("kind").unwrap().as_str().unwrap())
            .collect();
        if kinds[0] != "row" {
            assert_eq!(items.len(), 1, "a binary part holds one item");
        }
        for it in items {
            let it = it.as_object().unwrap();
            match it.get("kind").unwrap().as_str().unwrap() {
                "row" => {
                    assert!(!seen_binary, "rows come before binaries");
                    let name = it.get("table").unwrap().as_str().unwrap();
                    while tables[table_at].get("name").unwrap().as_str().unwrap() != name {
                        table_at += 1;
                    }
                    let t = tables[table_at].as_object().unwrap();
                    assert_eq!(get_n(it, "index") as u64, counts[table_at]);
                    counts[table_at] += 1;
                    let mut r = Object::new();
                    r.insert("row", it.get("row").unwrap().clone());
                    let has_rowid = !t.get("rowidAlias").unwrap().is_null();
                    assert_eq!(it.contains_key("rowid"), has_rowid);
                    if let Some(id) = it.get("rowid") {
                        r.insert("rowid", id.clone());
                    }
                    r.insert("table", it.get("table").unwrap().clone());
                    content.update(sha(&ndarc_json::to_canonical_vec(&Value::Object(r))));
                    // Key as diff.mjs.
                    let cols = t.get("columns").unwrap().as_array().unwrap();
                    let mut pk: Vec<(i64, &str)> = cols
                        .iter()
                        .filter_map(|c| {
                            let n = c.get("pk").unwrap().as_safe_integer().unwrap();
                            (n > 0).then(|| (n, c.get("name").unwrap().as_str().unwrap()))
                        })
                        .collect();
                    pk.sort();
                    let row = it.get("row").unwrap();
                    let key = if pk.is_empty() {
                        format!("{}", it.get("rowid").unwrap().as_safe_integer().unwrap())
                    } else {
                        ndarc_json::to_canonical_string(&Value::Array(
                            pk.iter()
                                .map(|(_, n)| row.get(n).unwrap().clone())
                                .collect(),
                        ))
                    };
                    let canon = ndarc_json::to_canonical_string(row);
                    let prev = rows.entry(name.to_string()).or_default().insert(key, canon);
                    assert!(prev.is_none(), "duplicate key in {name}");
                }
                kind @ ("object" | "payload") => {
                    seen_binary = true;
                    let id = if kind == "object" {
                        format!(
                            "{}\u{0}{}",
                            it.get("bucket").unwrap().as_str().unwrap(),
                            it.get("key").unwrap().as_str().unwrap()
                        )
                    } else {
                        format!("payload\u{0}{}", it.get("name").unwrap().as_str().unwrap())
                    };
                    let offset = get_n(it, "offset") as usize;
                    let data = base64::engine::general_purpose::STANDARD
                        .decode(it.get("data").unwrap().as_str().unwrap())
                        .unwrap();
                    if offset == 0 {
                        binaries.push((id, data));
                    } else {
                        assert!(!data.is_empty(), "only an empty entry has an empty chunk");
                        let last = binaries.last_mut().unwrap();
                        assert_eq!(last.0, id);
                        assert_eq!(last.1.len(), offset);
                        last.1.extend_from_slice(&data);
                    }
                }
                other => panic!("unknown item kind {other}"),
            }
        }
    }
    for (t, n) in tables.iter().zip(&counts) {
        assert_eq!(get_n(t.as_object().unwrap(), "count") as u64, *n);
    }
    let objects = manifest.get("objects").and_then(Value::as_array).unwrap();
    let payloads = manifest.get("payloads").and_then(Value::as_array).unwrap();
    assert_eq!(binaries.len(), objects.len() + payloads.len());
    for (entry, (_, data)) in objects.iter().chain(payloads).zip(&binaries) {
        assert_eq!(
            entry.get("size").unwrap().as_safe_integer().unwrap() as usize,
            data.len()
        );
        assert_eq!(
            entry.get("sha256").unwrap().as_str().unwrap(),
            hex(&sha(data))
        );
    }
    let content_hash = hex(&content.finalize());
    assert_eq!(
        closing.get("contentHash").unwrap().as_str().unwrap(),
        content_hash
    );
    assert_eq!(
        closing.get("archiveHash").unwrap().as_str().unwrap(),
        archive_hash
    );
    Checked {
        manifest,
        closing,
        part_count: parts.len(),
        content_hash,
        archive_hash,
        rows,
    }
}

/// Asserts `ndarc-verify` finds nothing, not even a warning.
pub fn verifies(bytes: &[u8]) {
    let report = ndarc_verify::verify_bytes(bytes, &Default::default());
    let shown: Vec<String> = report
        .findings
        .iter()
        .take(10)
        .map(|f| {
            format!(
                "{}:{} {} {} {}",
                f.line, f.offset, f.code, f.pointer, f.message
            )
        })
        .collect();
    assert!(report.is_valid(true), "findings: {shown:#?}");
    assert!(report.findings.is_empty(), "findings: {shown:#?}");
}
