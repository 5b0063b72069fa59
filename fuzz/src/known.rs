//! Known bugs, reported and waiting for a fix: a target skips the inputs
//! that reach one (so that long runs and CI go on finding other things)
//! unless `NDARC_FUZZ_STRICT=1`. Each skip names its reproducer in
//! `fuzz/regressions/`; delete the skip when the fix lands (run the
//! regressions with `NDARC_FUZZ_STRICT=1` to see whether it has).
//!
//! No skip is active: every finding so far is fixed, and its reproducer
//! in `fuzz/regressions/` must pass (see `fuzz/README.md`, "Findings").

use std::sync::OnceLock;

/// `NDARC_FUZZ_STRICT=1`: run into known bugs too.
pub fn strict() -> bool {
    static STRICT: OnceLock<bool> = OnceLock::new();
    *STRICT.get_or_init(|| std::env::var_os("NDARC_FUZZ_STRICT").is_some_and(|v| v == "1"))
}
