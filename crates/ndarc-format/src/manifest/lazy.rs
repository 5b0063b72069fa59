//! Reading the manifest line without its tree: the top-level object's
//! lists are kept as raw text and parsed an element at a time.

use std::borrow::Cow;
use std::collections::HashMap;

use ndarc_json::{cmp_utf16, Object, Value};

use crate::catalogue;
use crate::hash::Digest32;

/// The containers (arrays and objects) of the manifest line's top-level
/// object as raw text, for a line read without its tree; empty when the
/// whole tree was parsed. In the shallow value [`Lazy::read`] returns they
/// stand as empty containers of the same type.
#[derive(Default)]
pub(super) struct Lazy<'a> {
    pub(super) members: HashMap<Cow<'a, str>, &'a str>,
    /// The line is canonical: a member's text is its canonical form.
    canonical: bool,
}

/// The offset of the first non-whitespace byte at or after `i`.
fn ws(t: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = t.get(i) {
        i += 1;
    }
    i
}

/// A value as it stands in the shallow manifest: containers empty.
fn shallow(raw: &str) -> Value<'_> {
    match raw.as_bytes().first() {
        Some(b'[') => Value::Array(Vec::new()),
        Some(b'{') => Value::Object(Object::new()),
        _ => ndarc_json::parse(raw.as_bytes()).unwrap_or(Value::Null),
    }
}

/// The elements of the array `raw` (valid JSON), as text.
pub(super) fn raw_elements(raw: &str) -> impl Iterator<Item = &str> {
    let t = raw.as_bytes();
    let mut i = 1;
    std::iter::from_fn(move || {
        i = ws(t, i);
        if matches!(t.get(i), None | Some(b']')) {
            return None;
        }
        let start = i;
        let end = ndarc_json::skip_value(t, start)?;
        i = ws(t, end);
        if t.get(i) == Some(&b',') {
            i += 1;
        }
        Some(&raw[start..end])
    })
}

/// The members of the object `raw` (valid JSON): name text (quoted) and
/// value text.
pub(super) fn raw_members(raw: &str) -> impl Iterator<Item = (&str, &str)> {
    let t = raw.as_bytes();
    let mut i = 1;
    std::iter::from_fn(move || {
        i = ws(t, i);
        if t.get(i) != Some(&b'"') {
            return None;
        }
        let name_end = ndarc_json::skip_string(t, i)?;
        let name = &raw[i..name_end];
        let start = ws(t, ws(t, name_end) + 1);
        let end = ndarc_json::skip_value(t, start)?;
        i = ws(t, end);
        if t.get(i) == Some(&b',') {
            i += 1;
        }
        Some((name, &raw[start..end]))
    })
}

/// A JSON string's text (quoted) as its value.
pub(super) fn unquote(raw: &str) -> Cow<'_, str> {
    match ndarc_json::parse(raw.as_bytes()) {
        Ok(Value::String(s)) => s,
        _ => Cow::Borrowed(""),
    }
}

impl<'a> Lazy<'a> {
    /// The shallow top-level value of `text` (valid JSON) and its
    /// containers' text.
    pub(super) fn read(text: &'a str, canonical: bool) -> (Value<'a>, Lazy<'a>) {
        let start = ws(text.as_bytes(), 0);
        let end = ws_back(text.as_bytes());
        let raw = &text[start..end.max(start)];
        let mut lazy = Lazy {
            members: HashMap::new(),
            canonical,
        };
        if !raw.starts_with('{') {
            return (shallow(raw), lazy);
        }
        let mut obj = Object::new();
        for (name, v) in raw_members(raw) {
            let name = unquote(name);
            if v.starts_with(['[', '{']) {
                lazy.members.insert(name.clone(), v);
            }
            obj.insert(name, shallow(v));
        }
        (Value::Object(obj), lazy)
    }

    /// The list `name`: its text when held here, else `parsed`.
    pub(super) fn list<'v>(&self, name: &str, parsed: &'v [Value<'a>]) -> List<'v, 'a> {
        match self.members.get(name) {
            Some(raw) => List::Raw(raw),
            None => List::Parsed(parsed),
        }
    }

    /// The object `name`: its text when held here, else `parsed`.
    pub(super) fn object<'v>(&self, name: &str, parsed: &'v Object<'a>) -> Members<'v, 'a> {
        match self.members.get(name) {
            Some(raw) => Members::Raw(raw),
            None => Members::Parsed(parsed),
        }
    }

    /// The content header digest (SPEC.md §7.2) of the shallow manifest.
    pub(super) fn header_digest(&self, obj: &Object<'_>) -> Digest32 {
        if self.members.is_empty() {
            return catalogue::content_header_digest(obj);
        }
        catalogue::content_header_digest_by(|name, out| {
            if let Some(raw) = self.members.get(name) {
                if self.canonical {
                    out(raw.as_bytes());
                } else {
                    canonical_raw(raw, out);
                }
                true
            } else if let Some(v) = obj.get(name) {
                out(&ndarc_json::to_canonical_vec(v));
                true
            } else {
                false
            }
        })
    }
}

/// The offset just past the last non-whitespace byte of `t`.
fn ws_back(t: &[u8]) -> usize {
    let mut end = t.len();
    while end > 0 && matches!(t[end - 1], b' ' | b'\t' | b'\n' | b'\r') {
        end -= 1;
    }
    end
}

/// Writes the canonical form of the container `raw` (valid JSON, not
/// canonical) to `out` an element or member at a time.
fn canonical_raw(raw: &str, out: &mut dyn FnMut(&[u8])) {
    let mut buf = Vec::new();
    let piece = |buf: &mut Vec<u8>, text: &str| {
        buf.clear();
        let _ = ndarc_json::canonicalize(text.as_bytes(), buf);
    };
    if raw.starts_with('[') {
        out(b"[");
        for (i, e) in raw_elements(raw).enumerate() {
            if i > 0 {
                out(b",");
            }
            piece(&mut buf, e);
            out(&buf);
        }
        out(b"]");
    } else {
        let mut members: Vec<(Cow<'_, str>, &str)> =
            raw_members(raw).map(|(n, v)| (unquote(n), v)).collect();
        members.sort_by(|a, b| cmp_utf16(&a.0, &b.0));
        out(b"{");
        for (i, (name, v)) in members.iter().enumerate() {
            buf.clear();
            if i > 0 {
                buf.push(b',');
            }
            ndarc_json::write_string(name, &mut buf);
            buf.push(b':');
            out(&buf);
            piece(&mut buf, v);
            out(&buf);
        }
        out(b"}");
    }
}

/// A list member of the manifest: elements of a parsed tree, or of raw
/// text parsed one at a time.
#[derive(Clone, Copy)]
pub(super) enum List<'v, 'a> {
    Parsed(&'v [Value<'a>]),
    Raw(&'a str),
}

impl<'a> List<'_, 'a> {
    pub(super) fn len(self) -> usize {
        match self {
            List::Parsed(l) => l.len(),
            List::Raw(raw) => raw_elements(raw).count(),
        }
    }

    /// Calls `f` with each element and its position.
    pub(super) fn for_each(self, mut f: impl FnMut(usize, &Value<'a>)) {
        match self {
            List::Parsed(l) => l.iter().enumerate().for_each(|(i, v)| f(i, v)),
            List::Raw(raw) => {
                for (i, e) in raw_elements(raw).enumerate() {
                    // The line was validated: every element parses.
                    if let Ok(v) = ndarc_json::parse(e.as_bytes()) {
                        f(i, &v);
                    }
                }
            }
        }
    }
}

/// An object member of the manifest, parsed or raw (as [`List`]).
#[derive(Clone, Copy)]
pub(super) enum Members<'v, 'a> {
    Parsed(&'v Object<'a>),
    Raw(&'a str),
}

impl<'a> Members<'_, 'a> {
    pub(super) fn is_empty(self) -> bool {
        match self {
            Members::Parsed(o) => o.is_empty(),
            Members::Raw(raw) => raw_members(raw).next().is_none(),
        }
    }

    /// Calls `f` with each member's name and value.
    pub(super) fn for_each(self, mut f: impl FnMut(&str, &Value<'a>)) {
        match self {
            Members::Parsed(o) => o.iter().for_each(|(n, v)| f(n, v)),
            Members::Raw(raw) => {
                for (n, v) in raw_members(raw) {
                    if let Ok(v) = ndarc_json::parse(v.as_bytes()) {
                        f(&unquote(n), &v);
                    }
                }
            }
        }
    }
}
