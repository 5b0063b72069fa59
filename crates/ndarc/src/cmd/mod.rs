//! One module per subcommand; each has `Args` and `run` (see `main.rs`).

pub mod canon;
pub mod diff;
pub mod gen;
pub mod inspect;
pub mod repart;
pub mod verify;
