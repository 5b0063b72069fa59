//! The manifest as written: members read by name from the parsed line, for
//! the readers that must see what the strict intake ([`super::Manifest`])
//! refuses or reshapes.
//!
//! The typed manifest keeps a table only when its entry is an object, and
//! gives a missing name the empty string; a reader that reports by the
//! manifest's own positions (the policy), or takes its header from a line
//! verification refused (the database stream), reads the members here
//! instead. This module and the strict intake are the only readers of
//! manifest members: no other code names them.

use ndarc_json::Value;

use super::Carried;

/// A manifest line's members as written. Entries that are not objects, and
/// names that are not strings, are left out; positions are the manifest's.
#[derive(Debug)]
pub struct Written<'v, 'a> {
    manifest: &'v Value<'a>,
}

/// A `tables` entry with a string `name`, as written.
#[derive(Debug, Clone)]
pub struct WrittenTable<'v> {
    /// The entry's position in `tables`.
    pub index: usize,
    /// Its `name`.
    pub name: &'v str,
    /// Its `columns` with string names: (position in `columns`, name).
    pub columns: Vec<(usize, &'v str)>,
}

/// An `objects` entry with string `bucket` and `key`, as written.
#[derive(Debug, Clone)]
pub struct WrittenObject<'v> {
    /// The entry's position in `objects`.
    pub index: usize,
    /// Its `bucket`.
    pub bucket: &'v str,
    /// Its `key`.
    pub key: &'v str,
}

impl<'v, 'a> Written<'v, 'a> {
    /// The members of `manifest`, the parsed manifest line.
    pub fn new(manifest: &'v Value<'a>) -> Self {
        Written { manifest }
    }

    fn array(&self, member: &str) -> &'v [Value<'a>] {
        self.manifest
            .get(member)
            .and_then(Value::as_array)
            .unwrap_or(&[])
    }

    fn strings(list: &'v [Value<'a>]) -> Vec<&'v str> {
        list.iter().filter_map(Value::as_str).collect()
    }

    /// `product`, when it is a string.
    pub fn product(&self) -> Option<&'v str> {
        self.manifest.get("product").and_then(Value::as_str)
    }

    /// `schema`, when it is a string.
    pub fn schema(&self) -> Option<&'v str> {
        self.manifest.get("schema").and_then(Value::as_str)
    }

    /// The `tables` entries with string names, in manifest order.
    pub fn tables(&self) -> Vec<WrittenTable<'v>> {
        self.array("tables")
            .iter()
            .enumerate()
            .filter_map(|(index, t)| {
                let name = t.get("name").and_then(Value::as_str)?;
                let columns = t
                    .get("columns")
                    .and_then(Value::as_array)
                    .unwrap_or(&[])
                    .iter()
                    .enumerate()
                    .filter_map(|(j, c)| Some((j, c.get("name").and_then(Value::as_str)?)))
                    .collect();
                Some(WrittenTable {
                    index,
                    name,
                    columns,
                })
            })
            .collect()
    }

    /// The string names `excludedColumns` lists for `table`.
    pub fn excluded_columns_of(&self, table: &str) -> Vec<&'v str> {
        self.manifest
            .get("excludedColumns")
            .and_then(|o| o.get(table))
            .and_then(Value::as_array)
            .map(Self::strings)
            .unwrap_or_default()
    }

    /// Every (table, column) pair of `excludedColumns` whose column is a
    /// string, in the member's order.
    pub fn excluded_columns(&self) -> Vec<(&'v str, &'v str)> {
        let Some(Value::Object(o)) = self.manifest.get("excludedColumns") else {
            return Vec::new();
        };
        o.iter()
            .flat_map(|(t, cols)| {
                cols.as_array()
                    .map(Self::strings)
                    .unwrap_or_default()
                    .into_iter()
                    .map(move |c| (t, c))
            })
            .collect()
    }

    /// The string entries of `excludedTables`.
    pub fn excluded_tables(&self) -> Vec<&'v str> {
        Self::strings(self.array("excludedTables"))
    }

    /// The string entries of `requiredConfiguration`; `None` when the member
    /// is missing or not an array.
    pub fn required_configuration(&self) -> Option<Vec<&'v str>> {
        self.manifest
            .get("requiredConfiguration")
            .and_then(Value::as_array)
            .map(Self::strings)
    }

    /// The `objects` entries with string bucket and key, in manifest order.
    pub fn objects(&self) -> Vec<WrittenObject<'v>> {
        self.array("objects")
            .iter()
            .enumerate()
            .filter_map(|(index, o)| {
                Some(WrittenObject {
                    index,
                    bucket: o.get("bucket").and_then(Value::as_str)?,
                    key: o.get("key").and_then(Value::as_str)?,
                })
            })
            .collect()
    }

    /// The string names of the `payloads` entries, in manifest order.
    pub fn payload_names(&self) -> Vec<&'v str> {
        self.array("payloads")
            .iter()
            .filter_map(|p| p.get("name").and_then(Value::as_str))
            .collect()
    }
}

/// `journal` or `migrations` (`member`) of the manifest line `line`, read
/// alone (the rest of the line is not parsed), as [`Carried`] and as the
/// whole value's canonical JSON text; `None` when the member is missing, or
/// `member` is neither.
pub fn carried_member(line: &[u8], member: &str) -> Option<(Carried, String)> {
    if !matches!(member, "journal" | "migrations") {
        return None;
    }
    let at = ndarc_json::locate(line, &crate::pointer([member]))?;
    let end = ndarc_json::skip_value(line, at)?;
    let v = ndarc_json::parse(&line[at..end]).ok()?;
    Some((Carried::of_value(&v), ndarc_json::to_canonical_string(&v)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_keep_the_manifests_positions() {
        let line = br#"{"product":"p","tables":[7,{"name":"a","columns":[{"name":1},{"name":"x"}]},{"name":2},{"name":"b"}],"objects":[{"bucket":"k"},{"bucket":"b","key":"o"}],"payloads":[{"name":3},{"name":"kv"}],"excludedColumns":{"a":["x",4],"b":"no"},"requiredConfiguration":["S",5],"excludedTables":["t",6]}"#;
        let v = ndarc_json::parse(line).unwrap();
        let w = Written::new(&v);
        assert_eq!(w.product(), Some("p"));
        assert_eq!(w.schema(), None);
        let t: Vec<_> = w
            .tables()
            .iter()
            .map(|t| (t.index, t.name, t.columns.clone()))
            .collect();
        assert_eq!(t, vec![(1, "a", vec![(1, "x")]), (3, "b", vec![])]);
        let o: Vec<_> = w
            .objects()
            .iter()
            .map(|o| (o.index, o.bucket, o.key))
            .collect();
        assert_eq!(o, vec![(1, "b", "o")]);
        assert_eq!(w.payload_names(), vec!["kv"]);
        assert_eq!(w.excluded_columns_of("a"), vec!["x"]);
        assert!(w.excluded_columns_of("b").is_empty());
        assert_eq!(w.excluded_columns(), vec![("a", "x")]);
        assert_eq!(w.required_configuration(), Some(vec!["S"]));
        assert_eq!(w.excluded_tables(), vec!["t"]);
        let none = ndarc_json::parse(br#"{"requiredConfiguration":{}}"#).unwrap();
        assert_eq!(Written::new(&none).required_configuration(), None);
    }

    #[test]
    fn carried_members_are_read_alone() {
        let line = br#"{"journal":{"head":"h","entries":[{"seq":1},{"seq":2}]},"migrations":[ 1 ],"tables":[]}"#;
        let (j, text) = carried_member(line, "journal").unwrap();
        assert_eq!(text, r#"{"entries":[{"seq":1},{"seq":2}],"head":"h"}"#);
        assert_eq!(
            j,
            Carried::Entries {
                member: Some("entries".into()),
                entries: vec![r#"{"seq":1}"#.into(), r#"{"seq":2}"#.into()],
            }
        );
        let (m, text) = carried_member(line, "migrations").unwrap();
        assert_eq!(text, "[1]");
        assert_eq!(m.entries().len(), 1);
        assert!(carried_member(line, "tables").is_none());
        assert!(carried_member(br#"{"tables":[]}"#, "journal").is_none());
    }
}
