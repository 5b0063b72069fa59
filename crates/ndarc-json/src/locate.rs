//! Finding where a value sits in a text, for error positions.

use crate::parse::parse;

/// The byte offset at which the value that `pointer` (RFC 6901) names
/// starts in the JSON text `text`, or `None` when the text does not parse up
/// to it or the pointer names nothing.
///
/// Used only when a finding is reported, so it re-scans the text rather than
/// making every parse record positions.
pub fn locate(text: &[u8], pointer: &str) -> Option<usize> {
    let mut pos = skip_ws(text, 0);
    if pointer.is_empty() {
        return Some(pos);
    }
    let tokens: Vec<String> = pointer
        .strip_prefix('/')?
        .split('/')
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect();
    for token in &tokens {
        match text.get(pos)? {
            b'{' => {
                pos = skip_ws(text, pos + 1);
                loop {
                    if text.get(pos)? == &b'}' {
                        return None;
                    }
                    let key_end = skip_string(text, pos)?;
                    let key = parse(&text[pos..key_end]).ok()?;
                    pos = skip_ws(text, key_end);
                    if text.get(pos)? != &b':' {
                        return None;
                    }
                    pos = skip_ws(text, pos + 1);
                    if key.as_str() == Some(token.as_str()) {
                        break;
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
                pos = skip_ws(text, pos + 1);
                for _ in 0..want {
                    pos = skip_ws(text, skip_value(text, pos)?);
                    match text.get(pos)? {
                        b',' => pos = skip_ws(text, pos + 1),
                        _ => return None,
                    }
                }
                if text.get(pos)? == &b']' {
                    return None;
                }
            }
            _ => return None,
        }
    }
    Some(pos)
}

fn skip_ws(t: &[u8], mut i: usize) -> usize {
    while matches!(t.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// The offset after the string starting at `i`.
fn skip_string(t: &[u8], i: usize) -> Option<usize> {
    if t.get(i)? != &b'"' {
        return None;
    }
    let mut j = i + 1;
    loop {
        j += memchr::memchr2(b'"', b'\\', t.get(j..)?)?;
        match t[j] {
            b'"' => return Some(j + 1),
            _ => j += 2,
        }
    }
}

/// The offset after the value starting at `i`.
fn skip_value(t: &[u8], i: usize) -> Option<usize> {
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
                if matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                    break;
                }
                j += 1;
            }
            (j > i).then_some(j)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
