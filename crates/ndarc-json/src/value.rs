//! The JSON value tree.

use std::borrow::Cow;
use std::cmp::Ordering;

/// A JSON value as the archive's JSON profile allows it.
///
/// Strings borrow from the input where they contain no escape, so parsing a
/// record line allocates only for escaped strings, arrays and objects.
/// Numbers are finite IEEE-754 doubles; there is no separate integer type,
/// as in ECMAScript.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    /// `null`
    Null,
    /// `true` or `false`
    Bool(bool),
    /// A finite double.
    Number(f64),
    /// A string of Unicode scalar values (never a lone surrogate).
    String(Cow<'a, str>),
    /// An array.
    Array(Vec<Value<'a>>),
    /// An object, members in input order, names unique.
    Object(Object<'a>),
}

/// A value that borrows nothing.
pub type OwnedValue = Value<'static>;

/// A JSON object: members in input order with unique names.
///
/// The order is kept so that errors and the canonical check can point at the
/// member as written; the canonical serializer sorts on output.
#[derive(Debug, Clone, Default)]
pub struct Object<'a> {
    members: Vec<(Cow<'a, str>, Value<'a>)>,
    /// Where the parser found the object: byte offsets of its `{` and one
    /// past its `}` in the parsed text. Not part of equality.
    span: Option<(usize, usize)>,
}

impl PartialEq for Object<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.members == other.members
    }
}

impl<'a> Object<'a> {
    /// An empty object.
    pub fn new() -> Self {
        Object {
            members: Vec::new(),
            span: None,
        }
    }

    /// Builds an object from members; the caller promises names are unique
    /// (the canonical serializer would otherwise write a duplicate).
    pub fn from_members(members: Vec<(Cow<'a, str>, Value<'a>)>) -> Self {
        Object {
            members,
            span: None,
        }
    }

    /// Appends a member, replacing an existing one of the same name.
    pub fn insert(&mut self, name: impl Into<Cow<'a, str>>, value: Value<'a>) {
        let name = name.into();
        if let Some(slot) = self.members.iter_mut().find(|(n, _)| *n == name) {
            slot.1 = value;
        } else {
            self.members.push((name, value));
        }
    }

    /// Removes and returns the member called `name`.
    pub fn remove(&mut self, name: &str) -> Option<Value<'a>> {
        let at = self.members.iter().position(|(n, _)| n == name)?;
        Some(self.members.remove(at).1)
    }

    /// The value of the member called `name`.
    pub fn get(&self, name: &str) -> Option<&Value<'a>> {
        self.members.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// A mutable reference to the member called `name`.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Value<'a>> {
        self.members
            .iter_mut()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }

    /// Whether a member called `name` exists.
    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Members in input order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Value<'a>)> {
        self.members.iter().map(|(n, v)| (n.as_ref(), v))
    }

    /// Member names in input order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> {
        self.members.iter().map(|(n, _)| n.as_ref())
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether the object has no members.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Members in canonical (UTF-16 code unit) name order.
    pub fn sorted(&self) -> Vec<(&str, &Value<'a>)> {
        let mut v: Vec<_> = self.iter().collect();
        v.sort_by(|a, b| cmp_utf16(a.0, b.0));
        v
    }

    /// Converts into an object that borrows nothing.
    pub fn into_owned(self) -> Object<'static> {
        Object {
            span: self.span,
            members: self
                .members
                .into_iter()
                .map(|(n, v)| (Cow::Owned(n.into_owned()), v.into_owned()))
                .collect(),
        }
    }

    /// Member names in input order, as stored.
    pub(crate) fn names(&self) -> impl Iterator<Item = &Cow<'a, str>> {
        self.members.iter().map(|(n, _)| n)
    }

    /// The byte range of the object in the text it was parsed from (`None`
    /// for an object built in code). When that text was canonical, the
    /// range holds the object's canonical form, so a caller can hash or copy
    /// it without serializing again.
    pub fn span(&self) -> Option<std::ops::Range<usize>> {
        self.span.map(|(a, b)| a..b)
    }

    pub(crate) fn set_span(&mut self, start: usize, end: usize) {
        self.span = Some((start, end));
    }

    pub(crate) fn push_unchecked(&mut self, name: Cow<'a, str>, value: Value<'a>) {
        self.members.push((name, value));
    }
}

impl<'a> Value<'a> {
    /// Converts into a value that borrows nothing.
    pub fn into_owned(self) -> OwnedValue {
        match self {
            Value::Null => Value::Null,
            Value::Bool(b) => Value::Bool(b),
            Value::Number(n) => Value::Number(n),
            Value::String(s) => Value::String(Cow::Owned(s.into_owned())),
            Value::Array(a) => Value::Array(a.into_iter().map(Value::into_owned).collect()),
            Value::Object(o) => Value::Object(o.into_owned()),
        }
    }

    /// A string value.
    pub fn string(s: impl Into<Cow<'a, str>>) -> Self {
        Value::String(s.into())
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The number, if this is one.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// The number as an integer, if it is a safe integer (|n| ≤ 2^53−1),
    /// as ECMAScript `Number.isSafeInteger` decides.
    pub fn as_safe_integer(&self) -> Option<i64> {
        self.as_f64().and_then(safe_integer)
    }

    /// The object, if this is one.
    pub fn as_object(&self) -> Option<&Object<'a>> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The array, if this is one.
    pub fn as_array(&self) -> Option<&[Value<'a>]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The JSON type name, for messages: `null`, `boolean`, `number`,
    /// `string`, `array` or `object`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        }
    }

    /// The member `name` of an object value.
    pub fn get(&self, name: &str) -> Option<&Value<'a>> {
        self.as_object().and_then(|o| o.get(name))
    }
}

/// The largest integer ECMAScript calls safe: 2^53 − 1.
pub const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// `Some(n as i64)` when `n` is an integer with |n| ≤ 2^53−1
/// (ECMAScript `Number.isSafeInteger`).
pub fn safe_integer(n: f64) -> Option<i64> {
    if n.is_finite() && n.trunc() == n && n.abs() <= MAX_SAFE_INTEGER {
        Some(n as i64)
    } else {
        None
    }
}

impl From<f64> for Value<'_> {
    fn from(n: f64) -> Self {
        Value::Number(n)
    }
}

impl From<i64> for Value<'_> {
    fn from(n: i64) -> Self {
        Value::Number(n as f64)
    }
}

impl From<bool> for Value<'_> {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<String> for Value<'_> {
    fn from(s: String) -> Self {
        Value::String(Cow::Owned(s))
    }
}

impl<'a> From<&'a str> for Value<'a> {
    fn from(s: &'a str) -> Self {
        Value::String(Cow::Borrowed(s))
    }
}

impl<'a> From<Object<'a>> for Value<'a> {
    fn from(o: Object<'a>) -> Self {
        Value::Object(o)
    }
}

impl<'a> From<Vec<Value<'a>>> for Value<'a> {
    fn from(a: Vec<Value<'a>>) -> Self {
        Value::Array(a)
    }
}

/// Compares two strings by their UTF-16 code units, the order RFC 8785 sorts
/// member names in and the archive calls "name order".
///
/// UTF-8 byte order equals code point order, which differs from UTF-16 order
/// only where a character above U+FFFF (a surrogate pair, lead unit
/// 0xD800–0xDBFF) meets one in U+E000–U+FFFF. So the strings are compared as
/// bytes up to the first difference and only the two differing characters are
/// decoded.
pub fn cmp_utf16(a: &str, b: &str) -> Ordering {
    let (ab, bb) = (a.as_bytes(), b.as_bytes());
    let common = ab.iter().zip(bb).take_while(|(x, y)| x == y).count();
    if common == ab.len() || common == bb.len() {
        return ab.len().cmp(&bb.len());
    }
    // An ASCII byte that differs is a whole character, after the same
    // characters in both: the smaller byte is the smaller code unit (the
    // other is an ASCII one too, or starts a character of U+0080 or more).
    let (x, y) = (ab[common], bb[common]);
    if x.min(y) < 0x80 {
        return x.cmp(&y);
    }
    // Back up to the start of the character that differs.
    let mut start = common;
    while !a.is_char_boundary(start) {
        start -= 1;
    }
    let ca = a[start..].chars().next().map_or(0, u32::from);
    let cb = b[start..].chars().next().map_or(0, u32::from);
    let unit = |c: u32| {
        if c >= 0x10000 {
            0xD800 + ((c - 0x10000) >> 10)
        } else {
            c
        }
    };
    unit(ca).cmp(&unit(cb)).then(ca.cmp(&cb))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_order_differs_from_code_point_order_above_bmp() {
        // U+1F600 (surrogates D83D DE00) sorts before U+FB33 in UTF-16 but
        // after it by code point.
        assert_eq!(cmp_utf16("\u{1F600}", "\u{FB33}"), Ordering::Less);
        assert_eq!(cmp_utf16("\u{FB33}", "\u{1F600}"), Ordering::Greater);
        assert_eq!(cmp_utf16("a", "b"), Ordering::Less);
        assert_eq!(cmp_utf16("ab", "a"), Ordering::Greater);
        assert_eq!(cmp_utf16("", ""), Ordering::Equal);
        assert_eq!(cmp_utf16("\u{10000}", "\u{10001}"), Ordering::Less);
        assert_eq!(cmp_utf16("\u{E000}", "\u{FFFF}"), Ordering::Less);
        assert_eq!(cmp_utf16("x\u{10FFFF}", "x\u{E000}"), Ordering::Less);
        assert_eq!(cmp_utf16("é", "e"), Ordering::Greater);
        assert_eq!(cmp_utf16("a\u{1F600}", "a\u{80}"), Ordering::Greater);
        assert_eq!(cmp_utf16("\u{7f}", "\u{1F600}"), Ordering::Less);
    }

    #[test]
    fn safe_integers() {
        assert_eq!(safe_integer(9007199254740991.0), Some(9007199254740991));
        assert_eq!(safe_integer(9007199254740992.0), None);
        assert_eq!(safe_integer(-0.0), Some(0));
        assert_eq!(safe_integer(1.5), None);
        assert_eq!(safe_integer(f64::NAN), None);
    }

    #[test]
    fn object_insert_replaces() {
        let mut o = Object::new();
        o.insert("a", Value::Null);
        o.insert("a", Value::Bool(true));
        assert_eq!(o.len(), 1);
        assert_eq!(o.get("a"), Some(&Value::Bool(true)));
        assert_eq!(o.remove("a"), Some(Value::Bool(true)));
        assert!(o.is_empty());
    }
}
