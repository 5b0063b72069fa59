//! Characters that text from an archive must not put raw on a terminal or
//! in a report.

/// Whether `c` is shown escaped (`\u{…}`) in human output: control
/// characters (C0, DEL, C1: they move a terminal's cursor or start escape
/// sequences), the bidirectional formatting characters (U+061C, U+200E,
/// U+200F, U+202A to U+202E, U+2066 to U+2069: they reorder the text
/// around them, so a table name could read as another, "Trojan Source"),
/// and the line and paragraph separators U+2028 and U+2029 (line breaks
/// for some viewers).
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
                | '\u{2028}'
                | '\u{2029}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bidi_controls_and_separators_are_unsafe() {
        for c in [
            '\u{1b}', '\u{7f}', '\u{85}', '\u{202e}', '\u{202a}', '\u{2066}', '\u{2069}',
            '\u{200f}', '\u{061c}', '\u{2028}',
        ] {
            assert!(is_unsafe_char(c), "{c:?}");
        }
        for c in ['a', 'é', '😀', '\u{2010}', '\u{2070}', ' '] {
            assert!(!is_unsafe_char(c), "{c:?}");
        }
    }
}
