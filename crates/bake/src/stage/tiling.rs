//! Stage 4 (provisional), tiling: triangles → per-tile convex pieces and
//! blockers.
//!
//! Each walkable triangle is clipped (Sutherland–Hodgman) to the square of
//! every tile it overlaps; the clipped polygon, quantised to vertex fixed
//! point and kept strictly convex, is one piece carrying the triangle's own
//! plane. Every other triangle — and any walkable triangle that cannot be
//! represented exactly — becomes a blocker of every tile whose square plus
//! halo it overlaps. A tile's content is a pure function of the bake
//! parameters and of the set of triangles overlapping it (tile locality):
//! triangles are put in a canonical order before anything else.
//!
//! Cost: linear in (triangles × tiles each overlaps), `O(n log n)` sorting.

use crate::config::BakeConfig;
use crate::stage::classify::{Classes, TriClass};
use crate::stage::coplanar_merge::{Patches, coplanar_merge};
use crate::stage::ingest::Mesh;
use crate::tolerance::MAX_CONVEXITY_FIX_CM;
use walksurf_format::{TILE_SIZE_CM, VERTEX_STEPS_PER_CM, to_fixed};

/// One convex piece of a tile, in tile-relative fixed point.
#[derive(Clone, Debug, PartialEq)]
pub struct Piece {
    /// Local patch index within the tile.
    pub patch: u32,
    /// CCW vertices, fixed point relative to the tile origin.
    pub vertices: Vec<[i32; 2]>,
    /// The source triangle's plane `z = a·x + b·y + c`, cm relative to the
    /// tile origin (x0, y0, 0).
    pub plane: [f64; 3],
    /// Bit i: edge i → i+1 continues into more walkable surface of the same
    /// patch (a shared edge or a tile cut).
    pub interior_edges: u32,
}

/// A triangle the tile does not represent as a piece.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockerTri {
    /// World cm.
    pub vertices: [[f64; 3]; 3],
}

/// Everything one tile holds, before layout.
#[derive(Clone, Debug)]
pub struct TileContent {
    pub tile_x: i32,
    pub tile_y: i32,
    pub pieces: Vec<Piece>,
    pub blockers: Vec<BlockerTri>,
    pub patch_count: u32,
    /// Largest patch fit residual in the tile. [Units: cm]
    pub max_residual_cm: f64,
    /// Hash of the parameters and every triangle the tile was derived from.
    pub input_hash: u64,
    /// Walkable triangles that became blockers (could not be a piece).
    pub demoted_triangles: usize,
}

/// The tiles a world XY box overlaps (inclusive ranges).
fn tile_range(lo: [f64; 2], hi: [f64; 2]) -> ([i32; 2], [i32; 2]) {
    let t = |v: f64| (v / TILE_SIZE_CM).floor() as i32;
    ([t(lo[0]), t(lo[1])], [t(hi[0]), t(hi[1])])
}

/// Groups triangles by the tiles they overlap. Returns `(tile, triangles)`
/// sorted by tile `(y, x)`; triangles in canonical order.
pub fn assign_tiles(mesh: &Mesh, classes: &Classes, config: &BakeConfig) -> Vec<((i32, i32), Vec<u32>)> {
    let halo = config.tile_halo_cm();
    let mut pairs: Vec<(i32, i32, u32)> = Vec::new();
    for (t, tri) in mesh.triangles.iter().enumerate() {
        let v = tri.map(|i| mesh.vertices[i as usize]);
        let pad = if classes.class[t] == TriClass::Walkable {
            0.0
        } else {
            halo
        };
        let lo = [0, 1].map(|k| v[0][k].min(v[1][k]).min(v[2][k]) - pad);
        let hi = [0, 1].map(|k| v[0][k].max(v[1][k]).max(v[2][k]) + pad);
        let (a, b) = tile_range(lo, hi);
        for ty in a[1]..=b[1] {
            for tx in a[0]..=b[0] {
                pairs.push((ty, tx, t as u32));
            }
        }
    }
    pairs.sort_unstable();
    let mut out: Vec<((i32, i32), Vec<u32>)> = Vec::new();
    for (ty, tx, t) in pairs {
        match out.last_mut() {
            Some((k, list)) if *k == (tx, ty) => list.push(t),
            _ => out.push(((tx, ty), vec![t])),
        }
    }
    for (_, list) in &mut out {
        list.sort_by(|&a, &b| {
            canonical_key(mesh, a)
                .partial_cmp(&canonical_key(mesh, b))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        list.dedup();
    }
    out
}

/// A triangle's vertices rotated so the smallest comes first (winding kept):
/// orders triangles independently of their position in the input.
fn canonical_key(mesh: &Mesh, t: u32) -> [[f64; 3]; 3] {
    let v = mesh.triangles[t as usize].map(|i| mesh.vertices[i as usize]);
    let first = (0..3)
        .min_by(|&a, &b| v[a].partial_cmp(&v[b]).unwrap_or(std::cmp::Ordering::Equal))
        .unwrap_or(0);
    [v[first], v[(first + 1) % 3], v[(first + 2) % 3]]
}

/// Builds one tile's content from its triangles (canonical order).
pub fn build_tile(
    mesh: &Mesh,
    classes: &Classes,
    config: &BakeConfig,
    params_hash: u64,
    (tile_x, tile_y): (i32, i32),
    tris: &[u32],
) -> TileContent {
    let origin = [tile_x as f64 * TILE_SIZE_CM, tile_y as f64 * TILE_SIZE_CM];
    let halo = config.tile_halo_cm();

    let mut hasher_input = Vec::with_capacity(16 + tris.len() * 80);
    hasher_input.extend_from_slice(&params_hash.to_le_bytes());
    hasher_input.extend_from_slice(&tile_x.to_le_bytes());
    hasher_input.extend_from_slice(&tile_y.to_le_bytes());
    for &t in tris {
        for v in canonical_key(mesh, t) {
            for c in v {
                hasher_input.extend_from_slice(&c.to_bits().to_le_bytes());
            }
        }
        hasher_input.push(mesh.walkable_allowed[t as usize] as u8);
    }

    let Patches {
        patches,
        patch_of,
        interior,
    } = coplanar_merge(mesh, classes, tris, config);
    let mut pieces = Vec::new();
    let mut blockers = Vec::new();
    let mut demoted = 0;
    for (pos, &t) in tris.iter().enumerate() {
        let v = mesh.triangles[t as usize].map(|i| mesh.vertices[i as usize]);
        if classes.class[t as usize] == TriClass::Walkable {
            if let Some(piece) = clip_piece(v, origin, patch_of[pos], interior[pos]) {
                pieces.push(piece);
                continue;
            }
            // Only blockers that overlap the tile itself matter here.
            demoted += 1;
        } else {
            let lo = [0, 1].map(|k| v[0][k].min(v[1][k]).min(v[2][k]));
            let hi = [0, 1].map(|k| v[0][k].max(v[1][k]).max(v[2][k]));
            let outside = (0..2).any(|k| hi[k] < origin[k] - halo || lo[k] > origin[k] + TILE_SIZE_CM + halo);
            if outside {
                continue;
            }
        }
        blockers.push(BlockerTri { vertices: v });
    }
    TileContent {
        tile_x,
        tile_y,
        pieces,
        blockers,
        patch_count: patches.len() as u32,
        max_residual_cm: patches.iter().map(|p| p.residual_cm).fold(0.0, f64::max),
        input_hash: walksurf_format::hash64(&hasher_input),
        demoted_triangles: demoted,
    }
}

/// Edge label of a clipped polygon: an original triangle edge or a tile cut.
const CUT: u8 = 3;
/// Edge label of a merged edge that is (partly) a boundary.
const BOUNDARY: u8 = 4;

/// Clips a walkable triangle to the tile square and quantises it. `None`
/// when nothing (or nothing representable) is left inside the tile.
fn clip_piece(v: [[f64; 3]; 3], origin: [f64; 2], patch: u32, interior: u8) -> Option<Piece> {
    let rel = v.map(|p| [p[0] - origin[0], p[1] - origin[1], p[2]]);
    // The triangle's own plane, from tile-relative coordinates.
    let n = crate::stage::classify::up_normal(rel[0], rel[1], rel[2]);
    if n[2] <= 0.0 {
        return None;
    }
    let a = -n[0] / n[2];
    let b = -n[1] / n[2];
    let c = rel[0][2] - a * rel[0][0] - b * rel[0][1];

    // XY polygon, CCW, each vertex labelled with the edge that starts at it.
    let mut poly: Vec<([f64; 2], u8)> = (0..3).map(|k| ([rel[k][0], rel[k][1]], k as u8)).collect();
    let area = cross2(poly[0].0, poly[1].0, poly[2].0);
    if area < 0.0 {
        // Reverse, keeping each edge's label on the vertex it now starts at.
        poly = vec![(poly[0].0, 2), (poly[2].0, 1), (poly[1].0, 0)];
    }
    for (axis, bound, keep_below) in [
        (0, 0.0, false),
        (0, TILE_SIZE_CM, true),
        (1, 0.0, false),
        (1, TILE_SIZE_CM, true),
    ] {
        poly = clip_half_plane(&poly, axis, bound, keep_below);
        if poly.len() < 3 {
            return None;
        }
    }

    // Quantise and keep strictly convex (exact integer orientation).
    let mut q: Vec<([i32; 2], u8)> = poly
        .iter()
        .map(|(p, l)| ([to_fixed(p[0]), to_fixed(p[1])], *l))
        .collect();
    loop {
        let len = q.len();
        if len < 3 {
            return None;
        }
        let bad = (0..len).find(|&i| {
            let (p, c, nx) = (q[(i + len - 1) % len].0, q[i].0, q[(i + 1) % len].0);
            orient_i(p, c, nx) <= 0
        });
        let Some(i) = bad else { break };
        let (p, c, nx) = (q[(i + len - 1) % len].0, q[i].0, q[(i + 1) % len].0);
        if p != c && c != nx && dist_to_line_cm(p, nx, c) > MAX_CONVEXITY_FIX_CM {
            return None;
        }
        // Dropping vertex i merges edges i-1 and i: interior only if both were.
        let prev = (i + len - 1) % len;
        let both = is_interior(q[prev].1, interior) && is_interior(q[i].1, interior);
        q[prev].1 = if both { CUT } else { BOUNDARY };
        q.remove(i);
    }
    if q.len() > walksurf_format::MAX_PIECE_VERTICES {
        return None;
    }
    let mut interior_edges = 0u32;
    for (i, (_, l)) in q.iter().enumerate() {
        if is_interior(*l, interior) {
            interior_edges |= 1 << i;
        }
    }
    Some(Piece {
        patch,
        vertices: q.into_iter().map(|(p, _)| p).collect(),
        plane: [a, b, c],
        interior_edges,
    })
}

fn is_interior(label: u8, interior: u8) -> bool {
    label == CUT || (label < 3 && interior & (1 << label) != 0)
}

fn clip_half_plane(poly: &[([f64; 2], u8)], axis: usize, bound: f64, keep_below: bool) -> Vec<([f64; 2], u8)> {
    let inside = |p: [f64; 2]| if keep_below { p[axis] <= bound } else { p[axis] >= bound };
    let mut out = Vec::with_capacity(poly.len() + 1);
    for i in 0..poly.len() {
        let (prev, prev_label) = poly[(i + poly.len() - 1) % poly.len()];
        let (cur, cur_label) = poly[i];
        let cut = |p: [f64; 2], q: [f64; 2]| {
            let t = (bound - p[axis]) / (q[axis] - p[axis]);
            let mut r = [p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])];
            r[axis] = bound;
            r
        };
        match (inside(prev), inside(cur)) {
            (true, true) => out.push((cur, cur_label)),
            (true, false) => out.push((cut(prev, cur), CUT)),
            (false, true) => {
                out.push((cut(prev, cur), prev_label));
                out.push((cur, cur_label));
            }
            (false, false) => {}
        }
    }
    out
}

fn cross2(a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> f64 {
    (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
}

/// Exact orientation of three fixed-point points: > 0 for a left turn.
pub fn orient_i(a: [i32; 2], b: [i32; 2], c: [i32; 2]) -> i64 {
    let (ax, ay) = (a[0] as i64, a[1] as i64);
    (b[0] as i64 - ax) * (c[1] as i64 - ay) - (b[1] as i64 - ay) * (c[0] as i64 - ax)
}

fn dist_to_line_cm(a: [i32; 2], b: [i32; 2], p: [i32; 2]) -> f64 {
    let len = (((b[0] as i64 - a[0] as i64).pow(2) + (b[1] as i64 - a[1] as i64).pow(2)) as f64).sqrt();
    if len == 0.0 {
        return 0.0;
    }
    (orient_i(a, b, p) as f64).abs() / len / VERTEX_STEPS_PER_CM
}
