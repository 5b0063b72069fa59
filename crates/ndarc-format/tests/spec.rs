//! SPEC.md's findings table and the code list are the same.

use ndarc_format::Code;

#[test]
fn spec_table_lists_every_code_with_its_severity() {
    let spec = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../SPEC.md"))
        .expect("SPEC.md at the repository root");
    let table: Vec<(String, String)> = spec
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            if cells.len() == 5
                && cells[1].starts_with('`')
                && (cells[2] == "error" || cells[2] == "warning")
            {
                Some((cells[1].trim_matches('`').to_string(), cells[2].to_string()))
            } else {
                None
            }
        })
        .collect();
    let expected: Vec<(String, String)> = Code::ALL
        .iter()
        .map(|c| (c.as_str().to_string(), c.severity().as_str().to_string()))
        .collect();
    assert_eq!(
        table, expected,
        "SPEC.md §9 must list Code::ALL in order with severities"
    );
    // Every code SPEC names in parentheses is a real code.
    let mut named = 0;
    for part in spec.split("`(").skip(1) {
        let name = part.split(')').next().unwrap_or_default();
        named += 1;
        if name.contains('_') && name.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
            assert!(
                Code::from_name(name).is_some(),
                "SPEC.md names unknown code {name}"
            );
        }
    }
    assert!(named > 50, "the rules name their codes as `(code)`");
}
