//! Stage 8b, certificates (the seed's precision slots, made exact): per
//! 40 cm cell of a tile, the flat floors a query there can trust without
//! looking at anything else.
//!
//! A cell gets a certificate for a plane where pieces carrying exactly that
//! stored plane (the pieces of one flat group) cover the places a capsule
//! centred in the cell first touches it: under its centre, shifted up the
//! slope by at most `R·∇/√(1 + |∇|²)` (a sphere's contact point on the
//! plane), plus the edge band. Covered for the whole cell, or else for some
//! of its quarters (each held by one piece); a query checks its quarter.
//!
//! Every other primitive whose footprint meets the grown cell counts only
//! by its part that may come within the plane's error of the plane
//! ([`above_part`]: points lower than that are never touched before it; a
//! primitive crossing the plane is clipped where it does): that part is
//! either listed or above the clearance `clear_z` (the lowest of the rest). Up to [`MAX_CERT_WALLS`]
//! of the lowest are listed by their footprints (a segment and a width:
//! [`footprint`]) and how far they rise above the plane: a vertically
//! moving capsule farther from a footprint than its radius never touches
//! it, and one that rises less than the sphere's lower surface over it
//! when the sphere rests on the plane is touched after the plane (the
//! runtime's `clear_of_walls`). Footprints merge when one segment holds
//! both (a wall of many triangles). The layout stage adds the group's seams
//! ([`rough_seams`](crate::stage::coplanar_merge::rough_seams)) as such
//! primitives: where the group is not one surface, no certificate answers
//! within reach. Certificates use the stored (`f32`) plane and its stored
//! error bound, so the runtime's arithmetic is the one certified.
//!
//! Cost: primitives are bucketed by the cells their grown box covers; each
//! cell tests its bucket (`O(Σ bucket²)` worst case, small in practice).
//! A primitive's part above a plane is found once per band of rows and
//! kept for the band's other cells.

use crate::geom::{clipped_area, convex_overlap_area, greater, least_side, lesser, polygon_area, signed_area2, xy_box};
use crate::stage::convex_partition::FastMap;
use rayon::prelude::*;
use walksurf_format::zerocopy::IntoBytes;
use walksurf_format::{CERT_ALL_SUBCELLS, CERT_CELL_CM, CERT_CELLS, CERT_SUBCELLS, Cert, CertWall};

/// Margin of the containment test beyond the runtime's edge band. [Units: cm]
const CONTAIN_MARGIN_CM: f64 = 0.01;
/// Largest difference between a square's area and its pieces' clipped
/// areas taken as rounding (a real hole is refused by its edges, which do
/// not lie along other pieces of the group). [Units: cm²]
const MAX_UNCOVERED_CM2: f64 = 1e-3;
/// A square's corner this far from every piece leaves a quarter disk of
/// area `π·d²/4` > [`MAX_UNCOVERED_CM2`] uncovered. [Units: cm]
const CORNER_HOLE_CM: f64 = 0.05;
const _: () = assert!(std::f64::consts::PI * CORNER_HOLE_CM * CORNER_HOLE_CM / 4.0 > MAX_UNCOVERED_CM2);
/// Most pieces one certificate's coverage may take (pairwise checked).
const MAX_COVER_PIECES: usize = 24;
/// Most vertices of a primitive [`above_part`] clips (one with more is
/// taken whole).
const MAX_CLIP_VERTICES: usize = 32;
/// Most footprints one certificate lists.
const MAX_CERT_WALLS: usize = 8;
/// How much farther than the wider of two footprints one that holds both
/// may reach for them to be listed as one (a wall of many triangles
/// becomes one). [Units: cm]
const MERGE_GROWTH_CM: f64 = 0.5;
/// Margin added to a listed footprint's error beyond the `f32` rounding of
/// its segment's ends (which is added as it is). [Units: cm]
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
    /// For blockers (triangles): each vertex's z, in the order of `xy` (a
    /// primitive with neither this nor a plane, such as a seam, is taken
    /// whole).
    pub vertex_z: Option<[f64; 3]>,
    /// For pieces: bit `i` set when edge `i` (vertex `i` to `i + 1`) lies
    /// along other pieces of its flat group (the surface goes on across
    /// it); every other edge bounds the surface.
    pub interior: u32,
}

/// How far certificates must hold.
#[derive(Clone, Copy, Debug)]
pub struct CertReach {
    /// The largest agent radius: a query's footprint is its cell grown by
    /// this. [Units: cm]
    pub reach_cm: f64,
    /// Primitives starting more than this above the plane go to the
    /// clearance, lower ones are listed first. [Units: cm]
    pub list_height_cm: f64,
    /// The runtime's edge band (piece outlines are rounded). [Units: cm]
    pub band_cm: f64,
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
    /// For pieces: how far a capsule's first contact with its plane may lie
    /// from the capsule's axis, per axis, below and above (0 for blockers).
    grow_lo: [f64; 2],
    grow_hi: [f64; 2],
}

/// Per-cell offsets (`CERT_CELLS² + 1`), the certificates (each cell's
/// sorted by plane height at the cell centre) and the walls they list.
pub fn certificates(prims: &[CertPrim], reach: CertReach) -> (Vec<u32>, Vec<Cert>, Vec<CertWall>) {
    certificates_with(prims, reach, true)
}

/// [`certificates`], keeping what cells learn of a (plane, primitive) pair
/// for the next cells (`memoize`, the same answers) or not.
fn certificates_with(prims: &[CertPrim], reach: CertReach, memoize: bool) -> (Vec<u32>, Vec<Cert>, Vec<CertWall>) {
    let CertReach {
        reach_cm,
        list_height_cm,
        band_cm,
    } = reach;
    let footprints: Vec<Option<Foot>> = prims.iter().map(|p| footprint(p, band_cm)).collect();
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
            grow_lo: contact_offset(p, reach_cm).map(|u| u.min(0.0)),
            grow_hi: contact_offset(p, reach_cm).map(|u| u.max(0.0)),
        })
        .collect();
    // Bucket by the cells whose grown square the primitive's box meets (a
    // flat prefix-summed list: count, then fill).
    // (Grown as far as the cells' squares are when a primitive is tested
    // against them: the radius, the edge band and its margin. A stored box
    // is the rounded outline's; the true one reaches up to the band beyond.)
    let grow = reach_cm + band_cm + CONTAIN_MARGIN_CM;
    let cells_of = |h: &Hot| {
        let (lo, hi) = h.bbox;
        let beyond = n as f64 * CERT_CELL_CM;
        if hi[0] < -grow || hi[1] < -grow || lo[0] - grow > beyond || lo[1] - grow > beyond {
            return None;
        }
        Some((
            cell_of(lo[0] - grow)..=cell_of(hi[0] + grow),
            cell_of(lo[1] - grow)..=cell_of(hi[1] + grow),
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
    // (Sorted as integer keys beside the indices, then by index: no two
    // alike, so any sort gives this order.)
    let mut by_height: Vec<(i64, u32)> = hot
        .iter()
        .enumerate()
        .map(|(i, h)| (total_order_key(h.z_lo), i as u32))
        .collect();
    by_height.sort_unstable();
    for &(_, i) in &by_height {
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
    // Per plane: whether another plane number carries the same stored plane
    // (with another error bound): only then may another piece make the
    // runtime's recomputed bound differ. (`-0.0` is `0.0` here, as it is to
    // the `==` of that test.)
    let abk = |key: &[u64; 4]| [key[0], key[1], key[2]].map(|b| if f64::from_bits(b) == 0.0 { 0 } else { b });
    let mut same_plane: std::collections::HashMap<[u64; 3], u32> = std::collections::HashMap::new();
    for key in ids.keys() {
        *same_plane.entry(abk(key)).or_default() += 1;
    }
    let mut twinned = vec![false; ids.len()];
    for (key, &id) in &ids {
        twinned[id as usize] = same_plane[&abk(key)] > 1;
    }
    let grid = Grid {
        prims,
        hot: &hot,
        twinned: &twinned,
        footprints: &footprints,
        starts: &starts,
        members_of: &members_of,
        plane_box: &plane_box,
        reach_cm,
        list_height_cm,
        band_cm,
        memoize,
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
            if !c.wall_range().is_empty() {
                c.walls = (c.walls.get() + base_wall).into();
            }
            c
        }));
        walls.extend(band.walls);
    }
    offsets.push(certs.len() as u32);
    (offsets, certs, walls)
}

/// Where a sphere of radius `reach_cm` resting on a piece's plane touches
/// it, from its centre (XY): `R·(a, b)/√(1 + a² + b²)` up the slope
/// (smaller spheres touch between there and the centre). 0 for blockers.
fn contact_offset(p: &CertPrim, reach_cm: f64) -> [f64; 2] {
    match p.plane {
        Some(([a, b, _], _)) => [a, b].map(|g| reach_cm * g / (1.0 + a * a + b * b).sqrt()),
        None => [0.0; 2],
    }
}

/// Whether a primitive's footprint meets a cell's grown square.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Meets {
    Unknown,
    Yes,
    No,
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
    footprints: &'a [Option<Foot>],
    /// Cell `c`'s primitives: `members_of[starts[c]..starts[c + 1]]`.
    starts: &'a [u32],
    members_of: &'a [u32],
    /// Per plane, the union of its pieces' boxes.
    plane_box: &'a [([f64; 2], [f64; 2])],
    /// Per plane, whether another plane number has the same stored plane.
    twinned: &'a [bool],
    reach_cm: f64,
    list_height_cm: f64,
    band_cm: f64,
    /// Whether a band keeps [`above_part`]'s answers for its next cells.
    memoize: bool,
}

impl Grid<'_> {
    /// The certificates of the cells of rows `rows`.
    fn band(&self, rows: std::ops::Range<usize>) -> Band {
        let Grid {
            prims,
            hot,
            footprints,
            starts,
            members_of,
            plane_box,
            twinned,
            reach_cm,
            list_height_cm,
            band_cm,
            memoize,
        } = *self;
        let n = CERT_CELLS;
        let mut offsets = Vec::with_capacity(rows.len() * n);
        let mut certs = Vec::new();
        let mut walls: Vec<CertWall> = Vec::new();
        let mut listed: Vec<Foot> = Vec::new();
        let mut stored: Vec<CertWall> = Vec::new();
        let mut shared: FastMap<u64, usize> = FastMap::default();
        let mut parts: Vec<u32> = Vec::new();
        let mut by_plane: Vec<(u32, u32)> = Vec::new();
        let mut members: Vec<u32> = Vec::new();
        let mut meets: Vec<Meets> = Vec::new();
        let mut clipped: Vec<[f64; 2]> = Vec::new();
        // What `above_part` said of each (plane, primitive) pair the band
        // asked about: neighbouring cells ask again. Parts in `arena`.
        let mut memo: FastMap<u64, Above> = FastMap::default();
        let mut arena: Vec<[f64; 2]> = Vec::new();
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
                let bucket = &members_of[starts[y * n + x] as usize..starts[y * n + x + 1] as usize];
                let start = certs.len();
                // Each distinct stored plane among the bucket's pieces is a
                // candidate floor (its pieces in bucket order); one whose
                // pieces' boxes miss the cell's sub-cells cannot cover any.
                by_plane.clear();
                // (Only pieces whose boxes meet the cell grown by their
                // plane's contact offset count here.)
                by_plane.extend(
                    bucket
                        .iter()
                        .filter(|&&qi| {
                            let h = &hot[qi as usize];
                            let (plo, phi) = h.bbox;
                            h.plane_id != u32::MAX
                                && (0..2).all(|k| {
                                    plo[k] <= c_hi[k] + h.grow_hi[k] + inset && phi[k] >= c_lo[k] + h.grow_lo[k] - inset
                                })
                        })
                        .map(|&qi| (hot[qi as usize].plane_id, qi)),
                );
                by_plane.sort_by_key(|&(id, _)| id);
                meets.clear();
                meets.resize(bucket.len(), Meets::Unknown);
                for group in by_plane.chunk_by(|p, q| p.0 == q.0) {
                    let (id, first) = group[0];
                    let Some(([a, b, k], z_err)) = prims[first as usize].plane else {
                        continue;
                    };
                    let (plo, phi) = plane_box[id as usize];
                    let span = |k: usize| lesser(phi[k], c_hi[k]) - greater(plo[k], c_lo[k]);
                    if span(0) < CERT_CELL_CM / CERT_SUBCELLS as f64 || span(1) < CERT_CELL_CM / CERT_SUBCELLS as f64 {
                        continue;
                    }
                    members.clear();
                    members.extend(group.iter().map(|&(_, qi)| qi));
                    let g2 = a * a + b * b;
                    // Covered where a capsule centred in the cell (else in
                    // some of its quarters) first meets the plane:
                    // under its centre, shifted up the slope by up to
                    // `R·(a, b)/√(1 + a² + b²)` (the contact point of a
                    // sphere of radius up to R resting on the plane).
                    let (grow_lo, grow_hi) = (
                        hot[first as usize].grow_lo.map(|u| u - inset),
                        hot[first as usize].grow_hi.map(|u| u + inset),
                    );
                    let contact = |lo: [f64; 2], size: f64| {
                        (
                            [lo[0] + grow_lo[0], lo[1] + grow_lo[1]],
                            [lo[0] + size + grow_hi[0], lo[1] + size + grow_hi[1]],
                        )
                    };
                    let mut covers = |lo: [f64; 2], size: f64| {
                        let (lo, hi) = contact(lo, size);
                        self.covers(id, &members, &mut parts, lo, hi)
                    };
                    let cover = if covers(c_lo, CERT_CELL_CM) {
                        CERT_ALL_SUBCELLS
                    } else {
                        // Else its quarters, each held by one piece (cheap:
                        // no areas), of the pieces whose boxes could.
                        // (Every quarter's square holds the cell's centre
                        // farther than `inset` inside: a piece that holds
                        // one has the centre on its inner side of every
                        // edge, by far more than any rounding.)
                        let sub = CERT_CELL_CM / CERT_SUBCELLS as f64;
                        let least = |k: usize| sub + grow_hi[k] - grow_lo[k];
                        let centre = [c_lo[0] + sub, c_lo[1] + sub];
                        members.retain(|&qi| {
                            let h = &hot[qi as usize];
                            let (plo, phi) = h.bbox;
                            let span =
                                |k: usize| lesser(phi[k], c_hi[k] + grow_hi[k]) - greater(plo[k], c_lo[k] + grow_lo[k]);
                            span(0) >= least(0)
                                && span(1) >= least(1)
                                && holds_point(&prims[qi as usize].xy, h.orient, centre)
                        });
                        let mut mask = 0;
                        for j in 0..CERT_SUBCELLS {
                            for i in 0..CERT_SUBCELLS {
                                let (lo, hi) = contact([c_lo[0] + i as f64 * sub, c_lo[1] + j as f64 * sub], sub);
                                if self.one_covers(&members, lo, hi) {
                                    mask |= 1 << (CERT_SUBCELLS * j + i);
                                }
                            }
                        }
                        mask
                    };
                    if cover == 0 {
                        continue;
                    }
                    let corners = [
                        [g_lo[0], g_lo[1]],
                        [g_hi[0], g_lo[1]],
                        [g_lo[0], g_hi[1]],
                        [g_hi[0], g_hi[1]],
                    ];
                    let z_at = |c: &[f64; 2]| a * c[0] + b * c[1] + k;
                    let p_min = corners.iter().map(z_at).fold(f64::INFINITY, lesser) - z_err;
                    let p_max = corners.iter().map(z_at).fold(f64::NEG_INFINITY, greater) + z_err;
                    // Another piece carrying the plane with another bound
                    // would make the runtime's recomputed bound differ.
                    if twinned[id as usize]
                        && bucket.iter().any(|&qi| {
                            let h = &hot[qi as usize];
                            h.plane_id != id
                                && prims[qi as usize].plane.is_some_and(|(p, _)| p == [a, b, k])
                                && convex_meets_box(&prims[qi as usize].xy, h.bbox, h.orient, sq_lo, sq_hi)
                        })
                    {
                        continue;
                    }
                    // The clearance: the lowest other primitive over the
                    // square, after the lowest few listed by their
                    // footprints (low ones only: higher ones are better
                    // left to the clearance).
                    let list_below = p_max + list_height_cm;
                    // The plane's lowest point under a footprint.
                    let low_under = |w: &Foot| lesser(z_at(&w.a), z_at(&w.b)) - g2.sqrt() * w.err;
                    // A certificate is worth its bytes only if the largest
                    // agent centred in some covered quarter gets past every
                    // footprint (as the runtime checks them): the quarters
                    // where it still does.
                    let sub = CERT_CELL_CM / CERT_SUBCELLS as f64;
                    let slope = g2.sqrt();
                    let sample = |q: usize| {
                        let (i, j) = (q % CERT_SUBCELLS, q / CERT_SUBCELLS);
                        [c_lo[0] + (i as f64 + 0.5) * sub, c_lo[1] + (j as f64 + 0.5) * sub]
                    };
                    let mut usable = cover & CERT_ALL_SUBCELLS;
                    let mut clear = f64::INFINITY;
                    // Worth its bytes only where the largest agent's capsule
                    // (at least twice its radius high) fits under the
                    // clearance (checked after the scan, which stops as
                    // soon as it cannot).
                    let least = 2.0 * reach_cm;
                    listed.clear();
                    for (at, &qi) in bucket.iter().enumerate() {
                        let h = &hot[qi as usize];
                        // The rest start above the clearance: not needed.
                        if h.z_lo >= clear {
                            break;
                        }
                        if h.plane_id == id || h.z_hi < p_min - BELOW_MARGIN_CM {
                            continue;
                        }
                        // (Whether its footprint meets the square: once per
                        // cell, when first asked.)
                        if meets[at] == Meets::Unknown {
                            meets[at] = if convex_meets_box(&prims[qi as usize].xy, h.bbox, h.orient, sq_lo, sq_hi) {
                                Meets::Yes
                            } else {
                                Meets::No
                            };
                        }
                        if meets[at] == Meets::No {
                            continue;
                        }
                        // Only its part that may come within the plane's
                        // error and margin of the plane counts: a point
                        // lower than that is touched, if at all, after the
                        // plane (a convex crease's far side, a wall's foot
                        // below the floor).
                        if !memoize {
                            memo.clear();
                            arena.clear();
                        }
                        let above = *memo.entry(u64::from(id) << 32 | u64::from(qi)).or_insert_with(|| {
                            let p = &prims[qi as usize];
                            match above_part(p, [a, b, k], z_err + BELOW_MARGIN_CM, band_cm, &mut clipped) {
                                Reach::Below => Above::Below,
                                Reach::Whole { rise } => Above::Whole { rise },
                                Reach::Part { z_lo, rise } => {
                                    let at = arena.len();
                                    arena.extend_from_slice(&clipped);
                                    Above::Part {
                                        z_lo,
                                        rise,
                                        at: (at, arena.len()),
                                        bbox: xy_box(&clipped),
                                        orient: orientation(&clipped),
                                        foot: footprint_of(&clipped, prim_band(p, band_cm)),
                                    }
                                }
                            }
                        });
                        let (foot, z_lo, rise) = match above {
                            Above::Below => continue,
                            Above::Whole { rise } => {
                                let foot = footprints[qi as usize];
                                let coarse = foot.map_or(f64::INFINITY, |w| h.z_hi - low_under(&w));
                                (foot, h.z_lo, rise.min(coarse))
                            }
                            Above::Part {
                                z_lo,
                                rise,
                                at,
                                bbox,
                                orient,
                                foot,
                            } => {
                                if !convex_meets_box(&arena[at.0..at.1], bbox, orient, sq_lo, sq_hi) {
                                    continue;
                                }
                                (foot, z_lo, rise)
                            }
                        };
                        // A vertical motion that keeps farther from a
                        // primitive's footprint than the radius never touches
                        // it: list it for the query to check instead of
                        // lowering the clearance.
                        let listing = match foot {
                            Some(w) if z_lo <= list_below => list_footprint(&mut listed, w.rising(rise + z_err)),
                            _ => None,
                        };
                        let Some(listing) = listing else {
                            clear = clear.min(z_lo);
                            if clear <= p_max + least {
                                break;
                            }
                            continue;
                        };
                        let w = listed[listing.at].stored();
                        let mut still = usable;
                        for q in 0..CERT_SUBCELLS * CERT_SUBCELLS {
                            if still >> q & 1 != 0 && !w.passes(sample(q), reach_cm, slope, 0.0) {
                                still &= !(1 << q);
                            }
                        }
                        if still == 0 {
                            // Listed, it would leave no quarter usable (a
                            // ceiling over the cell): it bounds the clearance
                            // instead.
                            match listing.was {
                                Some(was) => listed[listing.at] = was,
                                None => {
                                    listed.pop();
                                }
                            }
                            clear = clear.min(z_lo);
                            if clear <= p_max + least {
                                break;
                            }
                            continue;
                        }
                        usable = still;
                    }
                    if clear <= p_max + least || walls.len() + listed.len() > u16::MAX as usize {
                        continue;
                    }
                    stored.clear();
                    stored.extend(listed.iter().map(Foot::stored));
                    // Neighbouring cells often list the same footprints:
                    // one copy serves them all. (Most list none.)
                    let first_wall = if stored.is_empty() {
                        0
                    } else {
                        Self::share_walls(&stored, &mut walls, &mut shared)
                    };
                    let word = if listed.is_empty() {
                        0
                    } else {
                        (first_wall | (listed.len() << 16)) as u32
                    };
                    certs.push(Cert {
                        a: (a as f32).into(),
                        b: (b as f32).into(),
                        k: (k as f32).into(),
                        z_err_cm: (z_err as f32).into(),
                        // Rounded down on purpose: a lower clearance is still
                        // a true bound.
                        clear_z: f32_at_most(clear).into(),
                        walls: word.into(),
                        cover: cover.into(),
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

    /// Where `stored` begins in `walls`: an earlier copy (found by its hash
    /// in `shared`) or one appended now.
    fn share_walls(stored: &[CertWall], walls: &mut Vec<CertWall>, shared: &mut FastMap<u64, usize>) -> usize {
        let key = walksurf_format::hash64(stored.as_bytes());
        let same = |&first: &usize| {
            walls
                .get(first..first + stored.len())
                .is_some_and(|w| w.as_bytes() == stored.as_bytes())
        };
        match shared.get(&key).filter(|f| same(f)) {
            Some(&first) => first,
            None => {
                shared.insert(key, walls.len());
                walls.extend_from_slice(stored);
                walls.len() - stored.len()
            }
        }
    }
}

impl Grid<'_> {
    /// Whether one of the pieces `members` holds the whole square.
    fn one_covers(&self, members: &[u32], lo: [f64; 2], hi: [f64; 2]) -> bool {
        members.iter().any(|&qi| {
            let h = &self.hot[qi as usize];
            let (plo, phi) = h.bbox;
            plo[0] <= lo[0]
                && plo[1] <= lo[1]
                && phi[0] >= hi[0]
                && phi[1] >= hi[1]
                && covers_box(&self.prims[qi as usize].xy, h.orient, lo, hi)
        })
    }

    /// Whether the pieces `members` (those of plane `id` in the cell's
    /// bucket) cover the square `[lo, hi]`: their boxes reach its sides and
    /// add up to its area at least (cheap, first), then their clipped
    /// areas add up to its own and no two overlap (an overlap could hide a
    /// hole of the same area). `parts` is scratch.
    fn covers(&self, id: u32, members: &[u32], parts: &mut Vec<u32>, lo: [f64; 2], hi: [f64; 2]) -> bool {
        let (hot, prims) = (self.hot, self.prims);
        let (plo, phi) = self.plane_box[id as usize];
        if plo[0] > lo[0] || plo[1] > lo[1] || phi[0] < hi[0] || phi[1] < hi[1] {
            return false;
        }
        let full = (hi[0] - lo[0]) * (hi[1] - lo[1]);
        let box_cover: f64 = members
            .iter()
            .map(|&qi| box_overlap_area(hot[qi as usize].bbox, (lo, hi)))
            .sum();
        if box_cover < full - MAX_UNCOVERED_CM2 {
            return false;
        }
        // One piece holding the whole square is enough.
        if self.one_covers(members, lo, hi) {
            return true;
        }
        // A corner farther than [`CORNER_HOLE_CM`] from every piece leaves
        // a quarter disk uncovered, more than the areas may miss: no cover
        // (cheap, before any areas).
        let corners = [lo, [hi[0], lo[1]], hi, [lo[0], hi[1]]];
        if !corners.iter().all(|&c| {
            members.iter().any(|&qi| {
                let h = &hot[qi as usize];
                near_convex(&prims[qi as usize].xy, h.orient, c, CORNER_HOLE_CM)
            })
        }) {
            return false;
        }
        // Else the pieces must be disjoint (checked below) and their
        // clipped areas add up to the square's.
        parts.clear();
        let mut covered = 0.0;
        for &qi in members {
            let h = &hot[qi as usize];
            let (plo, phi) = h.bbox;
            if phi[0] <= lo[0] || phi[1] <= lo[1] || plo[0] >= hi[0] || plo[1] >= hi[1] {
                continue; // (its box misses the square)
            }
            // (A piece whose box holds the square does not hold the square
            // itself: `one_covers` said so.)
            let holds = plo[0] <= lo[0] && plo[1] <= lo[1] && phi[0] >= hi[0] && phi[1] >= hi[1];
            let area = if plo[0] >= lo[0] && plo[1] >= lo[1] && phi[0] <= hi[0] && phi[1] <= hi[1] {
                h.area // wholly inside the square
            } else if !holds && covers_box(&prims[qi as usize].xy, h.orient, lo, hi) {
                full // the square wholly inside it
            } else {
                clipped_area(&prims[qi as usize].xy, lo, hi)
            };
            if area > 0.0 {
                covered += area;
                parts.push(qi);
            }
        }
        // Too many pieces: the pairwise check is quadratic.
        if parts.len() > MAX_COVER_PIECES || (covered - full).abs() > MAX_UNCOVERED_CM2 {
            return false;
        }
        // An edge where the surface ends (a hole, however small), inside
        // the square: not covered.
        if parts.iter().any(|&qi| {
            let p = &prims[qi as usize];
            let n = p.xy.len();
            (0..n).any(|i| p.interior >> i & 1 == 0 && segment_enters_box(p.xy[i], p.xy[(i + 1) % n], lo, hi))
        }) {
            return false;
        }
        !parts.iter().enumerate().any(|(i, &p)| {
            parts[i + 1..].iter().any(|&q| {
                box_overlap_area(hot[p as usize].bbox, hot[q as usize].bbox) > MAX_UNCOVERED_CM2
                    && convex_overlap_area(&prims[p as usize].xy, &prims[q as usize].xy) > MAX_UNCOVERED_CM2
            })
        })
    }
}

/// A primitive's footprint as a query sees it: a segment and how far from
/// it the footprint reaches (plus `band_cm` for a piece's rounded outline).
/// The segment runs along the direction of the footprint's diameter, at
/// the middle of its width across: every vertex projects inside the
/// diameter (a vertex beyond one end would lie farther from the other), so
/// every vertex, and the convex footprint, lies within half the width of
/// it. An exactly vertical wall gives its own footprint segment, err near
/// 0. `None` for an empty or non-finite footprint.
fn footprint(p: &CertPrim, band_cm: f64) -> Option<Foot> {
    footprint_of(&p.xy, prim_band(p, band_cm))
}

/// How far beyond its stored outline a primitive's true footprint may
/// reach: the edge band for a piece (its outline is rounded), else 0.
fn prim_band(p: &CertPrim, band_cm: f64) -> f64 {
    if p.plane.is_some() { band_cm } else { 0.0 }
}

/// Squared distance.
fn d2(p: [f64; 2], q: [f64; 2]) -> f64 {
    (p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2)
}

/// The first pair of `points` farther apart (squared distance) than
/// `start` and every pair before it, or `start`; with its squared distance.
/// Each pair once: the distance is symmetric, so a reverse never beats it.
fn farthest_pair(points: &[[f64; 2]], start: ([f64; 2], [f64; 2])) -> (([f64; 2], [f64; 2]), f64) {
    let mut best = (start, d2(start.0, start.1));
    for (i, &p) in points.iter().enumerate() {
        for &q in &points[i + 1..] {
            let d = d2(p, q);
            if d > best.1 {
                best = ((p, q), d);
            }
        }
    }
    best
}

/// An integer ordered as [`f64::total_cmp`] orders its argument.
fn total_order_key(z: f64) -> i64 {
    let bits = z.to_bits() as i64;
    bits ^ (((bits >> 63) as u64) >> 1) as i64
}

/// [`footprint`] of the convex polygon `xy`, reaching `band` beyond it.
fn footprint_of(xy: &[[f64; 2]], band: f64) -> Option<Foot> {
    let first = *xy.first()?;
    let ((a, b), far) = farthest_pair(xy, (first, first));
    let len = far.sqrt();
    let foot = if len == 0.0 {
        Foot {
            a,
            b,
            err: band,
            rise: f64::INFINITY,
        }
    } else {
        // Signed offsets across the diameter: the segment moves to their
        // middle.
        let n = [(a[1] - b[1]) / len, (b[0] - a[0]) / len];
        let across = |q: &[f64; 2]| (q[0] - a[0]) * n[0] + (q[1] - a[1]) * n[1];
        let (lo, hi) = xy
            .iter()
            .map(across)
            .fold((0.0f64, 0.0f64), |(lo, hi), h| (lo.min(h), hi.max(h)));
        let mid = 0.5 * (lo + hi);
        let shift = |q: [f64; 2]| [q[0] + mid * n[0], q[1] + mid * n[1]];
        Foot {
            a: shift(a),
            b: shift(b),
            err: 0.5 * (hi - lo) + band,
            rise: f64::INFINITY,
        }
    };
    let finite = [foot.a[0], foot.a[1], foot.b[0], foot.b[1], foot.err]
        .iter()
        .all(|v| v.is_finite());
    finite.then_some(foot)
}

/// [`Reach`] as the cell loop keeps it for a (plane, primitive) pair: a
/// part as a range of the band's arena, with what the cells ask of it.
#[derive(Clone, Copy)]
enum Above {
    Below,
    Whole {
        rise: f64,
    },
    Part {
        z_lo: f64,
        rise: f64,
        at: (usize, usize),
        bbox: ([f64; 2], [f64; 2]),
        orient: f64,
        foot: Option<Foot>,
    },
}

/// How a primitive lies against a certificate's plane ([`above_part`]).
enum Reach {
    /// Every point of it lies deeper below the plane than asked.
    Below,
    /// No vertex does: it is taken whole, rising at most `rise` above the
    /// plane (∞ when unknown).
    Whole { rise: f64 },
    /// Only its part that does not (written out as a convex polygon): its
    /// lowest point `z_lo`, and it rises at most `rise` above the plane.
    Part { z_lo: f64, rise: f64 },
}

/// The part of a primitive whose true points may lie less than `depth`
/// below the plane `z = a·x + b·y + k` (the rest is never touched before
/// the plane by a sphere resting on it within that error). `z − plane` is
/// linear over a planar primitive, so its vertices bound it and the part is
/// the polygon clipped where it crosses `−depth` (into `out`). A piece's
/// true surface lies within its plane's error of the stored plane, and
/// reaches `band_cm` beyond its outline, where `z − plane` may grow by its
/// slope against the plane's times that; a blocker's stored vertices may
/// move by the vertex grid's step. A primitive with neither a plane nor
/// vertex heights (a seam) is taken whole.
fn above_part(p: &CertPrim, [a, b, k]: [f64; 3], depth: f64, band_cm: f64, out: &mut Vec<[f64; 2]>) -> Reach {
    // Each vertex's nominal z, and how far the true primitive near there
    // may lie above (`up`) and below (`down`) it.
    let n = p.xy.len();
    let mut z = [0.0f64; MAX_CLIP_VERTICES];
    if n == 0 || n > MAX_CLIP_VERTICES {
        return Reach::Whole { rise: f64::INFINITY };
    }
    let (up, down) = match (p.plane, p.vertex_z) {
        (Some(([pa, pb, pk], e)), _) => {
            for (z, v) in z.iter_mut().zip(&p.xy) {
                *z = pa * v[0] + pb * v[1] + pk;
            }
            let (da, db) = (pa - a, pb - b);
            (
                e + (da * da + db * db).sqrt() * band_cm,
                e + (pa * pa + pb * pb).sqrt() * band_cm,
            )
        }
        (None, Some(vz)) if n == 3 => {
            z[..n].copy_from_slice(&vz);
            let step = 1.0 / walksurf_format::VERTEX_STEPS_PER_CM;
            let s = step * (1.0 + a.abs() + b.abs());
            (s, s)
        }
        (None, _) => return Reach::Whole { rise: f64::INFINITY },
    };
    // How far above the plane each vertex lies.
    let mut over = [0.0f64; MAX_CLIP_VERTICES];
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for i in 0..n {
        over[i] = z[i] - (a * p.xy[i][0] + b * p.xy[i][1] + k);
        lo = lo.min(over[i]);
        hi = hi.max(over[i]);
    }
    // (A NaN anywhere, which `min`/`max` would skip: taken whole, unknown
    // rise.)
    if !over[..n].iter().all(|d| d.is_finite()) {
        return Reach::Whole { rise: f64::INFINITY };
    }
    let floor = -(depth + up);
    if hi < floor {
        return Reach::Below;
    }
    if lo >= floor {
        return Reach::Whole { rise: hi + up };
    }
    out.clear();
    let mut z_lo = f64::INFINITY;
    for i in 0..n {
        let j = if i + 1 == n { 0 } else { i + 1 };
        let (di, dj) = (over[i], over[j]);
        if di >= floor {
            out.push(p.xy[i]);
            z_lo = z_lo.min(z[i]);
        }
        if (di >= floor) != (dj >= floor) {
            let t = (floor - di) / (dj - di);
            let (pi, pj) = (p.xy[i], p.xy[j]);
            out.push([pi[0] + t * (pj[0] - pi[0]), pi[1] + t * (pj[1] - pi[1])]);
            z_lo = z_lo.min(z[i] + t * (z[j] - z[i]));
        }
    }
    Reach::Part {
        z_lo: z_lo - down,
        rise: hi + up,
    }
}

/// A footprint: every point of it lies within `err` of the segment `a b`;
/// its primitive rises at most `rise` above the certificate's plane.
#[derive(Clone, Copy, Debug)]
struct Foot {
    a: [f64; 2],
    b: [f64; 2],
    err: f64,
    rise: f64,
}

impl Foot {
    /// As stored: its ends rounded to `f32` (which moves the segment by at
    /// most the larger rounding), that rounding and a margin added to its
    /// error, error and rise rounded up.
    fn stored(&self) -> CertWall {
        let (a, b) = (self.a.map(|v| v as f32), self.b.map(|v| v as f32));
        // (A square root, not `hypot`: this runs for every footprint a
        // cell considers, and the rounding is far below the margin.)
        let moved = |p: [f32; 2], q: [f64; 2]| {
            let (dx, dy) = (p[0] as f64 - q[0], p[1] as f64 - q[1]);
            (dx * dx + dy * dy).sqrt()
        };
        let err = self.err + moved(a, self.a).max(moved(b, self.b)) + WALL_STORE_ERR_CM;
        CertWall {
            x0: a[0].into(),
            y0: a[1].into(),
            x1: b[0].into(),
            y1: b[1].into(),
            err_cm: f32_at_least(err).into(),
            rise_cm: f32_at_least(self.rise).into(),
        }
    }

    fn rising(self, rise: f64) -> Foot {
        Foot { rise, ..self }
    }

    /// One footprint holding both, if it reaches at most
    /// [`MERGE_GROWTH_CM`] farther than the wider of them: the segment
    /// between the farthest two of their four ends, its error the farthest
    /// either reaches from it (distance to a segment is convex along
    /// another, so the ends bound it).
    fn merged(&self, o: &Foot) -> Option<Foot> {
        let ((a, b), best) = farthest_pair(&[self.a, self.b, o.a, o.b], (self.a, self.b));
        let limit = self.err.max(o.err) + MERGE_GROWTH_CM;
        // Each end within `limit` less its own footprint's error of the
        // line (squared, without a division; a point segment: of `a`).
        let within = |p: [f64; 2], own: f64| {
            let room = limit - own;
            let off2 = if best == 0.0 {
                d2(a, p)
            } else {
                ((b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])).powi(2) / best
            };
            room >= 0.0 && off2 <= room * room
        };
        if !(within(self.a, self.err) && within(self.b, self.err) && within(o.a, o.err) && within(o.b, o.err)) {
            return None;
        }
        let off = |p: [f64; 2]| {
            if best == 0.0 {
                d2(a, p).sqrt()
            } else {
                ((b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])).abs() / best.sqrt()
            }
        };
        let err = (off(self.a).max(off(self.b)) + self.err).max(off(o.a).max(off(o.b)) + o.err);
        let rise = self.rise.max(o.rise);
        Some(Foot { a, b, err, rise })
    }
}

/// Where [`list_footprint`] put a footprint: the entry, and what it held
/// before (`None`: pushed), to undo it.
struct Listing {
    at: usize,
    was: Option<Foot>,
}

/// Lists a footprint, merged into one already listed where it fits, else
/// as a new one while there is room; `None` if nowhere.
fn list_footprint(listed: &mut Vec<Foot>, w: Foot) -> Option<Listing> {
    for (at, l) in listed.iter_mut().enumerate() {
        if let Some(m) = l.merged(&w) {
            let was = std::mem::replace(l, m);
            return Some(Listing { at, was: Some(was) });
        }
    }
    if listed.len() < MAX_CERT_WALLS {
        listed.push(w);
        return Some(Listing {
            at: listed.len() - 1,
            was: None,
        });
    }
    None
}

/// The largest `f32` not above `v` (`f32::MAX` for +∞).
fn f32_at_most(v: f64) -> f32 {
    if v >= f32::MAX as f64 {
        return f32::MAX;
    }
    let f = v as f32;
    if f as f64 > v { f.next_down() } else { f }
}

/// The smallest `f32` not below `v` (`f32::MAX` for +∞ and beyond).
fn f32_at_least(v: f64) -> f32 {
    if v > f32::MAX as f64 {
        return f32::MAX;
    }
    -f32_at_most(-v)
}

/// Whether the segment `a b` passes through the open box `(lo, hi)`: its
/// part inside the closed box (Liang–Barsky) has its middle strictly inside
/// (a part along the box's side does not).
fn segment_enters_box(a: [f64; 2], b: [f64; 2], lo: [f64; 2], hi: [f64; 2]) -> bool {
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for k in 0..2 {
        let d = b[k] - a[k];
        if d == 0.0 {
            if a[k] < lo[k] || a[k] > hi[k] {
                return false;
            }
            continue;
        }
        let (u, v) = ((lo[k] - a[k]) / d, (hi[k] - a[k]) / d);
        t0 = t0.max(u.min(v));
        t1 = t1.min(u.max(v));
    }
    if t0 > t1 {
        return false;
    }
    let t = 0.5 * (t0 + t1);
    let m = [a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])];
    (0..2).all(|k| m[k] > lo[k] && m[k] < hi[k])
}

/// Whether `p` lies within `d` of every edge line of a convex polygon (of
/// [`orientation`] `orient`) on its inner side: every point within `d` of
/// the polygon does. A degenerate polygon (no area): no.
fn near_convex(poly: &[[f64; 2]], orient: f64, p: [f64; 2], d: f64) -> bool {
    // (A NaN side is not refused here.)
    every_side(poly, orient, p, |side, e| {
        side.partial_cmp(&(-d * (e[0] * e[0] + e[1] * e[1]).sqrt())) != Some(std::cmp::Ordering::Less)
    })
}

/// Whether `p` lies on the inner side of every edge line of a convex
/// polygon (of [`orientation`] `orient`), or on one. A degenerate polygon:
/// no.
fn holds_point(poly: &[[f64; 2]], orient: f64, p: [f64; 2]) -> bool {
    // (NaN: not held.)
    every_side(poly, orient, p, |side, _| side >= 0.0)
}

/// Whether `keep(side, edge)` holds for every edge of a convex polygon of
/// [`orientation`] `orient` (not degenerate), `side` being how far `p` lies
/// on its inner side, times the edge's length.
#[inline]
fn every_side(poly: &[[f64; 2]], orient: f64, p: [f64; 2], keep: impl Fn(f64, [f64; 2]) -> bool) -> bool {
    let Some(&last) = poly.last() else {
        return false;
    };
    if orient == 0.0 {
        return false;
    }
    let mut a = last;
    for &b in poly {
        let e = [b[0] - a[0], b[1] - a[1]];
        if !keep((e[0] * (p[1] - a[1]) - e[1] * (p[0] - a[0])) * orient, e) {
            return false;
        }
        a = b;
    }
    true
}

/// Whether a convex polygon (of [`orientation`] `orient`) holds the whole
/// box: every corner on the inner side of every edge, or on it (per edge,
/// the corner farthest to the outside: [`least_side`]).
fn covers_box(poly: &[[f64; 2]], orient: f64, lo: [f64; 2], hi: [f64; 2]) -> bool {
    let Some(&last) = poly.last() else {
        return false;
    };
    if orient == 0.0 {
        return false;
    }
    let mut p = last;
    for &q in poly {
        let s = [(q[0] - p[0]) * orient, (q[1] - p[1]) * orient];
        // (NaN: not held.)
        let side = least_side(p, s, lo, hi);
        if side.is_nan() || side < 0.0 {
            return false;
        }
        p = q;
    }
    true
}

/// Area of the intersection of two boxes.
fn box_overlap_area(a: ([f64; 2], [f64; 2]), b: ([f64; 2], [f64; 2])) -> f64 {
    let w = |k: usize| greater(lesser(a.1[k], b.1[k]) - greater(a.0[k], b.0[k]), 0.0);
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
    // strictly outside (the greatest side below 0, or the least above).
    let Some(&last) = poly.last() else {
        return false;
    };
    let mut p = last;
    for &q in poly {
        let e = [q[0] - p[0], q[1] - p[1]];
        let separates = if orient != 0.0 {
            least_side(p, [-e[0] * orient, -e[1] * orient], lo, hi) > 0.0
        } else {
            least_side(p, [-e[0], -e[1]], lo, hi) > 0.0 || least_side(p, e, lo, hi) > 0.0
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

    #[test]
    fn total_order_keys_order_as_total_cmp() {
        let mut rng = crate::geom::TestRng::new(5);
        let special = [
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
            f64::MIN_POSITIVE,
            -1e-300,
        ];
        let values: Vec<f64> = special
            .iter()
            .copied()
            .chain((0..500).map(|_| (rng.unit() - 0.5) * 1e4))
            .collect();
        for &a in &values {
            for &b in &values {
                assert_eq!(total_order_key(a).cmp(&total_order_key(b)), a.total_cmp(&b), "{a} {b}");
            }
        }
    }

    const REACH: CertReach = CertReach {
        reach_cm: 42.0,
        list_height_cm: 242.0,
        band_cm: 0.005,
    };

    fn square(lo: f64, hi: f64) -> Vec<[f64; 2]> {
        vec![[lo, lo], [hi, lo], [hi, hi], [lo, hi]]
    }

    /// The certificates of cell `(x, y)`.
    fn cell<'a>(off: &[u32], certs: &'a [Cert], x: usize, y: usize) -> &'a [Cert] {
        &certs[off[y * CERT_CELLS + x] as usize..off[y * CERT_CELLS + x + 1] as usize]
    }

    /// The `cover` words of cell `(x, y)`'s certificates.
    fn covers(off: &[u32], certs: &[Cert], x: usize, y: usize) -> Vec<u32> {
        cell(off, certs, x, y).iter().map(|c| c.cover.get()).collect()
    }

    fn flat_floor(lo: f64, hi: f64, z: f64) -> CertPrim {
        CertPrim {
            xy: square(lo, hi),
            z_lo: z,
            z_hi: z,
            plane: Some(([0.0, 0.0, z], 0.001)),
            vertex_z: None,
            interior: 0,
        }
    }

    /// Whether every point of `xy` lies within the listed footprint.
    fn holds(w: &CertWall, xy: &[[f64; 2]]) -> bool {
        let (a, b) = (
            [w.x0.get() as f64, w.y0.get() as f64, 0.0],
            [w.x1.get() as f64, w.y1.get() as f64, 0.0],
        );
        xy.iter()
            .all(|&p| crate::geom::segment_xy_distance(p, a, b) <= w.err_cm.get() as f64)
    }

    /// Keeping `above_part`'s answers from cell to cell changes no
    /// certificate: generated tiles of tilted and flat floors on a few
    /// planes (some crossing each other) and blocker triangles at every
    /// height among them, with and without the memo.
    #[test]
    fn remembered_parts_give_the_same_certificates() {
        let mut rng = crate::geom::TestRng::new(11);
        let mut next = move || rng.unit();
        let mut certified = 0;
        for _ in 0..6 {
            let mut prims = Vec::new();
            for _ in 0..8 {
                // A square floor piece on plane z = a·x + b·y + k.
                let (x, y, w) = (next() * 800.0, next() * 800.0, 80.0 + next() * 400.0);
                let (a, b, k) = ((next() - 0.5) * 0.6, (next() - 0.5) * 0.6, next() * 150.0);
                let xy = vec![[x, y], [x + w, y], [x + w, y + w], [x, y + w]];
                let z: Vec<f64> = xy.iter().map(|p| a * p[0] + b * p[1] + k).collect();
                prims.push(CertPrim {
                    z_lo: z.iter().copied().fold(f64::INFINITY, f64::min),
                    z_hi: z.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    xy,
                    plane: Some(([a, b, k], 0.001)),
                    vertex_z: None,
                    interior: 0,
                });
            }
            for _ in 0..40 {
                let (x, y) = (next() * 1000.0, next() * 1000.0);
                let xy: Vec<[f64; 2]> = (0..3).map(|_| [x + next() * 120.0, y + next() * 120.0]).collect();
                let vertex_z: [f64; 3] = std::array::from_fn(|_| next() * 400.0 - 100.0);
                prims.push(CertPrim {
                    z_lo: vertex_z.iter().copied().fold(f64::INFINITY, f64::min),
                    z_hi: vertex_z.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    xy,
                    plane: None,
                    vertex_z: Some(vertex_z),
                    interior: 0,
                });
            }
            let kept = certificates_with(&prims, REACH, true);
            let fresh = certificates_with(&prims, REACH, false);
            assert_eq!(kept.0, fresh.0);
            assert_eq!(kept.1.as_bytes(), fresh.1.as_bytes());
            assert_eq!(kept.2.as_bytes(), fresh.2.as_bytes());
            certified += kept.1.len();
        }
        // The tiles certify something (the comparison is not of nothing).
        assert!(certified > 100, "{certified}");
    }

    #[test]
    fn a_floor_certifies_where_a_capsule_first_meets_it() {
        let floor = flat_floor(0.0, 1000.0, 0.0);
        let (off, certs, _) = certificates(std::slice::from_ref(&floor), REACH);
        let cover = |x: usize, y: usize| covers(&off, &certs, x, y);
        // Cell (5, 5) spans 200..240, well inside 0..1000.
        assert_eq!(cover(5, 5), [CERT_ALL_SUBCELLS]);
        // Cell (1, 5) spans 40..80: a capsule's footprint may leave the
        // floor, its first contact (under its centre) may not.
        assert_eq!(cover(1, 5), [CERT_ALL_SUBCELLS]);
        // Cell (0, 0) spans 0..40, on the floor's corner: the edge band
        // leaves only its inner quarter (20..40 both ways, bit 2·1 + 1).
        assert_eq!(cover(0, 0), [1 << 3]);
        // Cell (24, 5) spans 960..1000: its low quarters (x 960..980).
        assert_eq!(cover(24, 5), [1 | 1 << 2]);
        // Beyond the floor: nothing.
        assert!(cell(&off, &certs, 26, 5).is_empty());
        assert!(certs.iter().all(|c| c.clear_z.get() == f32::MAX));

        // A ceiling 300 cm up is the clearance (too high to be listed).
        let ceiling = flat_floor(0.0, 1000.0, 300.0);
        let (off, certs, walls) = certificates(&[floor, ceiling], REACH);
        let c = cell(&off, &certs, 5, 5);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].k.get(), 0.0, "sorted by height");
        assert_eq!(c[0].clear_z.get(), 300.0);
        assert_eq!(c[1].clear_z.get(), f32::MAX);
        assert!(walls.is_empty());
    }

    #[test]
    fn a_slope_certifies_where_its_contact_point_stays_on_it() {
        // z = x over 0..1000: a sphere of radius up to 42 meets it up to
        // 42·sin 45° = 29.7 cm uphill (+x) of its centre.
        let slope = CertPrim {
            xy: square(0.0, 1000.0),
            z_lo: 0.0,
            z_hi: 1000.0,
            plane: Some(([1.0, 0.0, 0.0], 0.001)),
            vertex_z: None,
            interior: 0,
        };
        let (off, certs, _) = certificates(std::slice::from_ref(&slope), REACH);
        let cover = |x: usize, y: usize| covers(&off, &certs, x, y);
        assert_eq!(
            cover(0, 5),
            [1 << 1 | 1 << 3],
            "x 0 is on the edge band, 20..69.7 is on"
        );
        assert_eq!(cover(1, 5), [CERT_ALL_SUBCELLS], "40..109.7 is on");
        assert_eq!(cover(23, 5), [CERT_ALL_SUBCELLS], "920..989.7 is on");
        assert!(cover(24, 5).is_empty(), "960..1009.7 and 980..1029.7 leave it");
    }

    #[test]
    fn a_plane_stored_with_two_error_bounds_certifies_only_where_one_is_near() {
        // The same stored plane (its slope once written -0.0) carried by two
        // pieces with different error bounds: where the second (a strip at
        // x 515..530) meets a cell's grown square, the runtime could
        // recompute either bound. It stays farther than the radius from
        // every quarter of cell 11 (x 440..480, grown to 522), so only that
        // check refuses it.
        let rect = |x0: f64, x1: f64, plane: [f64; 3], err: f64| CertPrim {
            xy: vec![[x0, 0.0], [x1, 0.0], [x1, 1000.0], [x0, 1000.0]],
            plane: Some((plane, err)),
            ..flat_floor(0.0, 1.0, 0.0)
        };
        let prims = [
            rect(0.0, 500.0, [0.0, 0.0, 0.0], 0.001),
            rect(515.0, 530.0, [-0.0, 0.0, 0.0], 0.002),
        ];
        let (off, certs, _) = certificates(&prims, REACH);
        let count = |x: usize| cell(&off, &certs, x, 12).len();
        assert_eq!(count(10), 1, "x 400..440: the other piece is out of reach");
        assert_eq!(count(11), 0, "x 440..480: the other piece meets the grown cell");
        // With one bound they are one surface: cell 11 is certified.
        let one = [
            rect(0.0, 500.0, [0.0, 0.0, 0.0], 0.001),
            rect(515.0, 530.0, [0.0, 0.0, 0.0], 0.001),
        ];
        let (off, certs, _) = certificates(&one, REACH);
        assert_eq!(cell(&off, &certs, 11, 12).len(), 1);
    }

    #[test]
    fn pieces_of_one_plane_certify_together_but_not_across_a_gap() {
        let plane = Some(([0.0, 0.0, 0.0], 0.001));
        let tri = |v: Vec<[f64; 2]>| CertPrim {
            xy: v,
            z_lo: 0.0,
            z_hi: 0.0,
            plane,
            vertex_z: None,
            interior: 0,
        };
        // The 1000 cm square as two triangles sharing the diagonal (an
        // interior edge of each).
        let halves = [
            CertPrim {
                vertex_z: None,
                interior: 1 << 2,
                ..tri(vec![[0.0, 0.0], [1000.0, 0.0], [1000.0, 1000.0]])
            },
            CertPrim {
                vertex_z: None,
                interior: 1,
                ..tri(vec![[0.0, 0.0], [1000.0, 1000.0], [0.0, 1000.0]])
            },
        ];
        let (off, _, _) = certificates(&halves, REACH);
        let count = |off: &[u32], x: usize, y: usize| off[y * CERT_CELLS + x + 1] - off[y * CERT_CELLS + x];
        assert_eq!(
            count(&off, 12, 12),
            1,
            "a cell on the diagonal is covered by both halves"
        );
        // Move the second half 0.5 cm away: a gap along the diagonal, which
        // crosses every quarter of cell (12, 12) or passes within the band.
        let gapped = [
            tri(vec![[0.0, 0.0], [1000.0, 0.0], [1000.0, 1000.0]]),
            tri(vec![[0.0, 0.5], [999.5, 1000.0], [0.0, 1000.0]]),
        ];
        let (off, certs, _) = certificates(&gapped, REACH);
        assert_eq!(count(&off, 12, 12), 0, "the gap crosses the cell");
        assert_eq!(
            cell(&off, &certs, 12, 13)
                .iter()
                .map(|c| c.cover.get())
                .collect::<Vec<_>>(),
            [1 | 1 << 2 | 1 << 3],
            "cell (12, 13) spans x 480..520, y 520..560: the gap passes its quarter at x 500..520, y 520..540"
        );
        assert_eq!(count(&off, 20, 5), 1, "far from the gap, one half suffices");
        // An overlap hiding a hole of the same area (the stairs test's
        // landing box over the floor's end) certifies no area it hides.
        let hidden = [
            tri(vec![[0.0, 0.0], [700.0, 0.0], [700.0, 1000.0], [0.0, 1000.0]]),
            tri(vec![[600.0, 0.0], [700.0, 0.0], [700.0, 1000.0], [600.0, 1000.0]]),
        ];
        let (off, certs, _) = certificates(&hidden, REACH);
        let cover = |x: usize| {
            cell(&off, &certs, x, 5)
                .iter()
                .map(|c| c.cover.get())
                .collect::<Vec<_>>()
        };
        assert!(cover(17).is_empty(), "x 680..720 reaches past the floor's end");
        assert_eq!(cover(16), [CERT_ALL_SUBCELLS], "x 640..680: one piece holds it");
        // Pieces overlapping (x 805..815) where a crack (y 220..221, x > 815)
        // opens: their areas add up to more than the square's, and no one
        // piece holds a quarter of cell (20, 5) (x 800..840, y 200..240).
        let rect = |x0: f64, x1: f64, y0: f64, y1: f64| tri(vec![[x0, y0], [x1, y0], [x1, y1], [x0, y1]]);
        let cracked = [
            rect(0.0, 815.0, 0.0, 1000.0),
            rect(805.0, 1000.0, 0.0, 220.0),
            rect(805.0, 1000.0, 221.0, 1000.0),
        ];
        let (off, _, _) = certificates(&cracked, REACH);
        assert_eq!(count(&off, 20, 5), 0, "cell 800..840: overlap and crack");
        assert_eq!(count(&off, 10, 5), 1, "cell 400..440: one piece holds it");
    }

    #[test]
    fn obstacles_are_listed_by_footprint_and_rise() {
        let floor = flat_floor(0.0, 1000.0, 0.0);
        // A 3 m high wall along x = 500 (its footprint is a segment), as two
        // triangles: listed as one.
        let wall = |v: [[f64; 2]; 3]| CertPrim {
            xy: v.to_vec(),
            z_lo: 0.0,
            z_hi: 300.0,
            plane: None,
            vertex_z: None,
            interior: 0,
        };
        let walls_in = [
            wall([[500.0, 100.0], [500.0, 500.0], [500.0, 500.0]]),
            wall([[500.0, 500.0], [500.0, 900.0], [500.0, 500.0]]),
        ];
        // A slanted face, 10 cm wide across.
        let slant = CertPrim {
            xy: vec![[700.0, 100.0], [710.0, 900.0], [700.0, 900.0]],
            z_lo: 0.0,
            z_hi: 300.0,
            plane: None,
            vertex_z: None,
            interior: 0,
        };
        // A curb 12 cm high, and the floor of a pit 40 cm down (wholly
        // below the plane: never listed), and its wall (top at the floor).
        let curb = CertPrim {
            xy: square(300.0, 310.0),
            z_lo: 0.0,
            z_hi: 12.0,
            plane: None,
            vertex_z: None,
            interior: 0,
        };
        let pit_floor = flat_floor(100.0, 200.0, -40.0);
        let pit_wall = CertPrim {
            xy: vec![[200.0, 100.0], [200.0, 200.0], [200.0, 200.0]],
            z_lo: -40.0,
            z_hi: 0.0,
            plane: None,
            vertex_z: None,
            interior: 0,
        };
        let mut prims = vec![floor];
        prims.extend(walls_in.iter().cloned());
        prims.extend([slant.clone(), curb.clone(), pit_floor, pit_wall]);
        let (off, certs, walls) = certificates(&prims, REACH);
        // (The floor's: the pit's floor has its own where it covers.)
        let listed = |x: usize, y: usize| {
            let c: Vec<&Cert> = cell(&off, &certs, x, y).iter().filter(|c| c.k.get() == 0.0).collect();
            assert_eq!(c.len(), 1, "cell ({x}, {y})");
            assert_eq!(c[0].clear_z.get(), f32::MAX, "cell ({x}, {y})");
            walls[c[0].wall_range()].to_vec()
        };
        // Cell (13, 12) spans x 520..560: the wall beside it, listed once.
        let w = listed(13, 12);
        assert_eq!(w.len(), 1);
        assert_eq!((w[0].x0.get(), w[0].x1.get()), (500.0, 500.0));
        assert!(holds(&w[0], &[[500.0, 100.0], [500.0, 900.0]]));
        assert!(w[0].err_cm.get() > 0.0 && w[0].err_cm.get() < 0.01);
        assert!(w[0].rise_cm.get() >= 300.0);
        // Cell (18, 10) spans x 720..760: the slanted face, half its width
        // across (5 cm) from its middle line.
        let w = listed(18, 10);
        assert_eq!(w.len(), 1);
        assert!(holds(&w[0], &slant.xy));
        assert!(w[0].err_cm.get() < 5.01);
        // Cell (8, 7) spans x 320..360: the curb, rising 12 cm (a capsule
        // centred in its quarter at x 340..360, y 280..300 passes over it).
        let w = listed(8, 7);
        assert_eq!(w.len(), 1);
        assert!(holds(&w[0], &curb.xy));
        assert!((12.0..12.01).contains(&w[0].rise_cm.get()));
        // Cells crossed by the wall (x 480..520) or hugging the curb (280..320):
        // no quarter's centre is clear for the largest agent, so no
        // certificate is worth its bytes.
        let floor_certs = |x: usize, y: usize| cell(&off, &certs, x, y).iter().filter(|c| c.k.get() == 0.0).count();
        assert_eq!(floor_certs(12, 12), 0);
        assert_eq!(floor_certs(7, 7), 0);
        // Cell (4, 3) spans x 160..200: the pit's floor is below the plane;
        // its wall's top at the plane rises by no more than the bounds.
        let w = listed(4, 3);
        assert_eq!(w.len(), 1);
        assert_eq!((w[0].x0.get(), w[0].x1.get()), (200.0, 200.0));
        assert!((0.0..0.01).contains(&w[0].rise_cm.get()));
    }

    /// A blocker through the floor, from 60 cm below to 6 cm above it at
    /// one corner: only that corner's part counts.
    #[test]
    fn a_primitive_crossing_the_plane_counts_by_its_part_above() {
        let tri = |z: [f64; 3]| CertPrim {
            xy: vec![[300.0, 300.0], [400.0, 300.0], [300.0, 400.0]],
            z_lo: z.iter().copied().fold(f64::INFINITY, f64::min),
            z_hi: z.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            plane: None,
            vertex_z: Some(z),
            interior: 0,
        };
        let mut out = Vec::new();
        let floor = [0.0, 0.0, 0.0];
        assert!(matches!(
            above_part(&tri([-60.0, -60.0, -1.0]), floor, 0.011, 0.005, &mut out),
            Reach::Below
        ));
        match above_part(&tri([1.0, 2.0, 6.0]), floor, 0.011, 0.005, &mut out) {
            Reach::Whole { rise } => assert!((6.0..6.01).contains(&rise), "{rise}"),
            _ => panic!("wholly above"),
        }
        let Reach::Part { z_lo, rise } = above_part(&tri([-60.0, -60.0, 6.0]), floor, 0.011, 0.005, &mut out) else {
            panic!("crossing");
        };
        // `z` is −60 at y = 300 and 6 at y = 400: the part from ~0.011 cm
        // below the plane up, y ≥ 390.9.
        let y_cut = 300.0 + 100.0 * (60.0 - 0.011) / 66.0;
        assert!((6.0..6.01).contains(&rise), "{rise}");
        assert!((-0.02..-0.011).contains(&z_lo), "{z_lo}");
        assert_eq!(out.len(), 3, "{out:?}");
        assert!(
            out.iter()
                .all(|p| p[1] >= y_cut - 0.01 && p[0] <= 400.0 - y_cut + 300.0 + 0.01)
        );
        assert!(out.contains(&[300.0, 400.0]));
        // In a certificate: the floor lists that part (about 9 cm across),
        // not the whole triangle (its top corner 50 cm from the cell).
        let prims = vec![flat_floor(0.0, 1600.0, 0.0), tri([-60.0, -60.0, 6.0])];
        let (off, certs, walls) = certificates(&prims, REACH);
        let c = cell(&off, &certs, 8, 11);
        assert_eq!(c.len(), 1);
        let w = &walls[c[0].wall_range()];
        assert_eq!(w.len(), 1);
        assert!(holds(&w[0], &out));
        assert!(w[0].err_cm.get() < 5.0, "{}", w[0].err_cm.get());
        assert!((6.0..6.02).contains(&w[0].rise_cm.get()));
    }

    /// A floor that ends at a convex crease (a roof's ridge, a vault's
    /// facets): the facet beyond falls away from the plane, so only a thin
    /// strip along the crease counts, and cells within reach of it are
    /// certified (not with the falling facet's whole footprint listed).
    #[test]
    fn a_convex_crease_lists_a_thin_strip() {
        let facet = |lo: f64, hi: f64, a: f64| CertPrim {
            xy: vec![[lo, 0.0], [hi, 0.0], [hi, 1600.0], [lo, 1600.0]],
            z_lo: (a * (hi - 800.0)).min(0.0),
            z_hi: 0.0,
            plane: Some(([a, 0.0, -a * 800.0], 0.001)),
            vertex_z: None,
            interior: 0,
        };
        let prims = vec![facet(0.0, 800.0, 0.0), facet(800.0, 1600.0, -0.3)];
        let (off, certs, walls) = certificates(&prims, REACH);
        for x in [18, 19] {
            // Cells x 720..760 and 760..800 (y 400..440), grown by 42 cm past
            // the crease at x = 800.
            let c: Vec<&Cert> = cell(&off, &certs, x, 10).iter().filter(|c| c.a.get() == 0.0).collect();
            assert_eq!(c.len(), 1, "cell ({x}, 10)");
            assert_eq!(c[0].clear_z.get(), f32::MAX);
            let w = &walls[c[0].wall_range()];
            assert_eq!(w.len(), 1, "cell ({x}, 10)");
            assert!(holds(&w[0], &[[800.0, 400.0 - 42.0], [800.0, 440.0 + 42.0]]));
            // Within the plane's error and margin below it: 0.3 cm per cm.
            assert!(w[0].err_cm.get() < 0.1, "{}", w[0].err_cm.get());
            assert!(w[0].rise_cm.get() < 0.05, "{}", w[0].rise_cm.get());
        }
    }

    #[test]
    fn clearance_rounds_down() {
        let v = 0.1f64 + 1e-9;
        assert!(f32_at_most(v) as f64 <= v);
        assert!(f32_at_most(123.456) as f64 <= 123.456);
    }

    /// The one-corner box tests against every corner tested: the same
    /// answers, touching and degenerate cases included (small integer
    /// coordinates put corners exactly on edges; a few fractions do not).
    #[test]
    fn box_tests_by_one_corner_match_all_four() {
        let corners = |lo: [f64; 2], hi: [f64; 2]| [lo, [hi[0], lo[1]], hi, [lo[0], hi[1]]];
        let covers_all = |poly: &[[f64; 2]], orient: f64, lo, hi| {
            orient != 0.0
                && (0..poly.len()).all(|i| {
                    let (p, q) = (poly[(i + poly.len() - 1) % poly.len()], poly[i]);
                    corners(lo, hi)
                        .iter()
                        .all(|v| ((q[0] - p[0]) * (v[1] - p[1]) - (q[1] - p[1]) * (v[0] - p[0])) * orient >= 0.0)
                })
        };
        let separated_all = |poly: &[[f64; 2]], orient: f64, lo, hi| {
            (0..poly.len()).any(|i| {
                let (p, q) = (poly[(i + poly.len() - 1) % poly.len()], poly[i]);
                let side = |v: &[f64; 2]| (q[0] - p[0]) * (v[1] - p[1]) - (q[1] - p[1]) * (v[0] - p[0]);
                let c = corners(lo, hi);
                if orient != 0.0 {
                    c.iter().all(|v| side(v) * orient < 0.0)
                } else {
                    c.iter().all(|v| side(v) < 0.0) || c.iter().all(|v| side(v) > 0.0)
                }
            })
        };
        let mut rng = crate::geom::TestRng::new(0x9e37_79b9_7f4a_7c15);
        let mut next = |m: u64| rng.bits() % m;
        let (mut covered, mut separated, mut kept, mut held_points) = (0, 0, 0, 0);
        for case in 0..20_000 {
            let coord = |r: u64| if case % 4 == 3 { r as f64 * 0.37 - 1.1 } else { r as f64 };
            // A convex polygon: a triangle (either winding, sometimes
            // degenerate) or an axis-aligned quad.
            let poly: Vec<[f64; 2]> = if case % 2 == 0 {
                (0..3).map(|_| [coord(next(9)), coord(next(9))]).collect()
            } else {
                let (x0, y0) = (coord(next(5)), coord(next(5)));
                let (x1, y1) = (x0 + coord(next(5)), y0 + coord(next(5)));
                vec![[x0, y0], [x1, y0], [x1, y1], [x0, y1]]
            };
            let lo = [coord(next(9)), coord(next(9))];
            let size = |r: u64| if case % 4 == 3 { r as f64 * 0.37 } else { r as f64 };
            let hi = [lo[0] + size(next(4)), lo[1] + size(next(4))];
            let orient = orientation(&poly);
            let want = covers_all(&poly, orient, lo, hi);
            assert_eq!(covers_box(&poly, orient, lo, hi), want, "{poly:?} {lo:?} {hi:?}");
            // A polygon holding a box holds its centre (the quarters'
            // prefilter); on the integer grid (exact arithmetic) the point
            // test is the side test of every edge.
            let centre = [0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1])];
            let held = holds_point(&poly, orient, centre);
            if want && hi[0] > lo[0] && hi[1] > lo[1] {
                assert!(held, "{poly:?} {lo:?} {hi:?}");
            }
            if case % 4 != 3 {
                assert_eq!(held, covers_all(&poly, orient, centre, centre), "{poly:?} {centre:?}");
                held_points += held as usize;
            }
            // (`convex_meets_box`'s box shortcuts aside: only its edge test.)
            let bbox = xy_box(&poly);
            let outside = bbox.1[0] < lo[0] || bbox.0[0] > hi[0] || bbox.1[1] < lo[1] || bbox.0[1] > hi[1];
            let inside = bbox.0[0] >= lo[0] && bbox.0[1] >= lo[1] && bbox.1[0] <= hi[0] && bbox.1[1] <= hi[1];
            if !outside && !inside {
                let sep = separated_all(&poly, orient, lo, hi);
                assert_eq!(
                    convex_meets_box(&poly, bbox, orient, lo, hi),
                    !sep,
                    "{poly:?} {lo:?} {hi:?}"
                );
                separated += sep as usize;
                kept += 1;
            }
            covered += want as usize;
        }
        // Both answers occur often enough for the comparison to mean something.
        assert!(
            covered > 200 && separated > 500 && kept - separated > 1000 && held_points > 1000,
            "{covered} {separated} {kept} {held_points}"
        );
    }
}
