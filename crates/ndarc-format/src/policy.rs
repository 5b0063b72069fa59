//! Checks against a platform's import policy (SPEC.md §15): what a team
//! requires of an archive beyond the format — the product, the hash the
//! server reported, accepted schemas, exclusions and configuration.
//!
//! A policy is a JSON object whose member names follow the producer's own
//! `policy()` in `catalogue.mjs` where they mean the same thing:
//!
//! ```json
//! {"product": "shop",
//!  "contentHash": "6d5f3006…",
//!  "acceptedSchemas": ["7a4ee6d8…"],
//!  "excludeTables": ["sessions", "oa_%"],
//!  "secretColumns": {"users": ["password_hash"]},
//!  "requiredConfiguration": ["MAIL_KEY"]}
//! ```
//!
//! Every member is optional; an unknown member is an error, so a misspelt
//! rule never passes silently.

use ndarc_json::Value;

use crate::catalogue;
use crate::code::Code;
use crate::manifest::{Written, WrittenObject};
use crate::report::{join, LineReport};

/// An import policy. Empty fields check nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Policy {
    /// The product the archive must be an export of.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub product: Option<String>,
    /// The `contentHash` the archive must carry (the one the server
    /// reported), lowercase hex.
    #[serde(rename = "contentHash", skip_serializing_if = "Option::is_none")]
    pub content_hash: Option<String>,
    /// Schema identities the importer accepts; empty accepts any. Read
    /// from an array of identities or from the producer's map identity →
    /// entry (whose `upgradeRow` cannot travel in JSON).
    #[serde(rename = "acceptedSchemas", skip_serializing_if = "Vec::is_empty")]
    pub accepted_schemas: Vec<String>,
    /// Tables that must not be archived: names or `prefix%` patterns,
    /// ASCII case-insensitive, as the producer's `excludeTables`.
    #[serde(rename = "excludeTables", skip_serializing_if = "Vec::is_empty")]
    pub exclude_tables: Vec<String>,
    /// Tables archived although an exclusion matches them (exact names, as
    /// the producer's `includeTables`); each must be archived.
    #[serde(rename = "includeTables", skip_serializing_if = "Vec::is_empty")]
    pub include_tables: Vec<String>,
    /// Tables derived from others (the producer's `derivedTables`): a table
    /// of exactly that name must not be archived unless included.
    #[serde(rename = "derivedTables", skip_serializing_if = "Vec::is_empty")]
    pub derived_tables: Vec<String>,
    /// Tables an import may replace (the producer's `replaceableTables`):
    /// each must be archived.
    #[serde(rename = "replaceableTables", skip_serializing_if = "Vec::is_empty")]
    pub replaceable_tables: Vec<String>,
    /// Columns that must be excluded (`excludedColumns`) wherever their
    /// table is archived: table → column names.
    #[serde(rename = "secretColumns", skip_serializing_if = "Vec::is_empty")]
    pub secret_columns: Vec<(String, Vec<String>)>,
    /// The configuration names the platform provides: the archive's
    /// `requiredConfiguration` must be exactly these (in any order).
    #[serde(
        rename = "requiredConfiguration",
        skip_serializing_if = "Option::is_none"
    )]
    pub required_configuration: Option<Vec<String>>,
    /// The buckets the producer exports, by binding name (the producer's
    /// `buckets`); `None` when the policy does not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buckets: Option<Vec<(String, Bucket)>>,
    /// The names of the producer's extra payloads (`extraPayloads`; their
    /// `produce`/`consume` functions cannot travel in JSON); `None` when
    /// the policy does not say.
    #[serde(rename = "extraPayloads", skip_serializing_if = "Option::is_none")]
    pub extra_payloads: Option<Vec<String>>,
    /// The producer's `partBytes` (1,024 ..= 16 MiB). Checked as a policy
    /// value only: the rule a part must meet under it is in the
    /// producer's `format.mjs`, which the seed does not show (SPEC.md §15).
    #[serde(rename = "partBytes", skip_serializing_if = "Option::is_none")]
    pub part_bytes: Option<u64>,
}

/// One bucket of a policy's `buckets` (the producer's `{prefix,
/// objectReferences}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Bucket {
    /// The key prefix the producer lists; every object key of the bucket
    /// starts with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// The bucket's objects are exactly the distinct non-null values of
    /// this table's column.
    #[serde(rename = "objectReferences", skip_serializing_if = "Option::is_none")]
    pub object_references: Option<ObjectReferences>,
}

/// A bucket's `objectReferences`: `TABLE.COLUMN` whose distinct non-null
/// values are the bucket's object keys.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ObjectReferences {
    /// The table.
    pub table: String,
    /// The column of the table holding object keys.
    #[serde(rename = "keyColumn")]
    pub key_column: String,
}

/// A policy file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// Not JSON, or not I-JSON (duplicate member names …).
    #[error("the policy is not JSON: {0}")]
    Json(String),
    /// JSON, but not a policy.
    #[error("{}: {problem} ({code})", policy_member(.member))]
    Invalid {
        /// The member at fault (`""` for the whole document).
        member: String,
        /// What is wrong with it.
        problem: String,
        /// The producer's refusal for it (`invalid_policy`,
        /// `invalid_policy_excludeTables`, `invalid_bucket_policy` …).
        code: String,
    },
}

/// The members of a policy: the producer's `policy()` fields plus
/// `contentHash`.
const MEMBERS: [&str; 14] = [
    "acceptedSchemas",
    "buckets",
    "contentHash",
    "derivedTables",
    "excludeTables",
    "exportRow",
    "extraPayloads",
    "includeTables",
    "partBytes",
    "product",
    "replaceableTables",
    "requiredConfiguration",
    "secretColumns",
    "validateStaged",
];

/// "the policy's `member`", or "the policy" for the whole document.
fn policy_member(member: &str) -> String {
    if member.is_empty() {
        "the policy".to_string()
    } else {
        format!("the policy's {member}")
    }
}

fn invalid(member: &str, code: &str, problem: impl Into<String>) -> PolicyError {
    PolicyError::Invalid {
        member: member.to_string(),
        problem: problem.into(),
        code: code.to_string(),
    }
}

fn is_hex64(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn name(member: &str, code: &str, v: &Value<'_>) -> Result<String, PolicyError> {
    match v.as_str() {
        Some(s) if catalogue::is_name(s) => Ok(s.to_string()),
        Some(s) => Err(invalid(
            member,
            code,
            format!(
                "{s:?} {}",
                catalogue::name_problem(s).unwrap_or("is not a name")
            ),
        )),
        None => Err(invalid(
            member,
            code,
            format!("expected a string, not {}", v.type_name()),
        )),
    }
}

fn names(member: &str, code: &str, v: &Value<'_>) -> Result<Vec<String>, PolicyError> {
    let list = v.as_array().ok_or_else(|| {
        invalid(
            member,
            code,
            format!("expected an array, not {}", v.type_name()),
        )
    })?;
    let mut out: Vec<String> = Vec::with_capacity(list.len());
    for item in list {
        let s = name(member, code, item)?;
        if out.contains(&s) {
            return Err(invalid(member, code, format!("{s:?} is listed twice")));
        }
        out.push(s);
    }
    Ok(out)
}

fn hex(member: &str, code: &str, v: &Value<'_>) -> Result<String, PolicyError> {
    match v.as_str() {
        Some(s) if is_hex64(s) => Ok(s.to_string()),
        _ => Err(invalid(
            member,
            code,
            "expected a SHA-256 as 64 lowercase hex digits",
        )),
    }
}

/// An object's members, each name checked as a name (`code` when not).
fn map<'v, 'a>(
    member: &str,
    code: &str,
    v: &'v Value<'a>,
    what: &str,
) -> Result<Vec<(&'v str, &'v Value<'a>)>, PolicyError> {
    let o = v.as_object().ok_or_else(|| {
        invalid(
            member,
            code,
            format!("expected an object of {what}, not {}", v.type_name()),
        )
    })?;
    Ok(o.iter().collect())
}

/// An entry standing for an object of functions that JSON cannot carry:
/// an object whose members are among `allowed` (their values are not
/// read: `JSON.stringify` drops functions, a hand-written file may hold
/// their names).
fn function_entry(
    member: &str,
    code: &str,
    key: &str,
    v: &Value<'_>,
    allowed: &[&str],
) -> Result<(), PolicyError> {
    let o = v.as_object().ok_or_else(|| {
        invalid(
            member,
            code,
            format!("{key:?}: expected an object, not {}", v.type_name()),
        )
    })?;
    match o.keys().find(|k| !allowed.contains(k)) {
        Some(k) => Err(invalid(
            member,
            code,
            format!(
                "{key:?} has member {k:?}; an entry has only {}",
                allowed.join(", ")
            ),
        )),
        None => Ok(()),
    }
}

fn accepted_schemas(k: &str, v: &Value<'_>) -> Result<Vec<String>, PolicyError> {
    const CODE: &str = "invalid_accepted_schema";
    let mut out: Vec<String> = Vec::new();
    if let Some(list) = v.as_array() {
        for s in list {
            out.push(hex(k, CODE, s)?);
        }
    } else if v.as_object().is_some() {
        for (identity, entry) in map(k, CODE, v, "schema identity → entry")? {
            out.push(hex(k, CODE, &Value::from(identity))?);
            function_entry(k, CODE, identity, entry, &["upgradeRow"])?;
        }
    } else {
        return Err(invalid(
            k,
            CODE,
            format!(
                "expected an array of schema identities or an object identity → entry, not {}",
                v.type_name()
            ),
        ));
    }
    Ok(out)
}

fn buckets(k: &str, v: &Value<'_>) -> Result<Vec<(String, Bucket)>, PolicyError> {
    const CODE: &str = "invalid_bucket_policy";
    let mut out = Vec::new();
    for (binding, entry) in map(k, CODE, v, "bucket binding → {prefix, objectReferences}")? {
        let binding = name(k, CODE, &Value::from(binding))?;
        let o = entry.as_object().ok_or_else(|| {
            invalid(
                k,
                CODE,
                format!("{binding:?}: expected an object, not {}", entry.type_name()),
            )
        })?;
        let mut bucket = Bucket::default();
        for (m, value) in o.iter() {
            match m {
                "prefix" => {
                    let p = value.as_str().ok_or_else(|| {
                        invalid(
                            k,
                            "invalid_bucket_prefix",
                            format!(
                                "{binding:?}: prefix is {}, not a string",
                                value.type_name()
                            ),
                        )
                    })?;
                    bucket.prefix = Some(p.to_string());
                }
                "objectReferences" => bucket.object_references = object_references(k, value)?,
                other => {
                    return Err(invalid(
                        k,
                        CODE,
                        format!(
                            "{binding:?} has member {other:?}; a bucket has only prefix and objectReferences"
                        ),
                    ))
                }
            }
        }
        out.push((binding, bucket));
    }
    Ok(out)
}

fn object_references(k: &str, v: &Value<'_>) -> Result<Option<ObjectReferences>, PolicyError> {
    const CODE: &str = "invalid_object_references";
    // The producer reads a falsy objectReferences as none.
    if v.is_null() || matches!(v, Value::Bool(false)) {
        return Ok(None);
    }
    let o = v
        .as_object()
        .ok_or_else(|| invalid(k, CODE, "objectReferences: expected {table, keyColumn}"))?;
    if let Some(m) = o.keys().find(|m| !["table", "keyColumn"].contains(m)) {
        return Err(invalid(
            k,
            CODE,
            format!("objectReferences has member {m:?}; it has only table and keyColumn"),
        ));
    }
    let field = |m: &str| {
        o.get(m)
            .ok_or_else(|| invalid(k, CODE, format!("objectReferences lacks {m}")))
            .and_then(|v| name(k, CODE, v))
    };
    Ok(Some(ObjectReferences {
        table: field("table")?,
        key_column: field("keyColumn")?,
    }))
}

fn extra_payloads(k: &str, v: &Value<'_>) -> Result<Vec<String>, PolicyError> {
    const CODE: &str = "invalid_extra_payload";
    if v.as_array().is_some() {
        return names(k, CODE, v);
    }
    let mut out = Vec::new();
    for (key, entry) in map(k, CODE, v, "payload name → {produce, consume}")? {
        out.push(name(k, CODE, &Value::from(key))?);
        function_entry(k, CODE, key, entry, &["produce", "consume"])?;
    }
    Ok(out)
}

impl Policy {
    /// Reads a policy document (strict I-JSON: a duplicate member is an
    /// error). The producer's configuration (`policy()` of
    /// `catalogue.mjs`) is read as it is where it is data; each member is
    /// checked as `policy()` checks it, with its refusal code.
    pub fn from_json(bytes: &[u8]) -> Result<Policy, PolicyError> {
        let doc = ndarc_json::parse(bytes).map_err(|e| PolicyError::Json(e.to_string()))?;
        let obj = doc
            .as_object()
            .ok_or_else(|| invalid("", "invalid_policy", "a policy is a JSON object"))?;
        let mut p = Policy::default();
        for (k, v) in obj.iter() {
            let list_code = format!("invalid_policy_{k}");
            match k {
                "product" => p.product = Some(name(k, "invalid_policy", v)?),
                "contentHash" => p.content_hash = Some(hex(k, "invalid_policy", v)?),
                "acceptedSchemas" => p.accepted_schemas = accepted_schemas(k, v)?,
                "excludeTables" => p.exclude_tables = names(k, &list_code, v)?,
                "includeTables" => p.include_tables = names(k, &list_code, v)?,
                "derivedTables" => p.derived_tables = names(k, &list_code, v)?,
                "replaceableTables" => p.replaceable_tables = names(k, &list_code, v)?,
                "requiredConfiguration" => {
                    p.required_configuration = Some(names(k, &list_code, v)?)
                }
                "exportRow" | "validateStaged" => {
                    return Err(invalid(
                        k,
                        &list_code,
                        "a function cannot travel in JSON; leave the member out",
                    ))
                }
                "partBytes" => match v.as_safe_integer() {
                    Some(n)
                        if usize::try_from(n)
                            .is_ok_and(|n| crate::pack::PART_BYTES.contains(&n)) =>
                    {
                        p.part_bytes = Some(n as u64)
                    }
                    _ => {
                        return Err(invalid(
                            k,
                            "invalid_part_limit",
                            "expected an integer from 1024 to 16777216",
                        ))
                    }
                },
                "secretColumns" => {
                    const CODE: &str = "invalid_secret_columns";
                    for (table, cols) in map(k, CODE, v, "table → column names")? {
                        let table = name(k, CODE, &Value::from(table))?;
                        p.secret_columns.push((table, names(k, CODE, cols)?));
                    }
                }
                "buckets" => p.buckets = Some(buckets(k, v)?),
                "extraPayloads" => p.extra_payloads = Some(extra_payloads(k, v)?),
                other => {
                    return Err(invalid(
                        other,
                        "invalid_policy",
                        format!("unknown member; a policy has {}", MEMBERS.join(", ")),
                    ))
                }
            }
        }
        Ok(p)
    }

    /// The policy as a JSON object with the members it sets (for a
    /// receipt: what the archive was held to).
    pub fn to_value(&self) -> Value<'static> {
        let strings =
            |v: &[String]| Value::Array(v.iter().map(|s| Value::from(s.clone())).collect());
        let mut o = ndarc_json::Object::new();
        if let Some(p) = &self.product {
            o.insert("product", Value::from(p.clone()));
        }
        if let Some(h) = &self.content_hash {
            o.insert("contentHash", Value::from(h.clone()));
        }
        if !self.accepted_schemas.is_empty() {
            o.insert("acceptedSchemas", strings(&self.accepted_schemas));
        }
        if !self.exclude_tables.is_empty() {
            o.insert("excludeTables", strings(&self.exclude_tables));
        }
        if !self.secret_columns.is_empty() {
            let mut s = ndarc_json::Object::new();
            for (t, cols) in &self.secret_columns {
                s.insert(t.clone(), strings(cols));
            }
            o.insert("secretColumns", Value::Object(s));
        }
        if let Some(c) = &self.required_configuration {
            o.insert("requiredConfiguration", strings(c));
        }
        for (key, list) in [
            ("includeTables", &self.include_tables),
            ("derivedTables", &self.derived_tables),
            ("replaceableTables", &self.replaceable_tables),
        ] {
            if !list.is_empty() {
                o.insert(key, strings(list));
            }
        }
        if let Some(buckets) = &self.buckets {
            let mut b = ndarc_json::Object::new();
            for (binding, bucket) in buckets {
                let mut e = ndarc_json::Object::new();
                if let Some(p) = &bucket.prefix {
                    e.insert("prefix", Value::from(p.clone()));
                }
                if let Some(r) = &bucket.object_references {
                    let mut refs = ndarc_json::Object::new();
                    refs.insert("table", Value::from(r.table.clone()));
                    refs.insert("keyColumn", Value::from(r.key_column.clone()));
                    e.insert("objectReferences", Value::Object(refs));
                }
                b.insert(binding.clone(), Value::Object(e));
            }
            o.insert("buckets", Value::Object(b));
        }
        if let Some(p) = &self.extra_payloads {
            o.insert("extraPayloads", strings(p));
        }
        if let Some(n) = self.part_bytes {
            o.insert("partBytes", Value::from(n as f64));
        }
        Value::Object(o)
    }

    /// Whether the policy checks nothing.
    pub fn is_empty(&self) -> bool {
        *self == Policy::default()
    }

    /// Checks the manifest record (line 1) against the policy.
    pub fn check_manifest(&self, manifest: &Value<'_>, r: &mut LineReport<'_>) {
        let written = Written::new(manifest);
        if let (Some(want), Some(got)) = (&self.product, written.product()) {
            if want != got {
                r.add(
                    Code::PolicyProduct,
                    "/product",
                    format!("the archive is an export of {got:?}; the policy expects {want:?}"),
                );
            }
        }
        if let (false, Some(got)) = (self.accepted_schemas.is_empty(), written.schema()) {
            if !self.accepted_schemas.iter().any(|s| s == got) {
                r.add(
                    Code::PolicySchema,
                    "/schema",
                    format!(
                        "schema {got} is not one the policy accepts ({})",
                        self.accepted_schemas.join(", ")
                    ),
                );
            }
        }
        let tables = written.tables();
        for t in &tables {
            let tname = t.name;
            let p = format!("/tables/{}", t.index);
            // The producer archives an included table whatever excludes
            // it (`archived()` in catalogue.mjs).
            let included = self.include_tables.iter().any(|t| t == tname);
            if let Some(pattern) = self
                .exclude_tables
                .iter()
                .find(|pat| catalogue::matches_exclusion(tname, pat))
                .filter(|_| !included)
            {
                r.add(
                    Code::PolicyExclusion,
                    &join(&p, "name"),
                    format!("table {tname:?} is archived, but the policy excludes {pattern:?}"),
                );
            } else if !included && self.derived_tables.iter().any(|t| t == tname) {
                r.add(
                    Code::PolicyExclusion,
                    &join(&p, "name"),
                    format!("table {tname:?} is archived, but the policy names it a derived table: the producer excludes it"),
                );
            }
            let Some((_, secrets)) = self
                .secret_columns
                .iter()
                .find(|(st, _)| st.eq_ignore_ascii_case(tname))
            else {
                continue;
            };
            let excluded = written.excluded_columns_of(tname);
            for &(j, cname) in &t.columns {
                if secrets.iter().any(|s| s.eq_ignore_ascii_case(cname))
                    && !excluded.iter().any(|e| e.eq_ignore_ascii_case(cname))
                {
                    r.add(
                        Code::PolicyExclusion,
                        &format!("{p}/columns/{j}/name"),
                        format!("column {tname}.{cname} is a secret column under the policy but is not in excludedColumns: its values are in the archive"),
                    );
                }
            }
        }
        for (what, list) in [
            ("includes", &self.include_tables),
            ("may replace", &self.replaceable_tables),
        ] {
            for t in list {
                if !tables.iter().any(|x| x.name == t) {
                    r.add(
                        Code::PolicyTableMissing,
                        "/tables",
                        format!("the policy {what} table {t:?}, but the archive does not hold it"),
                    );
                }
            }
        }
        self.check_binaries(&written, r);
        if let Some(want) = &self.required_configuration {
            let got: Vec<&str> = written.required_configuration().unwrap_or_default();
            let missing: Vec<&str> = want
                .iter()
                .map(String::as_str)
                .filter(|w| !got.contains(w))
                .collect();
            let extra: Vec<&str> = got
                .iter()
                .copied()
                .filter(|g| !want.iter().any(|w| w == g))
                .collect();
            if !missing.is_empty() || !extra.is_empty() {
                let mut why = Vec::new();
                if !extra.is_empty() {
                    why.push(format!(
                        "the archive requires {} that the policy does not provide",
                        extra.join(", ")
                    ));
                }
                if !missing.is_empty() {
                    why.push(format!(
                        "the policy expects {} that the archive does not name",
                        missing.join(", ")
                    ));
                }
                r.add(
                    Code::PolicyConfiguration,
                    "/requiredConfiguration",
                    format!("required configuration differs: {}", why.join("; ")),
                );
            }
        }
    }

    /// The manifest's objects against `buckets` and its payloads against
    /// `extraPayloads`: the producer lists exactly its buckets under their
    /// prefixes and produces one payload per extra payload.
    fn check_binaries(&self, written: &Written<'_, '_>, r: &mut LineReport<'_>) {
        if let Some(buckets) = &self.buckets {
            for WrittenObject {
                index: i,
                bucket,
                key,
            } in written.objects()
            {
                match buckets.iter().find(|(b, _)| b == bucket) {
                    None => r.add(
                        Code::PolicyBucket,
                        &format!("/objects/{i}/bucket"),
                        format!("object {key:?} is in bucket {bucket:?}, which the policy does not export (its buckets: {})", buckets.iter().map(|(b, _)| b.as_str()).collect::<Vec<_>>().join(", ")),
                    ),
                    Some((_, Bucket { prefix: Some(prefix), .. })) if !key.starts_with(prefix.as_str()) => r.add(
                        Code::PolicyBucket,
                        &format!("/objects/{i}/key"),
                        format!("object {key:?} of bucket {bucket:?} is outside the policy's prefix {prefix:?}"),
                    ),
                    Some(_) => {}
                }
            }
        }
        if let Some(want) = &self.extra_payloads {
            let got = written.payload_names();
            for (i, name) in got.iter().enumerate() {
                if !want.iter().any(|w| w == name) {
                    r.add(
                        Code::PolicyPayload,
                        &format!("/payloads/{i}/name"),
                        format!("payload {name:?} is not one of the policy's extra payloads"),
                    );
                }
            }
            for w in want {
                if !got.contains(&w.as_str()) {
                    r.add(
                        Code::PolicyPayload,
                        "/payloads",
                        format!("the policy's extra payload {w:?} is not in the archive"),
                    );
                }
            }
        }
    }

    /// Checks the closing record against the policy.
    pub(crate) fn check_closing(&self, closing: &Value<'_>, r: &mut LineReport<'_>) {
        let (Some(want), Some(got)) = (
            &self.content_hash,
            closing.get("contentHash").and_then(Value::as_str),
        ) else {
            return;
        };
        if want != got {
            r.add(
                Code::PolicyContentHash,
                "/contentHash",
                format!("contentHash is {got}; the policy expects {want} (the hash the server reported)"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::LineRef;

    const EXAMPLE: &str = include_str!("../../../testdata/valid/example.ndjson");

    fn codes(policy: &Policy) -> Vec<(Code, String)> {
        let mut lines = EXAMPLE.lines();
        let manifest = lines.next().unwrap();
        let closing = lines.last().unwrap();
        let mut out = Vec::new();
        for (bytes, is_manifest) in [(manifest, true), (closing, false)] {
            let v = ndarc_json::parse(bytes.as_bytes()).unwrap();
            let mut r = LineReport::new(
                LineRef {
                    line: 1,
                    offset: 0,
                    bytes: bytes.as_bytes(),
                },
                100,
            );
            if is_manifest {
                policy.check_manifest(&v, &mut r);
            } else {
                policy.check_closing(&v, &mut r);
            }
            out.extend(r.into_findings().0.into_iter().map(|f| (f.code, f.pointer)));
        }
        out
    }

    const HASH: &str = "6d5f30061640eb03e628acc45a8f36240c2d80acbfd31931fec91184c12abeec";
    const SCHEMA: &str = "7a4ee6d86f8acfa244f43f369da867bf4f7e26c3eeeaa3ed16e56e189d676e27";

    #[test]
    fn a_policy_the_example_meets_gives_nothing() {
        let p = Policy::from_json(
            format!(
                r#"{{"product":"example","contentHash":"{HASH}","acceptedSchemas":["{SCHEMA}"],
                "excludeTables":["sessions","oa_%"],"secretColumns":{{"users":["password"]}},
                "requiredConfiguration":["MAIL_KEY"]}}"#
            )
            .as_bytes(),
        )
        .unwrap();
        assert_eq!(codes(&p), vec![]);
    }

    #[test]
    fn each_breach_has_its_code_and_pointer() {
        let other = "0".repeat(64);
        let p = Policy::from_json(
            format!(
                r#"{{"product":"shop","contentHash":"{other}","acceptedSchemas":["{other}"],
                "excludeTables":["NOTES"],"secretColumns":{{"Users":["AVATAR"]}},
                "requiredConfiguration":["DB_URL"]}}"#
            )
            .as_bytes(),
        )
        .unwrap();
        assert_eq!(
            codes(&p),
            vec![
                (Code::PolicyProduct, "/product".to_string()),
                (Code::PolicySchema, "/schema".to_string()),
                (Code::PolicyExclusion, "/tables/0/name".to_string()),
                (
                    Code::PolicyExclusion,
                    "/tables/1/columns/2/name".to_string()
                ),
                (
                    Code::PolicyConfiguration,
                    "/requiredConfiguration".to_string()
                ),
                (Code::PolicyContentHash, "/contentHash".to_string()),
            ]
        );
    }

    /// A producer configuration (`policy()` of catalogue.mjs) as
    /// `JSON.stringify` writes it: functions dropped, maps kept.
    fn producer_configuration() -> String {
        format!(
            r#"{{"product":"example","excludeTables":["sessions","notes"],"includeTables":["notes"],
            "derivedTables":["search"],"secretColumns":{{"users":["password"]}},
            "replaceableTables":["users"],"requiredConfiguration":["MAIL_KEY"],
            "acceptedSchemas":{{"{SCHEMA}":{{}}}},
            "buckets":{{"files":{{"prefix":"greet","objectReferences":{{"table":"notes","keyColumn":"body"}}}}}},
            "extraPayloads":{{"kv":{{}}}},"partBytes":1048576}}"#
        )
    }

    #[test]
    fn a_producer_configuration_is_a_policy() {
        let p = Policy::from_json(producer_configuration().as_bytes()).unwrap();
        assert_eq!(p.accepted_schemas, vec![SCHEMA.to_string()]);
        assert_eq!(p.include_tables, vec!["notes".to_string()]);
        assert_eq!(p.extra_payloads, Some(vec!["kv".to_string()]));
        assert_eq!(p.part_bytes, Some(1048576));
        let files = &p.buckets.as_ref().unwrap()[0];
        assert_eq!(files.0, "files");
        assert_eq!(
            files.1.object_references,
            Some(ObjectReferences {
                table: "notes".into(),
                key_column: "body".into()
            })
        );
        // notes is excluded by name but included, as the producer does.
        assert_eq!(codes(&p), vec![]);
        // The receipt's form reads back to the same policy.
        let again = Policy::from_json(&ndarc_json::to_canonical_vec(&p.to_value())).unwrap();
        assert_eq!(again, p);
    }

    #[test]
    fn what_an_archive_shows_of_a_producer_configuration_is_checked() {
        let p = Policy::from_json(
            br#"{"derivedTables":["users"],"includeTables":["audit"],"replaceableTables":["notes","jobs"],
            "buckets":{"files":{"prefix":"img/"}},"extraPayloads":["kv","cache"]}"#,
        )
        .unwrap();
        assert_eq!(
            codes(&p),
            vec![
                (Code::PolicyExclusion, "/tables/1/name".to_string()),
                (Code::PolicyTableMissing, "/tables".to_string()),
                (Code::PolicyTableMissing, "/tables".to_string()),
                (Code::PolicyBucket, "/objects/0/key".to_string()),
                (Code::PolicyPayload, "/payloads".to_string()),
            ]
        );
        let p = Policy::from_json(br#"{"buckets":{"images":{}},"extraPayloads":[]}"#).unwrap();
        assert_eq!(
            codes(&p),
            vec![
                (Code::PolicyBucket, "/objects/0/bucket".to_string()),
                (Code::PolicyPayload, "/payloads/0/name".to_string()),
            ]
        );
    }

    #[test]
    fn each_member_is_refused_with_the_producers_code() {
        let code = |s: &str| match Policy::from_json(s.as_bytes()) {
            Err(PolicyError::Invalid { code, .. }) => code,
            other => panic!("{s}: {other:?}"),
        };
        let h = SCHEMA;
        for (doc, want) in [
            (r#"{"product":""}"#.to_string(), "invalid_policy"),
            (
                r#"{"includeTables":["a","a"]}"#.into(),
                "invalid_policy_includeTables",
            ),
            (
                r#"{"derivedTables":"a"}"#.into(),
                "invalid_policy_derivedTables",
            ),
            (
                r#"{"replaceableTables":[1]}"#.into(),
                "invalid_policy_replaceableTables",
            ),
            (
                r#"{"requiredConfiguration":["a\u0001"]}"#.into(),
                "invalid_policy_requiredConfiguration",
            ),
            (
                r#"{"exportRow":"row => row"}"#.into(),
                "invalid_policy_exportRow",
            ),
            (
                r#"{"validateStaged":{}}"#.into(),
                "invalid_policy_validateStaged",
            ),
            (r#"{"partBytes":1023}"#.into(), "invalid_part_limit"),
            (r#"{"partBytes":16777217}"#.into(), "invalid_part_limit"),
            (r#"{"partBytes":2048.5}"#.into(), "invalid_part_limit"),
            (
                r#"{"secretColumns":{"":["a"]}}"#.into(),
                "invalid_secret_columns",
            ),
            (
                r#"{"acceptedSchemas":{"ABC":{}}}"#.into(),
                "invalid_accepted_schema",
            ),
            (
                format!(r#"{{"acceptedSchemas":{{"{h}":{{"upgrade":1}}}}}}"#),
                "invalid_accepted_schema",
            ),
            (
                format!(r#"{{"acceptedSchemas":{{"{h}":[]}}}}"#),
                "invalid_accepted_schema",
            ),
            (
                r#"{"acceptedSchemas":"x"}"#.into(),
                "invalid_accepted_schema",
            ),
            (
                r#"{"buckets":{"b":{"prefx":"a"}}}"#.into(),
                "invalid_bucket_policy",
            ),
            (r#"{"buckets":{"b":null}}"#.into(), "invalid_bucket_policy"),
            (r#"{"buckets":[]}"#.into(), "invalid_bucket_policy"),
            (
                r#"{"buckets":{"b":{"prefix":1}}}"#.into(),
                "invalid_bucket_prefix",
            ),
            (
                r#"{"buckets":{"b":{"objectReferences":{"table":"t"}}}}"#.into(),
                "invalid_object_references",
            ),
            (
                r#"{"buckets":{"b":{"objectReferences":"t.c"}}}"#.into(),
                "invalid_object_references",
            ),
            (
                r#"{"extraPayloads":{"kv":{"read":1}}}"#.into(),
                "invalid_extra_payload",
            ),
            (
                r#"{"extraPayloads":["kv","kv"]}"#.into(),
                "invalid_extra_payload",
            ),
        ] {
            assert_eq!(code(&doc), want, "{doc}");
        }
        // A falsy objectReferences is none, as the producer reads it.
        let p = Policy::from_json(br#"{"buckets":{"b":{"objectReferences":null}}}"#).unwrap();
        assert_eq!(p.buckets, Some(vec![("b".to_string(), Bucket::default())]));
    }

    #[test]
    fn bad_policies_are_refused_with_the_member() {
        let err = |s: &str| Policy::from_json(s.as_bytes()).unwrap_err().to_string();
        assert!(err("[]").contains("a policy is a JSON object"));
        // The whole document is named as such, not as an empty member.
        assert_eq!(
            err("[]"),
            "the policy: a policy is a JSON object (invalid_policy)"
        );
        assert!(err(r#"{"prodcut":"x"}"#).contains("prodcut: unknown member"));
        assert!(err(r#"{"contentHash":"ABC"}"#).contains("64 lowercase hex"));
        assert!(err(r#"{"excludeTables":["a","a"]}"#).contains("listed twice"));
        assert!(err(r#"{"product":"a","product":"b"}"#).contains("not JSON"));
        assert!(err(r#"{"secretColumns":{"t":"c"}}"#).contains("expected an array"));
        assert!(Policy::from_json(b"{}").unwrap().is_empty());
    }
}
