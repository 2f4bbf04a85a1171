//! `FileView::parse` refuses every truncated prefix and every corrupted field
//! of a small writer-made file with an `Err` (never a panic), and a fuzz of
//! arbitrary and spliced bytes never panics.
//!
//! Field corruptions are re-sealed (header and section-table checksums
//! recomputed) so that they reach the validation behind the checksums.

use proptest::prelude::*;
use walksurf_format::zerocopy::{FromBytes, IntoBytes};
use walksurf_format::{
    BakeParams, BlobLayout, FORMAT_MAJOR, FileLayout, FileView, FileWriter, FormatError, Header, MAGIC, SectionEntry,
    TileHot, TileRecordInput, hash64, seal_header, section, up_axis,
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
        excluded_inputs: 0.into(),
        reserved: [0.into(); 7],
    }
}

/// A tile whose blob holds exactly the regions its counts describe (zeroed:
/// the reader does not look inside).
fn tile(
    tx: i32,
    ty: i32,
    piece_lines: u32,
    pieces_len: u32,
    blocker_lines: u32,
    blocker_count: u32,
) -> TileRecordInput {
    let layout = BlobLayout::new(piece_lines, pieces_len, blocker_lines, blocker_count).expect("small");
    TileRecordInput {
        hot: TileHot {
            tile_x: tx.into(),
            tile_y: ty.into(),
            z_origin_cm: 0.into(),
            z_quant_cm: 0.5.into(),
            blob_offset: 0.into(),
            blob_len: 0.into(),
            piece_lines: piece_lines.into(),
            piece_count: 1.into(),
            pieces_len: pieces_len.into(),
            blocker_lines: blocker_lines.into(),
            blocker_count: blocker_count.into(),
            input_hash: 0.into(),
            patch_count: 1.into(),
            flags: 0.into(),
        },
        blob: (0..layout.len()).map(|i| (i * 7) as u8).collect(),
    }
}

/// Two tiles at (0, 0) and (1, 0); ~1 KB.
fn small_file() -> Vec<u8> {
    FileWriter {
        up_axis: up_axis::Z,
        metres_per_unit: 1.0,
        build_generation: 1,
        input_hash: 2,
        params_hash: 3,
        params: params(),
        tiles: vec![tile(0, 0, 1, 48, 1, 2), tile(1, 0, 2, 40, 1, 1)],
        metadata_json: r#"{"tool":"reader validation test"}"#.to_owned(),
    }
    .to_bytes()
}

fn header(bytes: &[u8]) -> Header {
    Header::read_from_prefix(bytes).expect("header").0
}

/// Writes `h` back with a fresh section-table checksum (of whatever table
/// `h.section_count` now covers, if it is in bounds) and header checksum.
fn reseal(bytes: &mut [u8], mut h: Header) {
    let end = 64 + 32 * h.section_count.get() as usize;
    if let Some(table) = bytes.get(64..end) {
        h.section_table_checksum.set(hash64(table) as u32);
    }
    seal_header(&mut h);
    bytes[..64].copy_from_slice(h.as_bytes());
}

/// Applies `edit` to the section entry of `kind` and re-seals.
fn edit_entry(bytes: &[u8], kind: u32, edit: impl FnOnce(&mut SectionEntry)) -> Vec<u8> {
    let mut b = bytes.to_vec();
    let h = header(&b);
    let n = h.section_count.get() as usize;
    let table = <[SectionEntry]>::mut_from_bytes(&mut b[64..64 + 32 * n]).expect("table");
    let e = table
        .iter_mut()
        .find(|e| e.kind.get() == kind)
        .expect("section present");
    edit(e);
    reseal(&mut b, h);
    b
}

fn section_range(layout: &FileLayout, kind: u32) -> core::ops::Range<usize> {
    layout.sections.iter().find(|s| s.0 == kind).expect("section").1.clone()
}

/// Applies `edit` to the parameters (no checksum covers them at open).
fn edit_params(bytes: &[u8], edit: impl FnOnce(&mut BakeParams)) -> Vec<u8> {
    let mut b = bytes.to_vec();
    let layout = FileView::parse(&b).expect("valid");
    let r = section_range(&layout, section::BAKE_PARAMS);
    edit(BakeParams::mut_from_bytes(&mut b[r]).expect("params"));
    b
}

/// Applies `edit` to hot record `i`.
fn edit_hot(bytes: &[u8], i: usize, edit: impl FnOnce(&mut TileHot)) -> Vec<u8> {
    let mut b = bytes.to_vec();
    let layout = FileView::parse(&b).expect("valid");
    let hots = <[TileHot]>::mut_from_bytes(&mut b[layout.hot.clone()]).expect("hot");
    edit(&mut hots[i]);
    b
}

/// Writes the `u32` at byte `at`.
fn put_u32(bytes: &[u8], at: usize, v: u32) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
    b
}

fn parse(bytes: &[u8]) -> Result<(), FormatError> {
    FileView::parse(bytes).map(drop)
}

fn invalid(what: &'static str) -> Result<(), FormatError> {
    Err(FormatError::Invalid(what))
}

#[test]
fn fixture_is_valid() {
    let b = small_file();
    let layout = FileView::parse(&b).expect("parse");
    FileView::verify_checksums(&b, &layout).expect("checksums");
    assert_eq!(FileView::new(&b, &layout).expect("view").hot.len(), 2);
}

/// Every prefix is refused, including one that cuts only the padding after
/// the last section (the length must be that end rounded up to 64), and so is
/// a file with bytes appended.
#[test]
fn every_truncated_prefix_is_an_err() {
    let b = small_file();
    let layout = FileView::parse(&b).expect("parse");
    let data_end = layout.sections.iter().map(|s| s.1.end).max().expect("sections");
    assert!(data_end < b.len(), "the fixture should end in padding");
    for len in 0..b.len() {
        assert!(parse(&b[..len]).is_err(), "prefix of {len} of {} bytes opened", b.len());
    }
    let mut longer = b.clone();
    longer.extend_from_slice(&[0; 64]);
    assert_eq!(
        parse(&longer),
        Err(FormatError::Invalid("bytes after the last section"))
    );
    assert_eq!(parse(&b[..0]), Err(FormatError::Truncated("header")));
    assert_eq!(parse(&b[..63]), Err(FormatError::Truncated("header")));
    assert_eq!(parse(&b[..64]), Err(FormatError::Truncated("section table")));
}

#[test]
fn every_header_and_table_byte_is_checked() {
    let b = small_file();
    let n = header(&b).section_count.get() as usize;
    for i in 0..64 + 32 * n {
        let mut c = b.clone();
        c[i] ^= 0xFF;
        let want = match i {
            0..4 => FormatError::BadMagic,
            4..6 => FormatError::UnsupportedVersion {
                found: FORMAT_MAJOR ^ if i == 4 { 0xFF } else { 0xFF00 },
                supported: FORMAT_MAJOR,
            },
            6..64 => FormatError::HeaderChecksum,
            _ => FormatError::SectionTableChecksum,
        };
        assert_eq!(parse(&c), Err(want), "byte {i}");
    }
}

#[test]
fn header_fields_behind_the_checksum() {
    let b = small_file();
    let with = |edit: &dyn Fn(&mut Header)| {
        let mut c = b.clone();
        let mut h = header(&c);
        edit(&mut h);
        reseal(&mut c, h);
        parse(&c)
    };
    let bad_constants = invalid("unsupported tile size or quantisation");
    assert_eq!(with(&|h| h.tile_size_cm.set(1600.0)), bad_constants);
    assert_eq!(with(&|h| h.tile_size_cm.set(f32::NAN)), bad_constants);
    assert_eq!(with(&|h| h.vertex_steps_per_cm.set(512)), bad_constants);
    assert_eq!(
        with(&|h| h.format_major.set(FORMAT_MAJOR + 1)),
        Err(FormatError::UnsupportedVersion {
            found: FORMAT_MAJOR + 1,
            supported: FORMAT_MAJOR
        })
    );
    assert_eq!(
        with(&|h| h.section_count.set(0)),
        invalid("missing bake parameters section")
    );
    // Dropping the metadata entry leaves its bytes unreferenced at the end.
    assert_eq!(
        with(&|h| h.section_count.set(4)),
        invalid("bytes after the last section")
    );
    assert!(matches!(
        with(&|h| h.section_count.set(3)),
        Err(FormatError::Invalid(_))
    ));
    assert_eq!(
        with(&|h| h.section_count.set(u16::MAX)),
        Err(FormatError::Truncated("section table"))
    );
    // Fields a reader ignores: minor version, precision layout, flags.
    assert_eq!(with(&|h| h.format_minor.set(9)), Ok(()));
    assert_eq!(with(&|h| h.flags.set(1)), Ok(()));
    let mut c = b.clone();
    let mut h = header(&c);
    h.precision_layout.set(99);
    reseal(&mut c, h);
    assert!(!FileView::parse(&c).expect("opens").precision_known);
}

#[test]
fn section_table_entries() {
    let b = small_file();
    use section::*;
    let truncated = Err(FormatError::Truncated("section extends past the end of the file"));
    assert_eq!(
        parse(&edit_entry(&b, BAKE_PARAMS, |e| e.offset += 1)),
        invalid("section offset is not 64-byte aligned")
    );
    assert_eq!(parse(&edit_entry(&b, TILE_DATA, |e| e.offset += 64 * 1000)), truncated);
    assert_eq!(parse(&edit_entry(&b, TILE_DATA, |e| e.length += 64 * 1000)), truncated);
    assert_eq!(
        parse(&edit_entry(&b, TILE_DATA, |e| e.offset.set(u64::MAX - 63))),
        truncated
    );
    assert_eq!(parse(&edit_entry(&b, TILE_DATA, |e| e.length.set(u64::MAX))), truncated);
    assert_eq!(
        parse(&edit_entry(&b, METADATA, |e| e.kind.set(TILE_HOT))),
        invalid("duplicate section")
    );
    assert_eq!(
        parse(&edit_entry(&b, TILE_HOT, |e| e.version.set(2))),
        invalid("unsupported section version")
    );
    assert_eq!(
        parse(&edit_entry(&b, BAKE_PARAMS, |e| e.kind.set(77))),
        invalid("missing bake parameters section")
    );
    assert_eq!(
        parse(&edit_entry(&b, TILE_INDEX, |e| e.kind.set(77))),
        invalid("missing tile index section")
    );
    assert_eq!(
        parse(&edit_entry(&b, TILE_HOT, |e| e.kind.set(77))),
        invalid("missing tile hot section")
    );
    assert_eq!(
        parse(&edit_entry(&b, TILE_DATA, |e| e.kind.set(77))),
        invalid("missing tile data section")
    );
    assert_eq!(
        parse(&edit_entry(&b, BAKE_PARAMS, |e| e.length -= 4)),
        invalid("bake parameters size")
    );
    assert_eq!(
        parse(&edit_entry(&b, BAKE_PARAMS, |e| e.length += 4)),
        invalid("bake parameters size")
    );
    assert_eq!(
        parse(&edit_entry(&b, TILE_INDEX, |e| e.length.set(15))),
        Err(FormatError::Truncated("tile index"))
    );
    assert_eq!(
        parse(&edit_entry(&b, TILE_INDEX, |e| e.length -= 4)),
        invalid("tile index size")
    );
    assert_eq!(
        parse(&edit_entry(&b, TILE_HOT, |e| e.length -= 1)),
        invalid("tile hot section size")
    );
    assert_eq!(
        parse(&edit_entry(&b, TILE_HOT, |e| e.length -= 64)),
        invalid("tile index entry out of range")
    );
    assert_eq!(
        parse(&edit_entry(&b, TILE_DATA, |e| e.length -= 1)),
        invalid("tile blob outside the tile data section")
    );
}

/// FORMAT.md: unknown kinds are skipped, whatever their version, and may
/// repeat. Kind 0 is no defined kind either.
#[test]
fn unknown_section_kinds_are_skipped() {
    let b = small_file();
    for kind in [0, 6, 77, u32::MAX] {
        let c = edit_entry(&b, section::METADATA, |e| {
            e.kind.set(kind);
            e.version.set(9);
        });
        let layout = FileView::parse(&c).unwrap_or_else(|e| panic!("kind {kind}: {e}"));
        assert!(layout.metadata.is_none());
        assert!(layout.sections.iter().any(|s| s.0 == kind));
    }
    // Two entries of the same unknown kind: grow the table over the padding
    // before the first section by one zeroed (kind 0) entry, and give the
    // metadata entry kind 0 too.
    let mut c = edit_entry(&b, section::METADATA, |e| e.kind.set(0));
    let mut h = header(&c);
    let n = h.section_count.get() as usize;
    assert!(64 + 32 * (n + 1) <= FileView::parse(&b).expect("valid").sections[0].1.start);
    c[64 + 32 * n..64 + 32 * (n + 1)].fill(0);
    h.section_count.set(n as u16 + 1);
    reseal(&mut c, h);
    assert_eq!(parse(&c), Ok(()));
}

#[test]
fn bake_parameters_out_of_range() {
    let b = small_file();
    let out_of_range = invalid("bake parameters out of range");
    for v in [0.0, -1.0, f32::NAN, f32::INFINITY] {
        assert_eq!(
            parse(&edit_params(&b, |p| p.max_agent_radius_cm.set(v))),
            out_of_range,
            "{v}"
        );
        assert_eq!(
            parse(&edit_params(&b, |p| p.max_agent_half_height_cm.set(v))),
            out_of_range,
            "{v}"
        );
        assert_eq!(
            parse(&edit_params(&b, |p| p.walkable_normal_z.set(v))),
            out_of_range,
            "{v}"
        );
        assert_eq!(
            parse(&edit_params(&b, |p| p.max_sweep_len_cm.set(v))),
            out_of_range,
            "{v}"
        );
    }
    for v in [448.5, f32::NAN, f32::INFINITY] {
        assert_eq!(parse(&edit_params(&b, |p| p.tile_halo_cm.set(v))), out_of_range, "{v}");
    }
    assert_eq!(parse(&edit_params(&b, |p| p.tile_halo_cm.set(448.0))), Ok(()));
    // What the bake refuses: a walkable normal z above 1, a half height
    // below the radius, a radius beyond the halo (here 50 cm).
    assert_eq!(parse(&edit_params(&b, |p| p.walkable_normal_z.set(1.01))), out_of_range);
    assert_eq!(parse(&edit_params(&b, |p| p.walkable_normal_z.set(1.0))), Ok(()));
    assert_eq!(
        parse(&edit_params(&b, |p| p.max_agent_half_height_cm.set(41.0))),
        out_of_range
    );
    assert_eq!(
        parse(&edit_params(&b, |p| p.max_agent_half_height_cm.set(42.0))),
        Ok(())
    );
    assert_eq!(
        parse(&edit_params(&b, |p| p.max_agent_radius_cm.set(50.5))),
        out_of_range
    );
}

#[test]
fn corrupt_cert_walls_pass_nothing() {
    use walksurf_format::CertWall;
    // A low wall 30 cm from the axis of a 42 cm sphere on a flat plane:
    // it rises 1 cm, well below the sphere's surface there.
    let wall = |x0: f32, err: f32| CertWall {
        x0: x0.into(),
        y0: (-10.0).into(),
        x1: 30.0.into(),
        y1: 10.0.into(),
        err_cm: err.into(),
        rise_cm: 1.0.into(),
    };
    assert!(wall(30.0, 0.01).passes([0.0, 0.0], 42.0, 0.0, 0.001));
    assert!(!wall(f32::NAN, 0.01).passes([0.0, 0.0], 42.0, 0.0, 0.001));
    assert!(!wall(30.0, -0.01).passes([0.0, 0.0], 42.0, 0.0, 0.001));
    assert!(!wall(30.0, f32::NAN).passes_along([0.0, 0.0], [5.0, 0.0], 42.0, 0.0, 0.001));
}

#[test]
fn tile_index_slots() {
    let b = small_file();
    let layout = FileView::parse(&b).expect("valid");
    let ih = section_range(&layout, section::TILE_INDEX).start;
    let slot0 = layout.index.start;
    // Grid header: 2 × 1 tiles from (0, 0).
    assert_eq!(parse(&put_u32(&b, slot0, 2)), invalid("tile index entry out of range"));
    assert_eq!(
        parse(&put_u32(&b, slot0, u32::MAX - 1)),
        invalid("tile index entry out of range")
    );
    assert_eq!(
        parse(&put_u32(&b, slot0, 1)),
        invalid("tile record does not match its index slot")
    );
    assert_eq!(
        parse(&put_u32(&b, slot0 + 4, 0)),
        invalid("tile record does not match its index slot")
    );
    assert_eq!(
        parse(&put_u32(&b, ih, 5)),
        invalid("tile record does not match its index slot")
    );
    assert_eq!(
        parse(&put_u32(&b, ih + 4, (-1i32) as u32)),
        invalid("tile record does not match its index slot")
    );
    assert_eq!(parse(&put_u32(&b, ih + 8, 1)), invalid("tile index size"));
    assert_eq!(parse(&put_u32(&b, ih + 8, u32::MAX)), invalid("tile index size"));
    assert_eq!(parse(&put_u32(&b, ih + 12, 0)), invalid("tile index size"));
    assert_eq!(parse(&put_u32(&b, ih + 12, u32::MAX)), invalid("tile index size"));
    // A slot may be empty (its tile's record is then unreachable, not wrong).
    assert_eq!(parse(&put_u32(&b, slot0, u32::MAX)), Ok(()));
}

#[test]
fn tile_hot_records() {
    let b = small_file();
    let bad_blob = invalid("tile blob outside the tile data section");
    let exceed = invalid("tile regions exceed the tile blob");
    assert_eq!(parse(&edit_hot(&b, 1, |h| h.blob_offset += 64 * 100)), bad_blob);
    assert_eq!(parse(&edit_hot(&b, 1, |h| h.blob_offset.set(u64::MAX))), bad_blob);
    assert_eq!(parse(&edit_hot(&b, 1, |h| h.blob_len += 64 * 100)), bad_blob);
    assert_eq!(
        parse(&edit_hot(&b, 0, |h| h.blob_offset += 1)),
        invalid("tile blob is not 64-byte aligned")
    );
    assert_eq!(parse(&edit_hot(&b, 0, |h| h.blob_len -= 1)), exceed);
    assert_eq!(parse(&edit_hot(&b, 0, |h| h.piece_lines += 1)), exceed);
    assert_eq!(parse(&edit_hot(&b, 0, |h| h.pieces_len += 64)), exceed);
    assert_eq!(parse(&edit_hot(&b, 0, |h| h.blocker_lines += 1)), exceed);
    assert_eq!(parse(&edit_hot(&b, 0, |h| h.blocker_count += 1)), exceed);
    assert_eq!(parse(&edit_hot(&b, 0, |h| h.piece_lines.set(u32::MAX))), exceed);
    assert_eq!(
        parse(&edit_hot(&b, 0, |h| h.pieces_len -= 2)),
        invalid("piece region is not 4-byte aligned")
    );
    // (Powers of two from 1/64 to 131072 cm only.)
    for z in [
        0.0,
        -0.5,
        f32::NAN,
        f32::INFINITY,
        0.3,
        1.5,
        1.0 / 128.0,
        262_144.0,
        f32::MIN_POSITIVE / 2.0,
    ] {
        assert_eq!(
            parse(&edit_hot(&b, 1, |h| h.z_quant_cm.set(z))),
            invalid("tile z quantisation"),
            "{z}"
        );
    }
    for z in [1.0 / 64.0, 0.5, 1.0, 131_072.0] {
        assert_eq!(parse(&edit_hot(&b, 1, |h| h.z_quant_cm.set(z))), Ok(()), "{z}");
    }
    assert_eq!(
        parse(&edit_hot(&b, 0, |h| h.tile_x.set(7))),
        invalid("tile record does not match its index slot")
    );
    assert_eq!(
        parse(&edit_hot(&b, 1, |h| h.tile_y.set(i32::MIN))),
        invalid("tile record does not match its index slot")
    );
}

/// A view over a parsed file: touch every region of every tile and every
/// plausible piece offset (the reader hands out checked slices only).
fn walk_view(bytes: &[u8]) {
    let Ok(layout) = FileView::parse(bytes) else {
        return;
    };
    let _ = FileView::verify_checksums(bytes, &layout);
    let view = FileView::new(bytes, &layout).expect("a parsed layout fits its own bytes");
    let _ = view.metadata(&layout);
    let ih = view.index_header;
    let (x0, y0) = (ih.min_tile_x.get(), ih.min_tile_y.get());
    for ty in y0.saturating_sub(1)..=y0.saturating_add(2) {
        for tx in x0.saturating_sub(1)..=x0.saturating_add(2) {
            let _ = view.tile_hot(tx, ty);
        }
    }
    for hot in view.hot {
        let tile = view.tile(hot).expect("validated tile regions");
        for word in 0..=(tile.pieces.len() as u32 / 4 + 1) {
            if let Some((h, v)) = tile.piece(word) {
                assert_eq!(v.len(), h.vertex_count as usize);
            }
        }
        let _ = tile.origin_cm();
        let _ = tile.quant();
    }
}

/// Rewrites both checksums so that a mutation reaches past them.
fn reseal_any(bytes: &mut [u8]) {
    if bytes.len() >= 64 {
        let h = header(bytes);
        reseal(bytes, h);
    }
}

fn fuzz_config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(fuzz_config())]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..1024), reseal in any::<bool>()) {
        let mut bytes = bytes;
        if reseal && bytes.len() >= 64 {
            // Valid magic, version and checksums: reach the section table.
            bytes[..4].copy_from_slice(&MAGIC);
            bytes[4..6].copy_from_slice(&FORMAT_MAJOR.to_le_bytes());
            reseal_any(&mut bytes);
        }
        walk_view(&bytes);
    }

    #[test]
    fn spliced_files_never_panic(
        at in any::<prop::sample::Index>(),
        junk in proptest::collection::vec(any::<u8>(), 1..64),
        insert in any::<bool>(),
        reseal in any::<bool>(),
    ) {
        let mut bytes = small_file();
        let at = at.index(bytes.len());
        if insert {
            bytes.splice(at..at, junk);
        } else {
            let end = (at + junk.len()).min(bytes.len());
            bytes[at..end].copy_from_slice(&junk[..end - at]);
        }
        if reseal {
            reseal_any(&mut bytes);
        }
        walk_view(&bytes);
    }
}
