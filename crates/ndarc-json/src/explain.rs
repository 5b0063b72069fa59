//! Why a valid JSON text is not canonical: the first place where it differs
//! from its RFC 8785 form, the rule it breaks there, and the text found
//! and expected, for a finding a producer's author can act on.
//!
//! Only called when a finding is reported (a non-canonical line is rare), so
//! it re-reads the text. It builds no value tree: a manifest line may be
//! large, and is checked without its tree (SPEC.md §11). Member names of one
//! object at a time are decoded, to compare their order.

use std::fmt;

use crate::locate::{skip_string, skip_value};
use crate::value::{cmp_utf16, Value};

/// The rule of RFC 8785 that a text breaks at its first difference from
/// its canonical form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Whitespace outside strings (canonical JSON has none).
    Whitespace,
    /// A number not spelt as ECMAScript prints it (`7.0` for `7`, `1e3`
    /// for `1000`, `-0` for `0`).
    NumberSpelling,
    /// A string escaped otherwise than RFC 8785 says (`\u0066` for `f`,
    /// `\/`, upper-case hex, an escaped non-ASCII character).
    StringEscape,
    /// Members not sorted by the UTF-16 code units of their names.
    MemberOrder,
}

impl Rule {
    /// The rule's name, as findings and reports show it.
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Whitespace => "whitespace",
            Rule::NumberSpelling => "number spelling",
            Rule::StringEscape => "string escape",
            Rule::MemberOrder => "member order",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The first difference of a JSON text from its canonical form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// Byte offset in the text where it differs: the first byte of
    /// whitespace, of a member out of order (its name's quote), of a string
    /// escape that differs, or of a number. The text before it is the
    /// canonical text before it.
    pub offset: usize,
    /// RFC 6901 pointer to the value (or member) where it differs.
    pub pointer: String,
    /// The rule broken there.
    pub rule: Rule,
    /// The text found there, cut to a readable length.
    pub found: String,
    /// The canonical text for it, cut the same way.
    pub expected: String,
}

impl Difference {
    /// A one-phrase description, without the pointer (a finding carries
    /// it apart): ``number spelling: found `7.0`, canonical `7` ``.
    pub fn describe(&self) -> String {
        let note = match self.rule {
            Rule::MemberOrder => " (member names sort by UTF-16 code units)",
            _ => "",
        };
        format!(
            "{}: found `{}`, canonical `{}`{note}",
            self.rule, self.found, self.expected
        )
    }
}

/// The longest snippet shown, in characters (a `…` marks a cut).
const SNIPPET: usize = 40;
/// Characters of context shown before the first differing character.
const LEAD: usize = 12;
/// Deepest nesting followed (texts that reach this are checked by the
/// parser first; this only bounds the recursion).
const MAX_NESTING: usize = 1024;

/// The first difference of the valid JSON text `text` from its canonical
/// (RFC 8785) form, or `None` when it is canonical or not valid JSON.
///
/// ```
/// use ndarc_json::{explain_non_canonical, Rule};
/// let d = explain_non_canonical(br#"{"a":[1,7.0]}"#).unwrap();
/// assert_eq!((d.offset, d.pointer.as_str(), d.rule), (8, "/a/1", Rule::NumberSpelling));
/// assert_eq!((d.found.as_str(), d.expected.as_str()), ("7.0", "7"));
/// assert_eq!(explain_non_canonical(br#"{"a":1}"#), None);
/// ```
pub fn explain_non_canonical(text: &[u8]) -> Option<Difference> {
    if std::str::from_utf8(text).is_err() {
        return None;
    }
    let mut w = Walker {
        t: text,
        path: Vec::new(),
    };
    match w.root() {
        Err(Some(d)) => Some(d),
        _ => None,
    }
}

/// `Err(Some(d))`: the first difference; `Err(None)`: the text is not what
/// a valid JSON text looks like (the caller reports no detail).
type Step<T> = Result<T, Option<Difference>>;

struct Walker<'t> {
    t: &'t [u8],
    /// Pointer tokens to the value being read, escaped (RFC 6901).
    path: Vec<String>,
}

/// Appends the canonical string token of `s` to `out`.
fn write_string_into(s: &str, out: &mut String) {
    let mut v = Vec::new();
    crate::write_string(s, &mut v);
    out.push_str(&String::from_utf8_lossy(&v));
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Makes whitespace and controls visible in a snippet.
fn visible(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out
}

/// At most [`SNIPPET`] characters of `s`, with `…` where cut.
fn cut(s: &str) -> String {
    match s.char_indices().nth(SNIPPET) {
        Some((end, _)) => format!("{}…", visible(&s[..end])),
        None => visible(s),
    }
}

/// The start of a window that shows [`LEAD`] characters before byte `d`
/// of `s` (a char boundary at or before `d`).
fn lead_start(s: &str, d: usize) -> usize {
    let d = floor_boundary(s, d.min(s.len()));
    s[..d]
        .char_indices()
        .rev()
        .nth(LEAD - 1)
        .map_or(0, |(i, _)| i)
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Found and expected texts cut around their first differing byte; returns
/// them and that byte's index.
fn window(found: &str, expected: &str) -> (String, String, usize) {
    let d = found
        .bytes()
        .zip(expected.bytes())
        .position(|(a, b)| a != b)
        .unwrap_or(found.len().min(expected.len()));
    let d = floor_boundary(found, d);
    let s = lead_start(found, d);
    let mark = if s > 0 { "…" } else { "" };
    (
        format!("{mark}{}", cut(&found[s..])),
        format!("{mark}{}", cut(expected.get(s..).unwrap_or(""))),
        d,
    )
}

impl Walker<'_> {
    fn pointer(&self) -> String {
        self.path.iter().map(|t| format!("/{t}")).collect()
    }

    fn text(&self, from: usize, to: usize) -> &str {
        std::str::from_utf8(self.t.get(from..to).unwrap_or(b"")).unwrap_or("")
    }

    /// Fails with a whitespace difference when whitespace starts at `i`.
    fn no_ws(&self, i: usize) -> Step<()> {
        if !self.t.get(i).is_some_and(|&b| is_ws(b)) {
            return Ok(());
        }
        let mut end = i;
        while self.t.get(end).is_some_and(|&b| is_ws(b)) {
            end += 1;
        }
        let before = self.text(0, i);
        let s = lead_start(before, i);
        let after_end = {
            let rest = self.text(end, self.t.len());
            rest.char_indices()
                .nth(LEAD)
                .map_or(self.t.len(), |(k, _)| end + k)
        };
        let found = self.text(s, after_end);
        let expected = format!("{}{}", self.text(s, i), self.text(end, after_end));
        let mark = if s > 0 { "…" } else { "" };
        let tail = if after_end < self.t.len() { "…" } else { "" };
        Err(Some(Difference {
            offset: i,
            pointer: self.pointer(),
            rule: Rule::Whitespace,
            found: format!("{mark}{}{tail}", cut(found)),
            expected: format!("{mark}{}{tail}", cut(&expected)),
        }))
    }

    fn root(&mut self) -> Step<()> {
        self.no_ws(0)?;
        let end = self.value(0, 0)?;
        self.no_ws(end)?;
        if end == self.t.len() {
            Ok(())
        } else {
            Err(None)
        }
    }

    /// Checks the value at `i` (no whitespace before it); returns its end.
    fn value(&mut self, i: usize, depth: usize) -> Step<usize> {
        if depth > MAX_NESTING {
            return Err(None);
        }
        match self.t.get(i) {
            Some(b'{') => self.object(i, depth),
            Some(b'[') => self.array(i, depth),
            Some(b'"') => self.string(i),
            Some(b'-' | b'0'..=b'9') => self.number(i),
            Some(_) => skip_value(self.t, i).ok_or(None),
            None => Err(None),
        }
    }

    fn array(&mut self, i: usize, depth: usize) -> Step<usize> {
        let mut j = i + 1;
        self.no_ws(j)?;
        if self.t.get(j) == Some(&b']') {
            return Ok(j + 1);
        }
        let mut index = 0usize;
        loop {
            self.path.push(index.to_string());
            j = self.value(j, depth + 1)?;
            self.no_ws(j)?;
            self.path.pop();
            match self.t.get(j) {
                Some(b',') => {
                    j += 1;
                    index += 1;
                    self.path.push(index.to_string());
                    self.no_ws(j)?;
                    self.path.pop();
                }
                Some(b']') => return Ok(j + 1),
                _ => return Err(None),
            }
        }
    }

    fn object(&mut self, i: usize, depth: usize) -> Step<usize> {
        // First the names, to know the canonical order; then each member
        // in document order, so the difference reported is the first.
        let names = self.names(i)?;
        let mut sorted: Vec<&(String, usize)> = names.iter().collect();
        sorted.sort_by(|a, b| cmp_utf16(&a.0, &b.0));
        let mut j = i + 1;
        self.no_ws(j)?;
        if self.t.get(j) == Some(&b'}') {
            return Ok(j + 1);
        }
        for (k, (name, at)) in names.iter().enumerate() {
            let token = crate::pointer_token(name);
            if k > 0 {
                // After the comma.
                self.path.push(token.clone());
                self.no_ws(j)?;
                self.path.pop();
            }
            if sorted.get(k).map(|s| &s.0) != Some(name) {
                return Err(Some(self.order(&names, &sorted, k, *at)));
            }
            self.path.push(token);
            let key_end = self.string(*at)?;
            self.no_ws(key_end)?;
            if self.t.get(key_end) != Some(&b':') {
                return Err(None);
            }
            self.no_ws(key_end + 1)?;
            let mut v = key_end + 1;
            while self.t.get(v).is_some_and(|&b| is_ws(b)) {
                v += 1;
            }
            j = self.value(v, depth + 1)?;
            self.no_ws(j)?;
            self.path.pop();
            match self.t.get(j) {
                Some(b',') => j += 1,
                Some(b'}') => return Ok(j + 1),
                _ => return Err(None),
            }
        }
        Err(None)
    }

    /// The member names of the object at `i`, decoded, with the offset of
    /// each name's opening quote.
    fn names(&self, i: usize) -> Step<Vec<(String, usize)>> {
        let t = self.t;
        let skip_ws = |mut j: usize| {
            while t.get(j).is_some_and(|&b| is_ws(b)) {
                j += 1;
            }
            j
        };
        let mut out = Vec::new();
        let mut j = skip_ws(i + 1);
        if t.get(j) == Some(&b'}') {
            return Ok(out);
        }
        loop {
            let end = skip_string(t, j).ok_or(None)?;
            let name = match crate::parse(&t[j..end]) {
                Ok(Value::String(s)) => s.into_owned(),
                _ => return Err(None),
            };
            out.push((name, j));
            j = skip_ws(end);
            if t.get(j) != Some(&b':') {
                return Err(None);
            }
            j = skip_value(t, skip_ws(j + 1)).ok_or(None)?;
            j = skip_ws(j);
            match t.get(j) {
                Some(b',') => j = skip_ws(j + 1),
                Some(b'}') => return Ok(out),
                _ => return Err(None),
            }
        }
    }

    fn order(
        &self,
        names: &[(String, usize)],
        sorted: &[&(String, usize)],
        k: usize,
        at: usize,
    ) -> Difference {
        let list = |it: &mut dyn Iterator<Item = &String>| {
            let mut s = String::new();
            for (n, name) in it.enumerate() {
                if n > 0 {
                    s.push(',');
                }
                write_string_into(name, &mut s);
                if s.chars().count() > SNIPPET {
                    break;
                }
            }
            s
        };
        let found = list(&mut names[k..].iter().map(|n| &n.0));
        let expected = list(&mut sorted[k..].iter().map(|n| &n.0));
        let mut path = self.pointer();
        path.push('/');
        path.push_str(&crate::pointer_token(&names[k].0));
        Difference {
            offset: at,
            pointer: path,
            rule: Rule::MemberOrder,
            found: cut(&found),
            expected: cut(&expected),
        }
    }

    fn string(&self, i: usize) -> Step<usize> {
        let end = skip_string(self.t, i).ok_or(None)?;
        let raw = self.text(i, end);
        if !raw.contains('\\') && !raw.bytes().any(|b| b < 0x20) {
            // Without escapes a (valid) string is its canonical form.
            return Ok(end);
        }
        let value = match crate::parse(raw.as_bytes()) {
            Ok(Value::String(s)) => s,
            _ => return Err(None),
        };
        let mut canonical = String::new();
        write_string_into(&value, &mut canonical);
        if canonical == raw {
            return Ok(end);
        }
        let (found, expected, d) = window(raw, &canonical);
        Err(Some(Difference {
            offset: i + d,
            pointer: self.pointer(),
            rule: Rule::StringEscape,
            found,
            expected,
        }))
    }

    fn number(&self, i: usize) -> Step<usize> {
        let end = skip_value(self.t, i).ok_or(None)?;
        let raw = self.text(i, end);
        let n = match crate::parse(raw.as_bytes()) {
            Ok(Value::Number(n)) => n,
            _ => return Err(None),
        };
        let mut canonical = Vec::new();
        crate::number::write(n, &mut canonical);
        let canonical = String::from_utf8(canonical).unwrap_or_default();
        if canonical == raw {
            return Ok(end);
        }
        // A number is short: named at its first byte (SPEC.md §2: `1.0`
        // is reported at the `1`).
        let (found, expected, _) = window(raw, &canonical);
        Err(Some(Difference {
            offset: i,
            pointer: self.pointer(),
            rule: Rule::NumberSpelling,
            found,
            expected,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(text: &str) -> Difference {
        explain_non_canonical(text.as_bytes()).expect("a difference")
    }

    #[test]
    fn canonical_texts_have_no_difference() {
        for t in [
            r#"{"a":[1,2.5,"x\n",{"b":null}],"b":true}"#,
            "[]",
            "{}",
            r#""é""#,
            "1e+21",
            r#"{"𝄞":1,"Ｚ":2}"#,
        ] {
            assert_eq!(explain_non_canonical(t.as_bytes()), None, "{t}");
        }
    }

    #[test]
    fn whitespace_is_named_with_its_context() {
        let x = d(r#"{"epoch": 1,"x":2}"#);
        assert_eq!(x.rule, Rule::Whitespace);
        assert_eq!(x.offset, 9);
        assert_eq!(x.pointer, "/epoch");
        assert_eq!(x.found, r#"{"epoch": 1,"x":2}"#);
        assert_eq!(x.expected, r#"{"epoch":1,"x":2}"#);
        let x = d("[1,2]\t");
        assert_eq!((x.offset, x.pointer.as_str()), (5, ""));
        assert_eq!(
            (x.found.as_str(), x.expected.as_str()),
            ("[1,2]\\t", "[1,2]")
        );
        assert_eq!(d("[1 ,2]").pointer, "/0");
        assert_eq!(d("[1, 2]").pointer, "/1");
        assert_eq!(d("{ }").pointer, "");
    }

    #[test]
    fn numbers_are_spelt_as_ecmascript_prints_them() {
        let x = d(r#"{"n":9.999999999999999e+20}"#);
        assert_eq!(x.rule, Rule::NumberSpelling);
        assert_eq!(x.pointer, "/n");
        assert_eq!(x.offset, 5);
        assert_eq!(x.found, "9.999999999999999e+20");
        assert_eq!(x.expected, "999999999999999900000");
        let x = d("[-0]");
        assert_eq!((x.found.as_str(), x.expected.as_str()), ("-0", "0"));
        assert_eq!(x.offset, 1);
        assert_eq!(d("[1,1.0]").offset, 3);
    }

    #[test]
    fn escapes_show_the_window_where_they_differ() {
        let x = d(r#"{"k":"\u0066irst"}"#);
        assert_eq!(x.rule, Rule::StringEscape);
        assert_eq!((x.offset, x.pointer.as_str()), (6, "/k"));
        assert_eq!(
            (x.found.as_str(), x.expected.as_str()),
            (r#""\u0066irst""#, r#""first""#)
        );
        let long = format!(r#"["{}\/x{}"]"#, "a".repeat(100), "b".repeat(100));
        let x = d(&long);
        assert_eq!(x.offset, 102);
        assert_eq!(x.pointer, "/0");
        assert!(x.found.starts_with("…aaaaaaaaaaaa\\/x"), "{}", x.found);
        assert!(x.expected.starts_with("…aaaaaaaaaaaa/x"), "{}", x.expected);
        assert!(x.found.chars().count() <= SNIPPET + 2);
        // An escaped member name.
        let x = d(r#"{"\u0061":1}"#);
        assert_eq!((x.rule, x.pointer.as_str()), (Rule::StringEscape, "/a"));
    }

    #[test]
    fn member_order_is_utf16_order() {
        let x = d(r#"{"a":{"Ｚ":1,"𝄞":2}}"#);
        assert_eq!(x.rule, Rule::MemberOrder);
        assert_eq!(x.pointer, "/a/Ｚ");
        assert_eq!(x.offset, 6);
        assert_eq!(x.found, r#""Ｚ","𝄞""#);
        assert_eq!(x.expected, r#""𝄞","Ｚ""#);
        assert!(x.describe().contains("UTF-16"), "{}", x.describe());
        // The first difference in document order: the space comes first.
        assert_eq!(d(r#"{"a": 1,"c":2,"b":3}"#).rule, Rule::Whitespace);
        assert_eq!(d(r#"{"a":1.0,"c":2,"b":3}"#).rule, Rule::NumberSpelling);
        let x = d(r#"{"a":1,"c":2.0,"b":3}"#);
        assert_eq!((x.rule, x.pointer.as_str()), (Rule::MemberOrder, "/c"));
        assert_eq!(d(r#"{"a/b~":1.0}"#).pointer, "/a~1b~0");
    }

    #[test]
    fn the_prefix_before_the_offset_is_canonical() {
        for t in [
            r#"{"b":[1, 2],"a":1}"#,
            r#"{"a":[1,{"y":1,"x":2}]}"#,
            r#"{"a":"\/","b":1e3}"#,
            r#"[1,2,3, 4]"#,
        ] {
            let x = d(t);
            let canon = crate::canonical_form(t.as_bytes()).unwrap().unwrap();
            assert_eq!(&t.as_bytes()[..x.offset], &canon[..x.offset], "{t}");
            // A member out of order is named at its opening quote, a
            // number at its first byte.
            if x.rule == Rule::Whitespace || x.rule == Rule::StringEscape {
                assert_ne!(t.as_bytes().get(x.offset), canon.get(x.offset), "{t}");
            }
        }
    }

    #[test]
    fn invalid_json_has_no_explanation() {
        for t in ["{", "[1,]", "\"a", "", "{\"a\" 1}"] {
            assert_eq!(explain_non_canonical(t.as_bytes()), None, "{t}");
        }
    }
}
