//! Writer → reader round trip on hand-made tiles: every header field, the
//! parameters, the tile index and each tile's regions come back as written;
//! an empty file round-trips; the writer is deterministic and ignores the
//! order of its input tiles.

use walksurf_format::zerocopy::IntoBytes;
use walksurf_format::{
    BVH_EMPTY, BakeParams, BlobLayout, Blocker, BvhLine, BvhNode, CELL_SIZE_CM, FORMAT_MAJOR, FORMAT_MINOR, FileView,
    FileWriter, MAGIC, NO_TILE, PRECISION_LAYOUT_VERSION, PieceHeader, SECTION_ALIGN, TILE_SIZE_CM, TileHot,
    TileRecordInput, VERTEX_STEPS_PER_CM, VertexFixed, section, up_axis,
};

fn params() -> BakeParams {
    BakeParams {
        max_agent_radius_cm: 42.0.into(),
        max_agent_half_height_cm: 96.0.into(),
        walkable_normal_z: 0.71.into(),
        collected_normal_z: 0.015.into(),
        max_sweep_len_cm: 256.0.into(),
        tile_halo_cm: 50.0.into(),
        coplanar_angle_deg: 5.0.into(),
        coplanar_dist_cm: 0.002.into(),
        excluded_inputs: 3.into(),
        reserved: [0.into(); 7],
    }
}

fn node(min: [u16; 3], max: [u16; 3], child: i32) -> BvhNode {
    BvhNode {
        min: min.map(Into::into),
        max: max.map(Into::into),
        child: child.into(),
    }
}

fn line(nodes: [BvhNode; 4]) -> BvhLine {
    BvhLine { nodes }
}

fn empty_node() -> BvhNode {
    node([0; 3], [0; 3], BVH_EMPTY)
}

/// The pieces of a hand-made tile: `(header, vertices)`.
type Pieces = Vec<(PieceHeader, Vec<VertexFixed>)>;

/// A tile as the writer takes it, built from structures (not raw bytes) so
/// that the reader's view of it can be compared field by field.
struct MadeTile {
    input: TileRecordInput,
    piece_bvh: Vec<BvhLine>,
    pieces: Pieces,
    blocker_bvh: Vec<BvhLine>,
    blockers: Vec<Blocker>,
}

fn vertex(x: i32, y: i32) -> VertexFixed {
    VertexFixed {
        x: x.into(),
        y: y.into(),
    }
}

/// Lays out a blob exactly as `BlobLayout` says: piece BVH, piece records,
/// pad to 64, blocker BVH, blockers; then `extra` trailing bytes (allowed:
/// the regions only have to fit in the blob).
fn make_tile(tx: i32, ty: i32, z_origin: i32, pieces: Pieces, blockers: Vec<Blocker>, extra: usize) -> MadeTile {
    let mut piece_bytes = Vec::new();
    let mut words = Vec::new();
    for (h, v) in &pieces {
        words.push((piece_bytes.len() / 4) as i32);
        piece_bytes.extend_from_slice(h.as_bytes());
        piece_bytes.extend_from_slice(v.as_bytes());
    }
    // One line of leaves per four items (enough for these small tiles: the
    // reader does not walk the BVH, it only hands out the lines).
    let leaves = |items: &[i32]| -> Vec<BvhLine> {
        items
            .chunks(4)
            .map(|c| {
                let mut nodes = [empty_node(); 4];
                for (slot, &item) in c.iter().enumerate() {
                    nodes[slot] = node([1, 2, 3], [100 + item as u16, 200, 300], !item);
                }
                line(nodes)
            })
            .collect()
    };
    let piece_bvh = leaves(&words);
    let blocker_bvh = leaves(&(0..blockers.len() as i32).collect::<Vec<_>>());
    let layout = BlobLayout::new(
        piece_bvh.len() as u32,
        piece_bytes.len() as u32,
        blocker_bvh.len() as u32,
        blockers.len() as u32,
    )
    .expect("small counts");
    let mut blob = vec![0u8; layout.len() + extra];
    blob[layout.piece_bvh.clone()].copy_from_slice(piece_bvh.as_bytes());
    blob[layout.pieces.clone()].copy_from_slice(&piece_bytes);
    blob[layout.blocker_bvh.clone()].copy_from_slice(blocker_bvh.as_bytes());
    blob[layout.blockers.clone()].copy_from_slice(blockers.as_bytes());
    for (i, b) in blob[layout.len()..].iter_mut().enumerate() {
        *b = 0xA0 ^ i as u8;
    }
    let hot = TileHot {
        tile_x: tx.into(),
        tile_y: ty.into(),
        z_origin_cm: z_origin.into(),
        z_quant_cm: 0.25.into(),
        // The writer fills in the offset and length: garbage here must not leak.
        blob_offset: 0xDEAD_BEEF.into(),
        blob_len: 12345.into(),
        piece_lines: (piece_bvh.len() as u32).into(),
        piece_count: (pieces.len() as u32).into(),
        pieces_len: (piece_bytes.len() as u32).into(),
        blocker_lines: (blocker_bvh.len() as u32).into(),
        blocker_count: (blockers.len() as u32).into(),
        input_hash: (0x1000 + (tx as i64 * 31 + ty as i64)).cast_unsigned().into(),
        patch_count: 1.into(),
        flags: 0.into(),
    };
    MadeTile {
        input: TileRecordInput { hot, blob },
        piece_bvh,
        pieces,
        blocker_bvh,
        blockers,
    }
}

fn piece(patch: u16, c: f32, verts: &[(i32, i32)]) -> (PieceHeader, Vec<VertexFixed>) {
    let header = PieceHeader {
        patch: patch.into(),
        vertex_count: verts.len() as u8,
        flags: 0,
        plane_a: 0.125.into(),
        plane_b: (-0.5).into(),
        plane_c: c.into(),
        z_err_cm: 0.001.into(),
        interior_edges: 0b101.into(),
    };
    (header, verts.iter().map(|&(x, y)| vertex(x, y)).collect())
}

fn blocker(seed: i32) -> Blocker {
    Blocker {
        v: [
            [seed, 2 * seed, -seed],
            [seed + 1024, 0, seed * 3],
            [0, seed + 2048, seed],
        ]
        .map(|p| p.map(Into::into)),
        flags: (seed as u32 & 3).into(),
    }
}

/// Three tiles spread over a 6 × 3 grid (so the index has holes), one of them
/// with no pieces and no blockers at all, listed out of (y, x) order.
fn tiles() -> Vec<MadeTile> {
    let k = VERTEX_STEPS_PER_CM as i32;
    vec![
        make_tile(
            2,
            -1,
            -150,
            vec![
                piece(0, 10.0, &[(0, 0), (100 * k, 0), (0, 100 * k)]),
                piece(0, 11.0, &[(100 * k, 0), (100 * k, 100 * k), (0, 100 * k)]),
            ],
            vec![blocker(7), blocker(9)],
            0,
        ),
        make_tile(
            -3,
            1,
            0,
            vec![
                piece(0, 0.0, &[(0, 0), (3200 * k, 0), (3200 * k, 3200 * k), (0, 3200 * k)]),
                piece(1, 5.0, &[(5, 5), (50, 5), (60, 30), (40, 60), (5, 40)]),
                piece(1, 6.0, &[(1, 1), (9, 1), (5, 9)]),
                piece(2, 7.0, &[(2, 1), (9, 2), (5, 9)]),
                piece(2, 8.0, &[(3, 1), (9, 3), (5, 9)]),
            ],
            vec![blocker(1)],
            70,
        ),
        make_tile(0, 0, 4000, Vec::new(), Vec::new(), 0),
    ]
}

fn writer(tiles: &[MadeTile]) -> FileWriter {
    FileWriter {
        up_axis: up_axis::Y,
        metres_per_unit: 0.01,
        build_generation: 77,
        input_hash: 0x0123_4567_89AB_CDEF,
        params_hash: 0xFEDC_BA98_7654_3210,
        params: params(),
        tiles: tiles.iter().map(|t| t.input.clone()).collect(),
        metadata_json: r#"{"tool":"roundtrip test"}"#.to_owned(),
    }
}

#[test]
fn header_params_and_sections_round_trip() {
    let made = tiles();
    let w = writer(&made);
    let bytes = w.to_bytes();
    assert_eq!(bytes.len() % SECTION_ALIGN, 0, "the file ends on a 64-byte boundary");
    let layout = FileView::parse(&bytes).expect("parse");
    FileView::verify_checksums(&bytes, &layout).expect("checksums");
    let view = FileView::new(&bytes, &layout).expect("view");

    let h = view.header;
    assert_eq!(h.magic, MAGIC);
    assert_eq!(h.format_major.get(), FORMAT_MAJOR);
    assert_eq!(h.format_minor.get(), FORMAT_MINOR);
    assert_eq!(h.precision_layout.get(), PRECISION_LAYOUT_VERSION);
    assert_eq!(h.flags.get(), 0);
    assert_eq!(h.section_count.get(), 5);
    assert_eq!(h.up_axis, up_axis::Y);
    assert_eq!(h.reserved0, 0);
    assert_eq!(h.tile_size_cm.get() as f64, TILE_SIZE_CM);
    assert_eq!(h.cell_size_cm.get() as f64, CELL_SIZE_CM);
    assert_eq!(h.vertex_steps_per_cm.get() as f64, VERTEX_STEPS_PER_CM);
    assert_eq!(h.metres_per_unit.get(), 0.01);
    assert_eq!(h.build_generation.get(), 77);
    assert_eq!(h.input_hash.get(), 0x0123_4567_89AB_CDEF);
    assert_eq!(h.params_hash.get(), 0xFEDC_BA98_7654_3210);
    assert!(layout.precision_known);
    assert_eq!(layout.header.as_bytes(), h.as_bytes());

    assert_eq!(view.params.as_bytes(), params().as_bytes());
    assert_eq!(layout.params.as_bytes(), params().as_bytes());
    assert_eq!(view.metadata(&layout), Some(r#"{"tool":"roundtrip test"}"#));

    let kinds: Vec<u32> = layout.sections.iter().map(|s| s.0).collect();
    assert_eq!(
        kinds,
        [
            section::BAKE_PARAMS,
            section::TILE_INDEX,
            section::TILE_HOT,
            section::TILE_DATA,
            section::METADATA
        ]
    );
    for (kind, range, _) in &layout.sections {
        assert_eq!(range.start % SECTION_ALIGN, 0, "section {kind} is 64-byte aligned");
    }
    assert_eq!(layout.hot.len(), 3 * size_of::<TileHot>());
    assert_eq!(view.hot.len(), 3);
}

#[test]
fn tiles_round_trip() {
    let made = tiles();
    let bytes = writer(&made).to_bytes();
    let layout = FileView::parse(&bytes).expect("parse");
    let view = FileView::new(&bytes, &layout).expect("view");

    // Grid: x in -3..=2, y in -1..=1.
    let ih = view.index_header;
    assert_eq!(
        (
            ih.min_tile_x.get(),
            ih.min_tile_y.get(),
            ih.tiles_x.get(),
            ih.tiles_y.get()
        ),
        (-3, -1, 6, 3)
    );
    assert_eq!(layout.index.len(), 6 * 3 * 4);
    let slots: Vec<u32> = bytes[layout.index.clone()]
        .chunks_exact(4)
        .map(|s| u32::from_le_bytes(s.try_into().expect("4 bytes")))
        .collect();
    assert_eq!(slots.iter().filter(|&&s| s != NO_TILE).count(), 3);

    // Hot records are sorted by (y, x) whatever the input order.
    let order: Vec<(i32, i32)> = view.hot.iter().map(|h| (h.tile_x.get(), h.tile_y.get())).collect();
    assert_eq!(order, [(2, -1), (0, 0), (-3, 1)]);

    let mut previous_end = 0;
    for t in &made {
        let want = &t.input.hot;
        let (tx, ty) = (want.tile_x.get(), want.tile_y.get());
        let hot = view.tile_hot(tx, ty).expect("tile present");
        assert_eq!((hot.tile_x.get(), hot.tile_y.get()), (tx, ty));
        assert_eq!(hot.z_origin_cm.get(), want.z_origin_cm.get());
        assert_eq!(hot.z_quant_cm.get(), want.z_quant_cm.get());
        assert_eq!(hot.piece_lines.get(), want.piece_lines.get());
        assert_eq!(hot.piece_count.get(), want.piece_count.get());
        assert_eq!(hot.pieces_len.get(), want.pieces_len.get());
        assert_eq!(hot.blocker_lines.get(), want.blocker_lines.get());
        assert_eq!(hot.blocker_count.get(), want.blocker_count.get());
        assert_eq!(hot.input_hash.get(), want.input_hash.get());
        assert_eq!(hot.patch_count.get(), want.patch_count.get());
        assert_eq!(hot.flags.get(), want.flags.get());
        // The writer placed the blob, 64-aligned, with its full length.
        assert_eq!(hot.blob_len.get() as usize, t.input.blob.len());
        assert_eq!(hot.blob_offset.get() % SECTION_ALIGN as u64, 0);
        let start = layout.data.start + hot.blob_offset.get() as usize;
        assert_eq!(&bytes[start..start + t.input.blob.len()], &t.input.blob[..]);
        previous_end = previous_end.max(start + t.input.blob.len());

        let tile = view.tile(hot).expect("tile regions");
        assert_eq!(tile.piece_bvh.as_bytes(), t.piece_bvh.as_bytes());
        assert_eq!(tile.blocker_bvh.as_bytes(), t.blocker_bvh.as_bytes());
        assert_eq!(tile.blockers.as_bytes(), t.blockers.as_bytes());
        assert_eq!(
            tile.pieces.len(),
            t.pieces.iter().map(|(_, v)| 24 + 8 * v.len()).sum::<usize>()
        );
        assert_eq!(
            tile.origin_cm(),
            [
                tx as f64 * TILE_SIZE_CM,
                ty as f64 * TILE_SIZE_CM,
                want.z_origin_cm.get() as f64
            ]
        );
        assert_eq!(tile.quant().z_quant_cm, 0.25);
        // Every piece comes back through its BVH leaf's word offset.
        let words: Vec<u32> = tile
            .piece_bvh
            .iter()
            .flat_map(|l| l.nodes.iter())
            .filter(|n| n.child.get() != BVH_EMPTY)
            .map(|n| !n.child.get() as u32)
            .collect();
        assert_eq!(words.len(), t.pieces.len());
        for (word, (h, v)) in words.iter().zip(&t.pieces) {
            let (got_h, got_v) = tile.piece(*word).expect("piece");
            assert_eq!(got_h.as_bytes(), h.as_bytes());
            assert_eq!(got_v, &v[..]);
        }
        // Past the piece region there is no piece.
        assert!(tile.piece(tile.pieces.len() as u32 / 4).is_none());
    }
    assert!(previous_end <= layout.data.end);

    // Grid positions without a tile, and positions off the grid.
    for (tx, ty) in [(-2, -1), (0, 1), (2, 1), (-3, 0)] {
        assert!(view.tile_hot(tx, ty).is_none(), "hole ({tx}, {ty})");
    }
    for (tx, ty) in [
        (-4, 0),
        (3, 0),
        (0, -2),
        (0, 2),
        (i32::MIN, i32::MIN),
        (i32::MAX, i32::MAX),
    ] {
        assert!(view.tile_hot(tx, ty).is_none(), "off grid ({tx}, {ty})");
    }
}

#[test]
fn empty_file_round_trips() {
    let w = FileWriter {
        tiles: Vec::new(),
        metadata_json: String::new(),
        ..writer(&[])
    };
    let bytes = w.to_bytes();
    let layout = FileView::parse(&bytes).expect("parse");
    FileView::verify_checksums(&bytes, &layout).expect("checksums");
    let view = FileView::new(&bytes, &layout).expect("view");
    assert_eq!(view.header.build_generation.get(), 77);
    assert_eq!(view.params.as_bytes(), params().as_bytes());
    assert!(view.hot.is_empty());
    assert!(layout.index.is_empty());
    assert!(layout.data.is_empty());
    assert_eq!(view.index_header.tiles_x.get(), 0);
    assert_eq!(view.index_header.tiles_y.get(), 0);
    assert!(view.tile_hot(0, 0).is_none());
    assert!(view.tile_hot(-1, -1).is_none());
    assert_eq!(view.metadata(&layout), Some(""));
    assert_eq!(w.to_bytes(), bytes);
}

#[test]
fn writer_is_deterministic_and_ignores_tile_order() {
    let made = tiles();
    let a = writer(&made).to_bytes();
    assert_eq!(writer(&made).to_bytes(), a, "same input, same bytes");

    // Every permutation of the three tiles gives the same bytes.
    for perm in [[0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
        let mut w = writer(&made);
        w.tiles = perm.iter().map(|&i| made[i].input.clone()).collect();
        assert_eq!(w.to_bytes(), a, "permutation {perm:?}");
    }

    // The bytes do depend on the content (the comparisons above can fail).
    let mut w = writer(&made);
    w.build_generation += 1;
    assert_ne!(w.to_bytes(), a);
    let mut w = writer(&made);
    w.tiles[0].blob[0] ^= 1;
    assert_ne!(w.to_bytes(), a);
}

/// A cell's certificates, from a region of shared lists (2.2) and from one
/// of offsets (before 2.2) holding the same lists; out-of-range and
/// corrupt entries give none.
#[test]
fn cert_cells_read_both_region_kinds() {
    use walksurf_format::zerocopy::FromZeros;
    use walksurf_format::zerocopy::little_endian::U32;
    use walksurf_format::{Cert, CertIndexHeader, TileView};
    let (mut old_hot, mut new_hot) = (TileHot::new_zeroed(), TileHot::new_zeroed());
    old_hot.flags.set(walksurf_format::tile_flags::HAS_CERTS);
    new_hot.flags.set(walksurf_format::tile_flags::HAS_CERT_LISTS);
    let certs: Vec<Cert> = (0..4)
        .map(|i| {
            let mut c = Cert::new_zeroed();
            c.k.set(i as f32);
            c
        })
        .collect();
    // Cells (2, 3) .. (4, 3): records [0, 1], none, [2, 3]; and in the
    // shared form the third cell reuses the first's list.
    let index = CertIndexHeader {
        x0: 2.into(),
        y0: 3.into(),
        w: 3.into(),
        h: 1.into(),
    };
    let view = |cells: &[u32], lists: bool, certs: &'static [Cert]| {
        let hot = if lists { new_hot } else { old_hot };
        let cells: Vec<U32> = cells.iter().map(|&c| c.into()).collect();
        let cells: &'static [U32] = Box::leak(cells.into_boxed_slice());
        TileView {
            hot: Box::leak(Box::new(hot)),
            piece_bvh: &[],
            pieces: &[],
            blocker_bvh: &[],
            blockers: &[],
            cert_index: index,
            cert_cells: cells,
            certs,
            cert_walls: &[],
            patches: &[],
        }
    };
    let certs: &'static [Cert] = Box::leak(certs.into_boxed_slice());
    let ks = |v: &TileView, i: usize, j: usize| v.certs_in_cell(i, j).iter().map(|c| c.k.get()).collect::<Vec<_>>();
    let old = view(&[0, 2, 2, 4], false, certs);
    assert_eq!(ks(&old, 2, 3), [0.0, 1.0]);
    assert!(ks(&old, 3, 3).is_empty());
    assert_eq!(ks(&old, 4, 3), [2.0, 3.0]);
    let shared = view(&[2 << 24, 0, 2 << 24, 2], true, &certs[..2]);
    assert_eq!(ks(&shared, 2, 3), [0.0, 1.0]);
    assert!(ks(&shared, 3, 3).is_empty());
    assert_eq!(ks(&shared, 4, 3), [0.0, 1.0]);
    // Outside the rectangle, past the records, a reversed range: none.
    for v in [&old, &shared] {
        assert!(ks(v, 1, 3).is_empty() && ks(v, 5, 3).is_empty() && ks(v, 2, 2).is_empty());
    }
    let bad = view(&[(3 << 24) | 1, 255 << 24, 1 << 23, 2], true, &certs[..2]);
    assert!(ks(&bad, 2, 3).is_empty() && ks(&bad, 3, 3).is_empty() && ks(&bad, 4, 3).is_empty());
    let reversed = view(&[2, 0, 2, 4], false, certs);
    assert!(ks(&reversed, 2, 3).is_empty());
}
