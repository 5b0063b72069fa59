//! Edits of an archive's bytes chosen by the fuzzer: the byte-level
//! mutations libFuzzer would make, applied to a valid archive instead of
//! to the input, plus line-level ones (drop, duplicate, swap lines) and
//! tokens that matter to JSON and to the framing (quotes, escapes, CR, LF,
//! a BOM, invalid UTF-8, numbers at the edges of the profile).

use arbitrary::{Result, Unstructured};

/// Tokens worth inserting or writing over bytes.
pub const TOKENS: &[&[u8]] = &[
    b"\"",
    b"\\",
    b"\\\"",
    b"\\u0000",
    b"\\ud800",
    b"\\udc00",
    b"\\u00e9",
    b"\\/",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b" ",
    b"\t",
    b"\n",
    b"\r",
    b"\r\n",
    b"\n\n",
    b"0",
    b"-0",
    b"1.0",
    b"1e400",
    b"1e-400",
    b"9007199254740992",
    b"-9007199254740991",
    b"null",
    b"true",
    b"false",
    b"\xEF\xBB\xBF",
    b"\xFF",
    b"\xC0\x80",
    b"\xED\xA0\x80",
    b"\xF0\x9F\x98\x80",
    b"\xE2\x80\xA8",
    b"\"kind\":\"part\"",
    b"\"kind\":\"closing\"",
    b"\"kind\":\"row\"",
    b"\"index\":0",
    b"\"offset\":0",
    b"\"data\":\"\"",
    b"\"blob\":\"AA==\"",
    b"\"rowid\":1",
    b"\"partCount\":0",
    b"{\"kind\":\"closing\",\"partCount\":0}",
];

/// One edit.
#[derive(Debug, Clone)]
pub enum Edit {
    /// XOR one bit.
    FlipBit { at: usize, bit: u8 },
    /// Overwrite one byte.
    SetByte { at: usize, byte: u8 },
    /// Insert bytes.
    Insert { at: usize, bytes: Vec<u8> },
    /// Insert a token.
    InsertToken { at: usize, token: usize },
    /// Overwrite with a token (as far as the data reaches).
    OverwriteToken { at: usize, token: usize },
    /// Delete up to `len` bytes.
    Delete { at: usize, len: usize },
    /// Cut the data at `at`.
    Truncate { at: usize },
    /// Remove the line that contains `at` (with its LF).
    DropLine { at: usize },
    /// Duplicate the line that contains `at`.
    DupLine { at: usize },
    /// Swap the lines that contain `a` and `b`.
    SwapLines { a: usize, b: usize },
    /// Add a digit to the number that starts at or after `at`, or change
    /// one of its digits.
    BumpDigit { at: usize },
}

impl Edit {
    /// Reads one edit (positions are taken modulo the data's length when
    /// the edit is applied, since earlier edits change it).
    pub fn read(u: &mut Unstructured<'_>) -> Result<Edit> {
        let pos =
            |u: &mut Unstructured<'_>| -> Result<usize> { Ok(u.arbitrary::<u32>()? as usize) };
        Ok(match u.int_in_range(0u8..=10)? {
            0 => Edit::FlipBit {
                at: pos(u)?,
                bit: u.int_in_range(0..=7)?,
            },
            1 => Edit::SetByte {
                at: pos(u)?,
                byte: u.arbitrary()?,
            },
            2 => {
                let at = pos(u)?;
                let n = u.int_in_range(1..=8)?;
                Edit::Insert {
                    at,
                    bytes: u.bytes(n)?.to_vec(),
                }
            }
            3 => Edit::InsertToken {
                at: pos(u)?,
                token: u.choose_index(TOKENS.len())?,
            },
            4 => Edit::OverwriteToken {
                at: pos(u)?,
                token: u.choose_index(TOKENS.len())?,
            },
            5 => Edit::Delete {
                at: pos(u)?,
                len: u.int_in_range(1..=64)?,
            },
            6 => Edit::Truncate { at: pos(u)? },
            7 => Edit::DropLine { at: pos(u)? },
            8 => Edit::DupLine { at: pos(u)? },
            9 => Edit::SwapLines {
                a: pos(u)?,
                b: pos(u)?,
            },
            _ => Edit::BumpDigit { at: pos(u)? },
        })
    }

    /// Applies the edit to `data`.
    pub fn apply(&self, data: &mut Vec<u8>) {
        let len = data.len();
        // Positions in 0..len (0..=len for inserts).
        let p = |at: usize| if len == 0 { 0 } else { at % len };
        let pi = |at: usize| at % (len + 1);
        match *self {
            Edit::FlipBit { at, bit } => {
                if len > 0 {
                    data[p(at)] ^= 1 << (bit & 7);
                }
            }
            Edit::SetByte { at, byte } => {
                if len > 0 {
                    data[p(at)] = byte;
                }
            }
            Edit::Insert { at, ref bytes } => {
                let at = pi(at);
                data.splice(at..at, bytes.iter().copied());
            }
            Edit::InsertToken { at, token } => {
                let at = pi(at);
                data.splice(at..at, TOKENS[token % TOKENS.len()].iter().copied());
            }
            Edit::OverwriteToken { at, token } => {
                if len > 0 {
                    let at = p(at);
                    for (i, &b) in TOKENS[token % TOKENS.len()].iter().enumerate() {
                        if let Some(slot) = data.get_mut(at + i) {
                            *slot = b;
                        }
                    }
                }
            }
            Edit::Delete { at, len: n } => {
                if len > 0 {
                    let at = p(at);
                    let end = (at + n).min(len);
                    data.drain(at..end);
                }
            }
            Edit::Truncate { at } => data.truncate(pi(at)),
            Edit::DropLine { at } => {
                if len > 0 {
                    let (s, e) = line_around(data, p(at));
                    data.drain(s..e);
                }
            }
            Edit::DupLine { at } => {
                if len > 0 {
                    let (s, e) = line_around(data, p(at));
                    let copy = data[s..e].to_vec();
                    data.splice(s..s, copy);
                }
            }
            Edit::SwapLines { a, b } => {
                if len > 0 {
                    let la = line_around(data, p(a));
                    let lb = line_around(data, p(b));
                    let (first, second) = if la.0 <= lb.0 { (la, lb) } else { (lb, la) };
                    if first.1 <= second.0 {
                        let mut out = Vec::with_capacity(len);
                        out.extend_from_slice(&data[..first.0]);
                        out.extend_from_slice(&data[second.0..second.1]);
                        out.extend_from_slice(&data[first.1..second.0]);
                        out.extend_from_slice(&data[first.0..first.1]);
                        out.extend_from_slice(&data[second.1..]);
                        *data = out;
                    }
                }
            }
            Edit::BumpDigit { at } => {
                if len > 0 {
                    if let Some(i) = (p(at)..len).find(|&i| data[i].is_ascii_digit()) {
                        if data[i] == b'9' {
                            data.insert(i, b'1');
                        } else {
                            data[i] += 1;
                        }
                    }
                }
            }
        }
    }
}

/// The line around `at`: from after the previous LF to after its own LF
/// (or the end).
fn line_around(data: &[u8], at: usize) -> (usize, usize) {
    let s = data[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let e = data[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(data.len(), |i| at + i + 1);
    (s, e)
}

/// Reads up to `max` edits (fewer when the input runs out).
pub fn read_edits(u: &mut Unstructured<'_>, max: usize) -> Vec<Edit> {
    let mut edits = Vec::new();
    while edits.len() < max && !u.is_empty() {
        match Edit::read(u) {
            Ok(e) => edits.push(e),
            Err(_) => break,
        }
    }
    edits
}

/// `data` with `edits` applied in order.
pub fn edited(data: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut out = data.to_vec();
    for e in edits {
        e.apply(&mut out);
    }
    out
}
