//! The receipt of a verified archive (FORMAT-BRIEF §6, as the producer's
//! `files.mjs` builds it), plus what ndarc checked.

use ndarc_json::{Object, Value};

use crate::Report;

/// What a successful verification vouches for: the producer's receipt
/// (`contentHash`, `archiveHash`, tables with counts, numbers of objects
/// and payloads, exclusions with `transient`, `requiredConfiguration`)
/// and an `ndarc` member
/// saying what checked it and when.
#[derive(Debug, Clone)]
pub struct Receipt {
    value: Value<'static>,
}

impl Receipt {
    pub(crate) fn new(report: &Report) -> Option<Receipt> {
        let m = report.manifest.as_ref()?;
        let (content, archive) = report.closing_hashes.clone()?;
        let mut o = Object::new();
        o.insert("contentHash", Value::from(content));
        o.insert("archiveHash", Value::from(archive));
        o.insert(
            "tables",
            Value::Array(
                m.tables
                    .iter()
                    .map(|t| {
                        let mut e = Object::new();
                        e.insert("name", Value::from(t.name.clone()));
                        e.insert("count", Value::from(t.count as f64));
                        Value::Object(e)
                    })
                    .collect(),
            ),
        );
        o.insert("objects", Value::from(m.objects.len() as f64));
        o.insert("payloads", Value::from(m.payloads.len() as f64));
        let mut columns = Object::new();
        for (t, cols) in &m.excluded_columns {
            columns.insert(
                t.clone(),
                Value::Array(cols.iter().map(|c| Value::from(c.clone())).collect()),
            );
        }
        let mut ex = Object::new();
        ex.insert(
            "tables",
            Value::Array(
                m.excluded_tables
                    .iter()
                    .map(|t| Value::from(t.clone()))
                    .collect(),
            ),
        );
        ex.insert("columns", Value::Object(columns));
        ex.insert("configuration", Value::Bool(true));
        // The producer's `transient` is its caller's argument to
        // exportArchive/importArchive; no archive records it, so the
        // receipt holds the member with null: not known.
        ex.insert("transient", Value::Null);
        o.insert("exclusions", Value::Object(ex));
        o.insert(
            "requiredConfiguration",
            Value::Array(
                m.required_configuration
                    .iter()
                    .map(|t| Value::from(t.clone()))
                    .collect(),
            ),
        );
        let mut nd = Object::new();
        nd.insert(
            "verifier",
            Value::from(format!("ndarc {}", env!("CARGO_PKG_VERSION"))),
        );
        nd.insert("format", Value::from(m.format.clone()));
        nd.insert("version", Value::from(m.version as f64));
        nd.insert("product", Value::from(m.product.clone()));
        nd.insert("exportedAt", Value::from(m.exported_at.clone()));
        nd.insert("sourceIdentity", Value::from(m.source_identity.clone()));
        nd.insert("epoch", Value::from(m.epoch as f64));
        nd.insert("partCount", Value::from(report.parts as f64));
        nd.insert("bytes", Value::from(report.bytes as f64));
        nd.insert("warnings", Value::from(report.warnings as f64));
        if let Some(policy) = &report.policy {
            nd.insert("policy", policy.to_value());
        }
        o.insert("ndarc", Value::Object(nd));
        Some(Receipt {
            value: Value::Object(o),
        })
    }

    /// The receipt as a JSON value.
    pub fn value(&self) -> &Value<'static> {
        &self.value
    }

    /// The receipt as canonical JSON text with a final LF.
    pub fn to_canonical_line(&self) -> Vec<u8> {
        let mut v = ndarc_json::to_canonical_vec(&self.value);
        v.push(b'\n');
        v
    }
}
