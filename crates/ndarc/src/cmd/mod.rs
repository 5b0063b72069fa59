//! One module per subcommand; each has `Args` and `run` (see `main.rs`).

pub mod canon;
pub mod diff;
pub mod fuzz_consumer;
pub mod fuzz_producer;
pub mod gen;
pub mod inspect;
pub mod mutate;
pub mod pack;
pub mod repart;
pub mod unpack;
pub mod verify;
