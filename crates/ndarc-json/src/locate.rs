//! Finding where a value sits in a text, for error positions, and skipping
//! over values without building them.

/// The byte offset at which the value that `pointer` (RFC 6901) names
/// starts in the JSON text `text`, or `None` when the text does not parse up
/// to it or the pointer names nothing.
///
/// Used only when a finding is reported, so it re-scans the text rather than
/// making every parse record positions. Each call scans from the start: a
/// caller locating many pointers in one text uses a [`Locator`], which
/// resumes where the previous pointer led.
pub fn locate(text: &[u8], pointer: &str) -> Option<usize> {
    Locator::new(text).locate(pointer)
}

/// One token of the last pointer a [`Locator`] resolved.
#[derive(Debug, Clone)]
struct Step {
    /// The token, unescaped.
    token: String,
    /// Offset of the value the token names.
    at: usize,
    /// The element's position, when the token names an array element.
    index: Option<usize>,
}

/// Locates many pointers in one text in about one pass over it.
///
/// It remembers the path of the last pointer it resolved. A pointer that
/// shares a prefix with it starts from there, and an element of the same
/// array at the same or a later position is reached by skipping forward
/// from the element found before. Pointers taken in document order (as
/// checks report findings) therefore cost time proportional to the text,
/// not to the text times the number of pointers.
#[derive(Debug, Clone)]
pub struct Locator<'t> {
    text: &'t [u8],
    path: Vec<Step>,
}

impl<'t> Locator<'t> {
    /// A locator over `text`.
    pub fn new(text: &'t [u8]) -> Self {
        Locator {
            text,
            path: Vec::new(),
        }
    }

    /// The text it locates in.
    pub fn text(&self) -> &'t [u8] {
        self.text
    }

    /// As [`locate`], resuming from the previous pointer where it can.
    pub fn locate(&mut self, pointer: &str) -> Option<usize> {
        let text = self.text;
        let root = skip_ws(text, 0);
        if pointer.is_empty() {
            return Some(root);
        }
        let tokens: Vec<String> = pointer
            .strip_prefix('/')?
            .split('/')
            .map(|t| {
                if t.contains('~') {
                    t.replace("~1", "/").replace("~0", "~")
                } else {
                    t.to_string()
                }
            })
            .collect();
        // The longest prefix the last path shares.
        let shared = self
            .path
            .iter()
            .zip(&tokens)
            .take_while(|(s, t)| s.token == **t)
            .count();
        if shared == tokens.len() {
            return Some(self.path[shared - 1].at);
        }
        // Resume inside the container of the first token that differs.
        let resume = self.path.get(shared).and_then(|s| {
            let from = s.index?;
            let want: usize = tokens[shared].parse().ok()?;
            (want >= from).then_some((from, s.at))
        });
        self.path.truncate(shared);
        let mut pos = self.path.last().map_or(root, |s| s.at);
        for (depth, token) in tokens.iter().enumerate().skip(shared) {
            let resumed = if depth == shared { resume } else { None };
            let (at, index) = match resumed {
                Some((from, at)) => {
                    let want: usize = token.parse().ok()?;
                    (skip_elements(text, at, want - from)?, Some(want))
                }
                None => step(text, pos, token)?,
            };
            self.path.push(Step {
                token: token.clone(),
                at,
                index,
            });
            pos = at;
        }
        Some(pos)
    }
}

/// The value `token` names in the container whose value starts at `pos`:
/// its offset, and its position when the container is an array.
fn step(text: &[u8], pos: usize, token: &str) -> Option<(usize, Option<usize>)> {
    match text.get(pos)? {
        b'{' => {
            let mut pos = skip_ws(text, pos + 1);
            loop {
                if text.get(pos)? == &b'}' {
                    return None;
                }
                let key_end = skip_string(text, pos)?;
                let found = name_is(&text[pos..key_end], token);
                pos = skip_ws(text, key_end);
                if text.get(pos)? != &b':' {
                    return None;
                }
                pos = skip_ws(text, pos + 1);
                if found {
                    return Some((pos, None));
                }
                pos = skip_ws(text, skip_value(text, pos)?);
                match text.get(pos)? {
                    b',' => pos = skip_ws(text, pos + 1),
                    _ => return None,
                }
            }
        }
        b'[' => {
            let want: usize = token.parse().ok()?;
            let first = skip_ws(text, pos + 1);
            if text.get(first)? == &b']' {
                return None;
            }
            Some((skip_elements(text, first, want)?, Some(want)))
        }
        _ => None,
    }
}

/// The offset of the element `n` places after the one starting at `pos`.
fn skip_elements(text: &[u8], mut pos: usize, n: usize) -> Option<usize> {
    for _ in 0..n {
        pos = skip_ws(text, skip_value(text, pos)?);
        match text.get(pos)? {
            b',' => pos = skip_ws(text, pos + 1),
            _ => return None,
        }
    }
    match text.get(pos)? {
        b']' => None,
        _ => Some(pos),
    }
}

/// Whether the JSON string `quoted` (quotes included) is `name`.
fn name_is(quoted: &[u8], name: &str) -> bool {
    let inner = &quoted[1..quoted.len() - 1];
    if !inner.contains(&b'\\') {
        return inner == name.as_bytes();
    }
    crate::parse::parse(quoted)
        .ok()
        .is_some_and(|k| k.as_str() == Some(name))
}

fn skip_ws(t: &[u8], mut i: usize) -> usize {
    while matches!(t.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// The offset just past the JSON string that starts at `i` (at its `"`),
/// or `None` when there is no string there or it does not end.
///
/// Escapes are skipped, not checked: this finds extents in text that is
/// known (or will be found) to be JSON.
///
/// `#[inline]`: the diff's scanner calls this for every member name and
/// key cell of every row (about 20 calls per row); when it lived in the
/// diff crate it was inlined there, and as an out-of-line call from another
/// crate `ndarc diff --no-verify` ran 4 % more instructions (issue 9).
#[inline]
pub fn skip_string(t: &[u8], i: usize) -> Option<usize> {
    if t.get(i)? != &b'"' {
        return None;
    }
    let mut j = i + 1;
    // Most strings are short: a plain loop beats setting up a vector search.
    let stop = (j + 32).min(t.len());
    while j < stop {
        match t[j] {
            b'"' => return Some(j + 1),
            b'\\' => j += 2,
            _ => j += 1,
        }
    }
    loop {
        j += memchr::memchr2(b'"', b'\\', t.get(j..)?)?;
        match t[j] {
            b'"' => return Some(j + 1),
            _ => j += 2,
        }
    }
}

/// The offset just past the JSON value that starts at `i`, or `None` when
/// no value starts there or it does not end: strings and nested arrays and
/// objects are matched, other values run to the next delimiter. The one
/// value skipper of the workspace (the diff's scanner uses it too).
pub fn skip_value(t: &[u8], i: usize) -> Option<usize> {
    #[cfg(test)]
    tests::SKIPS.with(|n| n.set(n.get() + 1));
    match t.get(i)? {
        b'"' => skip_string(t, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match t.get(j)? {
                    b'"' => {
                        j = skip_string(t, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while let Some(b) = t.get(j) {
                if matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r' | b':') {
                    break;
                }
                j += 1;
            }
            (j > i).then_some(j)
        }
    }
}

/// `name` escaped as one RFC 6901 pointer token (`~` as `~0`, `/` as
/// `~1`): the one place a name becomes part of a finding's pointer.
pub fn pointer_token(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// Values skipped on this thread: the work a lookup does.
        pub(super) static SKIPS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    #[test]
    fn locates_members_and_elements() {
        let t = br#"{"a":[10,{"b":"x,}]"},3],"c/d":{"e":null}}"#;
        assert_eq!(locate(t, ""), Some(0));
        assert_eq!(locate(t, "/a"), Some(5));
        assert_eq!(locate(t, "/a/0"), Some(6));
        assert_eq!(locate(t, "/a/1/b"), Some(14));
        assert_eq!(locate(t, "/a/2"), Some(22));
        assert_eq!(locate(t, "/c~1d/e"), Some(36));
        assert_eq!(locate(t, "/a/3"), None);
        assert_eq!(locate(t, "/z"), None);
        assert_eq!(locate(b"[1, 2]", "/1"), Some(4));
        assert_eq!(locate(br#"{"\u0061":1}"#, "/a"), Some(10));
    }

    /// The locator gives what `locate` gives, in any order of pointers.
    #[test]
    fn locator_agrees_with_locate() {
        let t = br#"{"a":[10,{"b":"x,}]","c":[1,2,3]},3, [4 , 5]],"c/d":{"e":null},"z":[]}"#;
        let pointers = [
            "/a/0", "/a/1/c/2", "/a/1/c/0", "/a/3/1", "/a/1/b", "/a/2", "/a/3/0", "/c~1d/e",
            "/a/0", "/z/0", "/a/4", "/a/1", "/a/1/c/1", "", "/a/2", "/a/1/c/3", "/a/3/1",
        ];
        let mut l = Locator::new(t);
        for p in pointers.iter().chain(pointers.iter().rev()) {
            assert_eq!(l.locate(p), locate(t, p), "{p}");
        }
    }

    /// Elements located in order cost one pass: locating every one of n
    /// elements skips O(n) values, where locating each from the start
    /// skips O(n²).
    #[test]
    fn locating_every_element_in_order_is_linear() {
        let n = 200_000;
        let mut text = b"{\"items\":[".to_vec();
        for i in 0..n {
            if i > 0 {
                text.push(b',');
            }
            text.extend_from_slice(format!("{{\"row\":{{\"k\":{i}}},\"x\":1}}").as_bytes());
        }
        text.extend_from_slice(b"]}");
        SKIPS.with(|s| s.set(0));
        let mut l = Locator::new(&text);
        let mut last = 0;
        for i in 0..n {
            let at = l.locate(&format!("/items/{i}/row")).unwrap();
            assert!(at > last);
            assert_eq!(text[at], b'{');
            last = at;
        }
        let skips = SKIPS.with(std::cell::Cell::get);
        assert!(skips <= 2 * n, "{skips} values skipped for {n} lookups");
        // Each lookup from the start skips every element before it.
        SKIPS.with(|s| s.set(0));
        for i in (0..n).step_by(n / 10) {
            locate(&text, &format!("/items/{i}/row"));
        }
        assert!(SKIPS.with(std::cell::Cell::get) > n);
    }

    #[test]
    fn skips_values() {
        assert_eq!(skip_value(br#""a\"b" "#, 0), Some(6));
        assert_eq!(skip_value(br#"{"a":[1,"]"]}x"#, 0), Some(13));
        assert_eq!(skip_value(b"-1.5e3,", 0), Some(6));
        assert_eq!(skip_value(b"12:3", 0), Some(2));
        assert_eq!(skip_value(b"[1,2", 0), None);
        assert_eq!(skip_value(b"\"abc", 0), None);
        assert_eq!(skip_value(b",", 0), None);
        assert_eq!(skip_value(b"", 0), None);
        assert_eq!(skip_string(b"x", 0), None);
    }
}
