//! One module per subcommand; each has `Args` and `run` (see `main.rs`).

pub mod canon;
pub mod inspect;
pub mod verify;
