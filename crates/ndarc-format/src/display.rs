//! How ndarc shows text to people: the characters that text from an
//! archive must not put raw on a terminal or in a report, and the one
//! colour palette of every command's human output.

/// The colour palette, one for the whole tool (findings, the diff, the
/// fuzzers): a style per meaning, written with `anstyle`. The decision
/// whether to colour at all is the caller's (`--color`, `NO_COLOR`, a
/// terminal).
pub mod palette {
    use anstyle::{AnsiColor, Style};

    /// Errors, and finding codes of severity error: bold red.
    pub const ERROR: Style = Style::new()
        .bold()
        .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Red)));
    /// Warnings: bold yellow.
    pub const WARNING: Style = Style::new()
        .bold()
        .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Yellow)));
    /// Locations (`FILE:LINE:OFFSET:`) and headings: bold.
    pub const EMPHASIS: Style = Style::new().bold();
    /// Success, and what was added: green.
    pub const GOOD: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Green)));
    /// What was removed: red.
    pub const REMOVED: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Red)));
    /// What changed: yellow.
    pub const CHANGED: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Yellow)));
    /// Context that matters less (unchanged cells, notes): dimmed.
    pub const DIM: Style = Style::new().dimmed();

    /// `text` between the escape codes of `style`.
    pub fn paint(style: Style, text: &str) -> String {
        format!("{style}{text}{style:#}")
    }
}

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
