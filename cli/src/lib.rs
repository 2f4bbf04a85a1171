//! The parts of the `walksurf` binary that are worth testing and fuzzing on
//! their own: the `query` command's JSON-lines protocol. The binary
//! (`src/main.rs`) is the rest of the glue.

pub mod query;
