//! The rules of `objects` and `payloads` (SPEC.md §4.5).

use std::cmp::Ordering;

use ndarc_json::{cmp_utf16, Object, Value};

use crate::catalogue;
use crate::code::Code;
use crate::report::{join, LineReport};

use super::lazy::List;
use super::*;

const OBJECT_MEMBERS: [&str; 6] = [
    "bucket",
    "customMetadata",
    "httpMetadata",
    "key",
    "sha256",
    "size",
];

pub(super) fn check_objects(list: List<'_, '_>, r: &mut LineReport<'_>) -> Vec<ObjectEntry> {
    let mut out: Vec<ObjectEntry> = Vec::with_capacity(list.len());
    list.for_each(|i, v| {
        let p = format!("/objects/{i}");
        let Some(o) = v.as_object() else {
            r.add(
                Code::MemberType,
                &p,
                format!("an object entry is a JSON object, not {}", v.type_name()),
            );
            return;
        };
        r.members(o, &p, &OBJECT_MEMBERS, &[], "an object entry");
        let bucket = r.name(o, &p, "bucket").unwrap_or_default().to_string();
        let key = r.str(o, &p, "key").unwrap_or_default().to_string();
        if let Some(prev) = out.last() {
            match catalogue::cmp_objects((&prev.bucket, &prev.key), (&bucket, &key)) {
                Ordering::Less => {}
                Ordering::Equal => r.add(
                    Code::ObjectOrder,
                    &p,
                    format!("object {bucket:?}/{key:?} is listed twice"),
                ),
                Ordering::Greater => r.add(
                    Code::ObjectOrder,
                    &p,
                    format!("object {bucket:?}/{key:?} comes after {:?}/{:?}; objects are sorted by bucket, then key", prev.bucket, prev.key),
                ),
            }
        }
        let size = r.count(o, &p, "size").unwrap_or(0);
        let sha256 = check_sha(o, &p, r);
        let http_metadata = metadata(o, &p, "httpMetadata", r);
        let custom_metadata = metadata(o, &p, "customMetadata", r);
        out.push(ObjectEntry {
            bucket,
            key,
            size,
            sha256,
            http_metadata,
            custom_metadata,
        });
    });
    out
}

fn check_sha(o: &Object<'_>, p: &str, r: &mut LineReport<'_>) -> String {
    let s = r.str(o, p, "sha256").unwrap_or_default();
    if o.contains_key("sha256")
        && o.get("sha256").and_then(Value::as_str).is_some()
        && !crate::hash::is_hex_digest(s)
    {
        r.add(
            Code::InvalidSha256,
            &join(p, "sha256"),
            format!("sha256 {s:?} is not 64 lowercase hex digits"),
        );
    }
    s.to_string()
}

fn metadata(o: &Object<'_>, p: &str, name: &str, r: &mut LineReport<'_>) -> Vec<(String, String)> {
    let Some(v) = o.get(name) else {
        return Vec::new();
    };
    let mp = join(p, name);
    let Some(obj) = v.as_object() else {
        r.add(
            Code::InvalidMetadata,
            &mp,
            format!("{name} must be an object of strings, not {}", v.type_name()),
        );
        return Vec::new();
    };
    let mut out = Vec::with_capacity(obj.len());
    for (k, v) in obj.iter() {
        match v.as_str() {
            Some(s) => out.push((k.to_string(), s.to_string())),
            None => r.add(
                Code::InvalidMetadata,
                &join(&mp, k),
                format!("{name}.{k} must be a string, not {}", v.type_name()),
            ),
        }
    }
    out.sort_by(|a, b| cmp_utf16(&a.0, &b.0));
    out
}

pub(super) fn check_payloads(list: List<'_, '_>, r: &mut LineReport<'_>) -> Vec<PayloadEntry> {
    let mut out: Vec<PayloadEntry> = Vec::with_capacity(list.len());
    list.for_each(|i, v| {
        let p = format!("/payloads/{i}");
        let Some(o) = v.as_object() else {
            r.add(
                Code::MemberType,
                &p,
                format!("a payload entry is an object, not {}", v.type_name()),
            );
            return;
        };
        r.members(o, &p, &["name", "sha256", "size"], &[], "a payload entry");
        let name = r.name(o, &p, "name").unwrap_or_default().to_string();
        if let Some(prev) = out.last() {
            if prev.name == name {
                r.add(
                    Code::PayloadOrder,
                    &p,
                    format!("payload {name:?} is listed twice"),
                );
            } else if catalogue::cmp_payload_names(&prev.name, &name) != Ordering::Less {
                r.add(
                    Code::PayloadOrder,
                    &p,
                    format!("payload {name:?} comes after {:?}; payloads are in the producer's order (name + \",[object Object]\" by UTF-16)", prev.name),
                );
            }
        }
        let size = r.count(o, &p, "size").unwrap_or(0);
        let sha256 = check_sha(o, &p, r);
        out.push(PayloadEntry { name, size, sha256 });
    });
    out
}
