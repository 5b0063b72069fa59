//! The judge's cost per table, on tables shaped like the 350,000 of the
//! manifest-limit test (crates/ndarc/tests/hostile.rs):
//! `cargo run --release -p ndarc-sql --example judge_cost [TABLES]`.

use std::time::Instant;

use ndarc_format::manifest::{Column, Table};

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20_000);
    let col = |name: &str, ty: &str, pk| Column {
        name: name.into(),
        decl_type: ty.into(),
        notnull: false,
        pk,
        generated: None,
    };
    let tables: Vec<Table> = (0..n)
        .map(|i| {
            let name = format!("t{i:07}");
            Table {
                sql: format!("CREATE TABLE {name}(id INTEGER PRIMARY KEY, c0_col TEXT, c1_col TEXT, c2_col TEXT, c3_col TEXT)"),
                name,
                columns: std::iter::once(col("id", "INTEGER", 1))
                    .chain((0..4).map(|j| col(&format!("c{j}_col"), "TEXT", 0)))
                    .collect(),
                dependencies: vec![],
                rowid_alias: None,
                count: 0,
            }
        })
        .collect();
    let start = Instant::now();
    let judge = ndarc_sql::TableSqlJudge::new().expect("an in-memory database");
    let opened = start.elapsed();
    let start = Instant::now();
    let mut refused = 0;
    for t in &tables {
        if let Err(r) = judge.judge(t) {
            if refused == 0 {
                println!("{}: {r}", t.name);
            }
            refused += 1;
        }
    }
    let took = start.elapsed();
    println!(
        "opened in {opened:?}; {n} tables in {took:?}: {:.1} µs a table ({refused} refused)",
        took.as_secs_f64() * 1e6 / n as f64
    );
}
