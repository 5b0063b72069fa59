//! Issue 24 §3: `verify --receipt` writes a superset of the seed
//! producer's `receipt()` (files.mjs), with the same names and shapes, so
//! a tool written for the producer's receipts reads ndarc's.

mod common;

use common::{ndarc, s, testdata, Scratch};
use serde_json::{json, Value};

/// The seed's `receipt(manifest, closing, transient)`, line for line:
///
/// ```js
/// contentHash: closing.contentHash, archiveHash: closing.archiveHash,
/// tables: manifest.tables.map(({ name, count }) => ({ name, count })),
/// objects: manifest.objects.length, payloads: manifest.payloads.length,
/// exclusions: { tables: manifest.excludedTables, columns: manifest.excludedColumns,
///               configuration: true, transient },
/// requiredConfiguration: manifest.requiredConfiguration,
/// ```
fn seed_receipt(manifest: &Value, closing: &Value, transient: Value) -> Value {
    json!({
        "contentHash": closing["contentHash"],
        "archiveHash": closing["archiveHash"],
        "tables": manifest["tables"].as_array().unwrap().iter()
            .map(|t| json!({"name": t["name"], "count": t["count"]})).collect::<Vec<_>>(),
        "objects": manifest["objects"].as_array().unwrap().len(),
        "payloads": manifest["payloads"].as_array().unwrap().len(),
        "exclusions": {"tables": manifest["excludedTables"], "columns": manifest["excludedColumns"],
                       "configuration": true, "transient": transient},
        "requiredConfiguration": manifest["requiredConfiguration"],
    })
}

#[test]
fn the_receipt_holds_every_field_of_the_seeds_receipt() {
    let dir = Scratch::new("seed-receipt");
    for name in [
        "example.ndjson",
        "excluded-columns.ndjson",
        "binaries.ndjson",
    ] {
        let archive = testdata(&format!("valid/{name}"));
        let receipt = dir.path(&format!("{name}.receipt.json"));
        let r = ndarc(&["verify", "--receipt", s(&receipt), s(&archive)]);
        assert_eq!(r.code, 0, "{name}: {}", r.out());
        let mut got: Value = serde_json::from_slice(&std::fs::read(&receipt).unwrap()).unwrap();
        let text = std::fs::read_to_string(&archive).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let manifest: Value = serde_json::from_str(lines[0]).unwrap();
        let closing: Value = serde_json::from_str(lines[lines.len() - 1]).unwrap();
        // ndarc's own member is the only addition.
        assert!(got.as_object_mut().unwrap().remove("ndarc").is_some());
        // No archive records the caller's `transient`: ndarc says null.
        assert_eq!(
            got,
            seed_receipt(&manifest, &closing, Value::Null),
            "{name}"
        );
    }
}
