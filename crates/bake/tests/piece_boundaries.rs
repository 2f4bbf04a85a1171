//! Edge alignment of the walkable pieces (issue 3's "a polygon edge *is*
//! the true edge, within quantisation"), on generated levels: a floor with
//! a hole and a stair.
//!
//! walksurf's pieces are made of the walkable triangles themselves (merged
//! convex, clipped only to each tile's square plus halo), so:
//!
//! * every piece edge that is not shared with another piece of its surface
//!   (`interior_edges`) and is not a tile clip lies on a true boundary edge
//!   of the walkable surface (an edge of one walkable triangle only):
//!   both its ends within the vertex quantisation step;
//! * every true boundary vertex in a tile's square (hole corners, the ends
//!   of each stair nosing) is a piece vertex of that tile;
//! * the pieces of a tile cover exactly the walkable area in its square.

mod common;

use walksurf_bake::{BakeConfig, Mesh, Silent, bake_mesh};
use walksurf_format::{FileView, TILE_SIZE_CM, TileView, VERTEX_STEPS_PER_CM, from_fixed};

/// Half the diagonal of one fixed-point step, and some slack for the
/// `f64` arithmetic of these checks. [Units: cm]
const STEP_CM: f64 = 0.75 / VERTEX_STEPS_PER_CM;

/// A level and its true walkable boundary.
struct Level {
    mesh: Mesh,
    /// The walkable triangles.
    walkable: Vec<[[f64; 3]; 3]>,
    /// Edges used by exactly one walkable triangle (XY).
    boundary: Vec<[[f64; 2]; 2]>,
    /// Walkable area (cm², horizontal projection).
    area: f64,
}

fn level(vertices: Vec<[f64; 3]>, triangles: Vec<[u32; 3]>) -> Level {
    let walkable = |t: &[u32; 3]| {
        let [a, b, c] = t.map(|i| vertices[i as usize]);
        let (u, v) = (
            [b[0] - a[0], b[1] - a[1], b[2] - a[2]],
            [c[0] - a[0], c[1] - a[1], c[2] - a[2]],
        );
        let n = [
            u[1] * v[2] - u[2] * v[1],
            u[2] * v[0] - u[0] * v[2],
            u[0] * v[1] - u[1] * v[0],
        ];
        let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        n[2].abs() >= 0.71 * len
    };
    let mut uses: std::collections::BTreeMap<(u32, u32), usize> = std::collections::BTreeMap::new();
    let mut area = 0.0;
    for t in triangles.iter().filter(|t| walkable(t)) {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            *uses.entry((a.min(b), a.max(b))).or_default() += 1;
        }
        let [a, b, c] = t.map(|i| vertices[i as usize]);
        area += ((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])).abs() / 2.0;
    }
    let boundary = uses
        .into_iter()
        .filter(|&(_, n)| n == 1)
        .map(|((a, b), _)| [a, b].map(|i| [vertices[i as usize][0], vertices[i as usize][1]]))
        .collect();
    let walkable = triangles
        .iter()
        .filter(|t| walkable(t))
        .map(|t| t.map(|i| vertices[i as usize]))
        .collect();
    Level {
        mesh: common::mesh(vertices, triangles),
        walkable,
        boundary,
        area,
    }
}

/// A square floor `[0, 1000.3]²` at z = 10 with a hole
/// `[400.3, 600.7] × [350.1, 650.9]`, as eight triangles.
fn floor_with_hole() -> Level {
    let (o, h0x, h1x, h0y, h1y, e) = (0.0, 400.3, 600.7, 350.1, 650.9, 1000.3);
    let p = |x: f64, y: f64| [x, y, 10.0];
    let vertices = vec![
        p(o, o),
        p(e, o),
        p(e, e),
        p(o, e),
        p(h0x, h0y),
        p(h1x, h0y),
        p(h1x, h1y),
        p(h0x, h1y),
    ];
    // Outer ring 0-1-2-3, hole 4-5-6-7: four trapezoids.
    let quads = [[0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]];
    let triangles = quads.iter().flat_map(|&[a, b, c, d]| [[a, b, c], [a, c, d]]).collect();
    level(vertices, triangles)
}

/// Five steps going up along x (tread 30.1 cm, riser 17.3 cm, width
/// 200.5 cm, from x = 100.2), each a tread quad and a riser quad.
fn stair() -> Level {
    let (x0, tread, riser, y0, y1) = (100.2, 30.1, 17.3, 50.4, 250.9);
    let steps = (0..5).flat_map(|s| {
        let (xa, xb, z) = (x0 + s as f64 * tread, x0 + (s + 1) as f64 * tread, s as f64 * riser);
        [
            [[xa, y0, z], [xb, y0, z], [xb, y1, z], [xa, y1, z]],
            // The riser up to the next tread, at its far edge.
            [[xb, y0, z], [xb, y0, z + riser], [xb, y1, z + riser], [xb, y1, z]],
        ]
    });
    let (vertices, triangles) = common::quads(steps);
    level(vertices, triangles)
}

fn dist2_to_segment(p: [f64; 2], [a, b]: [[f64; 2]; 2]) -> f64 {
    let (ex, ey) = (b[0] - a[0], b[1] - a[1]);
    let l2 = ex * ex + ey * ey;
    let s = if l2 > 0.0 {
        (((p[0] - a[0]) * ex + (p[1] - a[1]) * ey) / l2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (dx, dy) = (a[0] + s * ex - p[0], a[1] + s * ey - p[1]);
    dx * dx + dy * dy
}

/// A piece as read back: its polygon (world XY), interior-edge mask, and
/// plane `z = a·x + b·y + c` (world cm).
struct ReadPiece {
    poly: Vec<[f64; 2]>,
    interior: u32,
    plane: [f64; 3],
}

impl ReadPiece {
    fn z(&self, p: [f64; 2]) -> f64 {
        self.plane[0] * p[0] + self.plane[1] * p[1] + self.plane[2]
    }
}

/// The pieces of a tile.
fn pieces(tile: &TileView<'_>) -> Vec<ReadPiece> {
    let origin = tile.origin_cm();
    let mut out = Vec::new();
    let mut word = 0u32;
    while (word as usize) * 4 < tile.pieces.len() {
        let (header, verts) = tile.piece(word).expect("a readable piece");
        let poly = verts
            .iter()
            .map(|v| [origin[0] + from_fixed(v.x.get()), origin[1] + from_fixed(v.y.get())])
            .collect();
        let [a, b, c] = [header.plane_a, header.plane_b, header.plane_c].map(|v| v.get() as f64);
        out.push(ReadPiece {
            poly,
            interior: header.interior_edges.get(),
            plane: [a, b, origin[2] + c - a * origin[0] - b * origin[1]],
        });
        word += ((size_of_val(header) + size_of_val(verts)) / 4) as u32;
    }
    out
}

/// How far across an interior edge its surface is looked for. [Units: cm]
const ACROSS_CM: f64 = 0.05;

/// Whether the XY point lies in the triangle's footprint, the triangle
/// there within 0.01 cm of height `z`.
fn holds(t: &[[f64; 3]; 3], p: [f64; 2], z: f64) -> bool {
    let cross = |a: [f64; 3], b: [f64; 3]| (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]);
    let d = [cross(t[0], t[1]), cross(t[1], t[2]), cross(t[2], t[0])];
    if !(d.iter().all(|&v| v >= 0.0) || d.iter().all(|&v| v <= 0.0)) {
        return false;
    }
    // Barycentric height.
    let area = d[0] + d[1] + d[2];
    area != 0.0 && ((d[1] * t[0][2] + d[2] * t[1][2] + d[0] * t[2][2]) / area - z).abs() <= 0.01
}

/// Checks the pieces of `lv`'s bake; at least `min_interior` points across
/// interior edges must have been looked at.
fn check(name: &str, lv: &Level, min_interior: usize) {
    let baked = bake_mesh(&lv.mesh, &BakeConfig::default(), 1, &Silent).unwrap_or_else(|e| panic!("{name}: {e}"));
    let layout = FileView::parse(&baked.bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    let view = FileView::new(&baked.bytes, &layout).expect("a view of the file");
    let halo = view.params.tile_halo_cm.get() as f64;
    let mut corners_found = 0;
    let mut interior_checked = 0;
    let mut tiles_area = 0.0;
    for hot in view.hot {
        let tile = view.tile(hot).expect("a readable tile");
        let o = tile.origin_cm();
        let (lo, hi) = ([o[0], o[1]], [o[0] + TILE_SIZE_CM, o[1] + TILE_SIZE_CM]);
        // Where the tile's pieces are clipped: its square grown by the halo.
        let on_clip = |p: [f64; 2]| {
            (0..2).any(|k| (p[k] - (lo[k] - halo)).abs() <= STEP_CM || (p[k] - (hi[k] + halo)).abs() <= STEP_CM)
        };
        let pieces = pieces(&tile);
        for piece in &pieces {
            let (poly, interior) = (&piece.poly, piece.interior);
            let n = poly.len();
            for i in 0..n {
                let (a, b) = (poly[i], poly[(i + 1) % n]);
                if interior & (1 << i) != 0 {
                    // The surface goes on across it: just outside the edge
                    // (right of it, the polygon being CCW) lies a walkable
                    // triangle at the piece's height.
                    let (ex, ey) = (b[0] - a[0], b[1] - a[1]);
                    let l = ex.hypot(ey);
                    for s in [0.05, 0.3, 0.5, 0.7, 0.95] {
                        let p = [a[0] + s * ex + ACROSS_CM * ey / l, a[1] + s * ey - ACROSS_CM * ex / l];
                        assert!(
                            lv.walkable.iter().any(|t| holds(t, p, piece.z(p))),
                            "{name}: tile {o:?}: interior edge {a:?} -> {b:?} has no walkable surface across it at {p:?}"
                        );
                        interior_checked += 1;
                    }
                    continue;
                }
                if on_clip(a) && on_clip(b) {
                    continue;
                }
                for p in [a, b] {
                    let d = lv
                        .boundary
                        .iter()
                        .map(|&s| dist2_to_segment(p, s))
                        .fold(f64::INFINITY, f64::min)
                        .sqrt();
                    assert!(
                        d <= STEP_CM,
                        "{name}: tile {o:?}: boundary edge {a:?} -> {b:?} has an end {d} cm off the true boundary"
                    );
                }
            }
        }
        // Every true boundary vertex in the square is a piece vertex.
        for p in lv.boundary.iter().flatten() {
            if (0..2).all(|k| p[k] > lo[k] && p[k] < hi[k]) {
                let d = pieces
                    .iter()
                    .flat_map(|piece| piece.poly.iter())
                    .map(|v| (v[0] - p[0]).hypot(v[1] - p[1]))
                    .fold(f64::INFINITY, f64::min);
                assert!(
                    d <= STEP_CM,
                    "{name}: boundary vertex {p:?} is {d} cm from every piece vertex"
                );
                corners_found += 1;
            }
        }
        // The pieces clipped to the square: the walkable area there.
        for piece in &pieces {
            tiles_area += clipped_area(&piece.poly, lo, hi);
        }
    }
    assert!(corners_found > 0, "{name}: no boundary vertex was checked");
    assert!(
        interior_checked >= min_interior,
        "{name}: {interior_checked} interior edge points checked"
    );
    assert!(
        (tiles_area - lv.area).abs() <= 1e-3 * lv.area.max(1.0),
        "{name}: pieces cover {tiles_area} cm², the walkable area is {}",
        lv.area
    );
}

/// Area of a polygon (CCW or CW) clipped to the box `[lo, hi]`.
fn clipped_area(poly: &[[f64; 2]], lo: [f64; 2], hi: [f64; 2]) -> f64 {
    let mut p = poly.to_vec();
    for (axis, bound, below) in [(0, lo[0], false), (0, hi[0], true), (1, lo[1], false), (1, hi[1], true)] {
        let inside = |v: [f64; 2]| if below { v[axis] <= bound } else { v[axis] >= bound };
        let mut out = Vec::new();
        for i in 0..p.len() {
            let (a, b) = (p[(i + p.len() - 1) % p.len()], p[i]);
            if inside(a) != inside(b) {
                let t = (bound - a[axis]) / (b[axis] - a[axis]);
                out.push([a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])]);
            }
            if inside(b) {
                out.push(b);
            }
        }
        p = out;
        if p.len() < 3 {
            return 0.0;
        }
    }
    let n = p.len();
    ((0..n)
        .map(|i| p[i][0] * p[(i + 1) % n][1] - p[(i + 1) % n][0] * p[i][1])
        .sum::<f64>()
        / 2.0)
        .abs()
}

#[test]
fn a_hole_in_a_floor_is_cut_along_its_true_edges() {
    let lv = floor_with_hole();
    assert!((lv.area - (1000.3f64.powi(2) - 200.4 * 300.8)).abs() < 1e-6);
    check("floor with a hole", &lv, 0);
}

#[test]
fn stair_treads_end_on_their_true_nosings() {
    let lv = stair();
    check("stair", &lv, 0);
}

/// A floor `[0, 1000.3]²` at z = 10 under a low slab (its top walkable,
/// 100 cm up over `[300.3, 600.7] × [200.1, 500.9]`): the floor is cut
/// along cell lines where the slab takes its headroom, and the cut's edges
/// (T-junctions included) are interior to the floor's surface.
#[test]
fn cut_edges_are_interior_to_their_surface() {
    let (e, z) = (1000.3, 10.0);
    let (x0, x1, y0, y1, top) = (300.3, 600.7, 200.1, 500.9, 110.0);
    let (vertices, triangles) = common::quads([
        [[0.0, 0.0, z], [e, 0.0, z], [e, e, z], [0.0, e, z]],
        [[x0, y0, top], [x1, y0, top], [x1, y1, top], [x0, y1, top]],
    ]);
    let lv = level(vertices, triangles);
    check("floor under a slab", &lv, 40);
}
