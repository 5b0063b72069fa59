//! The functions a table's schema expressions (DEFAULT, CHECK, generated
//! columns) may call: SQLite's built-in scalar functions, as its
//! documentation lists them.

/// SQLite's built-in scalar functions, lower case, sorted: the core
/// functions (<https://sqlite.org/lang_corefunc.html>) without
/// `load_extension`, the date and time functions
/// (<https://sqlite.org/lang_datefunc.html>, with the `CURRENT_*` keywords,
/// which SQLite compiles as calls), the math functions
/// (<https://sqlite.org/lang_mathfunc.html>) and the JSON scalar functions
/// (<https://sqlite.org/json1.html>, with the `->` and `->>` operators,
/// which SQLite compiles as calls). Aggregate, window and table-valued
/// functions are not scalar and are not listed; neither is anything an
/// application or an extension registers (`writefile`, `readfile`, `edit`,
/// `fts3_tokenizer` …), which a database file cannot bring along.
pub const BUILTIN_SCALAR_FUNCTIONS: &[&str] = &[
    "->",
    "->>",
    "abs",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "ceil",
    "ceiling",
    "changes",
    "char",
    "coalesce",
    "concat",
    "concat_ws",
    "cos",
    "cosh",
    "current_date",
    "current_time",
    "current_timestamp",
    "date",
    "datetime",
    "degrees",
    "exp",
    "floor",
    "format",
    "glob",
    "hex",
    "if",
    "ifnull",
    "iif",
    "instr",
    "json",
    "json_array",
    "json_array_length",
    "json_error_position",
    "json_extract",
    "json_insert",
    "json_object",
    "json_patch",
    "json_pretty",
    "json_quote",
    "json_remove",
    "json_replace",
    "json_set",
    "json_type",
    "json_valid",
    "jsonb",
    "jsonb_array",
    "jsonb_extract",
    "jsonb_insert",
    "jsonb_object",
    "jsonb_patch",
    "jsonb_remove",
    "jsonb_replace",
    "jsonb_set",
    "julianday",
    "last_insert_rowid",
    "length",
    "like",
    "likelihood",
    "likely",
    "ln",
    "log",
    "log10",
    "log2",
    "lower",
    "ltrim",
    "max",
    "min",
    "mod",
    "nullif",
    "octet_length",
    "pi",
    "pow",
    "power",
    "printf",
    "quote",
    "radians",
    "random",
    "randomblob",
    "replace",
    "round",
    "rtrim",
    "sign",
    "sin",
    "sinh",
    "soundex",
    "sqlite_compileoption_get",
    "sqlite_compileoption_used",
    "sqlite_offset",
    "sqlite_source_id",
    "sqlite_version",
    "sqrt",
    "strftime",
    "substr",
    "substring",
    "tan",
    "tanh",
    "timediff",
    "total_changes",
    "trim",
    "trunc",
    "typeof",
    "unhex",
    "unicode",
    "unistr",
    "unistr_quote",
    "unixepoch",
    "unlikely",
    "upper",
    "zeroblob",
];

/// Whether `name` (as SQLite passes it to the authorizer, in any case) is
/// one of [`BUILTIN_SCALAR_FUNCTIONS`]. SQLite matches function names
/// ignoring ASCII case.
pub fn is_builtin_scalar(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    BUILTIN_SCALAR_FUNCTIONS
        .binary_search(&lower.as_str())
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_sorted_lower_case_and_has_no_loader() {
        let mut sorted = BUILTIN_SCALAR_FUNCTIONS.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, BUILTIN_SCALAR_FUNCTIONS);
        assert!(BUILTIN_SCALAR_FUNCTIONS
            .iter()
            .all(|f| *f == f.to_ascii_lowercase()));
        for f in [
            "load_extension",
            "writefile",
            "readfile",
            "edit",
            "fts3_tokenizer",
        ] {
            assert!(!is_builtin_scalar(f), "{f}");
        }
        assert!(is_builtin_scalar("JSON_Extract"));
        assert!(is_builtin_scalar("->>"));
    }
}
