//! A small glob matcher for `--ignore-table` and `--ignore-column`.

/// A glob pattern: `*` matches any run of characters (none included), `?`
/// exactly one character, every other character itself. Matching ignores
/// ASCII case, as SQLite does for table and column names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    pattern: String,
    chars: Vec<char>,
}

impl Glob {
    /// The pattern `pattern`.
    pub fn new(pattern: &str) -> Glob {
        Glob {
            pattern: pattern.to_string(),
            chars: pattern.chars().collect(),
        }
    }

    /// Whether `text` matches the whole pattern.
    pub fn matches(&self, text: &str) -> bool {
        let t: Vec<char> = text.chars().collect();
        let p = &self.chars;
        // Iterative wildcard matching with one backtrack point: linear in
        // practice, O(|p|·|t|) at worst, never exponential.
        let (mut pi, mut ti) = (0usize, 0usize);
        let mut star: Option<(usize, usize)> = None;
        while ti < t.len() {
            match p.get(pi) {
                Some('*') => {
                    star = Some((pi, ti));
                    pi += 1;
                }
                Some('?') => {
                    pi += 1;
                    ti += 1;
                }
                Some(c) if c.eq_ignore_ascii_case(&t[ti]) => {
                    pi += 1;
                    ti += 1;
                }
                _ => match star {
                    Some((sp, st)) => {
                        pi = sp + 1;
                        ti = st + 1;
                        star = Some((sp, st + 1));
                    }
                    None => return false,
                },
            }
        }
        p[pi.min(p.len())..].iter().all(|&c| c == '*')
    }
}

/// A `TABLE.COLUMN` pattern for `--ignore-column`, each half a [`Glob`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ColumnGlob {
    pattern: String,
    splits: Vec<(Glob, Glob)>,
}

impl ColumnGlob {
    /// Parses `TABLE.COLUMN`. Names may themselves contain dots, so every
    /// dot is tried as the separator. `None` when there is no dot.
    pub fn new(pattern: &str) -> Option<ColumnGlob> {
        let splits: Vec<(Glob, Glob)> = pattern
            .match_indices('.')
            .map(|(i, _)| (Glob::new(&pattern[..i]), Glob::new(&pattern[i + 1..])))
            .collect();
        if splits.is_empty() {
            return None;
        }
        Some(ColumnGlob {
            pattern: pattern.to_string(),
            splits,
        })
    }

    /// Whether column `column` of table `table` matches.
    pub fn matches(&self, table: &str, column: &str) -> bool {
        self.splits
            .iter()
            .any(|(t, c)| t.matches(table) && c.matches(column))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        let g = |p: &str, t: &str| Glob::new(p).matches(t);
        assert!(g("audit_*", "audit_log"));
        assert!(g("audit_*", "AUDIT_"));
        assert!(!g("audit_*", "audi"));
        assert!(g("*", ""));
        assert!(g("a?c", "abc"));
        assert!(!g("a?c", "ac"));
        assert!(g("*_at", "updated_at"));
        assert!(g("a*b*c", "aXbYbZc"));
        assert!(!g("a*b*c", "aXbYbZ"));
        assert!(g("名前_*", "名前_😀"));
        assert!(g("?", "😀"));
        assert!(!g("", "x"));
        assert!(g("**a", "ba"));
    }

    #[test]
    fn column_globs() {
        let c = ColumnGlob::new("*.updated_at").unwrap();
        assert!(c.matches("users", "updated_at"));
        assert!(!c.matches("users", "created_at"));
        let d = ColumnGlob::new("a.b.c").unwrap();
        assert!(d.matches("a.b", "c"));
        assert!(d.matches("a", "b.c"));
        assert!(ColumnGlob::new("nodot").is_none());
    }
}
