//! Incremental bake: reuse the tiles of the previous output whose input did
//! not change.
//!
//! Input: the previous file's bytes and the new bake's parameters hash.
//! Output: the previous tiles, by `(x, y)`, that a new tile with the same
//! input hash may copy verbatim (hot record and blob bytes; the writer
//! re-lays the blob offsets).
//!
//! Why this is exact: a tile's bytes are a pure function of its
//! [`tile_input_hash`](crate::stage::tiling::tile_input_hash) inputs — the
//! parameters, the tile's coordinates, its triangles in canonical order and
//! the tile pipeline version (tile locality, DESIGN §3). So a reused tile is
//! the tile a full bake would build, and an incremental bake gives the bytes
//! of a full bake of the same input; only `build_generation` differs.
//!
//! The previous file is only trusted when it is fully valid (structure and
//! every section checksum), was written by this format version (major,
//! minor, precision layout) and baked with the same parameters; otherwise
//! the bake is a full one and the report says why.
//!
//! Cost: one parse and one checksum pass over the previous file (xxh3, a few
//! GB/s), then an `O(log n)` lookup per tile.

use std::collections::BTreeMap;
use walksurf_format::zerocopy::FromBytes;
use walksurf_format::{
    FORMAT_MINOR, FileView, FormatError, PRECISION_LAYOUT_VERSION, PieceHeader, TileHot, TileRecordInput,
};

use crate::stage::layout::TileStats;

/// Why a bake could not reuse the previous output's tiles.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NotReusable {
    #[error("no previous output")]
    NoPrevious,
    #[error("a full bake was requested")]
    FullRequested,
    #[error("the previous output cannot be read: {0}")]
    Unreadable(String),
    #[error("the previous output is not a valid walksurf file: {0}")]
    Invalid(FormatError),
    #[error(
        "the previous output has format {major}.{minor} with precision layout {precision} \
         (this baker writes {}.{FORMAT_MINOR} with precision layout {PRECISION_LAYOUT_VERSION})",
        walksurf_format::FORMAT_MAJOR
    )]
    OtherVersion { major: u16, minor: u16, precision: u16 },
    #[error("the previous output was baked with other parameters")]
    OtherParams,
}

/// One reusable tile of the previous output.
#[derive(Clone, Copy, Debug)]
pub struct PreviousTile<'a> {
    pub hot: TileHot,
    pub blob: &'a [u8],
}

/// The tiles of a previous output that a new bake may reuse.
#[derive(Clone, Debug)]
pub struct PreviousTiles<'a> {
    tiles: BTreeMap<(i32, i32), PreviousTile<'a>>,
}

impl<'a> PreviousTiles<'a> {
    /// Validates `bytes` (structure, versions, every section checksum) and
    /// checks that they were baked with `params_hash`.
    pub fn parse(bytes: &'a [u8], params_hash: u64) -> Result<PreviousTiles<'a>, NotReusable> {
        let layout = FileView::parse(bytes).map_err(NotReusable::Invalid)?;
        FileView::verify_checksums(bytes, &layout).map_err(NotReusable::Invalid)?;
        let h = &layout.header;
        let (major, minor, precision) = (h.format_major.get(), h.format_minor.get(), h.precision_layout.get());
        if minor != FORMAT_MINOR || precision != PRECISION_LAYOUT_VERSION || h.flags.get() != 0 {
            return Err(NotReusable::OtherVersion {
                major,
                minor,
                precision,
            });
        }
        if h.params_hash.get() != params_hash {
            return Err(NotReusable::OtherParams);
        }
        let invalid = || NotReusable::Invalid(FormatError::Invalid("layout does not fit the bytes"));
        let view = FileView::new(bytes, &layout).ok_or_else(invalid)?;
        let data = bytes.get(layout.data.clone()).ok_or_else(invalid)?;
        let mut tiles = BTreeMap::new();
        for hot in view.hot {
            // `parse` proved every blob in bounds; checked again, never trusted.
            let start = usize::try_from(hot.blob_offset.get()).map_err(|_| invalid())?;
            let end = start.checked_add(hot.blob_len.get() as usize).ok_or_else(invalid)?;
            let blob = data.get(start..end).ok_or_else(invalid)?;
            tiles.insert((hot.tile_x.get(), hot.tile_y.get()), PreviousTile { hot: *hot, blob });
        }
        Ok(PreviousTiles { tiles })
    }

    /// The previous tile at `key` if its input hash is `input_hash`.
    pub fn reusable(&self, key: (i32, i32), input_hash: u64) -> Option<PreviousTile<'a>> {
        self.tiles
            .get(&key)
            .filter(|t| t.hot.input_hash.get() == input_hash)
            .copied()
    }

    /// Coordinates of every previous tile, sorted by `(x, y)`.
    pub fn keys(&self) -> impl Iterator<Item = (i32, i32)> + '_ {
        self.tiles.keys().copied()
    }

    /// Number of previous tiles.
    pub fn len(&self) -> usize {
        self.tiles.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tiles.is_empty()
    }
}

impl PreviousTile<'_> {
    /// The tile as the writer takes it: the same hot record and blob bytes.
    pub fn record(&self) -> TileRecordInput {
        TileRecordInput {
            hot: self.hot,
            blob: self.blob.to_vec(),
        }
    }

    /// Walkable triangles this tile holds as blockers (flagged
    /// `DEMOTED_WALKABLE`), as a fresh bake counts them.
    pub fn demoted(&self) -> usize {
        use walksurf_format::zerocopy::FromBytes;
        let h = &self.hot;
        let Some(layout) = walksurf_format::BlobLayout::new(
            h.piece_lines.get(),
            h.pieces_len.get(),
            h.blocker_lines.get(),
            h.blocker_count.get(),
        ) else {
            return 0;
        };
        let bytes = self.blob.get(layout.blockers).unwrap_or(&[]);
        <[walksurf_format::Blocker]>::ref_from_bytes(bytes)
            .map(|b| {
                b.iter()
                    .filter(|b| b.flags.get() & walksurf_format::blocker_flags::DEMOTED_WALKABLE != 0)
                    .count()
            })
            .unwrap_or(0)
    }

    /// The report numbers the file holds for this tile. `max_z_err_cm` is
    /// read from the stored `f32` bounds (a fresh layout reports the `f64`
    /// value before rounding).
    pub fn stats(&self) -> TileStats {
        let h = &self.hot;
        let pieces = h.piece_count.get() as usize;
        let pieces_len = h.pieces_len.get() as usize;
        let header = size_of::<PieceHeader>();
        let vertex = size_of::<walksurf_format::VertexFixed>();
        let vertices = pieces_len.saturating_sub(pieces * header) / vertex;
        let start = (h.piece_lines.get() as usize).saturating_mul(size_of::<walksurf_format::BvhLine>());
        let region = start
            .checked_add(pieces_len)
            .and_then(|end| self.blob.get(start..end))
            .unwrap_or(&[]);
        let regions_end = walksurf_format::BlobLayout::new(
            h.piece_lines.get(),
            h.pieces_len.get(),
            h.blocker_lines.get(),
            h.blocker_count.get(),
        )
        .map_or(0, |l| l.len());
        let (rest, patches) = walksurf_format::patch_table(h, self.blob, regions_end);
        let mut max_z_err_cm: f64 = 0.0;
        let mut cut_pieces = 0;
        let mut square_pieces = 0;
        let mut at = 0;
        for _ in 0..pieces {
            let Some(Ok((p, _))) = region.get(at..).map(PieceHeader::read_from_prefix) else {
                break;
            };
            max_z_err_cm = max_z_err_cm.max(p.z_err_cm.get() as f64);
            let verts_at = at + header;
            let vs: Vec<[i32; 2]> = region
                .get(verts_at..verts_at + p.vertex_count as usize * vertex)
                .unwrap_or(&[])
                .chunks_exact(vertex)
                .filter_map(|c| walksurf_format::VertexFixed::read_from_bytes(c).ok())
                .map(|v| [v.x.get(), v.y.get()])
                .collect();
            square_pieces += usize::from(crate::stage::layout::in_own_square(&vs));
            let flags = patches.get(p.patch.get() as usize).map_or(0, |r| r.flags.get());
            cut_pieces += usize::from(flags & walksurf_format::patch_flags::HEADROOM_CUT != 0);
            at += header + p.vertex_count as usize * vertex;
        }
        // (Cells × floors, as a bake counts them.)
        let certificates = walksurf_format::cert_region(h, rest, regions_end).map_or(0, |(index, cells, _, _)| {
            walksurf_format::cert_list_total(&index, cells)
        });
        TileStats {
            pieces,
            vertices,
            blockers: h.blocker_count.get() as usize,
            bytes: self.blob.len() + size_of::<TileHot>(),
            max_z_err_cm,
            certificates,
            cut_pieces,
            square_pieces,
        }
    }
}
