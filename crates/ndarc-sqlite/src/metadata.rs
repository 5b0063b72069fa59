//! Bucket metadata sidecars: the `httpMetadata` and `customMetadata` of a
//! bucket's objects, in a JSON file beside the objects' directory (SPEC.md
//! §13.5). `pack --bucket-metadata NAME=FILE` reads one; `unpack
//! --objects-dir DIR` writes one per bucket some object of which has
//! metadata, at `DIR/metadata/BUCKET.json`, so that pack → unpack → pack
//! gives the same archive.
//!
//! A sidecar is one JSON object mapping an object key to
//! `{"httpMetadata": {...}, "customMetadata": {...}}` (either member may be
//! left out, meaning `{}`; no other member), each an object whose values
//! are strings, as the producer's objects are (`invalid_metadata`, §4.4).
//! An object the sidecar does not name has both `{}`.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::Path;

use ndarc_format::MAX_MANIFEST_LINE;
use ndarc_json::{Object, Value};

/// The largest sidecar read, in bytes: the metadata ends up in the manifest
/// line, which cannot be longer (checked on the file's size before it is
/// read, and again while it is read).
pub const SIDECAR_LIMIT: u64 = MAX_MANIFEST_LINE as u64;

/// The directory under an unpack's objects directory that holds the
/// sidecars (beside `objects/` and `payloads/`, so no object or payload
/// path can be a sidecar's).
pub const SIDECAR_DIR: &str = "metadata";

/// One object's metadata: `(name, value)` pairs of each member, in name
/// order (as the manifest gives them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObjectMetadata {
    /// `httpMetadata`.
    pub http: Vec<(String, String)>,
    /// `customMetadata`.
    pub custom: Vec<(String, String)>,
}

impl ObjectMetadata {
    /// Both members are `{}`.
    pub fn is_empty(&self) -> bool {
        self.http.is_empty() && self.custom.is_empty()
    }

    /// `httpMetadata` as a JSON object.
    pub fn http_value(&self) -> Value<'static> {
        pairs_value(&self.http)
    }

    /// `customMetadata` as a JSON object.
    pub fn custom_value(&self) -> Value<'static> {
        pairs_value(&self.custom)
    }
}

fn pairs_value(pairs: &[(String, String)]) -> Value<'static> {
    let mut o = Object::new();
    for (k, v) in pairs {
        o.insert(k.clone(), Value::from(v.clone()));
    }
    Value::Object(o)
}

/// Reads the sidecar at `path`: object key → metadata, keys in byte order.
/// The error is one line naming what is wrong (the file's size, its JSON
/// with the byte offset, or the member by key).
pub fn read_sidecar(path: &Path) -> Result<BTreeMap<String, ObjectMetadata>, String> {
    let mut f = File::open(path).map_err(|e| format!("cannot read it: {e}"))?;
    let meta = f.metadata().map_err(|e| format!("cannot read it: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > SIDECAR_LIMIT {
        return Err(format!(
            "{} bytes, more than the {SIDECAR_LIMIT} a manifest line can hold",
            meta.len()
        ));
    }
    let mut bytes = Vec::new();
    (&mut f)
        .take(SIDECAR_LIMIT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it: {e}"))?;
    if bytes.len() as u64 > SIDECAR_LIMIT {
        return Err(format!(
            "more than the {SIDECAR_LIMIT} bytes a manifest line can hold (it grew while read)"
        ));
    }
    parse_sidecar(&bytes)
}

/// Parses a sidecar's bytes (see [`read_sidecar`]).
pub fn parse_sidecar(bytes: &[u8]) -> Result<BTreeMap<String, ObjectMetadata>, String> {
    let v = ndarc_json::parse(bytes).map_err(|e| format!("not JSON: {e}"))?;
    let Some(top) = v.as_object() else {
        return Err("not a JSON object of object keys".into());
    };
    let mut out = BTreeMap::new();
    for (key, entry) in top.iter() {
        let Some(entry) = entry.as_object() else {
            return Err(format!(
                "object {key:?}: not an object {{\"httpMetadata\", \"customMetadata\"}}"
            ));
        };
        let mut m = ObjectMetadata::default();
        for (member, value) in entry.iter() {
            let slot = match member {
                "httpMetadata" => &mut m.http,
                "customMetadata" => &mut m.custom,
                _ => {
                    return Err(format!(
                        "object {key:?}: unknown member {member:?} (only httpMetadata and customMetadata)"
                    ))
                }
            };
            *slot = strings(value).ok_or_else(|| {
                format!(
                    "object {key:?}: {member} is not an object whose values are strings (invalid_metadata)"
                )
            })?;
        }
        out.insert(key.to_string(), m);
    }
    Ok(out)
}

/// The members of an object of strings, in name (UTF-16) order, as the
/// canonical manifest writes them.
fn strings(v: &Value<'_>) -> Option<Vec<(String, String)>> {
    let o = v.as_object()?;
    let mut pairs = o
        .iter()
        .map(|(k, v)| Some((k.to_string(), v.as_str()?.to_string())))
        .collect::<Option<Vec<_>>>()?;
    pairs.sort_by(|a, b| ndarc_json::cmp_utf16(&a.0, &b.0));
    Some(pairs)
}

/// The sidecar of `objects` (key, metadata): the objects with metadata
/// only, both members always written, as canonical JSON and a newline.
/// `None` when no object has metadata (no sidecar is written).
pub fn sidecar_bytes<'m>(
    objects: impl IntoIterator<Item = (&'m str, &'m ObjectMetadata)>,
) -> Option<Vec<u8>> {
    let mut top = Object::new();
    for (key, m) in objects.into_iter().filter(|(_, m)| !m.is_empty()) {
        let mut e = Object::new();
        e.insert("httpMetadata", m.http_value());
        e.insert("customMetadata", m.custom_value());
        top.insert(key.to_string(), Value::Object(e));
    }
    if top.is_empty() {
        return None;
    }
    let mut out = ndarc_json::to_canonical_vec(&Value::Object(top));
    out.push(b'\n');
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sidecar_round_trips_and_bad_ones_say_why() {
        let text = br#"{"a.txt":{"httpMetadata":{"contentType":"text/plain"}},"b":{"customMetadata":{"z":"1","a":"2"},"httpMetadata":{}}}"#;
        let m = parse_sidecar(text).unwrap();
        assert_eq!(
            m["a.txt"].http,
            [("contentType".into(), "text/plain".into())]
        );
        assert!(m["a.txt"].custom.is_empty());
        assert_eq!(
            m["b"].custom,
            [("a".into(), "2".into()), ("z".into(), "1".into())]
        );
        let again = sidecar_bytes(m.iter().map(|(k, v)| (k.as_str(), v))).unwrap();
        assert_eq!(
            String::from_utf8(again).unwrap(),
            "{\"a.txt\":{\"customMetadata\":{},\"httpMetadata\":{\"contentType\":\"text/plain\"}},\"b\":{\"customMetadata\":{\"a\":\"2\",\"z\":\"1\"},\"httpMetadata\":{}}}\n"
        );
        assert_eq!(sidecar_bytes([("x", &ObjectMetadata::default())]), None);
        for (bad, why) in [
            (&b"[]"[..], "not a JSON object"),
            (b"{\"k\":1}", "object \"k\": not an object"),
            (b"{\"k\":{\"etag\":{}}}", "unknown member \"etag\""),
            (
                b"{\"k\":{\"httpMetadata\":{\"contentLength\":13}}}",
                "httpMetadata is not an object whose values are strings",
            ),
            (
                b"{\"k\":{\"customMetadata\":[]}}",
                "customMetadata is not an object",
            ),
            (b"{\"k\":{},\"k\":{}}", "json_duplicate_member"),
            (b"{", "not JSON"),
        ] {
            let e = parse_sidecar(bad).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
    }

    /// A sidecar larger than a manifest line is refused on its size, before
    /// it is read (a sparse file: nothing is written or read); a directory
    /// is not a sidecar.
    #[test]
    fn a_sidecar_too_large_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.json");
        File::create(&p)
            .unwrap()
            .set_len(SIDECAR_LIMIT + 1)
            .unwrap();
        let e = read_sidecar(&p).unwrap_err();
        assert_eq!(
            e,
            format!(
                "{} bytes, more than the {SIDECAR_LIMIT} a manifest line can hold",
                SIDECAR_LIMIT + 1
            )
        );
        assert_eq!(read_sidecar(dir.path()).unwrap_err(), "not a regular file");
    }
}
