//! The walksurf runtime: maps a baked `.wsurf` file (zero copies) and answers
//! a character controller's floor and sweep queries — exactly what a capsule
//! sweep against the original triangles returns, or
//! [`FallbackReason`] so that the caller runs its physics instead.
//!
//! ```no_run
//! use walksurf::{Agent, FloorMode, FloorOutcome, Surface};
//! let surface = Surface::open("level.wsurf")?;
//! match surface.find_floor([120.0, 40.0, 300.0], 47.4, Agent::DEFAULT, FloorMode::LineTrace) {
//!     FloorOutcome::Floor(hit) => println!("floor {} cm below", hit.floor_dist),
//!     FloorOutcome::NoFloor => println!("falling"),
//!     FloorOutcome::Fallback(reason) => println!("ask physics: {reason:?}"),
//! }
//! # Ok::<(), walksurf::OpenError>(())
//! ```
//!
//! A `Surface` is immutable, `Send + Sync`, and allocates nothing per query.
//! Its one setting, [`PrecisionPath`], is chosen before it is shared:
//! `Fast` (the default) reads each piece's stored z error bound, `Reference`
//! recomputes it from the file's patch records on every use (slow; for
//! checking that both decide alike).
//! Never rewrite a mapped file in place: bakes replace it by rename, so a
//! `Surface` over the old file keeps answering from the old generation.

// Nothing derived from a file or a caller may panic: no unwrap/expect/panic
// outside tests. `clippy::indexing_slicing` is not denied: its remaining hits
// (reviewed) index fixed-size arrays (`[f64; 3]`, the BVH stack behind its
// bound check) with in-range constants; file bytes are reached only through
// `get` and zerocopy's checked casts.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod bvh;
mod cache;
mod contact;
mod find_floor;
mod precision;
mod query;
mod sweep;
mod tile_geom;
mod tolerance;

/// What the unit tests share.
#[cfg(test)]
mod testing {
    /// A tiny deterministic generator (SplitMix64) in [-1, 1).
    pub fn rng(seed: &mut u64) -> f64 {
        *seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

pub use cache::{QueryCache, QueryStats};
pub use precision::PrecisionPath;
pub use query::*;
pub use walksurf_format::FormatError;

use std::path::Path;
use walksurf_format::zerocopy::IntoBytes;
use walksurf_format::{BakeParams, FileLayout, FileView};

/// Why a file could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Format {
        path: String,
        #[source]
        source: FormatError,
    },
}

/// 64-byte aligned storage (the seed's hot arena).
#[derive(
    Clone,
    Copy,
    walksurf_format::zerocopy::FromBytes,
    walksurf_format::zerocopy::IntoBytes,
    walksurf_format::zerocopy::KnownLayout,
    walksurf_format::zerocopy::Immutable,
)]
#[repr(C, align(64))]
struct Line64([u8; 64]);

enum Backing {
    #[cfg(feature = "mmap")]
    Mapped(memmap2::Mmap),
    Arena {
        lines: Vec<Line64>,
        len: usize,
    },
}

impl Backing {
    #[inline]
    fn bytes(&self) -> &[u8] {
        match self {
            #[cfg(feature = "mmap")]
            Backing::Mapped(m) => m,
            Backing::Arena { lines, len } => lines.as_bytes().get(..*len).unwrap_or(&[]),
        }
    }
}

/// A baked walkable surface, validated and ready for queries.
pub struct Surface {
    backing: Backing,
    layout: FileLayout,
    precision: PrecisionPath,
}

impl std::fmt::Debug for Surface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Surface")
            .field("bytes", &self.backing.bytes().len())
            .field("generation", &self.generation())
            .field("tiles", &self.tile_count())
            .field("precision", &self.precision)
            .finish()
    }
}

impl Surface {
    /// Maps `path` and validates it (header, sections, tile index and tile
    /// records; no tile data is read). Section checksums are not verified:
    /// see [`Surface::open_verified`].
    #[cfg(feature = "mmap")]
    pub fn open(path: impl AsRef<Path>) -> Result<Surface, OpenError> {
        let path = path.as_ref();
        let io = |source| OpenError::Io {
            path: path.display().to_string(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        // (Mapping a directory fails with "no such device".)
        if file.metadata().map_err(io)?.is_dir() {
            return Err(io(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "is a directory",
            )));
        }
        let map = map_file(&file).map_err(io)?;
        Surface::from_backing(Backing::Mapped(map)).map_err(|source| OpenError::Format {
            path: path.display().to_string(),
            source,
        })
    }

    /// [`Surface::open`] plus a checksum of every section.
    #[cfg(feature = "mmap")]
    pub fn open_verified(path: impl AsRef<Path>) -> Result<Surface, OpenError> {
        let path = path.as_ref();
        let s = Surface::open(path)?;
        FileView::verify_checksums(s.backing.bytes(), &s.layout).map_err(|source| OpenError::Format {
            path: path.display().to_string(),
            source,
        })?;
        Ok(s)
    }

    /// Copies `bytes` into one 64-byte aligned arena and validates them.
    pub fn from_bytes(bytes: &[u8]) -> Result<Surface, FormatError> {
        let mut lines = vec![Line64([0; 64]); bytes.len().div_ceil(64)];
        if let Some(dst) = lines.as_mut_bytes().get_mut(..bytes.len()) {
            dst.copy_from_slice(bytes);
        }
        Surface::from_backing(Backing::Arena {
            lines,
            len: bytes.len(),
        })
    }

    /// [`Surface::from_bytes`] plus a checksum of every section.
    pub fn from_bytes_verified(bytes: &[u8]) -> Result<Surface, FormatError> {
        let s = Surface::from_bytes(bytes)?;
        FileView::verify_checksums(s.backing.bytes(), &s.layout)?;
        Ok(s)
    }

    fn from_backing(backing: Backing) -> Result<Surface, FormatError> {
        let layout = FileView::parse(backing.bytes())?;
        let s = Surface {
            backing,
            layout,
            precision: PrecisionPath::default(),
        };
        if s.view().is_none() {
            return Err(FormatError::Invalid("layout does not fit the bytes"));
        }
        Ok(s)
    }

    #[inline]
    pub(crate) fn view(&self) -> Option<FileView<'_>> {
        FileView::new(self.backing.bytes(), &self.layout)
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.backing.bytes()
    }

    /// The validated layout (header, sections).
    pub fn layout(&self) -> &FileLayout {
        &self.layout
    }

    /// Build generation: changes on every bake. Per-agent caches of another
    /// generation are stale.
    pub fn generation(&self) -> u64 {
        self.layout.header.build_generation.get()
    }

    /// The parameters the file was baked with (largest agent, walkable
    /// normal, longest sweep): refuse a file baked for other settings.
    pub fn bake_params(&self) -> &BakeParams {
        &self.layout.params
    }

    /// Number of tiles.
    pub fn tile_count(&self) -> usize {
        self.layout.hot.len() / size_of::<walksurf_format::TileHot>()
    }

    /// Whether the file's precision layout is one this runtime knows; if not,
    /// queries that need a precision bound fall back.
    pub fn precision_known(&self) -> bool {
        self.layout.precision_known
    }

    /// Where queries read piece error bounds: [`PrecisionPath::Fast`] (the
    /// default) or [`PrecisionPath::Reference`]. Set it before sharing the
    /// surface; queries only read it.
    pub fn set_precision_path(&mut self, path: PrecisionPath) {
        self.precision = path;
    }

    /// The current [`PrecisionPath`].
    pub fn precision_path(&self) -> PrecisionPath {
        self.precision
    }
}

impl Surface {
    /// Touches the hot record, the certificate index and the top three
    /// levels of both BVHs of every tile within `radius_cm` of `center`, so
    /// that the queries an agent is about to make find them in cache (turns
    /// serial misses into parallel loads). Returns the number of tiles
    /// touched.
    pub fn warmup(&self, center: [f64; 3], radius_cm: f64) -> usize {
        let Some(view) = self.view() else { return 0 };
        if !(center.iter().all(|v| v.is_finite()) && radius_cm.is_finite() && radius_cm >= 0.0) {
            return 0;
        }
        let t = walksurf_format::TILE_SIZE_CM;
        let r = radius_cm.min(64.0 * t);
        let (x0, x1) = (
            ((center[0] - r) / t).floor() as i32,
            ((center[0] + r) / t).floor() as i32,
        );
        let (y0, y1) = (
            ((center[1] - r) / t).floor() as i32,
            ((center[1] + r) / t).floor() as i32,
        );
        let mut touched = 0;
        for ty in y0..=y1 {
            for tx in x0..=x1 {
                let Some(tile) = view.tile_hot(tx, ty).and_then(|h| view.tile(h)) else {
                    continue;
                };
                touched += 1;
                crate::bvh::touch_top(tile.piece_bvh);
                crate::bvh::touch_top(tile.blocker_bvh);
            }
        }
        touched
    }
}

#[cfg(feature = "mmap")]
#[allow(unsafe_code)]
fn map_file(file: &std::fs::File) -> std::io::Result<memmap2::Mmap> {
    // SAFETY: the map is read-only and private to this process. A file that
    // another process truncates or rewrites in place while mapped is outside
    // the contract (bakes replace files by rename, which keeps this inode);
    // every read is bounds-checked against the length validated at open.
    unsafe { memmap2::Mmap::map(file) }
}

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Surface>();
};
