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

        // Tile data section and hot records.
        let mut data = Vec::new();
        let mut hots = Vec::with_capacity(tiles.len());
        for t in &tiles {
            let offset = align_up(data.len(), SECTION_ALIGN);
            data.resize(offset, 0);
            data.extend_from_slice(&t.blob);
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

        let sections: [(u32, &[u8]); 5] = [
            (section::BAKE_PARAMS, self.params.as_bytes()),
            (section::TILE_INDEX, &index),
            (section::TILE_HOT, hots.as_bytes()),
            (section::TILE_DATA, &data),
            (section::METADATA, self.metadata_json.as_bytes()),
        ];

        let table_len = sections.len() * size_of::<SectionEntry>();
        let mut offset = align_up(size_of::<Header>() + table_len, SECTION_ALIGN);
        let mut table = Vec::with_capacity(sections.len());
        for (kind, bytes) in &sections {
            table.push(SectionEntry {
                kind: (*kind).into(),
                version: 1.into(),
                offset: (offset as u64).into(),
                length: (bytes.len() as u64).into(),
                checksum: hash64(bytes).into(),
            });
            offset = align_up(offset + bytes.len(), SECTION_ALIGN);
        }

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

        let mut out = Vec::with_capacity(offset);
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(table.as_bytes());
        for ((_, bytes), entry) in sections.iter().zip(&table) {
            out.resize(entry.offset.get() as usize, 0);
            out.extend_from_slice(bytes);
        }
        out.resize(align_up(out.len(), SECTION_ALIGN), 0);
        out
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
