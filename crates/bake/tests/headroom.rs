//! The headroom cut (issue 3's grid stage) on generated levels: a floor
//! under a low tunnel loses exactly the cells under the tunnel roof to a
//! headroom-cut patch; the same floor under a roof higher than the agent
//! keeps all of it; every patch's rings are valid and hold its pieces'
//! area. Checked from the baked file, against the generated geometry.

mod common;

use walksurf_bake::stage::contour::{check_rings, rings};
use walksurf_bake::stage::convex_partition::area2;
use walksurf_bake::{BakeConfig, Mesh, Silent, bake_mesh};
use walksurf_format::{CELL_SIZE_CM, FileView, VERTEX_STEPS_PER_CM, from_fixed, patch_flags};

/// The floor: `[0, 2000.4] × [0, 600.2]` at z = 0.
const FLOOR: [f64; 2] = [2000.4, 600.2];
/// The tunnel roof spans x in `[800.5, 1200.3]` (all of y).
const ROOF_X: [f64; 2] = [800.5, 1200.3];

/// A floor with a 20 cm roof slab whose underside is at `roof_z` over
/// [`ROOF_X`] (a tunnel without walls).
fn tunnel(roof_z: f64) -> Mesh {
    let [fx, fy] = FLOOR;
    let [r0, r1] = ROOF_X;
    let floor = [[0.0, 0.0, 0.0], [fx, 0.0, 0.0], [fx, fy, 0.0], [0.0, fy, 0.0]];
    // Roof underside and top, 20 cm thick.
    let roof =
        [roof_z, roof_z + 20.0].map(|z| [[r0, -50.0, z], [r1, -50.0, z], [r1, fy + 50.0, z], [r0, fy + 50.0, z]]);
    let (vertices, triangles) = common::quads([floor].into_iter().chain(roof));
    common::mesh(vertices, triangles)
}

/// One tile's pieces: (world XY polygon in cm, fixed-point polygon, patch
/// flags).
type TilePieces = Vec<(Vec<[f64; 2]>, Vec<[i32; 2]>, u32, u16)>;

/// A tile's floor pieces, its origin (world cm), and its patch table's
/// `(edge_dev_cm, cut_dev_cm)` by patch.
type FloorTile = (TilePieces, [f64; 2], Vec<(f64, f64)>);

fn floor_tiles(bytes: &[u8]) -> Vec<FloorTile> {
    let layout = FileView::parse(bytes).expect("a valid file");
    let view = FileView::new(bytes, &layout).expect("a view");
    let pieces = floor_pieces(bytes);
    view.hot
        .iter()
        .zip(pieces)
        .map(|(hot, p)| {
            let tile = view.tile(hot).expect("a readable tile");
            let o = tile.origin_cm();
            let devs = tile
                .patches
                .iter()
                .map(|r| (r.edge_dev_cm.get() as f64, r.cut_dev_cm.get() as f64))
                .collect();
            (p, [o[0], o[1]], devs)
        })
        .collect()
}

fn floor_pieces(bytes: &[u8]) -> Vec<TilePieces> {
    let layout = FileView::parse(bytes).expect("a valid file");
    let view = FileView::new(bytes, &layout).expect("a view");
    let mut out = Vec::new();
    for hot in view.hot {
        let tile = view.tile(hot).expect("a readable tile");
        let o = tile.origin_cm();
        let mut pieces = Vec::new();
        let mut word = 0u32;
        while (word as usize) * 4 < tile.pieces.len() {
            let (h, verts) = tile.piece(word).expect("a readable piece");
            word += ((size_of_val(h) + size_of_val(verts)) / 4) as u32;
            // The floor only (z = 0; the roof's top is a floor too).
            if h.plane_c.get() as f64 + o[2] > 1.0 {
                continue;
            }
            let record = tile
                .patches
                .get(h.patch.get() as usize)
                .expect("every piece has a patch record");
            let fixed: Vec<[i32; 2]> = verts.iter().map(|v| [v.x.get(), v.y.get()]).collect();
            let world = fixed
                .iter()
                .map(|v| [o[0] + from_fixed(v[0]), o[1] + from_fixed(v[1])])
                .collect();
            pieces.push((world, fixed, record.flags.get(), h.patch.get()));
        }
        out.push(pieces);
    }
    out
}

#[test]
fn a_low_tunnel_cuts_the_floor_under_it_along_cell_lines() {
    let config = BakeConfig::default();
    // The agent is 192 cm tall; the roof's underside is at 150 cm.
    let baked = bake_mesh(&tunnel(150.0), &config, 1, &Silent).expect("bake");
    let cell = CELL_SIZE_CM;
    // Blocked cells are those the roof lies over: x in [800, 1220).
    let (cut_lo, cut_hi) = (
        (ROOF_X[0] / cell).floor() * cell,
        ((ROOF_X[1] / cell).floor() + 1.0) * cell,
    );
    let step = 1.0 / VERTEX_STEPS_PER_CM;
    let (mut walk_area, mut cut_area) = (0.0, 0.0);
    for tile in floor_pieces(&baked.bytes) {
        for (world, fixed, flags, _) in &tile {
            let area = area2(fixed) as f64 / 2.0 / (VERTEX_STEPS_PER_CM * VERTEX_STEPS_PER_CM);
            let (lo, hi) = (
                world.iter().map(|v| v[0]).fold(f64::INFINITY, f64::min),
                world.iter().map(|v| v[0]).fold(f64::NEG_INFINITY, f64::max),
            );
            if flags & patch_flags::HEADROOM_CUT != 0 {
                // A cut piece lies within the blocked cells.
                assert!(
                    lo >= cut_lo - step && hi <= cut_hi + step,
                    "cut piece over x {lo}..{hi}"
                );
                cut_area += area;
            } else {
                // A walkable piece stays out of them: conservative.
                assert!(
                    hi <= cut_lo + step || lo >= cut_hi - step,
                    "walkable piece over x {lo}..{hi}"
                );
                walk_area += area;
            }
        }
    }
    // Tiles overlap in their halos: compare the shares, not the sums.
    let width = FLOOR[0];
    let want_cut = (cut_hi - cut_lo) / width;
    let got_cut = cut_area / (cut_area + walk_area);
    assert!(
        (got_cut - want_cut).abs() < 0.05,
        "cut share {got_cut:.3}, the blocked cells are {want_cut:.3} of the floor"
    );
    assert!(cut_area > 0.0 && walk_area > 0.0);
}

#[test]
fn a_roof_higher_than_the_agent_cuts_no_floor() {
    let baked = bake_mesh(&tunnel(193.0), &BakeConfig::default(), 1, &Silent).expect("bake");
    for tile in floor_pieces(&baked.bytes) {
        for (world, _, flags, _) in &tile {
            assert_eq!(flags & patch_flags::HEADROOM_CUT, 0, "piece {world:?} was cut");
        }
    }
    // A smaller agent's bake: the same roof at 150 cm is high enough.
    let low = BakeConfig {
        max_agent_half_height_cm: 70.0,
        ..BakeConfig::default()
    };
    let baked = bake_mesh(&tunnel(150.0), &low, 1, &Silent).expect("bake");
    for tile in floor_pieces(&baked.bytes) {
        for (world, _, flags, _) in &tile {
            assert_eq!(flags & patch_flags::HEADROOM_CUT, 0, "piece {world:?} was cut");
        }
    }
    // (The roof's underside is cut: its own top lies 20 cm above it.)
    assert!(baked.report.cut_pieces > 0);
}

#[test]
fn every_patch_has_valid_rings_holding_its_pieces_area_within_its_deviation() {
    let config = BakeConfig::default();
    let baked = bake_mesh(&tunnel(150.0), &config, 1, &Silent).expect("bake");
    let halo = config.tile_halo_cm();
    let step = 0.75 / VERTEX_STEPS_PER_CM;
    let mut patches_checked = 0;
    for (tile, origin, devs) in floor_tiles(&baked.bytes) {
        let mut ids: Vec<u16> = tile.iter().map(|p| p.3).collect();
        ids.sort_unstable();
        ids.dedup();
        for id in ids {
            let polys: Vec<&Vec<[i32; 2]>> = tile.iter().filter(|p| p.3 == id).map(|p| &p.1).collect();
            let rs = rings(&polys);
            assert_eq!(check_rings(&rs), Ok(()), "patch {id}");
            let ring_area: i128 = rs.iter().map(|r| r.area2).sum();
            let piece_area: i128 = polys.iter().map(|p| area2(p)).sum();
            assert_eq!(ring_area, piece_area, "patch {id}");
            assert!(rs.iter().all(|r| r.area2 > 0), "no holes here: {rs:?}");
            // Each ring vertex: on the floor's true edge (within the
            // patch's edge deviation), on the tile's clip square, or on a
            // cut line within the patch's cut deviation of where the roof
            // truly ends.
            let (edge_dev, cut_dev) = devs[id as usize];
            for r in &rs {
                for v in &r.vertices {
                    let [x, y] = [origin[0] + from_fixed(v[0]), origin[1] + from_fixed(v[1])];
                    let true_edge = [x, x - FLOOR[0], y, y - FLOOR[1]]
                        .iter()
                        .map(|d| d.abs())
                        .fold(f64::INFINITY, f64::min);
                    let clip = [x - (origin[0] - halo), x - (origin[0] + 3200.0 + halo)]
                        .iter()
                        .map(|d| d.abs())
                        .fold(f64::INFINITY, f64::min);
                    let cut = ROOF_X.iter().map(|r| (x - r).abs()).fold(f64::INFINITY, f64::min);
                    let on_cell_line = (x / CELL_SIZE_CM).fract() == 0.0;
                    assert!(
                        true_edge <= edge_dev.max(step) || clip <= step || (on_cell_line && cut <= cut_dev),
                        "patch {id}: ring vertex ({x}, {y}) is on no true edge (dev {edge_dev}), clip line or \
                         cut line within {cut_dev} cm"
                    );
                }
            }
            patches_checked += 1;
        }
    }
    assert!(patches_checked >= 2);
}
