//! Assembles a complete file from tile blobs and parameters.

use crate::hash64;
use crate::layout::*;
use zerocopy::IntoBytes;

/// One tile as the writer takes it: its hot record (the writer fills in
/// `blob_offset` and `blob_len`) and its blob bytes.
#[derive(Clone, Debug)]
pub struct TileRecordInput {
    pub hot: TileHot,
    pub blob: Vec<u8>,
}

/// Everything that goes into a file, in the order it is written.
#[derive(Clone, Debug)]
pub struct FileWriter {
    pub up_axis: u8,
    pub metres_per_unit: f32,
    pub build_generation: u64,
    pub input_hash: u64,
    pub params_hash: u64,
    pub params: BakeParams,
    /// Tiles in any order; the writer sorts them by (y, x).
    pub tiles: Vec<TileRecordInput>,
    pub metadata_json: String,
}

impl FileWriter {
    /// The file's bytes. Deterministic: the same inputs give the same bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut tiles: Vec<&TileRecordInput> = self.tiles.iter().collect();
        tiles.sort_by_key(|t| (t.hot.tile_y.get(), t.hot.tile_x.get()));

        // Tile data section layout and hot records.
        let mut data_len = 0;
        let mut hots = Vec::with_capacity(tiles.len());
        for t in &tiles {
            let offset = align_up(data_len, SECTION_ALIGN);
            data_len = offset + t.blob.len();
            let mut hot = t.hot;
            hot.blob_offset.set(offset as u64);
            hot.blob_len.set(t.blob.len() as u32);
            hots.push(hot);
        }

        // Dense tile index.
        let (min_x, min_y, max_x, max_y) =
            tiles
                .iter()
                .fold((i32::MAX, i32::MAX, i32::MIN, i32::MIN), |(a, b, c, d), t| {
                    let (x, y) = (t.hot.tile_x.get(), t.hot.tile_y.get());
                    (a.min(x), b.min(y), c.max(x), d.max(y))
                });
        let (tiles_x, tiles_y) = if tiles.is_empty() {
            (0u32, 0u32)
        } else {
            ((max_x - min_x + 1) as u32, (max_y - min_y + 1) as u32)
        };
        let index_header = TileIndexHeader {
            min_tile_x: if tiles.is_empty() { 0 } else { min_x }.into(),
            min_tile_y: if tiles.is_empty() { 0 } else { min_y }.into(),
            tiles_x: tiles_x.into(),
            tiles_y: tiles_y.into(),
        };
        let mut slots = vec![NO_TILE; tiles_x as usize * tiles_y as usize];
        for (i, t) in tiles.iter().enumerate() {
            let gx = (t.hot.tile_x.get() - min_x) as usize;
            let gy = (t.hot.tile_y.get() - min_y) as usize;
            // In range by construction: the grid spans every tile's coordinates.
            if let Some(slot) = slots.get_mut(gy * tiles_x as usize + gx) {
                *slot = i as u32;
            }
        }
        let mut index = index_header.as_bytes().to_vec();
        for s in slots {
            index.extend_from_slice(&s.to_le_bytes());
        }

        // Sections in order; the tile data is written straight into the
        // output (one copy of the largest part of the file).
        let sections: [(u32, Option<&[u8]>, usize); 5] = [
            (
                section::BAKE_PARAMS,
                Some(self.params.as_bytes()),
                size_of::<BakeParams>(),
            ),
            (section::TILE_INDEX, Some(&index), index.len()),
            (section::TILE_HOT, Some(hots.as_bytes()), hots.as_bytes().len()),
            (section::TILE_DATA, None, data_len),
            (
                section::METADATA,
                Some(self.metadata_json.as_bytes()),
                self.metadata_json.len(),
            ),
        ];
        let table_len = sections.len() * size_of::<SectionEntry>();
        let mut offset = align_up(size_of::<Header>() + table_len, SECTION_ALIGN);
        let mut placed = Vec::with_capacity(sections.len());
        for &(kind, _, len) in &sections {
            placed.push((kind, offset, len));
            offset = align_up(offset + len, SECTION_ALIGN);
        }
        let mut out = vec![0u8; offset];
        for (&(_, bytes, _), &(kind, at, _)) in sections.iter().zip(&placed) {
            match bytes {
                Some(b) => put(&mut out, at, b),
                None if kind == section::TILE_DATA => {
                    for (t, hot) in tiles.iter().zip(&hots) {
                        put(&mut out, at + hot.blob_offset.get() as usize, &t.blob);
                    }
                }
                None => {}
            }
        }
        let table: Vec<SectionEntry> = placed
            .iter()
            .map(|&(kind, at, len)| SectionEntry {
                kind: kind.into(),
                version: 1.into(),
                offset: (at as u64).into(),
                length: (len as u64).into(),
                checksum: out.get(at..at + len).map_or(0, hash64).into(),
            })
            .collect();

        let mut header = Header {
            magic: MAGIC,
            format_major: FORMAT_MAJOR.into(),
            format_minor: FORMAT_MINOR.into(),
            precision_layout: PRECISION_LAYOUT_VERSION.into(),
            flags: 0.into(),
            section_count: (sections.len() as u16).into(),
            up_axis: self.up_axis,
            reserved0: 0,
            tile_size_cm: (TILE_SIZE_CM as f32).into(),
            cell_size_cm: (CELL_SIZE_CM as f32).into(),
            vertex_steps_per_cm: (VERTEX_STEPS_PER_CM as u32).into(),
            metres_per_unit: self.metres_per_unit.into(),
            build_generation: self.build_generation.into(),
            input_hash: self.input_hash.into(),
            params_hash: self.params_hash.into(),
            section_table_checksum: (hash64(table.as_bytes()) as u32).into(),
            header_checksum: 0.into(),
        };
        seal_header(&mut header);
        put(&mut out, 0, header.as_bytes());
        put(&mut out, size_of::<Header>(), table.as_bytes());
        out
    }
}

/// Copies `bytes` into `out` at `at` (in range by the caller's layout).
fn put(out: &mut [u8], at: usize, bytes: &[u8]) {
    if let Some(dst) = out.get_mut(at..at + bytes.len()) {
        dst.copy_from_slice(bytes);
    }
}

/// Recomputes `header_checksum` after a header field changed.
pub fn seal_header(header: &mut Header) {
    // Every byte before the checksum field itself.
    let sealed = header
        .as_bytes()
        .split_last_chunk::<4>()
        .map_or(&[][..], |(head, _)| head);
    let sum = hash64(sealed) as u32;
    header.header_checksum.set(sum);
}
