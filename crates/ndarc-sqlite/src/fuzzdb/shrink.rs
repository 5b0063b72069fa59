//! Shrinking a failing database to a smaller one that still fails.

use super::DbSpec;

/// Shrinks a failing database: drops tables, then rows (halves, then one
/// by one), then columns, keeping each smaller plan for which `fails` still
/// holds, until no single step keeps it failing or `budget` attempts are
/// spent. `fails` is not called on the starting plan.
pub fn shrink(
    spec: &DbSpec,
    budget: usize,
    mut fails: impl FnMut(&DbSpec) -> bool,
) -> (DbSpec, usize) {
    let mut cur = spec.clone();
    let mut tries = 0usize;
    let mut attempt = |cand: DbSpec, cur: &mut DbSpec, tries: &mut usize| -> bool {
        if *tries >= budget {
            return false;
        }
        *tries += 1;
        if fails(&cand) {
            *cur = cand;
            true
        } else {
            false
        }
    };
    loop {
        let before = (cur.tables.len(), cur.row_count(), column_count(&cur));
        // Tables.
        let mut ti = cur.tables.len();
        while ti > 0 {
            ti -= 1;
            if ti < cur.tables.len() {
                let cand = cur.without_table(ti);
                attempt(cand, &mut cur, &mut tries);
            }
        }
        // Rows: halves first, then single rows.
        for ti in 0..cur.tables.len() {
            let mut chunk = cur.tables[ti].rows.len().div_ceil(2).max(1);
            loop {
                let mut start = 0;
                while start < cur.tables[ti].rows.len() {
                    let end = (start + chunk).min(cur.tables[ti].rows.len());
                    let cand = cur.without_rows(ti, start..end);
                    if !attempt(cand, &mut cur, &mut tries) {
                        start = end;
                    }
                }
                if chunk == 1 {
                    break;
                }
                chunk = chunk.div_ceil(2);
            }
        }
        // Columns.
        for ti in 0..cur.tables.len() {
            let mut ci = cur.tables[ti].columns.len();
            while ci > 0 {
                ci -= 1;
                if ci < cur.tables[ti].columns.len() {
                    if let Some(cand) = cur.without_column(ti, ci) {
                        attempt(cand, &mut cur, &mut tries);
                    }
                }
            }
        }
        let after = (cur.tables.len(), cur.row_count(), column_count(&cur));
        if after == before || tries >= budget {
            return (cur, tries);
        }
    }
}

fn column_count(s: &DbSpec) -> usize {
    s.tables.iter().map(|t| t.columns.len()).sum()
}
