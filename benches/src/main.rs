//! The benchmarks are binaries in `src/bin/`; see `canon-bench`:
//!
//! ```text
//! cargo run --release -p ndarc-benches --bin canon-bench -- --mb 100
//! ```

fn main() {
    eprintln!("run a benchmark binary: cargo run --release -p ndarc-benches --bin canon-bench");
}
