//! Incremental bakes, determinism and atomic writes.
//!
//! The levels are generated: `testdata/dungeon.obj` copied 3 × 3 side by
//! side (9 × 12 tile grid, ~91 000 triangles) plus small boxes ("nodes",
//! 12 triangles each) that the tests move, delete and add. Meshes are
//! welded here the way ingest welds them (exact positions), so deleting a
//! node renumbers every vertex after it — which must not matter.
//!
//! Timing of incremental vs full bakes (not asserted, machines vary):
//! `cargo test --release -p walksurf-bake --test incremental -- --ignored --nocapture`.

#[allow(dead_code)]
mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;
use walksurf_bake::{
    BakeConfig, BakeOutput, Mesh, NotReusable, Reporter, Silent, bake_file, bake_mesh, bake_mesh_incremental,
    write_atomic,
};
use walksurf_format::zerocopy::IntoBytes;
use walksurf_format::{FileView, Header, TILE_SIZE_CM, hash64, seal_header};

const DUNGEON: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/dungeon.obj");

/// The golden hash: `hash64` of `testdata/dungeon.obj` baked with
/// `BakeConfig::default()` and build generation 1.
///
/// It changes only with an intentional change of the file format or of what
/// the pipeline bakes (or of the crate version, which is part of the
/// parameters hash). To update it: make sure the change is intended, bump
/// `walksurf_bake::stage::tiling::TILE_PIPELINE_VERSION` if tile bytes
/// changed (so that incremental bakes do not reuse tiles of the old
/// pipeline), run this test, and copy the value its failure message prints.
/// Never update it because a thread count or a second run gave another value:
/// that is a determinism bug.
const GOLDEN_DUNGEON_HASH: u64 = 0x8eae_4cd5_e6b1_0c96;

fn config_with_threads(threads: usize) -> BakeConfig {
    BakeConfig {
        threads,
        ..BakeConfig::default()
    }
}

/// Records which tiles a bake built (rather than reused).
#[derive(Default)]
struct BakedTiles(Mutex<BTreeSet<(i32, i32)>>);

impl Reporter for BakedTiles {
    fn tile_baked(&self, tile: (i32, i32)) {
        self.0.lock().unwrap().insert(tile);
    }
}

impl BakedTiles {
    fn take(&self) -> BTreeSet<(i32, i32)> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

// ------------------------------------------------------------------ levels

type Tri = [[f64; 3]; 3];

/// A named group of triangles, like a glTF node.
#[derive(Clone, Debug)]
struct Node {
    name: String,
    tris: Vec<Tri>,
}

/// Nodes in order; [`Level::mesh`] welds them into one mesh.
#[derive(Clone, Debug, Default)]
struct Level {
    nodes: Vec<Node>,
}

impl Level {
    /// Welds exact positions (as ingest does) in node order.
    fn mesh(&self) -> Mesh {
        let mut ids: BTreeMap<[u64; 3], u32> = BTreeMap::new();
        let mut mesh = Mesh {
            vertices: Vec::new(),
            triangles: Vec::new(),
            walkable_allowed: Vec::new(),
        };
        for node in &self.nodes {
            for tri in &node.tris {
                let t = tri.map(|p| {
                    let key = p.map(|c| if c == 0.0 { 0.0f64 } else { c }.to_bits());
                    *ids.entry(key).or_insert_with(|| {
                        mesh.vertices.push(p);
                        (mesh.vertices.len() - 1) as u32
                    })
                });
                mesh.triangles.push(t);
                mesh.walkable_allowed.push(true);
            }
        }
        mesh
    }

    fn index(&self, name: &str) -> usize {
        self.nodes
            .iter()
            .position(|n| n.name == name)
            .unwrap_or_else(|| panic!("no node {name}"))
    }

    fn node(&self, name: &str) -> &Node {
        &self.nodes[self.index(name)]
    }

    fn translate(&mut self, name: &str, d: [f64; 3]) {
        let i = self.index(name);
        for t in &mut self.nodes[i].tris {
            for p in t.iter_mut() {
                for k in 0..3 {
                    p[k] += d[k];
                }
            }
        }
    }

    fn remove(&mut self, name: &str) -> Node {
        let i = self.index(name);
        self.nodes.remove(i)
    }
}

/// An axis-aligned box (12 triangles): walkable top and bottom, walls.
fn box_node(name: &str, centre: [f64; 3], half: [f64; 3]) -> Node {
    let tris = common::cuboid_quads(centre, half)
        .into_iter()
        .flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]])
        .collect();
    Node {
        name: name.to_owned(),
        tris,
    }
}

/// The dungeon's triangles in Z-up cm, as ingest reads them.
fn dungeon_tris() -> &'static Vec<Tri> {
    static TRIS: OnceLock<Vec<Tri>> = OnceLock::new();
    TRIS.get_or_init(|| {
        let (mesh, _) = walksurf_bake::stage::ingest::ingest(Path::new(DUNGEON), &BakeConfig::default())
            .expect("ingest the dungeon");
        mesh.triangles
            .iter()
            .map(|t| t.map(|i| mesh.vertices[i as usize]))
            .collect()
    })
}

/// Tile steps between dungeon copies: the dungeon spans 3 × 4 tiles.
const COPY_STEP_TILES: [i32; 2] = [3, 4];

/// The big level: 3 × 3 dungeons (tiles x −1..=7, y −1..=10) and boxes:
/// `corner` straddles the corner of tiles (3..=4, 4..=5); `crate` sits in
/// tile (0, 0); `lonely` is alone in tile (−3, 0).
fn big_level() -> Level {
    let mut level = Level::default();
    for i in 0..3 {
        for j in 0..3 {
            let d = [
                (i * COPY_STEP_TILES[0]) as f64 * TILE_SIZE_CM,
                (j * COPY_STEP_TILES[1]) as f64 * TILE_SIZE_CM,
            ];
            level.nodes.push(Node {
                name: format!("dungeon_{i}_{j}"),
                tris: dungeon_tris()
                    .iter()
                    .map(|t| t.map(|p| [p[0] + d[0], p[1] + d[1], p[2]]))
                    .collect(),
            });
        }
    }
    let t = TILE_SIZE_CM;
    level.nodes.push(box_node(
        "corner",
        [4.0 * t - 10.0, 5.0 * t - 10.0, 100.0],
        [30.0, 30.0, 30.0],
    ));
    level
        .nodes
        .push(box_node("crate", [0.5 * t, 0.5 * t, 50.0], [40.0, 40.0, 40.0]));
    level
        .nodes
        .push(box_node("lonely", [-2.5 * t, 0.5 * t, 0.0], [50.0, 50.0, 50.0]));
    level
}

/// Tiles whose triangle lists a change of `tris` alters: every triangle
/// counts for the tiles its XY box plus the halo overlaps (for boxes, the
/// walls reach that far, so the walkable tops add nothing).
fn tiles_touched(tris: &[Tri], config: &BakeConfig) -> BTreeSet<(i32, i32)> {
    let halo = config.tile_halo_cm();
    let tile = |v: f64| (v / TILE_SIZE_CM).floor() as i32;
    let mut out = BTreeSet::new();
    for t in tris {
        let lo = [0, 1].map(|k| t[0][k].min(t[1][k]).min(t[2][k]) - halo);
        let hi = [0, 1].map(|k| t[0][k].max(t[1][k]).max(t[2][k]) + halo);
        for x in tile(lo[0])..=tile(hi[0]) {
            for y in tile(lo[1])..=tile(hi[1]) {
                out.insert((x, y));
            }
        }
    }
    out
}

/// Every tile of a baked file.
fn tiles_of(bytes: &[u8]) -> BTreeSet<(i32, i32)> {
    let layout = FileView::parse(bytes).expect("baked file parses");
    let view = FileView::new(bytes, &layout).expect("view");
    view.hot.iter().map(|h| (h.tile_x.get(), h.tile_y.get())).collect()
}

/// The big level baked (generation 1, default threads), built once.
fn big_baseline() -> &'static (Level, BakeOutput) {
    static BASE: OnceLock<(Level, BakeOutput)> = OnceLock::new();
    BASE.get_or_init(|| {
        let level = big_level();
        let out = bake_mesh(&level.mesh(), &BakeConfig::default(), 1, &Silent).expect("bake the big level");
        (level, out)
    })
}

/// Bakes `level` incrementally over `previous` and fully, both with
/// generation 2; asserts equal bytes; returns the incremental output and
/// the tiles it baked.
fn rebake(level: &Level, previous: &[u8]) -> (BakeOutput, BTreeSet<(i32, i32)>) {
    let config = BakeConfig::default();
    let mesh = level.mesh();
    let baked = BakedTiles::default();
    let inc = bake_mesh_incremental(&mesh, &config, 2, Ok(previous), &baked).expect("incremental bake");
    let full = bake_mesh(&mesh, &config, 2, &Silent).expect("full bake");
    assert!(inc.report.incremental, "{:?}", inc.report.full_bake_reason);
    assert!(
        inc.bytes == full.bytes,
        "incremental bytes differ from a full bake of the same input"
    );
    (inc, baked.take())
}

// ------------------------------------------------------------------ tests

#[test]
fn the_big_level_spans_at_least_8_by_8_tiles() {
    let (_, base) = big_baseline();
    let tiles = tiles_of(&base.bytes);
    let span = |k: usize| {
        let v: Vec<i32> = tiles.iter().map(|t| if k == 0 { t.0 } else { t.1 }).collect();
        v.iter().max().unwrap() - v.iter().min().unwrap() + 1
    };
    assert!(span(0) >= 8 && span(1) >= 8, "{} × {} tiles", span(0), span(1));
    assert!(tiles.len() >= 64, "{} tiles", tiles.len());
}

#[test]
fn tile_input_hash_is_the_stored_one() {
    let config = BakeConfig::default();
    let (mesh, _) = walksurf_bake::stage::ingest::ingest(Path::new(DUNGEON), &config).unwrap();
    let assigned = walksurf_bake::stage::tiling::assign_tiles(&mesh, &config);
    let bytes = bake_mesh(&mesh, &config, 1, &Silent).unwrap().bytes;
    let layout = FileView::parse(&bytes).unwrap();
    let view = FileView::new(&bytes, &layout).unwrap();
    assert_eq!(assigned.len(), view.hot.len());
    for (key, tris) in &assigned {
        let hash = walksurf_bake::stage::tiling::tile_input_hash(&mesh, config.params_hash(), *key, tris);
        let hot = view.tile_hot(key.0, key.1).expect("tile in the file");
        assert_eq!(hot.input_hash.get(), hash, "tile {key:?}");
    }
}

#[test]
fn an_unchanged_level_reuses_every_tile() {
    let (level, base) = big_baseline();
    let (out, baked) = rebake(level, &base.bytes);
    assert!(baked.is_empty(), "rebaked {baked:?}");
    let r = &out.report;
    assert_eq!((r.rebaked_tiles, r.reused_tiles, r.removed_tiles), (0, r.tiles, 0));
    // Everything the file holds is reported as a full bake reports it.
    let b = &base.report;
    assert_eq!(
        (
            r.tiles,
            r.patches,
            r.pieces,
            r.piece_vertices,
            r.blockers,
            r.demoted_triangles,
            r.bytes
        ),
        (
            b.tiles,
            b.patches,
            b.pieces,
            b.piece_vertices,
            b.blockers,
            b.demoted_triangles,
            b.bytes
        )
    );
    // Only the generation differs from the previous file.
    assert_eq!(without_generation(&out.bytes), without_generation(&base.bytes));
}

/// The acceptance test of the issue: move one node, delete one, add one.
#[test]
fn editing_a_level_rebakes_exactly_the_touched_tiles() {
    let config = BakeConfig::default();
    let (level, base) = big_baseline();
    let mut edited = level.clone();
    let t = TILE_SIZE_CM;
    let moved_from = edited.node("crate").tris.clone();
    edited.translate("crate", [t, 0.25 * t, 20.0]);
    let moved_to = edited.node("crate").tris.clone();
    let deleted = edited.remove("lonely").tris;
    let added = box_node("new", [10.5 * t, 0.5 * t, 0.0], [50.0, 50.0, 80.0]);
    edited.nodes.insert(3, added.clone());

    let (out, baked) = rebake(&edited, &base.bytes);

    let old_tiles = tiles_of(&base.bytes);
    let new_tiles = tiles_of(&out.bytes);
    let mut touched = tiles_touched(&moved_from, &config);
    touched.extend(tiles_touched(&moved_to, &config));
    touched.extend(tiles_touched(&deleted, &config));
    touched.extend(tiles_touched(&added.tris, &config));
    let expected: BTreeSet<_> = touched.intersection(&new_tiles).copied().collect();
    assert_eq!(baked, expected, "rebaked tiles");
    // Sanity of the fixture: the move crosses a tile border, the deleted box
    // was alone in its tile, the added one is alone in a new tile.
    assert_eq!(expected, BTreeSet::from([(0, 0), (1, 0), (10, 0)]));
    let removed: BTreeSet<_> = old_tiles.difference(&new_tiles).copied().collect();
    assert_eq!(removed, BTreeSet::from([(-3, 0)]));
    let r = &out.report;
    assert_eq!(r.rebaked_tiles, expected.len());
    assert_eq!(r.removed_tiles, removed.len());
    assert_eq!(r.reused_tiles, new_tiles.len() - expected.len());
}

#[test]
fn moving_one_small_node_rebakes_at_most_the_four_tiles_its_halo_touches() {
    let config = BakeConfig::default();
    let (level, base) = big_baseline();
    let mut edited = level.clone();
    let before = tiles_touched(&edited.node("corner").tris, &config);
    edited.translate("corner", [15.0, -12.0, 5.0]);
    let after = tiles_touched(&edited.node("corner").tris, &config);
    let (out, baked) = rebake(&edited, &base.bytes);
    let expected: BTreeSet<_> = before.union(&after).copied().collect();
    assert_eq!(expected, BTreeSet::from([(3, 4), (3, 5), (4, 4), (4, 5)]));
    assert_eq!(baked, expected);
    assert_eq!(out.report.rebaked_tiles, 4);
    assert_eq!(out.report.removed_tiles, 0);
}

#[test]
fn a_rotated_triangle_is_a_changed_input() {
    // A piece's vertex order follows the triangle's stored order, so the same
    // triangle stored from another vertex must rebake its tile.
    let (level, base) = big_baseline();
    let mut edited = level.clone();
    let i = edited.index("crate");
    let top = &mut edited.nodes[i].tris[2];
    *top = [top[1], top[2], top[0]];
    let (_, baked) = rebake(&edited, &base.bytes);
    assert_eq!(baked, BTreeSet::from([(0, 0)]));
}

#[test]
fn a_previous_file_that_cannot_be_reused_means_a_full_bake() {
    let config = BakeConfig::default();
    let (level, base) = big_baseline();
    let mesh = level.mesh();
    let full = bake_mesh(&mesh, &config, 7, &Silent).unwrap();
    let mut flipped_data = base.bytes.clone();
    let data = FileView::parse(&base.bytes).unwrap().data;
    flipped_data[data.start + data.len() / 2] ^= 0x10;
    let other_params = bake_mesh(
        &mesh,
        &BakeConfig {
            max_agent_radius_cm: 30.0,
            ..config.clone()
        },
        1,
        &Silent,
    )
    .unwrap()
    .bytes;
    let mut other_minor = base.bytes.clone();
    set_header(&mut other_minor, |h| h.format_minor.set(h.format_minor.get() + 1));
    let other_minor_reason = format!(
        "format {}.{}",
        walksurf_format::FORMAT_MAJOR,
        walksurf_format::FORMAT_MINOR + 1
    );
    // (what, the previous output, a word of the reason)
    type Case<'a> = (&'a str, Result<&'a [u8], NotReusable>, &'a str);
    let cases: [Case; 7] = [
        ("none", Err(NotReusable::NoPrevious), "no previous output"),
        ("--full", Err(NotReusable::FullRequested), "full bake was requested"),
        (
            "not a walksurf file",
            Ok(b"previous output"),
            "not a valid walksurf file",
        ),
        ("truncated", Ok(&base.bytes[..base.bytes.len() / 2]), "not a valid"),
        ("flipped tile data byte", Ok(&flipped_data), "checksum"),
        ("other parameters", Ok(&other_params), "other parameters"),
        ("other minor version", Ok(&other_minor), &other_minor_reason),
    ];
    for (what, previous, reason) in cases {
        let out = bake_mesh_incremental(&mesh, &config, 7, previous, &Silent).unwrap();
        let r = &out.report;
        assert!(!r.incremental, "{what}");
        let got = r.full_bake_reason.as_deref().unwrap_or("");
        assert!(
            got.contains(reason),
            "{what}: reason {got:?} does not mention {reason:?}"
        );
        assert_eq!(
            (r.rebaked_tiles, r.reused_tiles, r.removed_tiles),
            (r.tiles, 0, 0),
            "{what}"
        );
        assert!(out.bytes == full.bytes, "{what}: bytes differ from a full bake");
    }
}

/// The same bytes for 1, 2 and 4 threads, the default, and a second run —
/// and the pinned golden hash.
#[test]
fn golden_dungeon_bytes_are_pinned_and_independent_of_threads() {
    let bake = |threads: usize| {
        let out = bake_file(Path::new(DUNGEON), &config_with_threads(threads), 1, &Silent).expect("bake the dungeon");
        hash64(&out.bytes)
    };
    let hashes: Vec<(String, u64)> = [1, 2, 4, 0, 1]
        .iter()
        .enumerate()
        .map(|(run, &n)| (format!("run {run}: threads {n}"), bake(n)))
        .collect();
    let first = hashes[0].1;
    for (what, h) in &hashes {
        assert_eq!(*h, first, "{what} baked other bytes: {hashes:x?}");
    }
    assert_eq!(
        first, GOLDEN_DUNGEON_HASH,
        "the dungeon's baked bytes changed: hash {first:#018x}. If (and only if) the file format or \
         the pipeline changed on purpose, bump TILE_PIPELINE_VERSION when tile bytes changed and pin \
         the new value in GOLDEN_DUNGEON_HASH (see its comment)"
    );
}

#[test]
fn big_level_bytes_are_independent_of_threads() {
    let (level, base) = big_baseline();
    let one = bake_mesh(&level.mesh(), &config_with_threads(1), 1, &Silent).unwrap();
    assert!(
        one.bytes == base.bytes,
        "1 thread and the default baked different bytes"
    );
}

// ------------------------------------------------------------------ atomic writes

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("walksurf-incremental-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn write_atomic_replaces_the_file_and_leaves_nothing_else() {
    let dir = temp_dir("replace");
    let path = dir.join("level.wsurf");
    write_atomic(&path, b"first").unwrap();
    write_atomic(&path, b"second").unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"second");
    assert_eq!(files_in(&dir), ["level.wsurf"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_failed_write_atomic_leaves_the_target_and_no_temporary_file() {
    let dir = temp_dir("fail");
    // The target is a non-empty directory: the rename fails.
    let path = dir.join("level.wsurf");
    std::fs::create_dir(&path).unwrap();
    std::fs::write(path.join("keep"), b"old").unwrap();
    assert!(write_atomic(&path, b"new").is_err());
    assert_eq!(files_in(&dir), ["level.wsurf"]);
    assert_eq!(std::fs::read(path.join("keep")).unwrap(), b"old");
    // The directory does not exist: nothing can be written.
    assert!(write_atomic(&dir.join("missing").join("level.wsurf"), b"new").is_err());
    assert_eq!(files_in(&dir), ["level.wsurf"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

// ------------------------------------------------------------------ timing

/// Incremental vs full bake of the big level after moving one small node.
#[test]
#[ignore = "timing; run with --release --ignored --nocapture"]
fn timing_incremental_vs_full() {
    let (level, base) = big_baseline();
    let mut edited = level.clone();
    edited.translate("corner", [15.0, -12.0, 5.0]);
    let mesh = edited.mesh();
    let best = |f: &dyn Fn() -> BakeOutput| {
        let mut best = f64::INFINITY;
        let mut out = None;
        for _ in 0..7 {
            let t = Instant::now();
            let o = f();
            let ms = t.elapsed().as_secs_f64() * 1e3;
            if ms < best {
                (best, out) = (ms, Some(o));
            }
        }
        (best, out.unwrap())
    };
    for threads in [0, 1] {
        let config = config_with_threads(threads);
        let (full_ms, full) = best(&|| bake_mesh(&mesh, &config, 2, &Silent).unwrap());
        let (inc_ms, inc) = best(&|| bake_mesh_incremental(&mesh, &config, 2, Ok(&base.bytes), &Silent).unwrap());
        assert!(inc.bytes == full.bytes);
        println!(
            "threads {threads} (0 = one per core): {} triangles, {} tiles; moved one box: {} rebaked, {} reused",
            inc.report.triangles, inc.report.tiles, inc.report.rebaked_tiles, inc.report.reused_tiles
        );
        let stages = |o: &BakeOutput| {
            let v: Vec<String> = o.report.ms.iter().map(|(s, ms)| format!("{s} {ms:.1}")).collect();
            v.join(", ")
        };
        println!("  full bake        {full_ms:8.1} ms (best of 7: {})", stages(&full));
        println!("  incremental bake {inc_ms:8.1} ms (best of 7: {})", stages(&inc));
        println!("  ratio            {:8.1} %", 100.0 * inc_ms / full_ms);
    }
}

// ------------------------------------------------------------------ helpers

/// The file with its generation set to 0 (and the header resealed).
fn without_generation(bytes: &[u8]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    set_header(&mut b, |h| h.build_generation.set(0));
    b
}

fn set_header(bytes: &mut [u8], f: impl FnOnce(&mut Header)) {
    use walksurf_format::zerocopy::FromBytes;
    let (mut h, _) = Header::read_from_prefix(bytes).unwrap();
    f(&mut h);
    seal_header(&mut h);
    bytes[..64].copy_from_slice(h.as_bytes());
}
