//! What may be copied into a patch the `sqlite3` shell reads line by line:
//! a table's `sql`, names, comment text.

use crate::Error;

/// Why a table's `sql` cannot be copied as it is into a patch read by the
/// `sqlite3` shell, which reads its input line by line and takes a line
/// starting with `.` for a dot-command (`.shell …`) when no statement text
/// is pending. The `sql` is written at the start of a line, followed by
/// `;`: text that starts with `CREATE` is pending from its first line on
/// until a `;` completes it, unless a line reads as a statement terminator
/// of another dialect (`/` or `go` alone, which the shell turns into `;`).
/// So: it starts with `CREATE`, holds no `;` at all (not even quoted: the
/// shell's view of quotes is not second-guessed), no control character
/// but tab, CR and LF, and no line that starts with `/` or `go`.
pub(super) fn unsafe_sql(sql: &str) -> Option<&'static str> {
    if !sql
        .get(..6)
        .is_some_and(|p| p.eq_ignore_ascii_case("CREATE"))
    {
        return Some("it does not start with CREATE");
    }
    if sql.contains(';') {
        return Some("it holds a ';'");
    }
    if sql
        .chars()
        .any(|c| c.is_ascii_control() && !matches!(c, '\t' | '\n' | '\r'))
    {
        return Some("it holds a control character");
    }
    for line in sql.split('\n').skip(1) {
        let t = line.trim_start_matches([' ', '\t', '\r', '\u{b}', '\u{c}']);
        let b = t.as_bytes();
        let go = b.len() >= 2
            && b[..2].eq_ignore_ascii_case(b"go")
            && !b
                .get(2)
                .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80);
        if t.starts_with('/') || go {
            return Some("a line of it reads as a statement terminator ('/' or 'go')");
        }
    }
    None
}

/// Names go into statements quoted; a line break or NUL in one would
/// change what the shell reads.
pub(super) fn check_name(name: &str) -> Result<(), Error> {
    if name.contains(['\n', '\r', '\0']) {
        return Err(Error::UnsafeName {
            name: name.to_string(),
        });
    }
    Ok(())
}

/// Text ndarc writes in a comment: control characters become `?`.
pub(super) fn comment_text(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}
