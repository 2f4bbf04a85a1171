//! The bounds-checked reader. `FileView::parse` validates the header, the
//! section table, the tile index and every tile's regions; afterwards every
//! slice a query takes is one that validation proved in bounds.

use crate::hash64;
use crate::layout::*;
use core::ops::Range;
use zerocopy::FromBytes;
use zerocopy::little_endian::U32;

/// Why a file was refused. Each variant carries a short static reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    #[error("not a walksurf file (bad magic)")]
    BadMagic,
    #[error("file is truncated: {0}")]
    Truncated(&'static str),
    #[error("unsupported format version {found}.x (this reader supports {supported}.x)")]
    UnsupportedVersion { found: u16, supported: u16 },
    #[error("header checksum mismatch (the header is corrupt)")]
    HeaderChecksum,
    #[error("section table checksum mismatch (the section table is corrupt)")]
    SectionTableChecksum,
    #[error("checksum mismatch in section of kind {kind}")]
    SectionChecksum { kind: u32 },
    #[error("invalid file: {0}")]
    Invalid(&'static str),
}

/// Where everything is, as validated by [`FileView::parse`]. Plain ranges, so
/// an owner of the bytes can keep it next to them.
#[derive(Clone, Debug)]
pub struct FileLayout {
    pub header: Header,
    pub params: BakeParams,
    pub index_header: TileIndexHeader,
    pub index: Range<usize>,
    pub hot: Range<usize>,
    pub data: Range<usize>,
    pub metadata: Option<Range<usize>>,
    /// Every section: kind, byte range, checksum.
    pub sections: Vec<(u32, Range<usize>, u64)>,
    /// The precision layout of the file is one this reader knows.
    pub precision_known: bool,
}

/// A validated view of a file's bytes.
#[derive(Clone, Copy, Debug)]
pub struct FileView<'a> {
    pub bytes: &'a [u8],
    pub header: &'a Header,
    pub params: &'a BakeParams,
    pub index_header: &'a TileIndexHeader,
    index: &'a [u8],
    pub hot: &'a [TileHot],
    data: &'a [u8],
}

/// One tile's regions.
#[derive(Clone, Copy, Debug)]
pub struct TileView<'a> {
    pub hot: &'a TileHot,
    pub piece_bvh: &'a [BvhLine],
    pub pieces: &'a [u8],
    pub blocker_bvh: &'a [BvhLine],
    pub blockers: &'a [Blocker],
    /// Certificate index (cell rectangle), cell entries and records; empty
    /// when the tile has none. Bounds-checked at use: see
    /// [`TileView::certs_in_cell`].
    pub cert_index: CertIndexHeader,
    /// [`cert_list`]s with [`tile_flags::HAS_CERT_LISTS`], else offsets (a
    /// file before 2.2); the record count last.
    pub cert_cells: &'a [U32],
    pub certs: &'a [Cert],
    pub cert_walls: &'a [CertWall],
    /// The patch table (precision blocks and headroom state), indexed by
    /// [`PieceHeader::patch`]; empty when the tile has none or it does not
    /// fit the blob.
    pub patches: &'a [PatchRecord],
}

fn range_of(offset: u64, length: u64, file_len: usize) -> Option<Range<usize>> {
    let start = usize::try_from(offset).ok()?;
    let end = start.checked_add(usize::try_from(length).ok()?)?;
    (end <= file_len).then_some(start..end)
}

impl<'a> FileView<'a> {
    /// Validates `bytes` and returns the layout. Reads the header, section
    /// table, parameters, tile index and hot records; no tile data.
    pub fn parse(bytes: &'a [u8]) -> Result<FileLayout, FormatError> {
        // A short file that does not even start like one is not a walksurf
        // file (rather than a truncated one).
        if !MAGIC.starts_with(bytes.get(..MAGIC.len()).unwrap_or(bytes)) {
            return Err(FormatError::BadMagic);
        }
        let (header, _) = Header::read_from_prefix(bytes).map_err(|_| FormatError::Truncated("header"))?;
        if header.magic != MAGIC {
            return Err(FormatError::BadMagic);
        }
        if header.format_major.get() != FORMAT_MAJOR {
            return Err(FormatError::UnsupportedVersion {
                found: header.format_major.get(),
                supported: FORMAT_MAJOR,
            });
        }
        let sealed = bytes.get(..60).ok_or(FormatError::Truncated("header"))?;
        if hash64(sealed) as u32 != header.header_checksum.get() {
            return Err(FormatError::HeaderChecksum);
        }
        if header.tile_size_cm.get() as f64 != TILE_SIZE_CM
            || header.vertex_steps_per_cm.get() as f64 != VERTEX_STEPS_PER_CM
        {
            return Err(FormatError::Invalid("unsupported tile size or quantisation"));
        }

        let count = header.section_count.get() as usize;
        let table_range = range_of(
            size_of::<Header>() as u64,
            (count * size_of::<SectionEntry>()) as u64,
            bytes.len(),
        )
        .ok_or(FormatError::Truncated("section table"))?;
        let table_end = table_range.end;
        let table_bytes = bytes.get(table_range).ok_or(FormatError::Truncated("section table"))?;
        if hash64(table_bytes) as u32 != header.section_table_checksum.get() {
            return Err(FormatError::SectionTableChecksum);
        }
        let table =
            <[SectionEntry]>::ref_from_bytes(table_bytes).map_err(|_| FormatError::Invalid("section table size"))?;

        let mut sections = Vec::with_capacity(count);
        let mut find: [Option<Range<usize>>; 6] = Default::default();
        for e in table {
            let range = range_of(e.offset.get(), e.length.get(), bytes.len())
                .ok_or(FormatError::Truncated("section extends past the end of the file"))?;
            if !range.start.is_multiple_of(SECTION_ALIGN) {
                return Err(FormatError::Invalid("section offset is not 64-byte aligned"));
            }
            let kind = e.kind.get();
            // Kind 0 is no defined kind: skipped like every unknown kind.
            if let Some(slot) = find.get_mut(kind as usize).filter(|_| kind != 0) {
                if slot.is_some() {
                    return Err(FormatError::Invalid("duplicate section"));
                }
                if e.version.get() != 1 {
                    return Err(FormatError::Invalid("unsupported section version"));
                }
                *slot = Some(range.clone());
            }
            sections.push((kind, range, e.checksum.get()));
        }
        let need = |kind: u32, what: &'static str| {
            find.get(kind as usize)
                .cloned()
                .flatten()
                .ok_or(FormatError::Invalid(what))
        };
        let params_range = need(section::BAKE_PARAMS, "missing bake parameters section")?;
        let index = need(section::TILE_INDEX, "missing tile index section")?;
        let hot = need(section::TILE_HOT, "missing tile hot section")?;
        let data = need(section::TILE_DATA, "missing tile data section")?;
        let metadata = find.get(section::METADATA as usize).cloned().flatten();
        // The writer pads the file to 64 bytes after its last section: any
        // other length is a truncated (or appended-to) file.
        let sections_end = sections
            .iter()
            .map(|s: &(u32, Range<usize>, u64)| s.1.end)
            .max()
            .unwrap_or(0);
        let expected_len = align_up(sections_end.max(table_end), SECTION_ALIGN);
        if bytes.len() < expected_len {
            return Err(FormatError::Truncated("file ends inside its last 64-byte line"));
        }
        if bytes.len() > expected_len {
            return Err(FormatError::Invalid("bytes after the last section"));
        }

        // Every range below was checked against `bytes.len()` by `range_of`.
        let section_bytes = |r: Range<usize>| bytes.get(r).ok_or(FormatError::Truncated("section"));
        let params = BakeParams::read_from_bytes(section_bytes(params_range)?)
            .map_err(|_| FormatError::Invalid("bake parameters size"))?;
        let params_ok = [
            params.max_agent_radius_cm.get(),
            params.max_agent_half_height_cm.get(),
            params.walkable_normal_z.get(),
            params.max_sweep_len_cm.get(),
        ]
        .iter()
        .all(|v| v.is_finite() && *v > 0.0)
            && params.tile_halo_cm.get().is_finite()
            && (params.tile_halo_cm.get() as f64) <= MAX_TILE_HALO_CM
            // (As the bake checks them.)
            && params.walkable_normal_z.get() <= 1.0
            && params.max_agent_half_height_cm.get() >= params.max_agent_radius_cm.get()
            && params.max_agent_radius_cm.get() <= params.tile_halo_cm.get();
        if !params_ok {
            return Err(FormatError::Invalid("bake parameters out of range"));
        }

        let (index_header, slots) = TileIndexHeader::read_from_prefix(section_bytes(index.clone())?)
            .map_err(|_| FormatError::Truncated("tile index"))?;
        let hot_records = <[TileHot]>::ref_from_bytes(section_bytes(hot.clone())?)
            .map_err(|_| FormatError::Invalid("tile hot section size"))?;
        let slot_count = (index_header.tiles_x.get() as usize)
            .checked_mul(index_header.tiles_y.get() as usize)
            .ok_or(FormatError::Invalid("tile index size"))?;
        if slots.len()
            != slot_count
                .checked_mul(4)
                .ok_or(FormatError::Invalid("tile index size"))?
        {
            return Err(FormatError::Invalid("tile index size"));
        }
        let (min_x, min_y) = (index_header.min_tile_x.get(), index_header.min_tile_y.get());
        let mut seen = vec![false; hot_records.len()];
        for (i, slot) in slots.chunks_exact(4).enumerate() {
            let v = le_u32(slot);
            if v == NO_TILE {
                continue;
            }
            let hot = hot_records
                .get(v as usize)
                .ok_or(FormatError::Invalid("tile index entry out of range"))?;
            let tiles_x = index_header.tiles_x.get() as usize;
            let gx = i64::from(min_x) + (i % tiles_x) as i64;
            let gy = i64::from(min_y) + (i / tiles_x) as i64;
            if i64::from(hot.tile_x.get()) != gx || i64::from(hot.tile_y.get()) != gy {
                return Err(FormatError::Invalid("tile record does not match its index slot"));
            }
            match seen.get_mut(v as usize) {
                Some(seen) if !*seen => *seen = true,
                _ => return Err(FormatError::Invalid("tile record indexed twice")),
            }
        }
        let data_len = data.len();
        for hot in hot_records {
            check_tile(hot, data_len)?;
        }

        Ok(FileLayout {
            header,
            params,
            index_header,
            index: index.start + size_of::<TileIndexHeader>()..index.end,
            hot,
            data,
            metadata,
            sections,
            precision_known: header.precision_layout.get() == PRECISION_LAYOUT_VERSION,
        })
    }

    /// Checks every section's checksum.
    pub fn verify_checksums(bytes: &[u8], layout: &FileLayout) -> Result<(), FormatError> {
        for (kind, range, sum) in &layout.sections {
            let b = bytes.get(range.clone()).ok_or(FormatError::Truncated("section"))?;
            if hash64(b) != *sum {
                return Err(FormatError::SectionChecksum { kind: *kind });
            }
        }
        Ok(())
    }

    /// A view of `bytes` through a layout that [`FileView::parse`] returned
    /// for these same bytes. `None` if the bytes do not fit the layout.
    #[inline(always)]
    pub fn new(bytes: &'a [u8], layout: &'a FileLayout) -> Option<FileView<'a>> {
        // Header, parameters and index header were validated and copied at
        // parse time: only the slices are taken from the bytes here.
        Some(FileView {
            bytes,
            header: &layout.header,
            params: &layout.params,
            index_header: &layout.index_header,
            index: bytes.get(layout.index.clone())?,
            hot: <[TileHot]>::ref_from_bytes(bytes.get(layout.hot.clone())?).ok()?,
            data: bytes.get(layout.data.clone())?,
        })
    }

    /// The hot record of tile `(tx, ty)`, if the file has that tile.
    #[inline]
    pub fn tile_hot(&self, tx: i32, ty: i32) -> Option<&'a TileHot> {
        self.hot.get(self.tile_slot(tx, ty)? as usize)
    }

    /// The index of tile `(tx, ty)`'s hot record, if the file has that tile.
    #[inline]
    pub fn tile_slot(&self, tx: i32, ty: i32) -> Option<u32> {
        let gx = i64::from(tx) - i64::from(self.index_header.min_tile_x.get());
        let gy = i64::from(ty) - i64::from(self.index_header.min_tile_y.get());
        let (w, h) = (
            i64::from(self.index_header.tiles_x.get()),
            i64::from(self.index_header.tiles_y.get()),
        );
        if gx < 0 || gy < 0 || gx >= w || gy >= h {
            return None;
        }
        let at = ((gy * w + gx) * 4) as usize;
        let slot = self.index.get(at..at.checked_add(4)?)?;
        let v = le_u32(slot);
        (v != NO_TILE).then_some(v)
    }

    /// The regions of one tile. `None` only if the hot record did not come
    /// from this file.
    #[inline(always)]
    pub fn tile(&self, hot: &'a TileHot) -> Option<TileView<'a>> {
        let layout = BlobLayout::new(
            hot.piece_lines.get(),
            hot.pieces_len.get(),
            hot.blocker_lines.get(),
            hot.blocker_count.get(),
        )?;
        let start = usize::try_from(hot.blob_offset.get()).ok()?;
        let blob_len = (hot.blob_len.get() as usize).max(layout.len());
        let blob = self.data.get(start..start.checked_add(blob_len)?)?;
        let (blob, patches) = patch_table(hot, blob, layout.len());
        let (cert_index, cert_cells, certs, cert_walls) =
            cert_region(hot, blob, layout.len()).unwrap_or((NO_CERTS, &[], &[], &[]));
        Some(TileView {
            hot,
            piece_bvh: <[BvhLine]>::ref_from_bytes(blob.get(layout.piece_bvh)?).ok()?,
            pieces: blob.get(layout.pieces)?,
            blocker_bvh: <[BvhLine]>::ref_from_bytes(blob.get(layout.blocker_bvh)?).ok()?,
            blockers: <[Blocker]>::ref_from_bytes(blob.get(layout.blockers)?).ok()?,
            cert_index,
            cert_cells,
            certs,
            cert_walls,
            patches,
        })
    }

    /// The metadata JSON, if present and UTF-8.
    pub fn metadata(&self, layout: &FileLayout) -> Option<&'a str> {
        let r = layout.metadata.clone()?;
        core::str::from_utf8(self.bytes.get(r)?).ok()
    }
}

/// The little-endian `u32` at the start of `bytes` (4 bytes, as given by
/// `chunks_exact(4)` or a checked `get`); 0 if there are fewer.
#[inline]
fn le_u32(bytes: &[u8]) -> u32 {
    bytes.first_chunk::<4>().map_or(0, |b| u32::from_le_bytes(*b))
}

const NO_CERTS: CertIndexHeader = CertIndexHeader {
    x0: zerocopy::little_endian::U16::ZERO,
    y0: zerocopy::little_endian::U16::ZERO,
    w: zerocopy::little_endian::U16::ZERO,
    h: zerocopy::little_endian::U16::ZERO,
};

/// Splits the patch table (the blob's last `patch_count` records) off the
/// blob: `(rest, table)`; the table is empty if the tile has none or it
/// would overlap the regions before it.
#[inline(always)]
pub fn patch_table<'a>(hot: &TileHot, blob: &'a [u8], regions_end: usize) -> (&'a [u8], &'a [PatchRecord]) {
    if hot.flags.get() & tile_flags::HAS_PATCHES == 0 {
        return (blob, &[]);
    }
    let bytes = (hot.patch_count.get() as usize).saturating_mul(size_of::<PatchRecord>());
    match blob.len().checked_sub(bytes).filter(|&at| at >= regions_end) {
        Some(at) => match (
            blob.get(..at),
            blob.get(at..).and_then(|t| <[PatchRecord]>::ref_from_bytes(t).ok()),
        ) {
            (Some(rest), Some(table)) => (rest, table),
            _ => (blob, &[]),
        },
        None => (blob, &[]),
    }
}

/// The certificate region after a tile's blockers (64-byte aligned): its
/// index header, `w·h` `u32` cell entries and the record count, then the records.
#[allow(clippy::type_complexity)]
#[inline(always)]
pub fn cert_region<'a>(
    hot: &TileHot,
    blob: &'a [u8],
    regions_end: usize,
) -> Option<(CertIndexHeader, &'a [U32], &'a [Cert], &'a [CertWall])> {
    let flags = hot.flags.get() & (tile_flags::HAS_CERTS | tile_flags::HAS_CERT_LISTS);
    if flags != tile_flags::HAS_CERTS && flags != tile_flags::HAS_CERT_LISTS {
        return None;
    }
    let rest = blob.get(align_up(regions_end, SECTION_ALIGN)..)?;
    let (index, rest) = CertIndexHeader::read_from_prefix(rest).ok()?;
    let (w, h) = (index.w.get() as usize, index.h.get() as usize);
    if index.x0.get() as usize + w > CERT_CELLS || index.y0.get() as usize + h > CERT_CELLS {
        return None;
    }
    let uniform = hot.flags.get() & tile_flags::CERT_LISTS_UNIFORM != 0 && flags == tile_flags::HAS_CERT_LISTS;
    let cells = if uniform { 1 } else { w * h };
    let (offsets, rest) = <[U32]>::ref_from_prefix_with_elems(rest, cells + 1).ok()?;
    let n = offsets.last()?.get() as usize;
    let (certs, rest) = <[Cert]>::ref_from_prefix_with_elems(rest, n).ok()?;
    let walls = rest.len() / size_of::<CertWall>();
    let walls = <[CertWall]>::ref_from_bytes(rest.get(..walls * size_of::<CertWall>())?).ok()?;
    Some((index, offsets, certs, walls))
}

/// How many certificates a region of shared lists (from [`cert_region`])
/// gives its cells, cells × floors: one entry serves every cell of a
/// uniform region.
pub fn cert_list_total(index: &CertIndexHeader, cells: &[U32]) -> usize {
    let entries = cells.split_last().map_or(&[][..], |(_, e)| e);
    let sum: usize = entries.iter().map(|e| cert_list(e.get()).len()).sum();
    match entries.len() {
        1 => sum * usize::from(index.w.get()) * usize::from(index.h.get()),
        _ => sum,
    }
}

fn check_tile(hot: &TileHot, data_len: usize) -> Result<(), FormatError> {
    let layout = BlobLayout::new(
        hot.piece_lines.get(),
        hot.pieces_len.get(),
        hot.blocker_lines.get(),
        hot.blocker_count.get(),
    )
    .ok_or(FormatError::Invalid("tile region sizes overflow"))?;
    let blob = range_of(hot.blob_offset.get(), hot.blob_len.get() as u64, data_len)
        .ok_or(FormatError::Invalid("tile blob outside the tile data section"))?;
    if !blob.start.is_multiple_of(SECTION_ALIGN) {
        return Err(FormatError::Invalid("tile blob is not 64-byte aligned"));
    }
    if layout.len() > blob.len() {
        return Err(FormatError::Invalid("tile regions exceed the tile blob"));
    }
    // (Box bounds are exact only for a power of two.)
    let zq = hot.z_quant_cm.get();
    let power_of_two = zq.is_normal() && zq.to_bits() & 0x007F_FFFF == 0;
    if !(power_of_two && (MIN_Z_QUANT_CM..=MAX_Z_QUANT_CM).contains(&zq)) {
        return Err(FormatError::Invalid("tile z quantisation"));
    }
    if !hot.pieces_len.get().is_multiple_of(4) {
        return Err(FormatError::Invalid("piece region is not 4-byte aligned"));
    }
    Ok(())
}

impl<'a> TileView<'a> {
    /// The piece whose record starts at 4-byte word `word` of the piece region.
    #[inline]
    pub fn piece(&self, word: u32) -> Option<(&'a PieceHeader, &'a [VertexFixed])> {
        let at = (word as usize).checked_mul(4)?;
        let rest = self.pieces.get(at..)?;
        let (header, rest) = PieceHeader::ref_from_prefix(rest).ok()?;
        let n = header.vertex_count as usize;
        if n > MAX_PIECE_VERTICES {
            return None;
        }
        let (verts, _) = <[VertexFixed]>::ref_from_prefix_with_elems(rest, n).ok()?;
        Some((header, verts))
    }

    /// The flat-floor certificates of cell `(i, j)` (of `CERT_CELLS²`);
    /// empty when there are none or the region is corrupt.
    #[inline]
    pub fn certs_in_cell(&self, i: usize, j: usize) -> &'a [Cert] {
        let ix = &self.cert_index;
        let (x0, y0, w, h) = (
            ix.x0.get() as usize,
            ix.y0.get() as usize,
            ix.w.get() as usize,
            ix.h.get() as usize,
        );
        if i < x0 || j < y0 || i >= x0 + w || j >= y0 + h {
            return &[];
        }
        // (One entry and the count: a uniform region, or a single cell.)
        let k = if self.cert_cells.len() <= 2 {
            0
        } else {
            (j - y0) * w + (i - x0)
        };
        let at = |k: usize| self.cert_cells.get(k).map(|o| o.get());
        let range = if self.hot.flags.get() & tile_flags::HAS_CERT_LISTS != 0 {
            at(k).map(cert_list)
        } else {
            at(k).zip(at(k + 1)).map(|(a, b)| a as usize..b as usize)
        };
        range.and_then(|r| self.certs.get(r)).unwrap_or(&[])
    }

    /// The walls a certificate lists; `None` if its range is corrupt (the
    /// certificate must then not be used).
    #[inline]
    pub fn cert_walls_of(&self, cert: &Cert) -> Option<&'a [CertWall]> {
        self.cert_walls.get(cert.wall_range())
    }

    /// The tile origin in world cm.
    pub fn origin_cm(&self) -> [f64; 3] {
        [
            self.hot.tile_x.get() as f64 * TILE_SIZE_CM,
            self.hot.tile_y.get() as f64 * TILE_SIZE_CM,
            self.hot.z_origin_cm.get() as f64,
        ]
    }

    /// The tile's quantisation.
    pub fn quant(&self) -> TileQuant {
        TileQuant {
            z_origin_cm: self.hot.z_origin_cm.get() as f64,
            z_quant_cm: self.hot.z_quant_cm.get() as f64,
        }
    }
}
