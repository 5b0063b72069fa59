//! Terminal output: the colour decision and diagnostics.
//!
//! Colour is used only where it helps a person at a terminal: with
//! `--color auto` (the default) when the stream is a terminal and `NO_COLOR`
//! is unset or empty; `--color always` and `--color never` decide outright
//! (a command-line flag overrides `NO_COLOR`, as no-color.org asks).
//!
//! The decision is these few lines rather than `anstream`'s automatic
//! stream: that one also follows `CLICOLOR`/`CLICOLOR_FORCE`, and when
//! colour is off it strips escape codes by parsing every byte written. Here
//! no escape code is written unless colour was decided, so the output path
//! (millions of diff lines) parses nothing. The styles come from the tool's
//! one palette, [`ndarc_format::display::palette`].

use std::ffi::OsStr;
use std::io::{self, IsTerminal, Write};

/// The `--color` option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when writing to a terminal and `NO_COLOR` is not set.
    #[default]
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// Whether to colour standard output and standard error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Colour {
    /// Colour standard output.
    pub stdout: bool,
    /// Colour standard error.
    pub stderr: bool,
}

impl Colour {
    /// Decides from the option, the `NO_COLOR` variable and whether each
    /// stream is a terminal.
    pub fn detect(choice: ColorChoice) -> Colour {
        Colour::decide(
            choice,
            std::env::var_os("NO_COLOR").as_deref(),
            io::stdout().is_terminal(),
            io::stderr().is_terminal(),
        )
    }

    /// The decision itself, from its inputs.
    pub fn decide(
        choice: ColorChoice,
        no_color: Option<&OsStr>,
        stdout_tty: bool,
        stderr_tty: bool,
    ) -> Colour {
        match choice {
            ColorChoice::Always => Colour {
                stdout: true,
                stderr: true,
            },
            ColorChoice::Never => Colour::default(),
            ColorChoice::Auto => {
                let allowed = !matches!(no_color, Some(v) if !v.is_empty());
                Colour {
                    stdout: allowed && stdout_tty,
                    stderr: allowed && stderr_tty,
                }
            }
        }
    }
}

/// Text styles of findings and messages, from the tool's one palette
/// ([`ndarc_format::display::palette`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Errors and finding codes of severity error.
    Error,
    /// Warnings.
    Warning,
    /// Locations (`FILE:LINE:OFFSET:`).
    Location,
    /// Success.
    Good,
}

impl Style {
    fn anstyle(self) -> anstyle::Style {
        use ndarc_format::display::palette;
        match self {
            Style::Error => palette::ERROR,
            Style::Warning => palette::WARNING,
            Style::Location => palette::EMPHASIS,
            Style::Good => palette::GOOD,
        }
    }
}

/// `text` wrapped in the escape codes of `style` when `on`.
pub fn paint(on: bool, style: Style, text: &str) -> String {
    if on {
        ndarc_format::display::palette::paint(style.anstyle(), text)
    } else {
        text.to_string()
    }
}

/// Where a finding is: a file, a 1-based line and a byte offset from the
/// start of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Location<'a> {
    /// The file's name as given, or `<stdin>`.
    pub file: &'a str,
    /// 1-based line number.
    pub line: u64,
    /// Byte offset from the start of the file.
    pub offset: u64,
}

/// Writes `FILE:LINE:OFFSET: CODE: message` to standard error (`CODE: ` is
/// left out when `code` is empty). Messages are made one line.
pub(crate) fn diagnostic(colour: Colour, at: Location<'_>, code: &str, message: &str) {
    let loc = format!("{}:{}:{}:", at.file, at.line, at.offset);
    let mut line = format!("{} ", paint(colour.stderr, Style::Location, &loc));
    if !code.is_empty() {
        line.push_str(&paint(colour.stderr, Style::Error, code));
        line.push_str(": ");
    }
    line.push_str(&one_line(message));
    line.push('\n');
    let _ = io::stderr().lock().write_all(line.as_bytes());
}

/// Writes `FILE: CODE: message` to standard error: a finding about a whole
/// file (a database `pack` refuses, an archive `unpack` cannot restore).
pub(crate) fn file_diagnostic(colour: Colour, file: &str, code: &str, message: &str) {
    let line = format!(
        "{} {}: {}\n",
        paint(colour.stderr, Style::Location, &format!("{file}:")),
        paint(colour.stderr, Style::Error, code),
        one_line(message)
    );
    let _ = io::stderr().lock().write_all(line.as_bytes());
}

/// Writes `ndarc: error: message` to standard error.
pub fn error(colour: Colour, message: &str) {
    let line = format!(
        "ndarc: {} {}\n",
        paint(colour.stderr, Style::Error, "error:"),
        one_line(message)
    );
    let _ = io::stderr().lock().write_all(line.as_bytes());
}

/// Writes `ndarc: note: message` to standard error.
pub fn note(message: &str) {
    let line = format!("ndarc: note: {}\n", one_line(message));
    let _ = io::stderr().lock().write_all(line.as_bytes());
}

/// `s` made one safe line for a terminal: line breaks become spaces, other
/// control characters (ESC, BEL, DEL, C1: what could move the cursor or
/// start an escape sequence) and bidirectional formatting characters (what
/// could make text read as other text) are written as `\u{…}`.
pub(crate) fn one_line(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' | '\r' => o.push(' '),
            '\t' => o.push('\t'),
            c if ndarc_format::display::is_unsafe_char(c) => {
                o.push_str(&format!("\\u{{{:x}}}", u32::from(c)))
            }
            c => o.push(c),
        }
    }
    o
}

/// `s` escaped as [`one_line`], keeping line breaks: for multi-line
/// reports that print text from an archive.
pub(crate) fn safe_text(s: &str) -> String {
    s.split('\n').map(one_line).collect::<Vec<_>>().join("\n")
}

/// An input's name as a shell word for a suggested command: `-` for
/// standard input, else the path quoted where a shell needs it.
pub(crate) fn shell_word(name: &str) -> String {
    if name == "<stdin>" {
        return "-".to_string();
    }
    match shlex::try_quote(name) {
        Ok(q) => one_line(&q),
        Err(_) => one_line(name),
    }
}

/// A status line on standard error that is redrawn in place (an
/// `indicatif` bar of one message, like `verify`'s progress bar), for
/// commands that run for long without output. It is drawn only when
/// enabled (see [`StatusLine::for_stderr`]) and is cleared when dropped,
/// so that what follows on standard error or standard output starts on a
/// clean line.
pub(crate) struct StatusLine {
    bar: Option<indicatif::ProgressBar>,
}

impl StatusLine {
    /// A line shown only when `quiet` is off and standard error is a
    /// terminal: nothing is written to a pipe or a file.
    pub(crate) fn for_stderr(quiet: bool) -> StatusLine {
        StatusLine::new(!quiet && io::stderr().is_terminal())
    }

    /// A line on standard error when `enabled`, else one that draws
    /// nothing.
    pub fn new(enabled: bool) -> StatusLine {
        let bar = enabled.then(|| {
            let b = indicatif::ProgressBar::with_draw_target(
                None,
                indicatif::ProgressDrawTarget::stderr(),
            );
            if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {wide_msg}") {
                b.set_style(style);
            }
            // Redrawn even while nothing changes (a slow program under
            // test), so the line shows it is alive and its latest text.
            b.enable_steady_tick(std::time::Duration::from_millis(200));
            b
        });
        StatusLine { bar }
    }

    /// Whether the line is drawn.
    pub(crate) fn enabled(&self) -> bool {
        self.bar.is_some()
    }

    /// Replaces the line's text (made one safe line).
    pub fn set(&self, text: &str) {
        if let Some(b) = &self.bar {
            b.set_message(one_line(text));
        }
    }

    /// Erases the line; nothing is drawn after.
    pub fn clear(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

impl Drop for StatusLine {
    fn drop(&mut self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_escapes_bidi_controls() {
        // A table name that would display reversed ("Trojan Source").
        assert_eq!(
            one_line("users\u{202e}txt.exe\u{2066}x\u{1b}[2J"),
            "users\\u{202e}txt.exe\\u{2066}x\\u{1b}[2J"
        );
        assert_eq!(one_line("é 😀 a\u{2028}b"), "é 😀 a\\u{2028}b");
    }

    #[test]
    fn colour_decision() {
        let on = Colour {
            stdout: true,
            stderr: true,
        };
        let off = Colour::default();
        let auto = ColorChoice::Auto;
        assert_eq!(Colour::decide(auto, None, true, true), on);
        assert_eq!(
            Colour::decide(auto, None, false, true),
            Colour {
                stdout: false,
                stderr: true
            }
        );
        assert_eq!(Colour::decide(auto, Some(OsStr::new("1")), true, true), off);
        assert_eq!(Colour::decide(auto, Some(OsStr::new("")), true, true), on);
        assert_eq!(Colour::decide(ColorChoice::Never, None, true, true), off);
        assert_eq!(
            Colour::decide(ColorChoice::Always, Some(OsStr::new("1")), false, false),
            on
        );
    }

    #[test]
    fn painting() {
        assert_eq!(paint(false, Style::Error, "x"), "x");
        assert_eq!(paint(true, Style::Error, "x"), "\x1b[1m\x1b[31mx\x1b[0m");
        assert_eq!(one_line("a\nb\r\nc"), "a b  c");
        assert_eq!(one_line("a\x1b[2J\x07\u{9b}"), "a\\u{1b}[2J\\u{7}\\u{9b}");
        assert_eq!(safe_text("a\n\x1bb"), "a\n\\u{1b}b");
        assert_eq!(shell_word("<stdin>"), "-");
        assert_eq!(shell_word("a b.ndjson"), "'a b.ndjson'");
        assert_eq!(shell_word("plain.ndjson"), "plain.ndjson");
    }
}
