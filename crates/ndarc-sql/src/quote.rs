//! SQL quoting: the one home for turning names and text into SQL.

/// `name` as an SQL identifier: in double quotes, inner double quotes
/// doubled (the producer's `quote`). Any name, NUL included, comes out as
/// one identifier token.
pub fn quote_ident(name: &str) -> String {
    let mut s = String::with_capacity(name.len() + 2);
    s.push('"');
    for c in name.chars() {
        if c == '"' {
            s.push('"');
        }
        s.push(c);
    }
    s.push('"');
    s
}

/// `name` as an SQL identifier written as people write one: bare when it
/// is a plain name (ASCII letters, digits and `_`, not starting with a
/// digit) other than the keywords `key`, `order`, `group` and `values`
/// that the generator's schemas use as names, otherwise [`quote_ident`].
/// For generated schemas, which should read like real ones; SQL that ndarc
/// runs or writes for an archive's names always uses [`quote_ident`].
pub fn quote_ident_if_needed(name: &str) -> String {
    let plain = name
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if plain && !["key", "order", "group", "values"].contains(&name.to_ascii_lowercase().as_str()) {
        name.to_string()
    } else {
        quote_ident(name)
    }
}

/// `text` as an SQL string literal: in single quotes, inner single quotes
/// doubled. Text holding NUL (where SQLite would end a literal) is written
/// as its UTF-8 bytes, `CAST(X'…' AS TEXT)`, which keeps every byte.
pub fn quote_literal(text: &str) -> String {
    if text.contains('\0') {
        let mut s = String::with_capacity(text.len() * 2 + 16);
        s.push_str("CAST(X'");
        for b in text.bytes() {
            s.push(char::from(HEX[usize::from(b >> 4)]));
            s.push(char::from(HEX[usize::from(b & 15)]));
        }
        s.push_str("' AS TEXT)");
        return s;
    }
    let mut s = String::with_capacity(text.len() + 2);
    s.push('\'');
    for c in text.chars() {
        if c == '\'' {
            s.push('\'');
        }
        s.push(c);
    }
    s.push('\'');
    s
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_double_quoted_with_quotes_doubled() {
        assert_eq!(quote_ident("a"), "\"a\"");
        assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
        assert_eq!(quote_ident(""), "\"\"");
        assert_eq!(quote_ident("é'"), "\"é'\"");
    }

    #[test]
    fn literals_are_single_quoted_and_nul_is_kept_as_bytes() {
        assert_eq!(quote_literal("it's"), "'it''s'");
        assert_eq!(quote_literal(""), "''");
        assert_eq!(quote_literal("a\0b"), "CAST(X'610062' AS TEXT)");
    }

    #[test]
    fn sqlite_reads_quoted_text_back_unchanged() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        for s in [
            "plain",
            "it's",
            "\"q\"",
            "a\0b",
            "é\u{1F600}",
            "'; DROP TABLE x; --",
        ] {
            let got: String = conn
                .query_row(&format!("SELECT {}", quote_literal(s)), [], |r| r.get(0))
                .unwrap();
            assert_eq!(got, s);
            if s.contains('\0') {
                // SQLite's text ends at NUL: no identifier holds one.
                continue;
            }
            conn.execute_batch(&format!("CREATE TABLE {}(x)", quote_ident(s)))
                .unwrap();
            let name: String = conn
                .query_row("SELECT name FROM sqlite_schema", [], |r| r.get(0))
                .unwrap();
            assert_eq!(name, s);
            conn.execute_batch(&format!("DROP TABLE {}", quote_ident(s)))
                .unwrap();
        }
    }
}
