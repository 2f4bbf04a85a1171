//! Stage 8b, certificates (the seed's precision slots, made exact): per
//! 40 cm cell of a tile, the flat floors a query there can trust without
//! looking at anything else.
//!
//! A cell gets a certificate for a plane when the cell grown by the largest
//! agent radius (plus the edge band) is covered by pieces carrying exactly
//! that stored plane (the pieces of one flat group), and every other
//! primitive whose footprint meets the grown cell lies wholly above the
//! plane: `clear_z` is the lowest of them. The layout stage adds the
//! group's seams ([`rough_seams`](crate::stage::coplanar_merge::rough_seams))
//! as such primitives: where the group is not one surface, no certificate
//! answers within reach (a thin seam is listed like a wall). Then a capsule
//! (or a vertical line) inside the cell that stays below `clear_z` can touch
//! only P's plane, and the runtime answers with one plane evaluation.
//! Certificates use the stored (`f32`) plane and its stored error bound, so
//! the runtime's arithmetic is the one certified.
//!
//! Cost: primitives are bucketed by the cells their grown box covers; each
//! cell tests its bucket (`O(Σ bucket²)` worst case, small in practice).

use crate::geom::{clipped_area, convex_overlap_area, polygon_area, signed_area2, xy_box};
use rayon::prelude::*;
use walksurf_format::{CERT_CELL_CM, CERT_CELLS, Cert, CertWall};

/// Margin of the containment test beyond the runtime's edge band. [Units: cm]
const CONTAIN_MARGIN_CM: f64 = 0.01;
/// A certificate whose clearance above its plane is below this is useless
/// (no capsule fits) and not stored. [Units: cm]
const MIN_CLEARANCE_CM: f64 = 1.0;
/// Largest area of the grown cell the plane's pieces may leave uncovered
/// (cracks where pieces meet at T-junctions and rounding): a hole this small
/// (≤ 0.3 mm across) tilts a 20 cm sphere's contact normal by < 1e-3 and
/// moves its contact by < 1e-5 cm. [Units: cm²]
const MAX_UNCOVERED_CM2: f64 = 1e-3;
/// Most pieces one certificate's coverage may take (pairwise checked).
const MAX_COVER_PIECES: usize = 24;
/// Most walls one certificate lists.
const MAX_CERT_WALLS: usize = 4;
/// A blocker whose footprint lies within this of a segment is a vertical
/// wall. [Units: cm]
const WALL_FLAT_CM: f64 = 0.002;
/// Error added to a listed wall for its vertices' quantisation and the
/// `f32` storage of its segment. [Units: cm]
const WALL_STORE_ERR_CM: f64 = 0.003;
/// Primitives reaching within this of the plane from below count as above
/// it. [Units: cm]
const BELOW_MARGIN_CM: f64 = 0.01;

/// One primitive as the certificate stage sees it (tile frame, cm).
#[derive(Clone, Debug)]
pub struct CertPrim {
    /// XY footprint polygon (convex for pieces; a triangle for blockers).
    pub xy: Vec<[f64; 2]>,
    pub z_lo: f64,
    pub z_hi: f64,
    /// For pieces: the stored plane `(a, b, k)` and its error bound.
    pub plane: Option<([f64; 3], f64)>,
}

/// The fields of a primitive the cell loop reads.
struct Hot {
    bbox: ([f64; 2], [f64; 2]),
    z_lo: f64,
    z_hi: f64,
    /// [`orientation`] of its footprint.
    orient: f64,
    /// Its plane's number (pieces), `u32::MAX` for blockers.
    plane_id: u32,
    /// Area of its footprint.
    area: f64,
}

/// Per-cell offsets (`CERT_CELLS² + 1`), the certificates (each cell's
/// sorted by plane height at the cell centre) and the walls they list.
pub fn certificates(prims: &[CertPrim], reach_cm: f64, band_cm: f64) -> (Vec<u32>, Vec<Cert>, Vec<CertWall>) {
    let walls_of: Vec<Option<CertWall>> = prims.iter().map(vertical_wall).collect();
    let n = CERT_CELLS;
    // (Truncation is the floor here: negatives clamp to 0 first; NaN gives 0.)
    let cell_of = |v: f64| ((v / CERT_CELL_CM).max(0.0) as usize).min(n - 1);
    // Pieces of one flat group share their stored plane exactly: number the
    // distinct planes.
    let mut ids: std::collections::HashMap<[u64; 4], u32> = std::collections::HashMap::new();
    // What the cell loop reads of every primitive, in one place.
    let hot: Vec<Hot> = prims
        .iter()
        .map(|p| Hot {
            bbox: xy_box(&p.xy),
            z_lo: p.z_lo,
            z_hi: p.z_hi,
            orient: orientation(&p.xy),
            plane_id: match p.plane {
                Some(([a, b, k], e)) => {
                    let next = ids.len() as u32;
                    *ids.entry([a, b, k, e].map(f64::to_bits)).or_insert(next)
                }
                None => u32::MAX,
            },
            area: polygon_area(&p.xy),
        })
        .collect();
    // Bucket by the cells whose grown square the primitive's box meets (a
    // flat prefix-summed list: count, then fill).
    let cells_of = |h: &Hot| {
        let (lo, hi) = h.bbox;
        let beyond = n as f64 * CERT_CELL_CM;
        if hi[0] < -reach_cm || hi[1] < -reach_cm || lo[0] - reach_cm > beyond || lo[1] - reach_cm > beyond {
            return None;
        }
        Some((
            cell_of(lo[0] - reach_cm)..=cell_of(hi[0] + reach_cm),
            cell_of(lo[1] - reach_cm)..=cell_of(hi[1] + reach_cm),
        ))
    };
    let mut starts = vec![0u32; n * n + 1];
    for h in &hot {
        if let Some((xs, ys)) = cells_of(h) {
            for y in ys {
                for x in xs.clone() {
                    starts[y * n + x + 1] += 1;
                }
            }
        }
    }
    for i in 0..n * n {
        starts[i + 1] += starts[i];
    }
    let mut fill = starts.clone();
    let mut members_of = vec![0u32; starts[n * n] as usize];
    // Filled lowest first: every cell's list is sorted by `z_lo` (ties by
    // index), so a clearance scan can stop at the first primitive that
    // starts above the clearance found.
    let mut by_height: Vec<u32> = (0..hot.len() as u32).collect();
    by_height.sort_by(|&i, &j| hot[i as usize].z_lo.total_cmp(&hot[j as usize].z_lo).then(i.cmp(&j)));
    for &i in &by_height {
        let h = &hot[i as usize];
        if let Some((xs, ys)) = cells_of(h) {
            for y in ys {
                for x in xs.clone() {
                    let at = &mut fill[y * n + x];
                    members_of[*at as usize] = i;
                    *at += 1;
                }
            }
        }
    }
    // Per plane: the union of its pieces' boxes.
    let mut plane_box = vec![([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]); ids.len()];
    for h in &hot {
        if let Some(b) = plane_box.get_mut(h.plane_id as usize) {
            for k in 0..2 {
                b.0[k] = b.0[k].min(h.bbox.0[k]);
                b.1[k] = b.1[k].max(h.bbox.1[k]);
            }
        }
    }
    let grid = Grid {
        prims,
        hot: &hot,
        walls_of: &walls_of,
        starts: &starts,
        members_of: &members_of,
        plane_box: &plane_box,
        reach_cm,
        band_cm,
    };
    // Bands of rows in parallel (they share nothing), joined in order; each
    // band numbers its walls from 0, shifted when joined. Only if the tile's
    // walls outgrow the 16-bit index does the serial order matter (which
    // certificates still fit): then one band does all rows.
    let bands: Vec<Band> = (0..n.div_ceil(BAND_ROWS))
        .into_par_iter()
        .map(|i| grid.band(i * BAND_ROWS..((i + 1) * BAND_ROWS).min(n)))
        .collect();
    let bands = if bands.iter().map(|b| b.walls.len()).sum::<usize>() <= u16::MAX as usize {
        bands
    } else {
        vec![grid.band(0..n)]
    };
    let mut offsets = Vec::with_capacity(n * n + 1);
    let mut certs = Vec::new();
    let mut walls: Vec<CertWall> = Vec::new();
    for band in bands {
        let (base_cert, base_wall) = (certs.len() as u32, walls.len() as u32);
        offsets.extend(band.offsets.iter().map(|o| o + base_cert));
        certs.extend(band.certs.into_iter().map(|mut c| {
            if c.walls.get() != 0 {
                c.walls = (c.walls.get() + base_wall).into();
            }
            c
        }));
        walls.extend(band.walls);
    }
    offsets.push(certs.len() as u32);
    (offsets, certs, walls)
}

/// Rows of cells per parallel task.
const BAND_ROWS: usize = 8;

/// One band of rows: per-cell offsets (into `certs`), the certificates and
/// the walls they list (numbered from 0).
struct Band {
    offsets: Vec<u32>,
    certs: Vec<Cert>,
    walls: Vec<CertWall>,
}

/// What every band reads.
struct Grid<'a> {
    prims: &'a [CertPrim],
    hot: &'a [Hot],
    walls_of: &'a [Option<CertWall>],
    /// Cell `c`'s primitives: `members_of[starts[c]..starts[c + 1]]`.
    starts: &'a [u32],
    members_of: &'a [u32],
    /// Per plane, the union of its pieces' boxes.
    plane_box: &'a [([f64; 2], [f64; 2])],
    reach_cm: f64,
    band_cm: f64,
}

impl Grid<'_> {
    /// The certificates of the cells of rows `rows`.
    fn band(&self, rows: std::ops::Range<usize>) -> Band {
        let Grid {
            prims,
            hot,
            walls_of,
            starts,
            members_of,
            plane_box,
            reach_cm,
            band_cm,
        } = *self;
        let n = CERT_CELLS;
        let mut seen_in = vec![u32::MAX; plane_box.len()];
        let mut offsets = Vec::with_capacity(rows.len() * n);
        let mut certs = Vec::new();
        let mut walls: Vec<CertWall> = Vec::new();
        let mut listed: Vec<CertWall> = Vec::new();
        let mut parts: Vec<u32> = Vec::new();
        let mut distinct: Vec<u32> = Vec::new();
        let mut members: Vec<u32> = Vec::new();
        for y in rows {
            for x in 0..n {
                offsets.push(certs.len() as u32);
                let c_lo = [x as f64 * CERT_CELL_CM, y as f64 * CERT_CELL_CM];
                let c_hi = [c_lo[0] + CERT_CELL_CM, c_lo[1] + CERT_CELL_CM];
                let g_lo = [c_lo[0] - reach_cm, c_lo[1] - reach_cm];
                let g_hi = [c_hi[0] + reach_cm, c_hi[1] + reach_cm];
                // The grown cell (a square, a superset of the grown disk), with
                // the edge band to spare.
                let inset = band_cm + CONTAIN_MARGIN_CM;
                let sq_lo = [g_lo[0] - inset, g_lo[1] - inset];
                let sq_hi = [g_hi[0] + inset, g_hi[1] + inset];
                let full = (sq_hi[0] - sq_lo[0]) * (sq_hi[1] - sq_lo[1]);
                let bucket = &members_of[starts[y * n + x] as usize..starts[y * n + x + 1] as usize];
                let start = certs.len();
                // Each distinct stored plane among the bucket's pieces is a
                // candidate floor, tried in the order of its first piece; one
                // whose pieces' boxes together miss part of the square cannot
                // cover it.
                let cell = (y * n + x) as u32;
                distinct.clear();
                for &qi in bucket {
                    let id = hot[qi as usize].plane_id;
                    if let Some(seen) = seen_in.get_mut(id as usize)
                        && *seen != cell
                    {
                        *seen = cell;
                        distinct.push(qi);
                    }
                }
                for &first in &distinct {
                    let id = hot[first as usize].plane_id;
                    let (plo, phi) = plane_box[id as usize];
                    if plo[0] > sq_lo[0] || plo[1] > sq_lo[1] || phi[0] < sq_hi[0] || phi[1] < sq_hi[1] {
                        continue;
                    }
                    let Some(plane) = prims[first as usize].plane else {
                        continue;
                    };
                    members.clear();
                    members.extend(bucket.iter().copied().filter(|&qi| hot[qi as usize].plane_id == id));
                    let ([a, b, k], z_err) = plane;
                    // Cheap first: the plane's pieces' boxes must cover the
                    // square's area at least.
                    let box_cover: f64 = members
                        .iter()
                        .map(|&qi| box_overlap_area(hot[qi as usize].bbox, (sq_lo, sq_hi)))
                        .sum();
                    if box_cover < full - MAX_UNCOVERED_CM2 {
                        continue;
                    }
                    let corners = [
                        [g_lo[0], g_lo[1]],
                        [g_hi[0], g_lo[1]],
                        [g_lo[0], g_hi[1]],
                        [g_hi[0], g_hi[1]],
                    ];
                    let z_at = |c: &[f64; 2]| a * c[0] + b * c[1] + k;
                    let p_min = corners.iter().map(z_at).fold(f64::INFINITY, f64::min) - z_err;
                    let p_max = corners.iter().map(z_at).fold(f64::NEG_INFINITY, f64::max) + z_err;
                    // The square must be covered by the plane's pieces: they are
                    // disjoint, so their clipped areas must add up to its own.
                    parts.clear();
                    let mut covered = 0.0;
                    for &qi in &members {
                        let h = &hot[qi as usize];
                        let (plo, phi) = h.bbox;
                        let area =
                            if plo[0] >= sq_lo[0] && plo[1] >= sq_lo[1] && phi[0] <= sq_hi[0] && phi[1] <= sq_hi[1] {
                                h.area // wholly inside the square
                            } else if covers_box(&prims[qi as usize].xy, h.orient, sq_lo, sq_hi) {
                                full // the square wholly inside it
                            } else {
                                clipped_area(&prims[qi as usize].xy, sq_lo, sq_hi)
                            };
                        if area > 0.0 {
                            covered += area;
                            parts.push(qi);
                        }
                    }
                    // Areas add up to coverage only for disjoint pieces: refuse
                    // overlapping ones (duplicated floors: an overlap could hide a
                    // hole of the same area), and too many pieces (the pairwise
                    // check is quadratic).
                    if parts.len() > MAX_COVER_PIECES || (covered - full).abs() > MAX_UNCOVERED_CM2 {
                        continue;
                    }
                    let overlapping = parts.iter().enumerate().any(|(i, &p)| {
                        parts[i + 1..].iter().any(|&q| {
                            box_overlap_area(hot[p as usize].bbox, hot[q as usize].bbox) > MAX_UNCOVERED_CM2
                                && convex_overlap_area(&prims[p as usize].xy, &prims[q as usize].xy) > MAX_UNCOVERED_CM2
                        })
                    });
                    if overlapping {
                        continue;
                    }
                    // The clearance: the lowest other primitive over the square.
                    let mut clear = f64::INFINITY;
                    listed.clear();
                    for &qi in bucket {
                        let h = &hot[qi as usize];
                        // The rest start above the clearance: not needed
                        // (walls there included).
                        if h.z_lo >= clear {
                            break;
                        }
                        if h.plane_id == id
                            || h.z_hi < p_min - BELOW_MARGIN_CM
                            || !convex_meets_box(&prims[qi as usize].xy, h.bbox, h.orient, sq_lo, sq_hi)
                        {
                            continue;
                        }
                        // An exactly vertical wall is never touched by a vertical
                        // motion that keeps its distance: list it for the query
                        // to check instead of lowering the clearance.
                        match walls_of[qi as usize] {
                            Some(w) if listed.len() < MAX_CERT_WALLS => listed.push(w),
                            _ => clear = clear.min(h.z_lo),
                        }
                    }
                    if clear <= p_max + MIN_CLEARANCE_CM || walls.len() + listed.len() > u16::MAX as usize {
                        continue;
                    }
                    let first_wall = walls.len();
                    walls.extend_from_slice(&listed);
                    certs.push(Cert {
                        a: (a as f32).into(),
                        b: (b as f32).into(),
                        k: (k as f32).into(),
                        z_err_cm: (z_err as f32).into(),
                        // Rounded down on purpose: a lower clearance is still
                        // a true bound.
                        clear_z: f32_at_most(clear).into(),
                        walls: (if listed.is_empty() {
                            0
                        } else {
                            (first_wall | (listed.len() << 16)) as u32
                        })
                        .into(),
                    });
                }
                let centre = [c_lo[0] + CERT_CELL_CM / 2.0, c_lo[1] + CERT_CELL_CM / 2.0];
                certs[start..].sort_by(|p, q| {
                    let z = |c: &Cert| c.a.get() as f64 * centre[0] + c.b.get() as f64 * centre[1] + c.k.get() as f64;
                    z(p).total_cmp(&z(q))
                });
            }
        }
        Band { offsets, certs, walls }
    }
}

/// A blocker whose XY footprint is a segment (within [`WALL_FLAT_CM`]): its
/// segment, with an error covering that flatness and `f32` storage.
fn vertical_wall(p: &CertPrim) -> Option<CertWall> {
    if p.plane.is_some() || p.xy.len() < 2 {
        return None;
    }
    let d2 = |a: [f64; 2], b: [f64; 2]| (a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2);
    let mut ends = (p.xy[0], p.xy[1]);
    for &a in &p.xy {
        for &b in &p.xy {
            if d2(a, b) > d2(ends.0, ends.1) {
                ends = (a, b);
            }
        }
    }
    let (a, b) = ends;
    let len = d2(a, b).sqrt();
    if len == 0.0 {
        return None;
    }
    let flat =
        p.xy.iter()
            .map(|q| ((b[0] - a[0]) * (q[1] - a[1]) - (b[1] - a[1]) * (q[0] - a[0])).abs() / len)
            .fold(0.0, f64::max);
    (flat <= WALL_FLAT_CM).then(|| CertWall {
        x0: (a[0] as f32).into(),
        y0: (a[1] as f32).into(),
        x1: (b[0] as f32).into(),
        y1: (b[1] as f32).into(),
        err_cm: ((flat + WALL_STORE_ERR_CM) as f32).into(),
    })
}

/// The largest `f32` not above `v` (`f32::MAX` for +∞).
fn f32_at_most(v: f64) -> f32 {
    if v >= f32::MAX as f64 {
        return f32::MAX;
    }
    let f = v as f32;
    if f as f64 > v { f.next_down() } else { f }
}

/// Whether a convex polygon (of [`orientation`] `orient`) holds the whole
/// box: every corner on the inner side of every edge, or on it.
fn covers_box(poly: &[[f64; 2]], orient: f64, lo: [f64; 2], hi: [f64; 2]) -> bool {
    let Some(&last) = poly.last() else {
        return false;
    };
    if orient == 0.0 {
        return false;
    }
    let corners = [lo, [hi[0], lo[1]], hi, [lo[0], hi[1]]];
    let mut p = last;
    for &q in poly {
        let inside = |v: &[f64; 2]| ((q[0] - p[0]) * (v[1] - p[1]) - (q[1] - p[1]) * (v[0] - p[0])) * orient >= 0.0;
        if !corners.iter().all(inside) {
            return false;
        }
        p = q;
    }
    true
}

/// Area of the intersection of two boxes.
fn box_overlap_area(a: ([f64; 2], [f64; 2]), b: ([f64; 2], [f64; 2])) -> f64 {
    let w = |k: usize| (a.1[k].min(b.1[k]) - a.0[k].max(b.0[k])).max(0.0);
    w(0) * w(1)
}

/// The sign of a polygon's signed area: 1 counter-clockwise, −1 clockwise,
/// 0 degenerate.
fn orientation(poly: &[[f64; 2]]) -> f64 {
    let a = signed_area2(poly);
    if a > 0.0 {
        1.0
    } else if a < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// Whether a convex polygon (either orientation, possibly degenerate) meets
/// the box: separating axes of the box and of the polygon's edges. The
/// polygon's own box and [`orientation`] come with it.
fn convex_meets_box(
    poly: &[[f64; 2]],
    (plo, phi): ([f64; 2], [f64; 2]),
    orient: f64,
    lo: [f64; 2],
    hi: [f64; 2],
) -> bool {
    if phi[0] < lo[0] || plo[0] > hi[0] || phi[1] < lo[1] || plo[1] > hi[1] {
        return false;
    }
    if plo[0] >= lo[0] && plo[1] >= lo[1] && phi[0] <= hi[0] && phi[1] <= hi[1] {
        return true; // wholly inside
    }
    // The polygon lies on its inner side of each of its edge lines (on the
    // line itself when degenerate): an edge separates iff every corner is
    // strictly outside.
    let corners = [lo, [hi[0], lo[1]], hi, [lo[0], hi[1]]];
    let Some(&last) = poly.last() else {
        return false;
    };
    let mut p = last;
    for &q in poly {
        let side = |v: &[f64; 2]| (q[0] - p[0]) * (v[1] - p[1]) - (q[1] - p[1]) * (v[0] - p[0]);
        let separates = if orient != 0.0 {
            corners.iter().all(|v| side(v) * orient < 0.0)
        } else {
            corners.iter().all(|v| side(v) < 0.0) || corners.iter().all(|v| side(v) > 0.0)
        };
        if separates {
            return false;
        }
        p = q;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square(lo: f64, hi: f64) -> Vec<[f64; 2]> {
        vec![[lo, lo], [hi, lo], [hi, hi], [lo, hi]]
    }

    #[test]
    fn a_big_floor_certifies_its_inner_cells_only() {
        let floor = CertPrim {
            xy: square(0.0, 1000.0),
            z_lo: 0.0,
            z_hi: 0.0,
            plane: Some(([0.0, 0.0, 0.0], 0.001)),
        };
        let (off, certs, _) = certificates(std::slice::from_ref(&floor), 42.0, 0.005);
        let count = |x: usize, y: usize| off[y * CERT_CELLS + x + 1] - off[y * CERT_CELLS + x];
        // Cell (5, 5) spans 200..240: grown by 42 it stays inside 0..1000.
        assert_eq!(count(5, 5), 1);
        // Cell (0, 0) grown by 42 leaves the floor.
        assert_eq!(count(0, 0), 0);
        // Cell (24, 5) spans 960..1000: too close to the edge.
        assert_eq!(count(24, 5), 0);
        assert!(certs.iter().all(|c| c.clear_z.get() == f32::MAX));

        // A box standing on the floor at 300..340 spoils the cells within 42 cm.
        let crate_ = CertPrim {
            xy: square(300.0, 340.0),
            z_lo: 0.0,
            z_hi: 50.0,
            plane: None,
        };
        let (off, _, _) = certificates(&[floor.clone(), crate_], 42.0, 0.005);
        let count = |x: usize, y: usize| off[y * CERT_CELLS + x + 1] - off[y * CERT_CELLS + x];
        assert_eq!(count(8, 8), 0, "cell 320..360 holds the crate");
        assert_eq!(count(6, 8), 0, "cell 240..280 is within 42 cm of it");
        assert_eq!(count(4, 8), 1, "cell 160..200 is 100 cm away");

        // A ceiling 300 cm up is the clearance.
        let ceiling = CertPrim {
            xy: square(0.0, 1000.0),
            z_lo: 300.0,
            z_hi: 300.0,
            plane: Some(([0.0, 0.0, 300.0], 0.001)),
        };
        let (off, certs, _) = certificates(&[floor, ceiling], 42.0, 0.005);
        let i = off[5 * CERT_CELLS + 5] as usize;
        assert_eq!(off[5 * CERT_CELLS + 6] as usize - i, 2);
        assert_eq!(certs[i].k.get(), 0.0, "sorted by height");
        assert_eq!(certs[i].clear_z.get(), 300.0);
        assert_eq!(certs[i + 1].clear_z.get(), f32::MAX);
    }

    #[test]
    fn pieces_of_one_plane_certify_together_but_not_across_a_gap() {
        let plane = Some(([0.0, 0.0, 0.0], 0.001));
        let tri = |v: Vec<[f64; 2]>| CertPrim {
            xy: v,
            z_lo: 0.0,
            z_hi: 0.0,
            plane,
        };
        // The 1000 cm square as two triangles sharing the diagonal.
        let halves = [
            tri(vec![[0.0, 0.0], [1000.0, 0.0], [1000.0, 1000.0]]),
            tri(vec![[0.0, 0.0], [1000.0, 1000.0], [0.0, 1000.0]]),
        ];
        let (off, _, _) = certificates(&halves, 42.0, 0.005);
        let count = |off: &[u32], x: usize, y: usize| off[y * CERT_CELLS + x + 1] - off[y * CERT_CELLS + x];
        assert_eq!(
            count(&off, 12, 12),
            1,
            "a cell on the diagonal is covered by both halves"
        );
        // Move the second half 0.5 cm away: a gap along the diagonal.
        let gapped = [halves[0].clone(), tri(vec![[0.0, 0.5], [999.5, 1000.0], [0.0, 1000.0]])];
        let (off, _, _) = certificates(&gapped, 42.0, 0.005);
        assert_eq!(count(&off, 12, 12), 0, "the gap is within reach");
        assert_eq!(count(&off, 20, 5), 1, "far from the gap, one half suffices");
        // An overlap hiding a hole of the same area (the stairs test's
        // landing box over the floor's end) certifies nothing.
        let hidden = [
            tri(vec![[0.0, 0.0], [700.0, 0.0], [700.0, 1000.0], [0.0, 1000.0]]),
            tri(vec![[600.0, 0.0], [700.0, 0.0], [700.0, 1000.0], [600.0, 1000.0]]),
        ];
        let (off, _, _) = certificates(&hidden, 42.0, 0.005);
        assert_eq!(count(&off, 17, 5), 0, "x 680..720 is over the floor's end");
        // The same half twice: overlapping pieces certify nothing.
        let doubled = [halves[0].clone(), halves[0].clone(), halves[1].clone()];
        let (off, _, _) = certificates(&doubled, 42.0, 0.005);
        assert_eq!(count(&off, 20, 5), 0);
    }

    #[test]
    fn a_vertical_wall_is_listed_not_a_clearance() {
        let floor = CertPrim {
            xy: square(0.0, 1000.0),
            z_lo: 0.0,
            z_hi: 0.0,
            plane: Some(([0.0, 0.0, 0.0], 0.001)),
        };
        // A 3 m high wall along x = 500 (its footprint is a segment).
        let wall = CertPrim {
            xy: vec![[500.0, 100.0], [500.0, 900.0], [500.0, 900.0]],
            z_lo: 0.0,
            z_hi: 300.0,
            plane: None,
        };
        // A slanted face is not a wall.
        let slant = CertPrim {
            xy: vec![[700.0, 100.0], [710.0, 900.0], [700.0, 900.0]],
            z_lo: 0.0,
            z_hi: 300.0,
            plane: None,
        };
        let (off, certs, walls) = certificates(&[floor, wall, slant], 42.0, 0.005);
        let cell = |x: usize, y: usize| &certs[off[y * CERT_CELLS + x] as usize..off[y * CERT_CELLS + x + 1] as usize];
        // Cell (12, 10) spans x 480..520: the wall crosses it; still certified,
        // with the wall listed and no clearance limit.
        let c = cell(12, 10);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].clear_z.get(), f32::MAX);
        let w = c[0].walls.get() as usize;
        assert_eq!(w >> 16, 1);
        let listed = walls[w & 0xFFFF];
        assert_eq!((listed.x0.get(), listed.x1.get()), (500.0, 500.0));
        assert!(listed.err_cm.get() > 0.0);
        // Cell (17, 10) spans x 680..720: the slanted face lowers the
        // clearance to its bottom (0): no certificate.
        assert!(cell(17, 10).is_empty());
    }

    #[test]
    fn clearance_rounds_down() {
        let v = 0.1f64 + 1e-9;
        assert!(f32_at_most(v) as f64 <= v);
        assert!(f32_at_most(123.456) as f64 <= 123.456);
    }
}
