//! The walksurf file format: byte layouts, constants, a writer and a
//! bounds-checked reader. This crate is the only place that knows byte
//! layouts; `formats/FORMAT.md` is its specification.
//!
//! Every structure is a `#[repr(C)]` zerocopy type made of little-endian
//! fields (alignment 1), read in place from the file bytes. The reader checks
//! the header, the section table and every tile's regions before anything is
//! handed out; queries then reach tile bytes only through checked slices.

// Nothing that reads a file may panic on what it reads.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]
#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)
)]

mod layout;
mod reader;
mod writer;

pub use layout::*;
pub use reader::{FileLayout, FileView, FormatError, TileView, cert_list_total, cert_region, patch_table};
pub use writer::{FileWriter, TileRecordInput, seal_header};
pub use zerocopy;

/// A 64-bit hash used for checksums and input hashes (xxh3, seed 0).
pub fn hash64(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}
