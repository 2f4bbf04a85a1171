//! Tiling: triangles → per-tile convex pieces and blockers, then the
//! headroom grid ([`crate::stage::grid`]) and cut
//! ([`crate::stage::contour`]) over the pieces.
//!
//! Walkable triangles are grouped into flat groups (one plane each, see
//! `coplanar_merge::flat_groups`); each triangle is clipped
//! (Sutherland–Hodgman) to the square plus halo of every tile it overlaps
//! and quantised to a strictly convex fixed-point polygon; each group's
//! polygons are merged into convex pieces (`convex_partition`) carrying the
//! group's plane and its fit residual. Every other triangle — and any
//! walkable triangle that cannot be represented exactly — becomes a blocker
//! of every tile whose square plus halo it overlaps. So a query whose reach
//! stays within the halo of its tile needs that one tile only. A tile's
//! content is a pure function of the bake parameters and of the set of
//! triangles overlapping it (tile locality).
//!
//! Cost: linear in (triangles × tiles each overlaps), `O(n log n)` sorting.

use crate::config::BakeConfig;
use crate::geom::{least_side, position_key};
use crate::stage::classify::{Classes, TriClass};
use crate::stage::contour::{PatchInfo, headroom_cut};
use crate::stage::convex_partition::merge_convex;
use crate::stage::coplanar_merge::{Seams, flat_groups, rough_seams};
use crate::stage::grid::headroom_masks;
use crate::stage::hidden::mark_hidden;
use crate::stage::ingest::{Mesh, area2};
use rayon::prelude::*;
use walksurf_format::{TILE_SIZE_CM, to_fixed};

/// One convex piece of a tile, in tile-relative fixed point.
#[derive(Clone, Debug, PartialEq)]
pub struct Piece {
    /// The tile's patch (a flat group's walkable or headroom-cut part; the
    /// flat group itself before the cut).
    pub patch: u32,
    /// CCW vertices, fixed point relative to the tile origin.
    pub vertices: Vec<[i32; 2]>,
    /// The flat group's plane `z = a·x + b·y + c`, cm relative to the tile
    /// origin (x0, y0, 0).
    pub plane: [f64; 3],
    /// Bound on |plane z − true surface z| over the piece (the group's fit
    /// residual). [Units: cm]
    pub plane_err_cm: f64,
    /// Bit i: edge i → i+1 lies wholly along edges, reversed, of other
    /// pieces of the same flat group, and the group has no seam
    /// ([`rough_seams`]): its surface goes on across the edge. The contour
    /// stage marks the covered edges; [`build_tile_hashed`] clears the bits
    /// of a group with a seam. Queries rely on it.
    pub interior_edges: u32,
    /// Some vertex is a rounded crossing of the headroom cut with an edge.
    pub cut_crossings: bool,
}

/// A triangle the tile does not represent as a piece.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockerTri {
    /// World cm.
    pub vertices: [[f64; 3]; 3],
    /// `walksurf_format::blocker_flags`.
    pub flags: u32,
}

/// Everything one tile holds, before layout.
#[derive(Clone, Debug)]
pub struct TileContent {
    pub tile_x: i32,
    pub tile_y: i32,
    pub pieces: Vec<Piece>,
    pub blockers: Vec<BlockerTri>,
    /// Indexed by [`Piece::patch`].
    pub patches: Vec<PatchInfo>,
    /// Pieces split by the headroom cut, and pieces that could not be split
    /// (kept whole, cut).
    pub split_pieces: usize,
    pub unsplittable_pieces: usize,
    /// Largest patch fit residual in the tile. [Units: cm]
    pub max_residual_cm: f64,
    /// Hash of the parameters and every triangle the tile was derived from.
    pub input_hash: u64,
    /// Blockers holding walkable triangles that could not be a piece (a
    /// triangle reaching far beyond the tile may be stored as several).
    pub demoted_triangles: usize,
    /// Largest agent radius the tile's certificates must hold for. [Units: cm]
    pub reach_cm: f64,
    /// Largest agent's full height. [Units: cm]
    pub agent_height_cm: f64,
    /// Where a flat group's triangles meet without being one surface
    /// ([`rough_seams`]): the four ends of each, world cm.
    pub seams: Vec<[[f64; 3]; 4]>,
}

/// The tiles a world XY box overlaps (inclusive ranges).
fn tile_range(lo: [f64; 2], hi: [f64; 2]) -> ([i32; 2], [i32; 2]) {
    let t = |v: f64| (v / TILE_SIZE_CM).floor() as i32;
    ([t(lo[0]), t(lo[1])], [t(hi[0]), t(hi[1])])
}

/// Groups triangles by the tiles they overlap, then puts each tile's
/// triangles in [`canonical_order`]. Returns `(tile, triangles)` sorted by
/// tile `(y, x)`.
pub fn assign_tiles(mesh: &Mesh, config: &BakeConfig) -> Vec<((i32, i32), Vec<u32>)> {
    let mut out = group_tiles(mesh, config);
    out.par_iter_mut().for_each(|(_, list)| canonical_order(mesh, list));
    out
}

/// Groups triangles by the tiles they overlap. Returns `(tile, triangles)`
/// sorted by tile `(y, x)`; triangles in input order (not yet canonical).
///
/// A counting sort over the tile grid when the grid is small next to the
/// number of (tile, triangle) pairs, a comparison sort otherwise: linear
/// in the pairs either way but for the sort's `log`.
pub fn group_tiles(mesh: &Mesh, config: &BakeConfig) -> Vec<((i32, i32), Vec<u32>)> {
    let halo = config.tile_halo_cm();
    let ranges: Vec<([i32; 2], [i32; 2])> = mesh
        .triangles
        .par_iter()
        .map(|tri| {
            let v = tri.map(|i| mesh.vertices[i as usize]);
            // Every triangle, walkable or not, belongs to every tile whose
            // square plus halo it overlaps: a query reads one tile.
            let pad = halo;
            let lo = [0, 1].map(|k| v[0][k].min(v[1][k]).min(v[2][k]) - pad);
            let hi = [0, 1].map(|k| v[0][k].max(v[1][k]).max(v[2][k]) + pad);
            tile_range(lo, hi)
        })
        .collect();
    let (mut lo, mut hi) = ([i64::MAX; 2], [i64::MIN; 2]);
    let mut pair_count: u64 = 0;
    for (a, b) in &ranges {
        for k in 0..2 {
            lo[k] = lo[k].min(a[k] as i64);
            hi[k] = hi[k].max(b[k] as i64);
        }
        pair_count += (b[0] as i64 - a[0] as i64 + 1) as u64 * (b[1] as i64 - a[1] as i64 + 1) as u64;
    }
    if ranges.is_empty() {
        return Vec::new();
    }
    let width = (hi[0] - lo[0] + 1) as u64;
    let slots = width.saturating_mul((hi[1] - lo[1] + 1) as u64);
    if slots > pair_count.max(1 << 16).saturating_mul(4) {
        return group_tiles_sorted(&ranges);
    }
    // Counting sort: slot = row-major (y outer) position in the grid, so
    // slots come in (y, x) order and each slot's triangles in input order.
    let slot = |tx: i32, ty: i32| ((ty as i64 - lo[1]) as u64 * width + (tx as i64 - lo[0]) as u64) as usize;
    let mut start = vec![0u32; slots as usize + 1];
    for (a, b) in &ranges {
        for ty in a[1]..=b[1] {
            for tx in a[0]..=b[0] {
                start[slot(tx, ty) + 1] += 1;
            }
        }
    }
    for i in 1..start.len() {
        start[i] += start[i - 1];
    }
    let mut fill = start.clone();
    let mut items = vec![0u32; pair_count as usize];
    for (t, (a, b)) in ranges.iter().enumerate() {
        for ty in a[1]..=b[1] {
            for tx in a[0]..=b[0] {
                let s = slot(tx, ty);
                items[fill[s] as usize] = t as u32;
                fill[s] += 1;
            }
        }
    }
    let mut out = Vec::new();
    for s in 0..slots as usize {
        let (a, b) = (start[s] as usize, start[s + 1] as usize);
        if a < b {
            let tx = (lo[0] + (s as u64 % width) as i64) as i32;
            let ty = (lo[1] + (s as u64 / width) as i64) as i32;
            out.push(((tx, ty), items[a..b].to_vec()));
        }
    }
    out
}

/// [`group_tiles`] by sorting (tile, triangle) pairs: for sparse grids.
fn group_tiles_sorted(ranges: &[([i32; 2], [i32; 2])]) -> Vec<((i32, i32), Vec<u32>)> {
    let mut pairs: Vec<(i32, i32, u32)> = Vec::new();
    for (t, (a, b)) in ranges.iter().enumerate() {
        for ty in a[1]..=b[1] {
            for tx in a[0]..=b[0] {
                pairs.push((ty, tx, t as u32));
            }
        }
    }
    pairs.par_sort_unstable();
    let mut out: Vec<((i32, i32), Vec<u32>)> = Vec::new();
    for (ty, tx, t) in pairs {
        match out.last_mut() {
            Some((k, list)) if *k == (tx, ty) => list.push(t),
            _ => out.push(((tx, ty), vec![t])),
        }
    }
    out
}

/// Sorts a tile's triangles by content, so that the order does not depend
/// on where they are in the input: by vertex positions rotated so the
/// smallest comes first (winding kept), then by the stored rotation and the
/// walkable flag. Only identical triangles keep their input order.
pub fn canonical_order(mesh: &Mesh, list: &mut Vec<u32>) {
    // Sort positions, not the (large) keys themselves.
    let keys: Vec<CanonicalKey> = list.iter().map(|&t| canonical_key(mesh, t)).collect();
    let mut order: Vec<usize> = (0..list.len()).collect();
    order.sort_unstable_by(|&a, &b| keys[a].cmp(&keys[b]).then(list[a].cmp(&list[b])));
    *list = order.into_iter().map(|i| list[i]).collect();
    list.dedup();
}

/// Vertex coordinates (as [`position_key`]) from the smallest vertex on,
/// the stored index of that vertex, the walkable flag.
type CanonicalKey = ([u64; 9], u8, bool);

fn canonical_key(mesh: &Mesh, t: u32) -> CanonicalKey {
    let v = mesh.triangles[t as usize].map(|i| position_key(mesh.vertices[i as usize]));
    let first = (0..3).min_by_key(|&k| v[k]).unwrap_or(0);
    let key = std::array::from_fn(|i| v[(first + i / 3) % 3][i % 3]);
    (key, first as u8, mesh.walkable_allowed[t as usize])
}

/// Version of the tile pipeline, mixed into every tile's input hash. Bump it
/// with every change to what a tile's bytes are for a given input (the
/// golden hash in `crates/bake/tests/incremental.rs` changes then too), so
/// that an incremental bake never reuses a tile baked by older code.
pub const TILE_PIPELINE_VERSION: u32 = 40;

/// The hash of one triangle as a tile's input: its vertices in stored order
/// (a piece's vertex order and its plane's rounding follow it) and its
/// walkable flag.
pub fn triangle_hash(mesh: &Mesh, t: u32) -> u64 {
    let mut bytes = [0u8; 73];
    for (k, i) in mesh.triangles[t as usize].into_iter().enumerate() {
        for (c, v) in mesh.vertices[i as usize].into_iter().enumerate() {
            let at = 8 * (3 * k + c);
            bytes[at..at + 8].copy_from_slice(&v.to_bits().to_le_bytes());
        }
    }
    bytes[72] = mesh.walkable_allowed[t as usize] as u8;
    walksurf_format::hash64(&bytes)
}

/// The input hash of one tile (stored in its hot record): a hash of the bake
/// parameters, [`TILE_PIPELINE_VERSION`], the tile's coordinates and the
/// multiset of its triangles' [`triangle_hash`]es — everything
/// [`build_tile`] reads, since the [`canonical_order`] of the triangles is a
/// function of their content. Computable without building the tile, or
/// sorting its triangles, so an incremental bake can compare it with the
/// previous file's. `tris` in any order.
pub fn tile_input_hash(mesh: &Mesh, params_hash: u64, key: (i32, i32), tris: &[u32]) -> u64 {
    tile_input_hash_with(|t| triangle_hash(mesh, t), params_hash, key, tris)
}

/// [`tile_input_hash`] with the triangle hashes from `triangle_hash`
/// (e.g. computed once for the whole mesh).
pub fn tile_input_hash_with(
    triangle_hash: impl Fn(u32) -> u64,
    params_hash: u64,
    (tile_x, tile_y): (i32, i32),
    tris: &[u32],
) -> u64 {
    let mut hashes: Vec<u64> = tris.iter().map(|&t| triangle_hash(t)).collect();
    hashes.sort_unstable();
    let mut bytes = Vec::with_capacity(20 + 8 * hashes.len());
    bytes.extend_from_slice(&params_hash.to_le_bytes());
    bytes.extend_from_slice(&TILE_PIPELINE_VERSION.to_le_bytes());
    bytes.extend_from_slice(&tile_x.to_le_bytes());
    bytes.extend_from_slice(&tile_y.to_le_bytes());
    for h in hashes {
        bytes.extend_from_slice(&h.to_le_bytes());
    }
    walksurf_format::hash64(&bytes)
}

/// Builds one tile's content from its triangles (canonical order).
pub fn build_tile(
    mesh: &Mesh,
    classes: &Classes,
    config: &BakeConfig,
    params_hash: u64,
    key: (i32, i32),
    tris: &[u32],
) -> TileContent {
    let input_hash = tile_input_hash(mesh, params_hash, key, tris);
    build_tile_hashed(mesh, classes, config, input_hash, key, tris)
}

/// [`build_tile`] with the tile's [`tile_input_hash`] already computed.
pub fn build_tile_hashed(
    mesh: &Mesh,
    classes: &Classes,
    config: &BakeConfig,
    input_hash: u64,
    (tile_x, tile_y): (i32, i32),
    tris: &[u32],
) -> TileContent {
    let origin = [tile_x as f64 * TILE_SIZE_CM, tile_y as f64 * TILE_SIZE_CM];
    let halo = config.tile_halo_cm();

    let flats = flat_groups(mesh, classes, tris, config);
    // (Seams matter where the tile's pieces are: its square and halo.)
    let square = (origin.map(|o| o - halo), origin.map(|o| o + TILE_SIZE_CM + halo));
    let group_seams: Vec<Seams> = flats
        .patches
        .iter()
        .map(|g| rough_seams(mesh, tris, g, square))
        .collect();
    let mut pieces = Vec::new();
    let mut blockers = Vec::new();
    let mut demoted = 0;
    let flags_of = |t: u32| match classes.class[t as usize] {
        TriClass::Walkable => walksurf_format::blocker_flags::DEMOTED_WALKABLE,
        TriClass::Blocking => walksurf_format::blocker_flags::VERTICAL,
        TriClass::Collected => 0,
    };
    // Walkable surface: each flat group's triangles, clipped and quantised,
    // merged into convex pieces on the group's plane.
    let mut clip_scratch = [Vec::new(), Vec::new()];
    for (group_index, group) in flats.patches.iter().enumerate() {
        let mut polys = Vec::with_capacity(group.triangles.len());
        for &pos in &group.triangles {
            let t = tris[pos as usize];
            let v = mesh.triangles[t as usize].map(|i| mesh.vertices[i as usize]);
            // (Its box may reach the halo where the triangle does not.)
            if !meets_square(v, origin, halo) {
                continue;
            }
            // A triangle along a seam is kept exact, as a blocker: merged
            // into a piece on the group's plane, the step or crack there
            // (and the edge a capsule rests on) would be lost.
            let on_seam = group_seams[group_index].triangles.binary_search(&pos).is_ok();
            let clipped = if on_seam {
                None
            } else {
                clip_polygon(v, origin, halo, &mut clip_scratch)
            };
            match clipped {
                Some(p) => polys.push(p),
                None => {
                    // (Counted as stored, as a reused tile's are: a far
                    // triangle may be stored clipped, as several.)
                    let before = blockers.len();
                    push_blocker(&mut blockers, v, flags_of(t), origin);
                    demoted += blockers.len() - before;
                }
            }
        }
        let [a, b, c] = group.plane;
        let plane = [a, b, c + a * origin[0] + b * origin[1]];
        for (vertices, interior_edges) in merge_convex(polys) {
            pieces.push(Piece {
                patch: group_index as u32,
                vertices,
                plane,
                plane_err_cm: group.residual_cm,
                interior_edges,
                cut_crossings: false,
            });
        }
    }
    // Everything else within the halo is a blocker.
    for &t in tris {
        if classes.class[t as usize] == TriClass::Walkable {
            continue;
        }
        let v = mesh.triangles[t as usize].map(|i| mesh.vertices[i as usize]);
        if meets_square(v, origin, halo) {
            push_blocker(&mut blockers, v, flags_of(t), origin);
        }
    }
    mark_hidden(mesh, classes, tris, &mut blockers);
    // Headroom: the grid of each piece, then the cut along its cells.
    let masks = headroom_masks(&pieces, &blockers, origin, config.headroom_cm());
    let (mut pieces, patches, cut) = headroom_cut(pieces, &masks);
    // A group with a seam is not one surface: none of its edges is
    // interior (the seam may lie along any of them).
    for p in &mut pieces {
        if !group_seams[patches[p.patch as usize].group as usize].quads.is_empty() {
            p.interior_edges = 0;
        }
    }
    let max_residual = flats.patches.iter().map(|p| p.residual_cm).fold(0.0, f64::max);
    TileContent {
        tile_x,
        tile_y,
        pieces,
        blockers,
        patches,
        split_pieces: cut.split,
        unsplittable_pieces: cut.unsplittable,
        max_residual_cm: max_residual,
        input_hash,
        demoted_triangles: demoted,
        // (The file stores the radius as `f32`, rounded to nearest: a query
        // may use that, up to 1e-7 relative more than the setting.)
        reach_cm: config
            .max_agent_radius_cm
            .max(f64::from(config.max_agent_radius_cm as f32)),
        agent_height_cm: config.headroom_cm(),
        seams: group_seams.into_iter().flat_map(|s| s.quads).collect(),
    }
}

/// Whether a triangle's XY footprint (a segment, for a vertical one)
/// meets the tile square plus halo (closed): their boxes overlap and no
/// line through an edge has the square wholly on the side away from the
/// triangle (separating axes).
fn meets_square(v: [[f64; 3]; 3], origin: [f64; 2], halo: f64) -> bool {
    let (lo, hi) = (origin.map(|o| o - halo), origin.map(|o| o + TILE_SIZE_CM + halo));
    if (0..2).any(|k| v.iter().all(|p| p[k] < lo[k]) || v.iter().all(|p| p[k] > hi[k])) {
        return false;
    }
    (0..3).all(|i| {
        let (a, b, c) = (v[i], v[(i + 1) % 3], v[(i + 2) % 3]);
        let (a, e) = ([a[0], a[1]], [b[0] - a[0], b[1] - a[1]]);
        let third = e[0] * (c[1] - a[1]) - e[1] * (c[0] - a[0]);
        // Every corner below the line (the greatest side below 0), or every
        // one above. (Collinear corners: any side of their line separates.)
        let away_neg = third >= 0.0 && least_side(a, [-e[0], -e[1]], lo, hi) > 0.0;
        let away_pos = third <= 0.0 && least_side(a, e, lo, hi) > 0.0;
        !(away_neg || away_pos)
    })
}

/// Clips a walkable triangle's XY footprint to the tile square plus halo
/// and quantises it: a CCW, strictly convex fixed-point polygon, or `None`
/// when nothing (or nothing representable) is left.
/// `scratch` holds the clipping's work (nothing else is allocated but the
/// result).
fn clip_polygon(
    v: [[f64; 3]; 3],
    origin: [f64; 2],
    halo: f64,
    scratch: &mut [Vec<[f64; 2]>; 2],
) -> Option<Vec<[i32; 2]>> {
    let [poly, spare] = scratch;
    poly.clear();
    poly.extend(v.iter().map(|p| [p[0] - origin[0], p[1] - origin[1]]));
    if cross2(poly[0], poly[1], poly[2]) < 0.0 {
        poly.reverse();
    }
    let (lo, hi) = (-halo, TILE_SIZE_CM + halo);
    for (axis, bound, keep_below) in [(0, lo, false), (0, hi, true), (1, lo, false), (1, hi, true)] {
        clip_half_plane(poly, axis, bound, keep_below, spare);
        std::mem::swap(poly, spare);
        if poly.len() < 3 {
            return None;
        }
    }
    // Quantise; drop exactly collinear or repeated vertices (that moves no
    // edge). A reflex vertex would need an edge moved: such a triangle is
    // kept exact as a blocker instead (exact integer orientation).
    let mut q: Vec<[i32; 2]> = poly.iter().map(|p| [to_fixed(p[0]), to_fixed(p[1])]).collect();
    loop {
        let len = q.len();
        if len < 3 {
            return None;
        }
        let turn = |i: usize| orient_i(q[(i + len - 1) % len], q[i], q[(i + 1) % len]);
        if (0..len).any(|i| turn(i) < 0) {
            return None;
        }
        let Some(i) = (0..len).find(|&i| turn(i) == 0) else {
            break;
        };
        q.remove(i);
    }
    (q.len() <= walksurf_format::MAX_PIECE_VERTICES).then_some(q)
}

/// The part of a polygon on one side of the line (plane) `p[axis] = bound`
/// (`keep_below`: where `p[axis] ≤ bound`); cut points interpolate every
/// coordinate and lie exactly on the bound. Into `out` (cleared first).
fn clip_half_plane<const N: usize>(
    poly: &[[f64; N]],
    axis: usize,
    bound: f64,
    keep_below: bool,
    out: &mut Vec<[f64; N]>,
) {
    let inside = |p: [f64; N]| if keep_below { p[axis] <= bound } else { p[axis] >= bound };
    let cut = |p: [f64; N], q: [f64; N]| {
        let t = (bound - p[axis]) / (q[axis] - p[axis]);
        let mut r: [f64; N] = std::array::from_fn(|k| p[k] + t * (q[k] - p[k]));
        r[axis] = bound;
        r
    };
    out.clear();
    for i in 0..poly.len() {
        let prev = poly[(i + poly.len() - 1) % poly.len()];
        let cur = poly[i];
        match (inside(prev), inside(cur)) {
            (true, true) => out.push(cur),
            (true, false) => out.push(cut(prev, cur)),
            (false, true) => {
                out.push(cut(prev, cur));
                out.push(cur);
            }
            (false, false) => {}
        }
    }
}

/// How far beyond its tile's square a blocker is stored; farther parts are
/// clipped away. Blocker vertices are stored in `i32` fixed point relative
/// to the tile origin, which reaches `2³¹ / VERTEX_STEPS_PER_CM` ≈
/// 2 097 152 cm; no query of the tile reaches beyond its halo, a tiny part
/// of this. [Units: cm]
pub const BLOCKER_KEEP_CM: f64 = 1.0e6;

/// Adds a blocker to a tile (origin `origin`, world cm): the triangle
/// itself, or where it reaches farther than [`BLOCKER_KEEP_CM`] beyond the
/// tile's square, triangles covering exactly its part within (a fan of
/// that convex part). What a query of the tile can touch is the same: the
/// new outline lies beyond any query's reach, and the fan's inner edges lie
/// in the triangle's plane, where a capsule meets the face no later.
fn push_blocker(out: &mut Vec<BlockerTri>, v: [[f64; 3]; 3], flags: u32, origin: [f64; 2]) {
    let (lo, hi) = (
        origin.map(|o| o - BLOCKER_KEEP_CM),
        origin.map(|o| o + TILE_SIZE_CM + BLOCKER_KEEP_CM),
    );
    if v.iter().all(|p| (0..2).all(|k| p[k] >= lo[k] && p[k] <= hi[k])) {
        out.push(BlockerTri { vertices: v, flags });
        return;
    }
    let (mut poly, mut spare) = (v.to_vec(), Vec::new());
    for (axis, bound, keep_below) in [(0, lo[0], false), (0, hi[0], true), (1, lo[1], false), (1, hi[1], true)] {
        clip_half_plane(&poly, axis, bound, keep_below, &mut spare);
        std::mem::swap(&mut poly, &mut spare);
    }
    // (A cut through a vertex repeats it.)
    poly.dedup();
    if poly.len() > 1 && poly.first() == poly.last() {
        poly.pop();
    }
    // (A fan triangle of three collinear points lies along another's edge.)
    for i in 1..poly.len().saturating_sub(1) {
        let t = [poly[0], poly[i], poly[i + 1]];
        if area2(t[0], t[1], t[2]) > 0.0 {
            out.push(BlockerTri { vertices: t, flags });
        }
    }
}

fn cross2(a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> f64 {
    (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
}

/// Exact orientation of three fixed-point points: > 0 for a left turn.
pub fn orient_i(a: [i32; 2], b: [i32; 2], c: [i32; 2]) -> i64 {
    let (ax, ay) = (a[0] as i64, a[1] as i64);
    (b[0] as i64 - ax) * (c[1] as i64 - ay) - (b[1] as i64 - ay) * (c[0] as i64 - ax)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::{clipped_area, polygon_area};

    /// Twice a triangle's XY area, counter-clockwise positive.
    fn cross_xy(t: &[[f64; 3]; 3]) -> f64 {
        cross2([t[0][0], t[0][1]], [t[1][0], t[1][1]], [t[2][0], t[2][1]])
    }

    /// Whether `p` (XY) lies in triangle `t` (XY, either orientation), with
    /// a relative slack.
    fn in_triangle(t: &[[f64; 3]; 3], p: [f64; 2], slack: f64) -> bool {
        let s = cross_xy(t).signum();
        (0..3).all(|i| {
            let (a, b) = (t[i], t[(i + 1) % 3]);
            s * cross2([a[0], a[1]], [b[0], b[1]], p) >= -slack
        })
    }

    #[test]
    fn far_blockers_are_clipped_to_what_lies_near_the_tile() {
        let origin = [3.0 * TILE_SIZE_CM, -2.0 * TILE_SIZE_CM];
        let (lo, hi) = (
            origin.map(|o| o - BLOCKER_KEEP_CM),
            origin.map(|o| o + TILE_SIZE_CM + BLOCKER_KEEP_CM),
        );
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut rnd = |scale: f64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            ((seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) * scale
        };
        let (mut clipped, mut whole) = (0, 0);
        for _ in 0..2000 {
            // Vertices up to 1e4–5e6 cm out (the fixed point holds 2.1e6),
            // one of them near the tile in half the cases.
            let reach = [1e4, 5e5, 1.5e6, 5e6][(rnd(1.0).abs() * 3.999) as usize];
            let mut v: [[f64; 3]; 3] =
                std::array::from_fn(|_| [origin[0] + rnd(reach), origin[1] + rnd(reach), rnd(3e3)]);
            if rnd(1.0) > 0.0 {
                v[0] = [
                    origin[0] + 1600.0 + rnd(2000.0),
                    origin[1] + 1600.0 + rnd(2000.0),
                    rnd(300.0),
                ];
            }
            let mut out = Vec::new();
            push_blocker(&mut out, v, blocker_flags_for_test(), origin);
            let inside = v.iter().all(|p| (0..2).all(|k| p[k] >= lo[k] && p[k] <= hi[k]));
            if inside {
                whole += 1;
                assert_eq!(out.len(), 1);
                assert_eq!(out[0].vertices, v);
                continue;
            }
            clipped += 1;
            // Exactly the part within the box: the same area, every piece
            // inside both, on the triangle's plane, with the flags kept.
            let xy: Vec<[f64; 2]> = v.iter().map(|p| [p[0], p[1]]).collect();
            let want = clipped_area(&xy, lo, hi);
            let got: f64 = out.iter().map(|t| 0.5 * cross_xy(&t.vertices).abs()).sum();
            assert!(
                (got - want).abs() <= 1e-9 * polygon_area(&xy).max(1.0),
                "{v:?}: {got} vs {want}"
            );
            let n = {
                let (a, b) = (
                    [v[1][0] - v[0][0], v[1][1] - v[0][1], v[1][2] - v[0][2]],
                    [v[2][0] - v[0][0], v[2][1] - v[0][1], v[2][2] - v[0][2]],
                );
                [
                    a[1] * b[2] - a[2] * b[1],
                    a[2] * b[0] - a[0] * b[2],
                    a[0] * b[1] - a[1] * b[0],
                ]
            };
            let nl = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
            for t in &out {
                assert_eq!(t.flags, blocker_flags_for_test());
                for p in &t.vertices {
                    assert!(
                        (0..2).all(|k| p[k] >= lo[k] && p[k] <= hi[k]),
                        "{p:?} outside the kept box"
                    );
                    let d = (0..3).map(|k| n[k] * (p[k] - v[0][k])).sum::<f64>() / nl;
                    assert!(d.abs() < 1e-6, "{p:?} is {d} cm off the triangle's plane");
                }
                let c = [0, 1].map(|k| t.vertices.iter().map(|p| p[k]).sum::<f64>() / 3.0);
                assert!(in_triangle(&v, c, 1e-6 * nl), "{c:?} outside {v:?}");
            }
        }
        assert!(clipped > 500 && whole > 100, "{clipped} clipped, {whole} whole");
    }

    /// Whether closed segments `a b` and `c d` meet (exact for the
    /// integer-valued test coordinates).
    fn segments_meet(a: [f64; 2], b: [f64; 2], c: [f64; 2], d: [f64; 2]) -> bool {
        let o = |p: [f64; 2], q: [f64; 2], r: [f64; 2]| cross2(p, q, r);
        let on = |p: [f64; 2], q: [f64; 2], r: [f64; 2]| {
            r[0] >= p[0].min(q[0]) && r[0] <= p[0].max(q[0]) && r[1] >= p[1].min(q[1]) && r[1] <= p[1].max(q[1])
        };
        let (d1, d2, d3, d4) = (o(a, b, c), o(a, b, d), o(c, d, a), o(c, d, b));
        (d1 * d2 < 0.0 && d3 * d4 < 0.0)
            || (d1 == 0.0 && on(a, b, c))
            || (d2 == 0.0 && on(a, b, d))
            || (d3 == 0.0 && on(c, d, a))
            || (d4 == 0.0 && on(c, d, b))
    }

    #[test]
    fn meets_square_is_exact_for_triangles_and_walls() {
        let origin = [0.0, 0.0];
        let halo = 50.0;
        let (lo, hi) = ([-halo; 2], [TILE_SIZE_CM + halo; 2]);
        let corners = [lo, [hi[0], lo[1]], hi, [lo[0], hi[1]]];
        let mut seed = 0xD1B5_4A32_D192_ED03u64;
        let mut rnd = |n: i64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % (2 * n as u64 + 1)) as i64 - n
        };
        let (mut met, mut missed) = (0, 0);
        for case in 0..20_000 {
            let c = [1600.0 + rnd(4000) as f64, 1600.0 + rnd(4000) as f64];
            let mut v: [[f64; 3]; 3] = std::array::from_fn(|_| [c[0] + rnd(2500) as f64, c[1] + rnd(2500) as f64, 0.0]);
            if case % 3 == 0 {
                // A vertical wall: two corners over one XY point.
                v[2] = [v[1][0], v[1][1], 300.0];
            }
            let xy = v.map(|p| [p[0], p[1]]);
            let inside_box = |p: [f64; 2]| p[0] >= lo[0] && p[0] <= hi[0] && p[1] >= lo[1] && p[1] <= hi[1];
            let s = cross2(xy[0], xy[1], xy[2]).signum();
            let in_tri = |p: [f64; 2]| s != 0.0 && (0..3).all(|i| s * cross2(xy[i], xy[(i + 1) % 3], p) >= 0.0);
            let want = xy.iter().any(|&p| inside_box(p))
                || corners.iter().any(|&p| in_tri(p))
                || (0..3)
                    .any(|i| (0..4).any(|j| segments_meet(xy[i], xy[(i + 1) % 3], corners[j], corners[(j + 1) % 4])));
            assert_eq!(meets_square(v, origin, halo), want, "case {case}: {v:?}");
            if want { met += 1 } else { missed += 1 }
        }
        assert!(met > 2000 && missed > 2000, "{met} meet, {missed} do not");
    }

    fn blocker_flags_for_test() -> u32 {
        walksurf_format::blocker_flags::VERTICAL
    }
}
