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
    /// Schema identities the importer accepts; empty accepts any.
    #[serde(rename = "acceptedSchemas", skip_serializing_if = "Vec::is_empty")]
    pub accepted_schemas: Vec<String>,
    /// Tables that must not be archived: names or `prefix%` patterns,
    /// ASCII case-insensitive, as the producer's `excludeTables`.
    #[serde(rename = "excludeTables", skip_serializing_if = "Vec::is_empty")]
    pub exclude_tables: Vec<String>,
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
}

/// A policy file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// Not JSON, or not I-JSON (duplicate member names …).
    #[error("the policy is not JSON: {0}")]
    Json(String),
    /// JSON, but not a policy.
    #[error("{}: {problem}", policy_member(.member))]
    Invalid {
        /// The member at fault (`""` for the whole document).
        member: String,
        /// What is wrong with it.
        problem: String,
    },
}

const MEMBERS: [&str; 6] = [
    "acceptedSchemas",
    "contentHash",
    "excludeTables",
    "product",
    "requiredConfiguration",
    "secretColumns",
];

/// "the policy's `member`", or "the policy" for the whole document.
fn policy_member(member: &str) -> String {
    if member.is_empty() {
        "the policy".to_string()
    } else {
        format!("the policy's {member}")
    }
}

fn invalid(member: &str, problem: impl Into<String>) -> PolicyError {
    PolicyError::Invalid {
        member: member.to_string(),
        problem: problem.into(),
    }
}

fn is_hex64(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn name(member: &str, v: &Value<'_>) -> Result<String, PolicyError> {
    match v.as_str() {
        Some(s) if catalogue::is_name(s) => Ok(s.to_string()),
        Some(s) => Err(invalid(
            member,
            format!(
                "{s:?} {}",
                catalogue::name_problem(s).unwrap_or("is not a name")
            ),
        )),
        None => Err(invalid(
            member,
            format!("expected a string, not {}", v.type_name()),
        )),
    }
}

fn names(member: &str, v: &Value<'_>) -> Result<Vec<String>, PolicyError> {
    let list = v
        .as_array()
        .ok_or_else(|| invalid(member, format!("expected an array, not {}", v.type_name())))?;
    let mut out: Vec<String> = Vec::with_capacity(list.len());
    for item in list {
        let s = name(member, item)?;
        if out.contains(&s) {
            return Err(invalid(member, format!("{s:?} is listed twice")));
        }
        out.push(s);
    }
    Ok(out)
}

fn hex(member: &str, v: &Value<'_>) -> Result<String, PolicyError> {
    match v.as_str() {
        Some(s) if is_hex64(s) => Ok(s.to_string()),
        _ => Err(invalid(
            member,
            "expected a SHA-256 as 64 lowercase hex digits",
        )),
    }
}

impl Policy {
    /// Reads a policy document (strict I-JSON: a duplicate member is an
    /// error).
    pub fn from_json(bytes: &[u8]) -> Result<Policy, PolicyError> {
        let doc = ndarc_json::parse(bytes).map_err(|e| PolicyError::Json(e.to_string()))?;
        let obj = doc
            .as_object()
            .ok_or_else(|| invalid("", "a policy is a JSON object"))?;
        let mut p = Policy::default();
        for (k, v) in obj.iter() {
            match k {
                "product" => p.product = Some(name(k, v)?),
                "contentHash" => p.content_hash = Some(hex(k, v)?),
                "acceptedSchemas" => {
                    let list = v
                        .as_array()
                        .ok_or_else(|| invalid(k, "expected an array"))?;
                    p.accepted_schemas =
                        list.iter().map(|s| hex(k, s)).collect::<Result<_, _>>()?;
                }
                "excludeTables" => p.exclude_tables = names(k, v)?,
                "requiredConfiguration" => p.required_configuration = Some(names(k, v)?),
                "secretColumns" => {
                    let o = v
                        .as_object()
                        .ok_or_else(|| invalid(k, "expected an object of table → column names"))?;
                    for (table, cols) in o.iter() {
                        let table = name(k, &Value::from(table))?;
                        p.secret_columns.push((table, names(k, cols)?));
                    }
                }
                other => {
                    return Err(invalid(
                        other,
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
        Value::Object(o)
    }

    /// Whether the policy checks nothing.
    pub fn is_empty(&self) -> bool {
        *self == Policy::default()
    }

    /// Checks the manifest record (line 1) against the policy.
    pub fn check_manifest(&self, manifest: &Value<'_>, r: &mut LineReport<'_>) {
        let str_of = |k: &str| manifest.get(k).and_then(Value::as_str);
        if let (Some(want), Some(got)) = (&self.product, str_of("product")) {
            if want != got {
                r.add(
                    Code::PolicyProduct,
                    "/product",
                    format!("the archive is an export of {got:?}; the policy expects {want:?}"),
                );
            }
        }
        if let (false, Some(got)) = (self.accepted_schemas.is_empty(), str_of("schema")) {
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
        let tables = manifest
            .get("tables")
            .and_then(Value::as_array)
            .unwrap_or(&[]);
        let excluded_columns = manifest.get("excludedColumns");
        for (i, t) in tables.iter().enumerate() {
            let Some(tname) = t.get("name").and_then(Value::as_str) else {
                continue;
            };
            let p = format!("/tables/{i}");
            if let Some(pattern) = self
                .exclude_tables
                .iter()
                .find(|pat| catalogue::matches_exclusion(tname, pat))
            {
                r.add(
                    Code::PolicyExclusion,
                    &join(&p, "name"),
                    format!("table {tname:?} is archived, but the policy excludes {pattern:?}"),
                );
            }
            let Some((_, secrets)) = self
                .secret_columns
                .iter()
                .find(|(st, _)| st.eq_ignore_ascii_case(tname))
            else {
                continue;
            };
            let columns = t.get("columns").and_then(Value::as_array).unwrap_or(&[]);
            let excluded: Vec<&str> = excluded_columns
                .and_then(|o| o.get(tname))
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            for (j, c) in columns.iter().enumerate() {
                let Some(cname) = c.get("name").and_then(Value::as_str) else {
                    continue;
                };
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
        if let Some(want) = &self.required_configuration {
            let got: Vec<&str> = manifest
                .get("requiredConfiguration")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
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

    #[test]
    fn bad_policies_are_refused_with_the_member() {
        let err = |s: &str| Policy::from_json(s.as_bytes()).unwrap_err().to_string();
        assert!(err("[]").contains("a policy is a JSON object"));
        // The whole document is named as such, not as an empty member.
        assert_eq!(err("[]"), "the policy: a policy is a JSON object");
        assert!(err(r#"{"prodcut":"x"}"#).contains("prodcut: unknown member"));
        assert!(err(r#"{"contentHash":"ABC"}"#).contains("64 lowercase hex"));
        assert!(err(r#"{"excludeTables":["a","a"]}"#).contains("listed twice"));
        assert!(err(r#"{"product":"a","product":"b"}"#).contains("not JSON"));
        assert!(err(r#"{"secretColumns":{"t":"c"}}"#).contains("expected an array"));
        assert!(Policy::from_json(b"{}").unwrap().is_empty());
    }
}
