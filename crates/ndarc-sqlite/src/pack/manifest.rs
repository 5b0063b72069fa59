//! The options' checks and the manifest line.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use ndarc_format::catalogue::{is_iso_timestamp, is_name, iso_time, schema_identity};
use ndarc_format::hash::hex;
use ndarc_format::{FORMAT, MAX_PART_LINE, VERSION};
use ndarc_json::{Object, Value};

use super::catalogue::Catalogue;
use super::objects::Binary;
use super::PackOptions;
use crate::Error;

pub(super) fn check_options(db: &Path, opts: &PackOptions) -> Result<(String, String), Error> {
    if !ndarc_format::pack::PART_BYTES.contains(&opts.part_bytes) {
        return Err(Error::Options(format!(
            "part size must be 1024 to {MAX_PART_LINE} bytes, not {}",
            opts.part_bytes
        )));
    }
    let product = match &opts.product {
        Some(p) => p.clone(),
        None => db
            .file_stem()
            .and_then(|s| s.to_str())
            .filter(|s| is_name(s))
            .unwrap_or("database")
            .to_string(),
    };
    for (what, v) in [
        ("product", &product),
        ("source identity", &opts.source_identity),
    ] {
        if !is_name(v) {
            return Err(Error::Options(format!("the {what} {v:?} is not a name")));
        }
    }
    let exported_at = match &opts.exported_at {
        Some(t) if is_iso_timestamp(t) => t.clone(),
        Some(t) => {
            return Err(Error::Options(format!(
                "exportedAt {t:?} is not of the form YYYY-MM-DDTHH:MM:SS.sssZ"
            )))
        }
        None => {
            let ms = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64);
            iso_time(ms)
        }
    };
    if opts.epoch > (1u64 << 53) - 1 {
        return Err(Error::Options(format!(
            "epoch {} is not a safe integer",
            opts.epoch
        )));
    }
    for (i, c) in opts.required_configuration.iter().enumerate() {
        if !is_name(c) {
            return Err(Error::Options(format!(
                "required configuration {c:?} is not a name"
            )));
        }
        if opts.required_configuration[..i].contains(c) {
            return Err(Error::Options(format!(
                "required configuration {c:?} is given twice"
            )));
        }
    }
    for (i, sc) in opts.secret_columns.iter().enumerate() {
        if opts.secret_columns[..i].contains(sc) {
            return Err(Error::Options(format!(
                "secret column {}.{} is given twice",
                sc.0, sc.1
            )));
        }
    }
    Ok((product, exported_at))
}

fn str_array(items: impl Iterator<Item = String>) -> Value<'static> {
    Value::Array(items.map(Value::from).collect())
}

pub(super) fn manifest(
    product: &str,
    exported_at: &str,
    opts: &PackOptions,
    cat: &Catalogue,
    objects: &[Binary],
    payloads: &[Binary],
    part_count: u64,
) -> Object<'static> {
    let tables: Vec<Value<'static>> = cat
        .tables
        .iter()
        .map(|t| {
            let columns = t
                .columns
                .iter()
                .map(|c| {
                    let mut o = Object::new();
                    o.insert("name", Value::from(c.name.clone()));
                    o.insert("type", Value::from(c.decl.clone()));
                    o.insert("notnull", Value::from(i64::from(c.notnull)));
                    o.insert("pk", Value::from(i64::from(c.pk)));
                    if let Some(g) = c.generated {
                        o.insert("generated", Value::from(g));
                    }
                    Value::Object(o)
                })
                .collect();
            let mut o = Object::new();
            o.insert("name", Value::from(t.name.clone()));
            o.insert("sql", Value::from(t.sql.clone()));
            o.insert("columns", Value::Array(columns));
            o.insert("dependencies", str_array(t.dependencies.iter().cloned()));
            o.insert("rowidAlias", t.rowid_alias.map_or(Value::Null, Value::from));
            o.insert("count", Value::from(t.count as i64));
            Value::Object(o)
        })
        .collect();
    let objects: Vec<Value<'static>> = objects
        .iter()
        .map(|b| {
            let (bucket, key) = b.object.clone().unwrap_or_default();
            let mut o = Object::new();
            o.insert("bucket", Value::from(bucket));
            o.insert("key", Value::from(key));
            o.insert("size", Value::from(b.size as i64));
            o.insert("sha256", Value::from(hex(&b.sha256)));
            o.insert("httpMetadata", b.metadata.http_value());
            o.insert("customMetadata", b.metadata.custom_value());
            Value::Object(o)
        })
        .collect();
    let payloads: Vec<Value<'static>> = payloads
        .iter()
        .map(|b| {
            let mut o = Object::new();
            o.insert("name", Value::from(b.name.clone()));
            o.insert("size", Value::from(b.size as i64));
            o.insert("sha256", Value::from(hex(&b.sha256)));
            Value::Object(o)
        })
        .collect();
    let mut excluded_columns = Object::new();
    for (table, column) in &opts.secret_columns {
        match excluded_columns.get_mut(table) {
            Some(Value::Array(list)) => list.push(Value::from(column.clone())),
            _ => excluded_columns.insert(
                table.clone(),
                Value::Array(vec![Value::from(column.clone())]),
            ),
        }
    }
    let mut m = Object::new();
    m.insert("kind", Value::from("manifest"));
    m.insert("format", Value::from(FORMAT));
    m.insert("version", Value::from(VERSION));
    m.insert("product", Value::from(product.to_string()));
    m.insert("exportedAt", Value::from(exported_at.to_string()));
    m.insert("sourceIdentity", Value::from(opts.source_identity.clone()));
    m.insert(
        "schema",
        Value::from(schema_identity(
            cat.tables.iter().map(|t| (t.name.as_str(), t.sql.as_str())),
        )),
    );
    m.insert("tables", Value::Array(tables));
    m.insert("objects", Value::Array(objects));
    m.insert("payloads", Value::Array(payloads));
    m.insert("excludedTables", str_array(cat.excluded.iter().cloned()));
    m.insert("excludedColumns", Value::Object(excluded_columns));
    m.insert(
        "requiredConfiguration",
        str_array(opts.required_configuration.iter().cloned()),
    );
    m.insert("partCount", Value::from(part_count as i64));
    m.insert("epoch", Value::from(opts.epoch as i64));
    m.insert("journal", Value::Array(Vec::new()));
    m
}
