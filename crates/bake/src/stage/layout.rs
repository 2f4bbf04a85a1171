//! Stage 9, layout: a tile's pieces and blockers → its hot record and blob
//! (4-ary quantised BVHs, piece records, blocker records).
//!
//! BVH: top-down, each line splits its items in four by two binned
//! surface-area splits (each side keeps at least a third of the items, so
//! the depth stays within the runtime's fixed stack; median splits where
//! the centroids do not spread); boxes rounded outward. Lines are written
//! breadth first: a child line always comes after its parent (so a reader
//! can bound any walk) and the top levels are the first lines (so a reader
//! can load them together). Cost: `O(n log n)` per tile.

use crate::error::BakeError;
use crate::geom::{greater, lesser};
use crate::stage::certificates::{CertPrim, CertReach, certificates};
use crate::stage::convex_partition::FastMap;
use crate::stage::tiling::TileContent;
use crate::tolerance::{CERT_BAND_CM, CERT_LIST_SLACK_CM};
use walksurf_format::zerocopy::{self, IntoBytes};
use walksurf_format::{
    BVH_EMPTY, Blocker, BvhLine, BvhNode, Cert, PatchRecord, PieceHeader, TileHot, TileQuant, TileRecordInput,
    VertexFixed, align_up, from_fixed, patch_flags, piece_z_err_cm, round_up_f32, to_fixed_checked,
};

/// A box to put in a BVH and the leaf value it stands for.
#[derive(Clone, Copy, Debug)]
pub struct BvhItem {
    /// Tile-relative cm (z relative to the tile's z origin).
    pub lo: [f64; 3],
    pub hi: [f64; 3],
    pub leaf: u32,
}

/// Summary numbers of one laid-out tile.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct TileStats {
    pub pieces: usize,
    pub vertices: usize,
    pub blockers: usize,
    pub bytes: usize,
    /// Largest piece z error bound. [Units: cm]
    pub max_z_err_cm: f64,
    /// Flat-floor certificates (cells × floors).
    pub certificates: usize,
    /// Pieces of headroom-cut patches.
    pub cut_pieces: usize,
    /// Pieces whose vertex centroid lies in the tile's own square (each
    /// piece of the level once: the others are halo copies).
    pub square_pieces: usize,
}

/// Lays out one tile.
pub fn layout_tile(tile: &TileContent) -> Result<(TileRecordInput, TileStats), BakeError> {
    let err = |m: &str| BakeError::Tile {
        tile_x: tile.tile_x,
        tile_y: tile.tile_y,
        message: m.to_owned(),
    };
    // Z origin and quantisation.
    let mut z_lo = f64::INFINITY;
    let mut z_hi = f64::NEG_INFINITY;
    for p in &tile.pieces {
        for v in &p.vertices {
            let z = p.plane[0] * from_fixed(v[0]) + p.plane[1] * from_fixed(v[1]) + p.plane[2];
            z_lo = z_lo.min(z);
            z_hi = z_hi.max(z);
        }
    }
    for b in &tile.blockers {
        for v in &b.vertices {
            z_lo = z_lo.min(v[2]);
            z_hi = z_hi.max(v[2]);
        }
    }
    if !z_lo.is_finite() {
        (z_lo, z_hi) = (0.0, 0.0);
    }
    let z_origin = (z_lo - 1.0).floor();
    if z_origin < i32::MIN as f64 || z_hi > i32::MAX as f64 {
        return Err(err("heights beyond the format's range"));
    }
    let mut z_quant = f64::from(walksurf_format::MIN_Z_QUANT_CM);
    while (z_hi + 2.0 - z_origin) / z_quant > 65_000.0 {
        z_quant *= 2.0;
    }
    let quant = TileQuant {
        z_origin_cm: z_origin,
        z_quant_cm: z_quant,
    };

    // Piece records.
    let mut pieces_bytes = Vec::new();
    let mut piece_planes = Vec::with_capacity(tile.pieces.len());
    let mut items = Vec::with_capacity(tile.pieces.len());
    let mut stats = TileStats::default();
    if tile.patches.len() > u16::MAX as usize {
        return Err(err("more than 65535 patches in one tile"));
    }
    // The patch table: each patch's precision block and headroom state.
    let patch_table: Vec<PatchRecord> = tile
        .patches
        .iter()
        .map(|p| PatchRecord {
            plane_a: p.plane[0].into(),
            plane_b: p.plane[1].into(),
            plane_c: (p.plane[2] - z_origin).into(),
            fit_err_cm: round_up_f32(p.fit_err_cm).into(),
            edge_dev_cm: round_up_f32(p.edge_dev_cm).into(),
            cut_dev_cm: round_up_f32(p.cut_dev_cm).into(),
            flags: (if p.cut { patch_flags::HEADROOM_CUT } else { 0 }).into(),
            reserved: [0.into(); 2],
        })
        .collect();
    for p in &tile.pieces {
        let record = patch_table
            .get(p.patch as usize)
            .ok_or_else(|| err("a piece refers to a patch the tile does not have"))?;
        let exact = [record.plane_a.get(), record.plane_b.get(), record.plane_c.get()];
        let (a32, b32, c32) = (exact[0] as f32, exact[1] as f32, exact[2] as f32);
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for v in &p.vertices {
            let (x, y) = (from_fixed(v[0]), from_fixed(v[1]));
            let z = exact[0] * x + exact[1] * y + exact[2];
            for (k, val) in [x, y, z].into_iter().enumerate() {
                lo[k] = lo[k].min(val);
                hi[k] = hi[k].max(val);
            }
        }
        let z_err = piece_z_err_cm(
            [a32, b32, c32],
            exact,
            record.fit_err_cm.get(),
            p.vertices.iter().copied(),
        ) as f64;
        piece_planes.push(([a32 as f64, b32 as f64, c32 as f64], z_err as f32 as f64));
        lo[2] -= z_err;
        hi[2] += z_err;
        stats.max_z_err_cm = stats.max_z_err_cm.max(z_err);
        let word = (pieces_bytes.len() / 4) as u32;
        items.push(BvhItem { lo, hi, leaf: word });
        let header = PieceHeader {
            patch: (p.patch as u16).into(),
            vertex_count: p.vertices.len() as u8,
            flags: if p.cut_crossings {
                walksurf_format::piece_flags::CUT_CROSSINGS
            } else {
                0
            },
            plane_a: a32.into(),
            plane_b: b32.into(),
            plane_c: c32.into(),
            z_err_cm: (z_err as f32).into(),
            interior_edges: p.interior_edges.into(),
        };
        pieces_bytes.extend_from_slice(header.as_bytes());
        for v in &p.vertices {
            pieces_bytes.extend_from_slice(
                VertexFixed {
                    x: v[0].into(),
                    y: v[1].into(),
                }
                .as_bytes(),
            );
        }
        stats.vertices += p.vertices.len();
    }
    let mut cert_prims: Vec<CertPrim> = tile
        .pieces
        .iter()
        .zip(&items)
        .zip(&piece_planes)
        .map(|((p, it), plane)| {
            // The true piece reaches up to the edge deviation beyond its
            // rounded outline: its plane there is higher or lower by up to
            // the slope times that.
            let ([a, b, _], _) = *plane;
            let beyond = a.hypot(b) * walksurf_format::MAX_PIECE_EDGE_DEV_CM;
            CertPrim {
                xy: p
                    .vertices
                    .iter()
                    .map(|v| [from_fixed(v[0]), from_fixed(v[1])])
                    .collect(),
                z_lo: it.lo[2] - beyond,
                z_hi: it.hi[2] + beyond,
                plane: Some(*plane),
                vertex_z: None,
                interior: p.interior_edges,
            }
        })
        .collect();
    let piece_bvh = build_bvh(&mut items, &quant);

    // Blockers.
    let origin = [
        tile.tile_x as f64 * walksurf_format::TILE_SIZE_CM,
        tile.tile_y as f64 * walksurf_format::TILE_SIZE_CM,
    ];
    let mut blockers = Vec::with_capacity(tile.blockers.len());
    let mut bitems = Vec::with_capacity(tile.blockers.len());
    cert_prims.reserve(tile.blockers.len() + tile.seams.len());
    for (i, b) in tile.blockers.iter().enumerate() {
        let rel = b
            .vertices
            .map(|v| [v[0] - origin[0], v[1] - origin[1], v[2] - z_origin]);
        let lo = [0, 1, 2].map(|k| rel[0][k].min(rel[1][k]).min(rel[2][k]));
        let hi = [0, 1, 2].map(|k| rel[0][k].max(rel[1][k]).max(rel[2][k]));
        // (Tiling keeps blockers near the tile in XY; heights may still
        // span more than the fixed point holds.)
        let mut v = [[0i32; 3]; 3];
        for (stored, p) in v.iter_mut().zip(&rel) {
            for (k, (s, &c)) in stored.iter_mut().zip(p).enumerate() {
                let span = i32::MAX as f64 / walksurf_format::VERTEX_STEPS_PER_CM;
                *s = to_fixed_checked(c).ok_or_else(|| {
                    err(&if k == 2 {
                        format!(
                            "heights span {z_lo:.0} to {z_hi:.0} cm, more than the {span:.0} cm one tile's \
                             blockers can hold (exclude the far geometry, e.g. with --exclude)"
                        )
                    } else {
                        format!("a blocker vertex lies {c:.0} cm from the tile's origin, beyond ±{span:.0} cm")
                    })
                })?;
            }
        }
        blockers.push(Blocker {
            v: v.map(|p| p.map(Into::into)),
            flags: b.flags.into(),
        });
        // The box must hold the stored (rounded) vertices as well.
        let slack = 1.0 / walksurf_format::VERTEX_STEPS_PER_CM;
        let (lo, hi) = (lo.map(|v| v - slack), hi.map(|v| v + slack));
        cert_prims.push(CertPrim {
            xy: rel.iter().map(|v| [v[0], v[1]]).collect(),
            z_lo: lo[2],
            z_hi: hi[2],
            plane: None,
            vertex_z: Some(rel.map(|v| v[2])),
            interior: 0,
        });
        bitems.push(BvhItem { lo, hi, leaf: i as u32 });
    }
    let blocker_bvh = build_bvh(&mut bitems, &quant);
    // Seams where a flat group is not one surface: the certificates treat
    // each as a wall standing there (listed if thin enough, else a
    // clearance), so no certificate answers within reach of one.
    for seam in &tile.seams {
        let rel = seam.map(|v| [v[0] - origin[0], v[1] - origin[1], v[2] - z_origin]);
        let slack = 1.0 / walksurf_format::VERTEX_STEPS_PER_CM;
        let z = rel.map(|v| v[2]);
        cert_prims.push(CertPrim {
            xy: convex_hull(&rel.map(|v| [v[0], v[1]])),
            z_lo: z.iter().copied().fold(f64::INFINITY, f64::min) - slack,
            z_hi: z.iter().copied().fold(f64::NEG_INFINITY, f64::max) + slack,
            plane: None,
            vertex_z: None,
            interior: 0,
        });
    }

    let reach = CertReach {
        reach_cm: tile.reach_cm,
        // A capsule resting on the plane reaches its own height above it;
        // one falling onto it may start higher.
        list_height_cm: tile.agent_height_cm + CERT_LIST_SLACK_CM,
        band_cm: CERT_BAND_CM,
    };
    let (cert_offsets, certs, cert_walls) = certificates(&cert_prims, reach);
    let (cert_entries, certs) = share_cert_lists(&cert_offsets, &certs);
    stats.certificates = cert_entries.iter().map(|&e| walksurf_format::cert_list(e).len()).sum();
    // The blob's parts in order, room for all of them reserved at once (at
    // most: two alignments, the whole certificate grid).
    let align = walksurf_format::SECTION_ALIGN;
    let cert_room = align
        + size_of::<walksurf_format::CertIndexHeader>()
        + 4 * (cert_entries.len() + 1)
        + certs.as_bytes().len()
        + cert_walls.as_bytes().len();
    let mut blob = Vec::with_capacity(
        piece_bvh.as_bytes().len()
            + pieces_bytes.len()
            + align
            + blocker_bvh.as_bytes().len()
            + blockers.as_bytes().len()
            + cert_room
            + patch_table.as_bytes().len(),
    );
    blob.extend_from_slice(piece_bvh.as_bytes());
    blob.extend_from_slice(&pieces_bytes);
    blob.resize(align_up(blob.len(), align), 0);
    blob.extend_from_slice(blocker_bvh.as_bytes());
    blob.extend_from_slice(blockers.as_bytes());
    let mut flags = 0;
    if !certs.is_empty() {
        flags |= walksurf_format::tile_flags::HAS_CERT_LISTS;
        blob.resize(align_up(blob.len(), align), 0);
        if write_cert_index(&mut blob, &cert_entries, certs.len()) {
            flags |= walksurf_format::tile_flags::CERT_LISTS_UNIFORM;
        }
        blob.extend_from_slice(certs.as_bytes());
        blob.extend_from_slice(cert_walls.as_bytes());
    }
    if !patch_table.is_empty() {
        flags |= walksurf_format::tile_flags::HAS_PATCHES;
        blob.extend_from_slice(patch_table.as_bytes());
    }

    let hot = TileHot {
        tile_x: tile.tile_x.into(),
        tile_y: tile.tile_y.into(),
        z_origin_cm: (z_origin as i32).into(),
        z_quant_cm: (z_quant as f32).into(),
        blob_offset: 0.into(),
        blob_len: (blob.len() as u32).into(),
        piece_lines: (piece_bvh.len() as u32).into(),
        piece_count: (tile.pieces.len() as u32).into(),
        pieces_len: (pieces_bytes.len() as u32).into(),
        blocker_lines: (blocker_bvh.len() as u32).into(),
        blocker_count: (blockers.len() as u32).into(),
        input_hash: tile.input_hash.into(),
        patch_count: (tile.patches.len() as u32).into(),
        flags: flags.into(),
    };
    if blob.len() > u32::MAX as usize {
        return Err(err("tile data larger than 4 GiB"));
    }
    stats.pieces = tile.pieces.len();
    stats.cut_pieces = tile
        .pieces
        .iter()
        .filter(|p| tile.patches[p.patch as usize].cut)
        .count();
    stats.square_pieces = tile.pieces.iter().filter(|p| in_own_square(&p.vertices)).count();
    stats.blockers = blockers.len();
    stats.bytes = blob.len() + size_of::<TileHot>();
    Ok((TileRecordInput { hot, blob }, stats))
}

/// Whether a piece's vertex centroid (fixed point, tile frame) lies in the
/// tile's own square `[0, TILE_SIZE_CM)²`.
pub fn in_own_square(vertices: &[[i32; 2]]) -> bool {
    let n = vertices.len().max(1) as f64;
    let c = [0, 1].map(|k| vertices.iter().map(|v| from_fixed(v[k])).sum::<f64>() / n);
    c.iter().all(|&v| (0.0..walksurf_format::TILE_SIZE_CM).contains(&v))
}

/// Builds a 4-ary BVH; line 0 is the root. Empty input → no lines.
pub fn build_bvh(items: &mut [BvhItem], quant: &TileQuant) -> Vec<BvhLine> {
    let mut lines = Vec::new();
    if items.is_empty() {
        return lines;
    }
    // Breadth first: a line's index is its place in a FIFO of the lines
    // still to fill, so the top levels are the first lines (one cold
    // query can ask for them all at once) and every child comes after its
    // parent.
    let mut todo = std::collections::VecDeque::from([items]);
    while let Some(items) = todo.pop_front() {
        let line = build_line(items, quant, lines.len() + 1 + todo.len(), &mut todo);
        lines.push(line);
    }
    lines
}

const EMPTY_NODE: BvhNode = BvhNode {
    min: [zerocopy::little_endian::U16::ZERO; 3],
    max: [zerocopy::little_endian::U16::ZERO; 3],
    child: zerocopy::little_endian::I32::new(BVH_EMPTY),
};

/// The line over `items`: each inner child gets the next free line index,
/// from `next`, and its items go to the back of `todo`.
fn build_line<'a>(
    items: &'a mut [BvhItem],
    quant: &TileQuant,
    mut next: usize,
    todo: &mut std::collections::VecDeque<&'a mut [BvhItem]>,
) -> BvhLine {
    // Up to four children (no allocation per node): single items, or the
    // quarters of two splits.
    let mut groups: [&mut [BvhItem]; 4] = [&mut [], &mut [], &mut [], &mut []];
    if items.len() <= 4 {
        for (slot, one) in groups.iter_mut().zip(items.chunks_mut(1)) {
            *slot = one;
        }
    } else {
        let (a, b) = split_sah(items);
        let (a1, a2) = split_sah(a);
        let (b1, b2) = split_sah(b);
        groups = [a1, a2, b1, b2];
    }
    let mut nodes = [EMPTY_NODE; 4];
    for (slot, group) in groups.into_iter().enumerate() {
        if group.is_empty() {
            continue;
        }
        let (lo, hi) = bounds(group);
        let (x0, x1) = TileQuant::xy_bounds(lo[0], hi[0]);
        let (y0, y1) = TileQuant::xy_bounds(lo[1], hi[1]);
        let (z0, z1) = quant.z_bounds(lo[2], hi[2]);
        let child = if group.len() == 1 {
            !(group[0].leaf as i32)
        } else {
            todo.push_back(group);
            next += 1;
            (next - 1) as i32
        };
        nodes[slot] = BvhNode {
            min: [x0.into(), y0.into(), z0.into()],
            max: [x1.into(), y1.into(), z1.into()],
            child: child.into(),
        };
    }
    BvhLine { nodes }
}

fn bounds(items: &[BvhItem]) -> ([f64; 3], [f64; 3]) {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for it in items {
        for k in 0..3 {
            lo[k] = lo[k].min(it.lo[k]);
            hi[k] = hi[k].max(it.hi[k]);
        }
    }
    (lo, hi)
}

/// The box of the items' doubled centroids (`lo + hi` per axis).
fn centroid_bounds(items: &[BvhItem]) -> ([f64; 3], [f64; 3]) {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for it in items {
        for k in 0..3 {
            let c = it.lo[k] + it.hi[k];
            lo[k] = lesser(c, lo[k]);
            hi[k] = greater(c, hi[k]);
        }
    }
    (lo, hi)
}

/// Bins per axis of the surface-area split.
const SAH_BINS: usize = 16;

/// Splits where the two halves' box surface areas weighted by their item
/// counts add up least (binned by centroid along each axis), keeping at
/// least a third of the items on each side (the runtime's traversal stack
/// bounds the depth); else as [`split_half`]. Deterministic: bins and ties
/// are decided by position alone, and items move by a fixed rule.
fn split_sah(items: &mut [BvhItem]) -> (&mut [BvhItem], &mut [BvhItem]) {
    type Aabb = ([f64; 3], [f64; 3]);
    let n = items.len();
    let (lo, hi) = centroid_bounds(items);
    // Bins per unit of doubled centroid, per axis (0 for a flat axis).
    let scale = [0, 1, 2].map(|k| {
        let ext = hi[k] - lo[k];
        if ext > 0.0 { SAH_BINS as f64 / ext } else { 0.0 }
    });
    // (Through `i32`, whose saturating conversion costs fewer instructions
    // than `usize`'s; the same bin for every value, NaN included.)
    let bin = |it: &BvhItem, k: usize| {
        ((((it.lo[k] + it.hi[k] - lo[k]) * scale[k]) as i32).min(SAH_BINS as i32 - 1)) as usize
    };
    let area = |(l, h): Aabb| {
        let d = [0, 1, 2].map(|k| (h[k] - l[k]).max(0.0));
        d[0] * d[1] + d[1] * d[2] + d[2] * d[0]
    };
    let join = |a: &mut Aabb, l: &[f64; 3], h: &[f64; 3]| {
        for k in 0..3 {
            a.0[k] = lesser(l[k], a.0[k]);
            a.1[k] = greater(h[k], a.1[k]);
        }
    };
    let empty: Aabb = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    // One pass over the items fills every axis's bins.
    let mut count = [[0usize; SAH_BINS]; 3];
    let mut boxes = [[empty; SAH_BINS]; 3];
    for it in items.iter() {
        for k in 0..3 {
            let b = bin(it, k);
            count[k][b] += 1;
            join(&mut boxes[k][b], &it.lo, &it.hi);
        }
    }
    // (cost, axis, last bin on the left)
    let mut best: Option<(f64, usize, usize)> = None;
    for k in 0..3 {
        if scale[k] == 0.0 {
            continue;
        }
        // Only the bins holding items: a split after an empty bin has the
        // sides (and the cost) of the split after the last non-empty one
        // before it, which comes first and wins the tie.
        let mut held = [0usize; SAH_BINS];
        let mut m = 0;
        for (b, &c) in count[k].iter().enumerate() {
            if c > 0 {
                held[m] = b;
                m += 1;
            }
        }
        // right[i]: the items of the held bins from the i-th on.
        let mut right = [(0usize, empty); SAH_BINS];
        let mut acc = (0, empty);
        for i in (1..m).rev() {
            let b = held[i];
            acc.0 += count[k][b];
            join(&mut acc.1, &boxes[k][b].0, &boxes[k][b].1);
            right[i] = acc;
        }
        let mut left = (0, empty);
        for i in 0..m.saturating_sub(1) {
            let b = held[i];
            left.0 += count[k][b];
            join(&mut left.1, &boxes[k][b].0, &boxes[k][b].1);
            let (nr, rbox) = right[i + 1];
            if 3 * left.0 < n || 3 * nr < n {
                continue;
            }
            let cost = area(left.1) * left.0 as f64 + area(rbox) * nr as f64;
            if best.is_none_or(|(c, _, _)| cost < c) {
                best = Some((cost, k, b));
            }
        }
    }
    let Some((_, k, b)) = best else {
        return split_half(items);
    };
    // Left items first (in place; the order depends on the input alone).
    let mut mid = 0;
    for i in 0..n {
        if bin(&items[i], k) <= b {
            items.swap(i, mid);
            mid += 1;
        }
    }
    items.split_at_mut(mid)
}

/// Splits at the median centroid along the longest centroid axis (a
/// selection, not a sort: linear time; ties broken by leaf, so the split is
/// deterministic).
fn split_half(items: &mut [BvhItem]) -> (&mut [BvhItem], &mut [BvhItem]) {
    let centre = |it: &BvhItem, k: usize| it.lo[k] + it.hi[k];
    let (lo, hi) = centroid_bounds(items);
    let axis = (0..3)
        .max_by(|&a, &b| (hi[a] - lo[a]).total_cmp(&(hi[b] - lo[b])))
        .unwrap_or(0);
    let mid = items.len().div_ceil(2);
    if mid < items.len() {
        items.select_nth_unstable_by(mid, |a, b| {
            centre(a, axis).total_cmp(&centre(b, axis)).then(a.leaf.cmp(&b.leaf))
        });
    }
    items.split_at_mut(mid)
}

/// The convex hull of a few points, counter-clockwise (collinear points
/// dropped; a degenerate hull keeps its two extremes).
fn convex_hull(points: &[[f64; 2]]) -> Vec<[f64; 2]> {
    let mut p = points.to_vec();
    p.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
    p.dedup();
    if p.len() < 3 {
        return p;
    }
    let cross = |o: [f64; 2], a: [f64; 2], b: [f64; 2]| (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
    let mut hull: Vec<[f64; 2]> = Vec::with_capacity(2 * p.len());
    for pass in [p.clone(), p.iter().rev().copied().collect()] {
        let start = hull.len();
        for q in pass {
            while hull.len() >= start + 2 && cross(hull[hull.len() - 2], hull[hull.len() - 1], q) <= 0.0 {
                hull.pop();
            }
            hull.push(q);
        }
        hull.pop();
    }
    if hull.len() < 2 {
        hull = vec![p[0], p[p.len() - 1]];
    }
    hull
}

/// Stores each distinct cell list once (flat ground repeats one list in
/// every cell): the cells' [`walksurf_format::cert_list`] entries (full
/// grid, 0 for none) and the records they name. A list longer than
/// [`walksurf_format::MAX_CERT_LIST`] is not stored (its cell takes the
/// full path).
fn share_cert_lists(offsets: &[u32], certs: &[Cert]) -> (Vec<u32>, Vec<Cert>) {
    let mut first_of: FastMap<&[u8], u32> = FastMap::default();
    let mut shared = Vec::new();
    // (The cell before is the likeliest twin: checked first.)
    let mut before: Option<(&[u8], u32)> = None;
    let entries = offsets
        .windows(2)
        .map(|w| {
            let list = &certs[w[0] as usize..w[1] as usize];
            if list.is_empty() || list.len() > walksurf_format::MAX_CERT_LIST {
                return 0;
            }
            let bytes = list.as_bytes();
            let first = match before {
                Some((b, first)) if b == bytes => first,
                _ => *first_of.entry(bytes).or_insert_with(|| {
                    shared.extend_from_slice(list);
                    (shared.len() - list.len()) as u32
                }),
            };
            before = Some((bytes, first));
            if first > walksurf_format::CERT_LIST_FIRST_MASK {
                return 0;
            }
            first | (list.len() as u32) << 24
        })
        .collect();
    (entries, shared)
}

/// Writes the certificate index: the rectangle of cells holding any
/// certificate, its cells' entries (from the full-grid `entries`; one if
/// they are all the same: then `true`), then the record count.
fn write_cert_index(blob: &mut Vec<u8>, entries: &[u32], records: usize) -> bool {
    let n = walksurf_format::CERT_CELLS;
    let (mut x0, mut y0, mut x1, mut y1) = (n, n, 0, 0);
    for y in 0..n {
        for x in 0..n {
            if entries[y * n + x] != 0 {
                (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x + 1), y1.max(y + 1));
            }
        }
    }
    let header = walksurf_format::CertIndexHeader {
        x0: (x0.min(x1) as u16).into(),
        y0: (y0.min(y1) as u16).into(),
        w: (x1.saturating_sub(x0) as u16).into(),
        h: (y1.saturating_sub(y0) as u16).into(),
    };
    blob.extend_from_slice(header.as_bytes());
    let first = entries.get(y0 * n + x0).copied().unwrap_or(0);
    let uniform = (y0..y1).all(|y| (x0..x1).all(|x| entries[y * n + x] == first));
    if uniform {
        blob.extend_from_slice(&first.to_le_bytes());
    } else {
        for y in y0..y1 {
            for x in x0..x1 {
                blob.extend_from_slice(&entries[y * n + x].to_le_bytes());
            }
        }
    }
    blob.extend_from_slice(&(records as u32).to_le_bytes());
    uniform
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    type Aabb = ([f64; 3], [f64; 3]);

    /// Every ancestor node of a leaf, dequantised, holds the leaf's box.
    fn check_containment(lines: &[BvhLine], items: &[BvhItem], quant: &TileQuant) -> Result<(), TestCaseError> {
        let by_leaf = |leaf: u32| items.iter().find(|it| it.leaf == leaf);
        let (xy, z) = (1.0 / walksurf_format::BVH_XY_STEPS_PER_CM, quant.z_quant_cm);
        let mut seen = 0;
        // (line, the boxes of its ancestors' nodes, dequantised)
        let mut stack: Vec<(usize, Vec<Aabb>)> = vec![(0, Vec::new())];
        while let Some((line, above)) = stack.pop() {
            for node in &lines[line].nodes {
                let child = node.child.get();
                if child == BVH_EMPTY {
                    continue;
                }
                let lo = [
                    node.min[0].get() as f64 * xy - walksurf_format::BVH_XY_MARGIN_CM,
                    node.min[1].get() as f64 * xy - walksurf_format::BVH_XY_MARGIN_CM,
                    node.min[2].get() as f64 * z,
                ];
                let hi = [
                    node.max[0].get() as f64 * xy - walksurf_format::BVH_XY_MARGIN_CM,
                    node.max[1].get() as f64 * xy - walksurf_format::BVH_XY_MARGIN_CM,
                    node.max[2].get() as f64 * z,
                ];
                let mut chain = above.clone();
                chain.push((lo, hi));
                if child >= 0 {
                    stack.push((child as usize, chain));
                } else {
                    let it = by_leaf(!child as u32).expect("a leaf names an item");
                    seen += 1;
                    for (lo, hi) in &chain {
                        for k in 0..3 {
                            prop_assert!(
                                lo[k] <= it.lo[k] && hi[k] >= it.hi[k],
                                "box {lo:?}..{hi:?} misses {it:?}"
                            );
                        }
                    }
                }
            }
        }
        prop_assert_eq!(seen, items.len());
        Ok(())
    }

    proptest! {
        /// Quantised BVH boxes (rounded outward) contain what they bound.
        #[test]
        fn quantised_boxes_contain_their_items(
            boxes in proptest::collection::vec(
                ((-400.0f64..3600.0, -400.0f64..3600.0, 0.0f64..900.0), (0.0f64..300.0, 0.0f64..300.0, 0.0f64..50.0)),
                1..120,
            ),
            z_quant_pow in 0u32..4,
        ) {
            let quant = TileQuant { z_origin_cm: 0.0, z_quant_cm: (1u32 << z_quant_pow) as f64 / 64.0 };
            let mut items: Vec<BvhItem> = boxes
                .iter()
                .enumerate()
                .map(|(i, &((x, y, z), (w, h, d)))| BvhItem {
                    lo: [x, y, z],
                    hi: [(x + w).min(3640.0), (y + h).min(3640.0), z + d],
                    leaf: i as u32,
                })
                .collect();
            let lines = build_bvh(&mut items, &quant);
            check_containment(&lines, &items, &quant)?;
        }

        /// `split_sah` puts on the left exactly the items of the cheapest
        /// split over every axis and bin boundary (the first in axis, then
        /// bin order, on a tie), found here by brute force over the items;
        /// the median split when no split keeps a third on each side.
        /// Coordinates on a coarse lattice make equal centroids, empty bins
        /// and flat axes common.
        #[test]
        fn sah_split_is_the_cheapest_binned_split(
            boxes in proptest::collection::vec(
                ((0u8..12, 0u8..12, 0u8..3), (0u8..4, 0u8..4, 0u8..2)),
                5..40,
            ),
        ) {
            let mut items: Vec<BvhItem> = boxes
                .iter()
                .enumerate()
                .map(|(i, &((x, y, z), (w, h, d)))| {
                    let lo = [x as f64 * 10.0, y as f64 * 7.5, z as f64 * 30.0];
                    BvhItem { lo, hi: [lo[0] + w as f64 * 5.0, lo[1] + h as f64 * 5.0, lo[2] + d as f64], leaf: i as u32 }
                })
                .collect();
            let n = items.len();
            let (clo, chi) = centroid_bounds(&items);
            let bin_of = |it: &BvhItem, k: usize| {
                let ext = chi[k] - clo[k];
                (((it.lo[k] + it.hi[k] - clo[k]) * (SAH_BINS as f64 / ext)) as usize).min(SAH_BINS - 1)
            };
            let area = |side: &[&BvhItem]| {
                let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
                for it in side {
                    for k in 0..3 {
                        lo[k] = lo[k].min(it.lo[k]);
                        hi[k] = hi[k].max(it.hi[k]);
                    }
                }
                let d = [0, 1, 2].map(|k| (hi[k] - lo[k]).max(0.0));
                d[0] * d[1] + d[1] * d[2] + d[2] * d[0]
            };
            let mut best: Option<(f64, usize, usize)> = None;
            for k in (0..3).filter(|&k| chi[k] > clo[k]) {
                for b in 0..SAH_BINS - 1 {
                    let (left, right): (Vec<&BvhItem>, Vec<&BvhItem>) = items.iter().partition(|it| bin_of(it, k) <= b);
                    if 3 * left.len() < n || 3 * right.len() < n {
                        continue;
                    }
                    let cost = area(&left) * left.len() as f64 + area(&right) * right.len() as f64;
                    if best.is_none_or(|(c, _, _)| cost < c) {
                        best = Some((cost, k, b));
                    }
                }
            }
            let mut expected: Vec<u32> = match best {
                Some((_, k, b)) => items.iter().filter(|it| bin_of(it, k) <= b).map(|it| it.leaf).collect(),
                None => Vec::new(),
            };
            let (left, _) = split_sah(&mut items);
            let mut got: Vec<u32> = left.iter().map(|it| it.leaf).collect();
            if best.is_none() {
                prop_assert_eq!(got.len(), n.div_ceil(2));
            } else {
                expected.sort_unstable();
                got.sort_unstable();
                prop_assert_eq!(got, expected);
            }
        }
    }
}
