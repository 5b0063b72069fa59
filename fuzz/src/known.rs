//! Known bugs, reported and waiting for a fix: inputs that reach them are
//! skipped (so that long runs and CI go on finding other things) unless
//! `NDARC_FUZZ_STRICT=1`. Each entry names its reproducer in
//! `fuzz/regressions/`; delete the entry when the fix lands.

use std::sync::OnceLock;

/// `NDARC_FUZZ_STRICT=1`: run into known bugs too.
pub fn strict() -> bool {
    static STRICT: OnceLock<bool> = OnceLock::new();
    *STRICT.get_or_init(|| std::env::var_os("NDARC_FUZZ_STRICT").is_some_and(|v| v == "1"))
}

/// ndarc-format `manifest.rs` `is_create_table` slices the word after
/// `CREATE` at byte 5 (`w[..5]`), which panics when byte 5 is inside a
/// multi-byte character (`CREATE TABLéE …`, `CREATE TAB😀LE …`).
/// Reproducers: `fuzz/regressions/{verify_mutated,push_parts,verify_archive}/create-table-char-boundary*`.
///
/// True when some line of `data` that could be read as a manifest has a
/// table whose `sql` hits that. Lines are split at LF (a final CR
/// dropped), as the verifiers split them.
pub fn create_table_char_boundary(data: &[u8]) -> bool {
    if strict() {
        return false;
    }
    data.split(|&b| b == b'\n').any(|line| {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        memmem(line, b"\"tables\"") && manifest_hits(line)
    })
}

fn memmem(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn manifest_hits(line: &[u8]) -> bool {
    let Ok(v) = ndarc_json::parse(line) else {
        return false;
    };
    let Some(tables) = v.get("tables").and_then(|t| t.as_array()) else {
        return false;
    };
    tables.iter().any(|t| {
        t.get("sql").and_then(|s| s.as_str()).is_some_and(|sql| {
            let mut words = sql.split_ascii_whitespace();
            words
                .next()
                .is_some_and(|w| w.eq_ignore_ascii_case("CREATE"))
                && words
                    .next()
                    .is_some_and(|w| w.len() >= 5 && !w.is_char_boundary(5))
        })
    })
}
