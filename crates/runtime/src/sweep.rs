//! `sweep_horizontal`: the capsule moving by `(dx, dy, 0)` — its exact first
//! contact with the level's triangles, or Fallback.
//!
//! **Coverage.** A tile stores every triangle that overlaps its square
//! (and more, in its halo): a non-walkable one exactly (a blocker), a
//! walkable one clipped to the square plus halo and merged with its flat
//! neighbours into convex pieces on their fitted plane. Either way what a
//! tile stores is part of the level (a contact found is a real contact, up
//! to the error bounds below), and the tiles whose squares meet a region
//! hold everything in it. So a sweep reads every tile whose square meets
//! the box of the swept capsule grown by a margin — one tile, or up to four
//! near tile corners — and never depends on the halo's width. A triangle
//! stored by two tiles gives the same contact twice, which a minimum does
//! not mind.
//!
//! **Contacts.** Per primitive — a convex polygon: a piece (plane plus
//! fixed-point polygon) or a blocker triangle — the first moment the moving
//! capsule comes within a distance ρ: its two end spheres against the face
//! (either side), the edges and the vertices; its straight part against the
//! edges (a vertical segment moving sideways against a fixed segment: the 2-D
//! distance to the edge's line) and the vertices (a circle against a point).
//! A wall exactly parallel to the axis is met by its non-vertical edges and,
//! through the end spheres, its face (DESIGN §9; the oracle's feature pairs).
//!
//! **Error bounds.** A stored primitive lies within a bound `e` of the source
//! triangles (Hausdorff distance: vertex quantisation, and for a piece its
//! z error: the f32 plane's rounding and the flat group's fit residual), so
//! at every moment the true distance is within `e` of the stored one and
//! the true first contact lies between the stored first contacts at
//! ρ = R + e (`lo`) and at ρ = R − e (`hi`). No linearisation: a grazing
//! contact simply gets a wide interval. A piece's face away from its edges
//! is off only by its plane error, tighter than its edges (whose vertices
//! also move sideways). Over all primitives the first contact lies in
//! `[min lo, min hi]`:
//! * no `lo` within the move: `Clear` (everything stays beyond R + e);
//! * `min hi` within the move: `Hit` at the nominal contact (ρ = R on the
//!   stored geometry), which lies in that interval, when it is within
//!   [`SWEEP_MAX_ERR_CM`] of both ends;
//! * otherwise `Fallback(PrecisionBudget)`.
//!
//! A start within R − e of anything is `InitialOverlap`; within R ± e,
//! `PrecisionBudget`. Nothing is allocated; each primitive costs a box and a
//! plane rejection before any exact test, both over the move only up to the
//! time by which a contact already found has certainly happened (what is
//! met after it is not first).
//!
//! **Hidden blockers.** A blocker lying directly under the walkable surface
//! (`HIDDEN`: a riser under its nosing) is skipped while that surface is
//! below the capsule's top sphere centre ([`hidden_below`]): wherever the
//! capsule reaches one of its points, the surface point above it is inside
//! the capsule too, so the surface was met no later (with the same normal
//! if at once). Its contact cannot come first; its bounds might have been
//! tighter than the surface's (an exact triangle against a rounded
//! piece), so a few sweeps fall back that it would have settled.

use crate::Surface;
use crate::contact::*;
use crate::query::*;
use crate::tile_geom::{Frame, blocker_top, hidden_below, load_blocker, plane_normal_and_root, walk_result};
use crate::tolerance::*;
use walksurf_format::{CERT_CELL_CM, MAX_PIECE_VERTICES, PieceHeader, TILE_SIZE_CM, VERTEX_STEPS_PER_CM, VertexFixed};

impl Surface {
    /// Sweeps the capsule (centre `pos`, world cm) by `(dx, dy, 0)`: `Clear`
    /// if it touches nothing along the whole move, else the first contact,
    /// exactly as a capsule cast against the level's triangles gives it
    /// (within 0.01 cm), or `Fallback(reason)` when the file cannot promise
    /// that.
    pub fn sweep_horizontal(&self, pos: [f64; 3], delta_xy: [f64; 2], agent: Agent) -> SweepOutcome {
        self.sweep_checked(pos, delta_xy, agent)
            .and_then(|len| self.sweep_impl(pos, delta_xy, len, agent))
            .unwrap_or_else(SweepOutcome::Fallback)
    }

    /// The move's length, if a sweep may answer it at all: finite input,
    /// within the bake's longest sweep and largest agent, a known precision
    /// layout.
    fn sweep_checked(&self, pos: [f64; 3], delta_xy: [f64; 2], agent: Agent) -> Result<f64, FallbackReason> {
        if !pos.iter().chain(&delta_xy).all(|v| v.is_finite()) || !agent.is_valid() {
            return Err(FallbackReason::InvalidInput);
        }
        if pos[2].abs() > MAX_QUERY_Z_CM {
            return Err(FallbackReason::OutsideCoverage);
        }
        // (Not `hypot`: a libm call costing more than an empty query.)
        let len = (delta_xy[0] * delta_xy[0] + delta_xy[1] * delta_xy[1]).sqrt();
        let params = self.bake_params();
        if len > params.max_sweep_len_cm.get() as f64 || agent.radius_cm > params.max_agent_radius_cm.get() as f64 {
            return Err(FallbackReason::BudgetExceeded);
        }
        if !self.precision_known() {
            return Err(FallbackReason::PrecisionBudget);
        }
        Ok(len)
    }

    /// Whether the certificates alone answer this sweep `Clear` (the fast
    /// path of [`Surface::sweep_horizontal`], on this surface's precision
    /// path): for tests that tell its answers from the full path's.
    #[doc(hidden)]
    pub fn sweep_certified_clear(&self, pos: [f64; 3], delta_xy: [f64; 2], agent: Agent) -> bool {
        let Ok(len) = self.sweep_checked(pos, delta_xy, agent) else {
            return false;
        };
        let Ok(Some(f)) = self.home_frame(pos, None) else {
            return false;
        };
        matches!(
            certified_sweep(&f, pos, delta_xy, len, agent),
            Ok(Some(SweepOutcome::Clear))
        )
    }

    fn sweep_impl(
        &self,
        pos: [f64; 3],
        delta: [f64; 2],
        len: f64,
        agent: Agent,
    ) -> Result<SweepOutcome, FallbackReason> {
        let view = self.view().ok_or(FallbackReason::MissingData)?;
        // The start's tile: read once, for the fast path and the full one.
        let home = self.home_frame(pos, None).ok().flatten();
        if let Some(f) = home.as_ref() {
            if let Some(out) = certified_sweep(f, pos, delta, len, agent)? {
                return Ok(out);
            }
            f.touch_tops();
        }
        let r = agent.radius_cm;
        let q = SweepQuery {
            r,
            h: agent.half_height_cm - r,
            u: if len > 0.0 {
                [delta[0] / len, delta[1] / len, 0.0]
            } else {
                [0.0; 3]
            },
            len,
        };
        // Every tile whose square meets the swept capsule's box (+ margin).
        let m = r + SWEEP_BOX_MARGIN_CM;
        let end = [pos[0] + delta[0], pos[1] + delta[1]];
        let tile = |v: f64| v / TILE_SIZE_CM;
        let (tx0, tx1) = (tile(pos[0].min(end[0]) - m), tile(pos[0].max(end[0]) + m));
        let (ty0, ty1) = (tile(pos[1].min(end[1]) - m), tile(pos[1].max(end[1]) + m));
        if [tx0, tx1, ty0, ty1].iter().any(|t| t.abs() > i32::MAX as f64) {
            return Err(FallbackReason::OutsideCoverage);
        }
        let [tx0, tx1, ty0, ty1] = [tx0, tx1, ty0, ty1].map(floor_i32);
        // (Each side may span 2^32 tiles: their product overflows.)
        if (tx1 as i64 - tx0 as i64 + 1).saturating_mul(ty1 as i64 - ty0 as i64 + 1) > MAX_SWEEP_TILES as i64 {
            return Err(FallbackReason::BudgetExceeded);
        }
        let mut acc = Acc::new();
        for ty in ty0..=ty1 {
            for tx in tx0..=tx1 {
                let is_home = |f: &&Frame<'_>| f.tile.hot.tile_x.get() == tx && f.tile.hot.tile_y.get() == ty;
                let other;
                let f = match home.as_ref().filter(is_home) {
                    Some(f) => f,
                    None => {
                        let Some(hot) = view.tile_hot(tx, ty) else {
                            continue; // no triangle overlaps that square
                        };
                        let tile = view.tile(hot).ok_or(FallbackReason::MissingData)?;
                        other = Frame {
                            origin: tile.origin_cm(),
                            quant: tile.quant(),
                            tile,
                            path: self.precision_path(),
                        };
                        &other
                    }
                };
                sweep_tile(f, pos, &q, &mut acc)?;
            }
        }
        acc.decide(pos, delta, &q)
    }
}

/// The fast path of a sweep: a move of at most one certificate cell
/// whose every cell (of the box of its start and end cells) certifies
/// the plane under the capsule, which stays above that plane, below
/// every cell's clearance and past every listed footprint, touches
/// nothing: `Clear`. `None`: take the full path.
///
/// Every centre on the move lies in one of those cells. A capsule centred
/// in a cell, above its certificate's plane and below its clearance,
/// can touch only the footprints the certificate lists (everything else
/// over the cell grown by the largest radius is below the plane or above
/// the clearance), wherever the plane's pieces are; so the cells' quarter
/// coverage does not matter here. The plane's height under the bottom
/// sphere is linear along the move, so clearing it at both ends clears it
/// everywhere, and a footprint passed from its least distance to the move
/// is passed from every point of it.
///
/// `Err`: the Reference path cannot bound a certificate.
fn certified_sweep(
    f: &Frame<'_>,
    pos: [f64; 3],
    delta: [f64; 2],
    len: f64,
    agent: Agent,
) -> Result<Option<SweepOutcome>, FallbackReason> {
    if len == 0.0 || len > CERT_CELL_CM {
        return Ok(None);
    }
    let r = agent.radius_cm;
    let h = agent.half_height_cm - r;
    let c = [pos[0] - f.origin[0], pos[1] - f.origin[1], pos[2] - f.origin[2]];
    let end = [c[0] + delta[0], c[1] + delta[1]];
    let (Some((i0, j0)), Some((i1, j1))) = (f.cert_cell(c[0], c[1]), f.cert_cell(end[0], end[1])) else {
        return Ok(None);
    };
    // The plane under the bottom sphere at the start: the highest one
    // it is above (as `find_floor`'s fast path picks it).
    let bottom = c[2] - h;
    let clearance = |cert: &walksurf_format::Cert, x: f64, y: f64| {
        let (a, b, k) = (cert.a.get() as f64, cert.b.get() as f64, cert.k.get() as f64);
        bottom - (a * x + b * y + k) - r * plane_root(a, b)
    };
    // The bound of a cell's certificate (`None`: do not use it).
    let err = |cert: &walksurf_format::Cert, cell: (usize, usize)| {
        f.cert_z_err(cert, cell, r).map(|e| e.map(|e| e + Z_MARGIN_CM))
    };
    let mut start: Option<(&walksurf_format::Cert, f64)> = None;
    for cert in f.tile.certs_in_cell(i0, j0) {
        let Some(e) = err(cert, (i0, j0))? else {
            return Ok(None);
        };
        let cl = clearance(cert, c[0], c[1]);
        if cl > e && start.is_none_or(|(_, best)| cl < best) {
            start = Some((cert, cl));
        }
    }
    let Some((start, _)) = start else {
        return Ok(None);
    };
    // The clearance is linear along the move: its smaller end bounds it.
    let clear_min = clearance(start, c[0], c[1]).min(clearance(start, end[0], end[1]));
    let top = c[2] + h + r + Z_MARGIN_CM;
    let slope = start.slope();
    let same_plane = |cert: &&walksurf_format::Cert| {
        cert.a.get().to_bits() == start.a.get().to_bits()
            && cert.b.get().to_bits() == start.b.get().to_bits()
            && cert.k.get().to_bits() == start.k.get().to_bits()
    };
    let from = [c[0], c[1]];
    for j in j0.min(j1)..=j0.max(j1) {
        for i in i0.min(i1)..=i0.max(i1) {
            let Some(cert) = f.tile.certs_in_cell(i, j).iter().find(same_plane) else {
                return Ok(None);
            };
            // (Each cell's certificate bounds the plane's error there.)
            let Some(e) = err(cert, (i, j))? else {
                return Ok(None);
            };
            // (Written so that a NaN bound or `clear_z` does not pass.)
            if !(clear_min > e && top < cert.clear_z.get() as f64) {
                return Ok(None);
            }
            let Some(walls) = f.tile.cert_walls_of(cert) else {
                return Ok(None);
            };
            if !walls.iter().all(|w| w.passes_along(from, end, r, slope, Z_MARGIN_CM)) {
                return Ok(None);
            }
        }
    }
    Ok(Some(SweepOutcome::Clear))
}

/// The agent and its move, frame-free.
struct SweepQuery {
    r: f64,
    /// Half-length of the axis segment, `H − R`.
    h: f64,
    /// Unit direction (zero for no move).
    u: V3,
    len: f64,
}

/// The nominal first contact so far.
#[derive(Clone, Copy, Debug)]
struct Best {
    s: f64,
    /// World cm.
    point: V3,
    normal: V3,
    impact_normal: V3,
}

/// What the primitives seen so far say.
struct Acc {
    /// Smallest `lo`: the true first contact is not earlier.
    lo: f64,
    /// Smallest `hi`: the true first contact is not later.
    hi: f64,
    best: Option<Best>,
    /// The start certainly overlaps something.
    overlap: bool,
    /// The start may overlap something.
    near_start: bool,
}

impl Acc {
    fn new() -> Acc {
        Acc {
            lo: f64::INFINITY,
            hi: f64::INFINITY,
            best: None,
            overlap: false,
            near_start: false,
        }
    }

    fn decide(&self, pos: [f64; 3], delta: [f64; 2], q: &SweepQuery) -> Result<SweepOutcome, FallbackReason> {
        if self.overlap {
            return Err(FallbackReason::InitialOverlap);
        }
        if self.near_start {
            return Err(FallbackReason::PrecisionBudget);
        }
        if q.len == 0.0 || self.lo > q.len {
            return Ok(SweepOutcome::Clear);
        }
        if self.hi.is_nan() || self.hi > q.len {
            return Err(FallbackReason::PrecisionBudget);
        }
        // The true first contact lies in [lo, hi]; the nominal one too. (A
        // corrupt file can make the bounds cross, or NaN: no answer then.)
        if self.lo.is_nan() || self.hi.is_nan() || self.lo > self.hi {
            return Err(FallbackReason::PrecisionBudget);
        }
        let best = self.best.ok_or(FallbackReason::PrecisionBudget)?;
        let s = best.s.clamp(self.lo, self.hi);
        if (s - self.lo).max(self.hi - s) > SWEEP_MAX_ERR_CM {
            return Err(FallbackReason::PrecisionBudget);
        }
        let time = s / q.len;
        Ok(SweepOutcome::Hit(SweepHit {
            time,
            distance: s,
            location: [pos[0] + time * delta[0], pos[1] + time * delta[1], pos[2]],
            impact_point: best.point,
            normal: best.normal,
            impact_normal: best.impact_normal,
        }))
    }
}

/// One primitive relative to the capsule centre at the start of the move:
/// a convex polygon of at most `N` vertices, counter-clockwise around
/// `normal`, with its error bounds.
struct Poly<const N: usize> {
    v: [V3; N],
    n: usize,
    /// Unit normal; `None` for a degenerate blocker (edges and vertices only).
    normal: Option<V3>,
    /// Bound on the distance error of the face away from its edges. [cm]
    e_face: f64,
    /// Bound on the distance error of the whole primitive. [cm]
    e_bnd: f64,
    /// How far (in its plane) a face contact must lie inside the polygon to
    /// lie over the source surface; the same outside for the converse. [cm]
    band: f64,
}

/// A piece's plane: normal, a point on it (relative to the capsule centre)
/// and error bounds — all the plane rejection needs, before any vertex is
/// read (on the Fast precision path; Reference reads them for the bound).
struct PiecePlane {
    a: f64,
    b: f64,
    k: f64,
    normal: V3,
    point: V3,
    e_face: f64,
    e_bnd: f64,
    band: f64,
}

impl PiecePlane {
    /// The plane of `header`, whose z error bound is `z_err` (from
    /// [`Frame::piece_z_err`]); `None` if it is corrupt.
    fn new(header: &PieceHeader, z_err: f64, c: V3) -> Option<PiecePlane> {
        let (a, b, k) = (
            header.plane_a.get() as f64,
            header.plane_b.get() as f64,
            header.plane_c.get() as f64,
        );
        if ![a, b, k, z_err].iter().all(|v| v.is_finite()) || z_err < 0.0 {
            return None;
        }
        // The boundary is off by at most its XY error sideways, which along
        // a plane of slope |∇z| is that times √(1 + |∇z|²) in 3-D; the
        // plane itself is off by at most z_err vertically (so at most that
        // along its normal).
        let (normal, stretch) = plane_normal_and_root(a, b);
        let e_face = z_err + SWEEP_EVAL_SLACK_CM;
        let band = crate::tile_geom::piece_xy_err(header) * stretch + SWEEP_EVAL_SLACK_CM;
        Some(PiecePlane {
            a,
            b,
            k,
            normal,
            point: [-c[0], -c[1], k - c[2]],
            e_face,
            e_bnd: e_face + band,
            band,
        })
    }
}

impl<const N: usize> Poly<N> {
    fn verts(&self) -> &[V3] {
        self.v.get(..self.n).unwrap_or(&[])
    }

    /// A piece with plane `pl`, relative to `c` (tile frame).
    fn piece(pl: &PiecePlane, verts: &[VertexFixed], c: V3) -> Option<Poly<N>> {
        if verts.len() < 3 || verts.len() > N {
            return None;
        }
        let mut p = Poly {
            v: [[0.0; 3]; N],
            n: verts.len(),
            normal: Some(pl.normal),
            e_face: pl.e_face,
            e_bnd: pl.e_bnd,
            band: pl.band,
        };
        for (slot, fv) in p.v.iter_mut().zip(verts) {
            let (x, y) = (
                fv.x.get() as f64 / VERTEX_STEPS_PER_CM,
                fv.y.get() as f64 / VERTEX_STEPS_PER_CM,
            );
            *slot = [x - c[0], y - c[1], pl.a * x + pl.b * y + pl.k - c[2]];
        }
        Some(p)
    }
}

impl Poly<3> {
    /// A blocker triangle (tile frame), relative to `c`. Its vertices are
    /// each within [`BLOCKER_VERTEX_ERR_CM`] of the source's.
    fn blocker(tri: [V3; 3], c: V3) -> Poly<3> {
        let v = tri.map(|p| sub(p, c));
        let e = BLOCKER_VERTEX_ERR_CM + SWEEP_EVAL_SLACK_CM;
        Poly {
            v,
            n: 3,
            normal: None,
            e_face: e,
            e_bnd: e,
            band: 0.0,
        }
    }

    /// Computes the normal (`None` if degenerate: edges and vertices only).
    fn with_normal(mut self) -> Poly<3> {
        let t = self.v;
        let cr = cross(sub(t[1], t[0]), sub(t[2], t[0]));
        let longest2 = [sub(t[1], t[0]), sub(t[2], t[0]), sub(t[2], t[1])]
            .iter()
            .map(|e| dot(*e, *e))
            .fold(0.0, f64::max);
        let c2 = dot(cr, cr);
        self.normal = (c2 > 1e-24 * longest2 * longest2).then(|| scale(cr, 1.0 / c2.sqrt()));
        self
    }
}

/// Whether the plane through `point` with unit normal `n` stays farther
/// than `rho` from the capsule axis swept by `l` along `u`, all on one side
/// (then so does every polygon in it): the signed distances of the swept
/// axis's four corners.
#[inline]
fn plane_misses(n: V3, point: V3, h: f64, u: V3, l: f64, rho: f64) -> bool {
    let base = -dot(n, point);
    let hz = n[2].abs() * h;
    let du = l * dot(n, u);
    base - hz + du.min(0.0) > rho || base + hz + du.max(0.0) < -rho
}

/// Whether the box `[lo, hi]` stays farther than `rho` (per axis) from the
/// capsule axis swept by `l` along `u`.
#[inline]
fn box_misses(lo: V3, hi: V3, h: f64, u: V3, l: f64, rho: f64) -> bool {
    let (ex, ey) = (l * u[0], l * u[1]);
    hi[0] < ex.min(0.0) - rho
        || lo[0] > ex.max(0.0) + rho
        || hi[1] < ey.min(0.0) - rho
        || lo[1] > ey.max(0.0) + rho
        || hi[2] < -h - rho
        || lo[2] > h + rho
}

/// Whether the box `[lo, hi]` lies farther than `reach` from the capsule
/// axis at the start, `(0,0,−h)..(0,0,h)` (Euclidean box distance).
#[inline]
fn box_beyond(lo: V3, hi: V3, h: f64, reach: f64) -> bool {
    box_distance2(lo, hi, h) > reach * reach
}

/// The squared distance from the box `[lo, hi]` to the capsule axis at the
/// start, `(0,0,−h)..(0,0,h)`: a lower bound of any point's in it.
#[inline]
fn box_distance2(lo: V3, hi: V3, h: f64) -> f64 {
    let gap = |a: f64, b: f64| a.max(-b).max(0.0);
    let (gx, gy) = (gap(lo[0], hi[0]), gap(lo[1], hi[1]));
    let gz = (lo[2] - h).max(-h - hi[2]).max(0.0);
    gx * gx + gy * gy + gz * gz
}

/// [`box_distance2`]'s square root.
#[inline]
fn box_distance(lo: V3, hi: V3, h: f64) -> f64 {
    box_distance2(lo, hi, h).sqrt()
}

impl<const N: usize> Poly<N> {
    /// Whether `x` (on the plane) lies at least `depth` inside every edge
    /// (in-plane distance; a negative `depth` allows that much outside).
    /// No square root: each edge compares `c = (e × (x − a))·n = |e|·dist`
    /// with `depth·|e|` through squares.
    fn inside_by(&self, n: V3, x: V3, depth: f64) -> bool {
        let v = self.verts();
        let mut prev = v.last().copied().unwrap_or([0.0; 3]);
        let d2 = depth * depth;
        for &p in v {
            let e = sub(p, prev);
            let ee = dot(e, e);
            if ee > 0.0 {
                let c = dot(cross(e, sub(x, prev)), n);
                let ok = if depth <= 0.0 {
                    c >= 0.0 || c * c <= d2 * ee
                } else {
                    c >= 0.0 && c * c >= d2 * ee
                };
                if !ok {
                    return false;
                }
            }
            prev = p;
        }
        true
    }

    /// A lower bound of [`Poly::start_distance`] (0 for a degenerate
    /// polygon), much cheaper than it. The polygon lies on the inner side
    /// of each edge's line within its plane, so an axis whose ends are both
    /// at least `s` outside one of them (measured in the plane, across the
    /// edge) is at least `s` from all of it; and every point of it is as
    /// far from the axis across the plane as the plane is. The two
    /// directions are orthogonal: their squares add.
    fn distance_lower_bound(&self, h: f64) -> f64 {
        let v = self.verts();
        let (Some(n), Some(&v0)) = (self.normal, v.first()) else {
            return 0.0;
        };
        let (bot, top) = ([0.0, 0.0, -h], [0.0, 0.0, h]);
        let (sb, st) = (dot(n, sub(bot, v0)), dot(n, sub(top, v0)));
        let across = if sb * st <= 0.0 { 0.0 } else { sb.abs().min(st.abs()) };
        let mut outside: f64 = 0.0;
        let mut prev = v.last().copied().unwrap_or([0.0; 3]);
        for &p in v {
            // Outward in the plane: (p − prev) × n (counter-clockwise).
            let m = cross(sub(p, prev), n);
            let mm = dot(m, m);
            let s = dot(m, sub(bot, prev)).min(dot(m, sub(top, prev)));
            if s > 0.0 && mm > 0.0 && s * s > outside * outside * mm {
                outside = s / mm.sqrt();
            }
            prev = p;
        }
        (outside * outside + across * across).sqrt()
    }

    /// The polygon's bounding box.
    fn bounds(&self) -> (V3, V3) {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for p in self.verts() {
            for k in 0..3 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        }
        (lo, hi)
    }

    /// Distance from the capsule axis at the start (`(0,0,−h)..(0,0,h)`) to
    /// the polygon: 0 if the axis pierces it; else the least of the ends'
    /// distances to the face (foot inside) and to the edges, the vertices'
    /// distances to the axis, and the 2-D distance of the axis to an edge
    /// where the edge's closest point lies within the axis's z range (the
    /// interior critical point of a convex function whose boundary is the
    /// other cases).
    fn start_distance(&self, h: f64) -> f64 {
        let v = self.verts();
        let (bot, top) = ([0.0, 0.0, -h], [0.0, 0.0, h]);
        let mut d2 = f64::INFINITY;
        let mut prev = v.last().copied().unwrap_or([0.0; 3]);
        for &p in v {
            // Vertex to axis.
            let dz = (p[2].abs() - h).max(0.0);
            d2 = d2.min(p[0] * p[0] + p[1] * p[1] + dz * dz);
            // Ends to edge.
            let d = sub(p, prev);
            let dd = dot(d, d);
            if dd > 0.0 {
                for e in [bot, top] {
                    let t = (dot(sub(e, prev), d) / dd).clamp(0.0, 1.0);
                    let w = sub(add(prev, scale(d, t)), e);
                    d2 = d2.min(dot(w, w));
                }
                // Axis interior to edge interior.
                let dxy2 = d[0] * d[0] + d[1] * d[1];
                if dxy2 > 0.0 {
                    let t = -(prev[0] * d[0] + prev[1] * d[1]) / dxy2;
                    if (0.0..=1.0).contains(&t) {
                        let x = add(prev, scale(d, t));
                        if (-h..=h).contains(&x[2]) {
                            d2 = d2.min(x[0] * x[0] + x[1] * x[1]);
                        }
                    }
                }
            }
            prev = p;
        }
        // The face: only where it could be nearer than the boundary.
        if let (Some(n), Some(&v0)) = (self.normal, v.first()) {
            let (sb, st) = (dot(n, sub(bot, v0)), dot(n, sub(top, v0)));
            if sb * st <= 0.0 && sb != st {
                let x = [0.0, 0.0, -h + 2.0 * h * sb / (sb - st)];
                if self.inside_by(n, sub(x, scale(n, dot(n, sub(x, v0)))), 0.0) {
                    return 0.0;
                }
            }
            for (e, s) in [(bot, sb), (top, st)] {
                if s * s < d2 && self.inside_by(n, sub(e, scale(n, s)), 0.0) {
                    d2 = s * s;
                }
            }
        }
        d2.sqrt()
    }

    /// The first contacts of the capsule (axis half-length `h`, moving
    /// along `u`) with the polygon at the three radii of `q` (`lo`, nominal,
    /// `hi`), ignoring any later than `limit`. One pass over the features:
    /// each feature's set-up is shared by the three radii, and features out
    /// of reach in z or in XY are skipped before any root is taken.
    fn contacts(&self, h: f64, u: V3, q: &Radii, limit: f64) -> Times {
        let v = self.verts();
        let mut t = Times::new();
        let rho_max = q.bnd[0].max(q.face[0]);
        // In the frame of the move (along u, across it) the swept axis's
        // footprint grown by the largest radius is the box
        // [−ρ, limit + ρ] × [−ρ, ρ]: an edge (or vertex) with both ends on
        // one side of it is out of reach.
        let reach = limit + rho_max;
        let out_xy = |a: V3, b: V3| {
            let (aa, ab) = (a[0] * u[0] + a[1] * u[1], b[0] * u[0] + b[1] * u[1]);
            let (ca, cb) = (u[0] * a[1] - u[1] * a[0], u[0] * b[1] - u[1] * b[0]);
            (ca > rho_max && cb > rho_max)
                || (ca < -rho_max && cb < -rho_max)
                || (aa < -rho_max && ab < -rho_max)
                || (aa > reach && ab > reach)
        };
        let ends: &[f64] = if h > 0.0 { &[-h, h] } else { &[0.0] };
        for (end, &z) in ends.iter().enumerate() {
            let e = [0.0, 0.0, z];
            if let (Some(n), Some(&v0)) = (self.normal, v.first()) {
                let sd0 = dot(n, sub(e, v0));
                // This end sphere stays beyond reach of the plane (so of
                // everything in it) over the move.
                let sd1 = sd0 + limit * dot(n, u);
                if sd0.min(sd1) > rho_max || sd0.max(sd1) < -rho_max {
                    continue;
                }
                let side = sd0.signum();
                let speed = -side * dot(n, u);
                if sd0 != 0.0 && speed > 0.0 {
                    // (One division for the three radii.)
                    let per_speed = 1.0 / speed;
                    for k in 0..q.count {
                        let s = (sd0.abs() - q.face[k]).max(0.0) * per_speed;
                        if s > limit {
                            break; // the later radii come later still
                        }
                        let c = add(e, scale(u, s));
                        let foot = sub(c, scale(n, dot(n, sub(c, v0))));
                        if self.inside_by(n, foot, q.min_depth[k]) {
                            t.offer(k, s, Feature::Face(end));
                        }
                    }
                }
            }
            let mut prev = v.last().copied().unwrap_or([0.0; 3]);
            for (i, &p) in v.iter().enumerate() {
                let (zlo, zhi) = (prev[2].min(p[2]), prev[2].max(p[2]));
                if zlo - z <= rho_max && z - zhi <= rho_max && !out_xy(prev, p) {
                    // Sphere against the edge prev → p (interior).
                    let d = sub(p, prev);
                    let dd = dot(d, d);
                    let m = sub(e, prev);
                    let per_dd = 1.0 / dd;
                    let m_perp = sub(m, scale(d, dot(m, d) * per_dd));
                    let u_perp = sub(u, scale(d, dot(u, d) * per_dd));
                    let a = dot(u_perp, u_perp);
                    let b = dot(m_perp, u_perp);
                    if dd > 0.0 && a > 0.0 && b < 0.0 {
                        let base = dot(m_perp, m_perp);
                        for k in 0..q.count {
                            let Some(s) = entering_root(a, b, base - q.bnd[k] * q.bnd[k]) else {
                                break;
                            };
                            if s > limit {
                                break;
                            }
                            let tau = dot(add(m, scale(u, s)), d) * per_dd;
                            if (0.0..=1.0).contains(&tau) {
                                t.offer(k, s, Feature::SphereEdge(end, i));
                            }
                        }
                    }
                }
                if (p[2] - z).abs() <= rho_max && !out_xy(p, p) {
                    // Sphere against the vertex p.
                    let m = sub(e, p);
                    let b = dot(m, u);
                    if b < 0.0 {
                        let base = dot(m, m);
                        for k in 0..q.count {
                            let Some(s) = entering_root(1.0, b, base - q.bnd[k] * q.bnd[k]) else {
                                break;
                            };
                            if s > limit {
                                break;
                            }
                            t.offer(k, s, Feature::SpherePoint(end, i));
                        }
                    }
                }
                prev = p;
            }
        }
        if h > 0.0 {
            let mut prev = v.last().copied().unwrap_or([0.0; 3]);
            for (i, &p) in v.iter().enumerate() {
                let (zlo, zhi) = (prev[2].min(p[2]), prev[2].max(p[2]));
                if zlo <= h && zhi >= -h && !out_xy(prev, p) {
                    // Straight part against the edge prev → p.
                    let d = sub(p, prev);
                    let dxy2 = d[0] * d[0] + d[1] * d[1];
                    if dxy2 > 1e-24 * dot(d, d) && dxy2 > 0.0 {
                        let l = dxy2.sqrt();
                        let (gx, gy) = (d[0] / l, d[1] / l);
                        let sd0 = -prev[0] * gy + prev[1] * gx;
                        let side = sd0.signum();
                        let speed = -side * (u[0] * gy - u[1] * gx);
                        if sd0 != 0.0 && speed > 0.0 {
                            let (per_speed, per_dxy2) = (1.0 / speed, 1.0 / dxy2);
                            for k in 0..q.count {
                                let s = (sd0.abs() - q.bnd[k]).max(0.0) * per_speed;
                                if s > limit {
                                    break;
                                }
                                let tau = ((s * u[0] - prev[0]) * d[0] + (s * u[1] - prev[1]) * d[1]) * per_dxy2;
                                let zc = prev[2] + tau * d[2];
                                if (0.0..=1.0).contains(&tau) && (-h..=h).contains(&zc) {
                                    t.offer(k, s, Feature::AxisEdge(i));
                                }
                            }
                        }
                    }
                }
                if (-h..=h).contains(&p[2]) && !out_xy(p, p) {
                    // Straight part against the vertex p.
                    let b = -(p[0] * u[0] + p[1] * u[1]);
                    if b < 0.0 {
                        let base = p[0] * p[0] + p[1] * p[1];
                        for k in 0..q.count {
                            let Some(s) = entering_root(1.0, b, base - q.bnd[k] * q.bnd[k]) else {
                                break;
                            };
                            if s > limit {
                                break;
                            }
                            t.offer(k, s, Feature::AxisPoint(i));
                        }
                    }
                }
                prev = p;
            }
        }
        t
    }

    /// The nominal contact (point, normal) of a feature `contacts` chose.
    fn feature_contact(&self, f: Feature, h: f64, u: V3, rho: f64) -> Option<SweepContact> {
        let v = self.verts();
        let n = v.len();
        let at = |i: usize| v.get(i % n.max(1)).copied().unwrap_or([0.0; 3]);
        let end = |e: usize| {
            if h > 0.0 && e == 0 {
                [0.0, 0.0, -h]
            } else {
                [0.0, 0.0, h]
            }
        };
        match f {
            Feature::Face(e) => sweep_sphere_plane(end(e), u, self.normal?, at(0), rho),
            Feature::SphereEdge(e, i) => sweep_sphere_segment(end(e), u, at(i + n - 1), at(i), rho),
            Feature::SpherePoint(e, i) => sweep_sphere_point(end(e), u, at(i), rho),
            Feature::AxisEdge(i) => sweep_axis_segment(h, u, at(i + n - 1), at(i), rho),
            Feature::AxisPoint(i) => sweep_axis_point(h, u, at(i), rho),
        }
    }
}

/// A feature pair of the capsule and a polygon: an end sphere (0 bottom,
/// 1 top) or the straight part, against the face, edge `i − 1 → i` or
/// vertex `i`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Feature {
    Face(usize),
    SphereEdge(usize, usize),
    SpherePoint(usize, usize),
    AxisEdge(usize),
    AxisPoint(usize),
}

/// The three radii of one primitive: `[R + e, R, R − e]` for its face and
/// for its edges and vertices, and how deep inside a face contact must lie
/// for each.
struct Radii {
    face: [f64; 3],
    bnd: [f64; 3],
    min_depth: [f64; 3],
    /// 3, or 2 when `R − e ≤ 0` (a tiny agent, a coarse primitive): then
    /// nothing certifies a contact.
    count: usize,
}

/// First contacts at the three radii; the nominal one's feature.
struct Times {
    s: [f64; 3],
    nominal: Option<Feature>,
}

impl Times {
    fn new() -> Times {
        Times {
            s: [f64::INFINITY; 3],
            nominal: None,
        }
    }

    #[inline]
    fn offer(&mut self, k: usize, s: f64, f: Feature) {
        if let Some(slot) = self.s.get_mut(k)
            && s < *slot
        {
            *slot = s;
            if k == 1 {
                self.nominal = Some(f);
            }
        }
    }
}

/// Pieces of at most this many vertices are read into a smaller polygon.
const SMALL_PIECE: usize = 8;

/// One piece leaf (its plane already in reach): `false` if it is corrupt.
#[inline]
fn piece_leaf<const N: usize>(
    pl: &PiecePlane,
    verts: &[VertexFixed],
    c: V3,
    q: &SweepQuery,
    world: V3,
    acc: &mut Acc,
) -> bool {
    let Some(p) = Poly::<N>::piece(pl, verts, c) else {
        return false;
    };
    let (lo, hi) = p.bounds();
    if !box_misses(lo, hi, q.h, q.u, q.len.min(acc.hi), q.r + p.e_bnd) {
        consider(&p, (lo, hi), q, world, acc);
    }
    true
}

/// `⌊v⌋` for `|v| ≤ i32::MAX` (without a libm call).
#[inline]
fn floor_i32(v: f64) -> i32 {
    let t = v as i32;
    if (t as f64) > v { t - 1 } else { t }
}

/// Reads one tile's primitives near the move into `acc`.
fn sweep_tile(f: &Frame<'_>, pos: [f64; 3], q: &SweepQuery, acc: &mut Acc) -> Result<(), FallbackReason> {
    let c = [pos[0] - f.origin[0], pos[1] - f.origin[1], pos[2] - f.origin[2]];
    let m = q.r + SWEEP_BOX_MARGIN_CM;
    let (ex, ey) = (c[0] + q.len * q.u[0], c[1] + q.len * q.u[1]);
    let qbox = f.query_box(
        [c[0].min(ex) - m, c[1].min(ey) - m, c[2] - q.h - m],
        [c[0].max(ex) + m, c[1].max(ey) + m, c[2] + q.h + m],
    );
    let world = add(c, f.origin);
    let mut failed = None;
    walk_result(f.visit_pieces(&qbox, |word| {
        let Some((header, verts)) = f.tile.piece(word) else {
            failed = Some(FallbackReason::MissingData);
            return false;
        };
        let z_err = match f.piece_z_err(header, verts) {
            Ok(z_err) => z_err,
            Err(e) => {
                failed = Some(e);
                return false;
            }
        };
        let Some(pl) = PiecePlane::new(header, z_err, c) else {
            failed = Some(FallbackReason::MissingData);
            return false;
        };
        // Most pieces near a walking agent are the floor it hovers over.
        if plane_misses(pl.normal, pl.point, q.h, q.u, q.len.min(acc.hi), q.r + pl.e_bnd) {
            return true;
        }
        // Most pieces are small: a small array is cheaper to fill.
        let ok = if verts.len() <= SMALL_PIECE {
            piece_leaf::<SMALL_PIECE>(&pl, verts, c, q, world, acc)
        } else {
            piece_leaf::<MAX_PIECE_VERTICES>(&pl, verts, c, q, world, acc)
        };
        if !ok {
            failed = Some(FallbackReason::MissingData);
        }
        ok
    }))?;
    walk_result(f.visit_blockers(qbox, |i, _| {
        match f.tile.blockers.get(i as usize) {
            Some(b) => {
                let tri = load_blocker(b);
                // Hidden under the walkable surface below the capsule's top
                // sphere centre: that surface is met first.
                if hidden_below(b, blocker_top(&tri) - c[2], q.h) {
                    return true;
                }
                let p = Poly::blocker(tri, c);
                let (lo, hi) = p.bounds();
                let rho = q.r + p.e_bnd;
                // (The normal costs a square root: only for blockers in reach.)
                let limit = q.len.min(acc.hi);
                if !box_misses(lo, hi, q.h, q.u, limit, rho) && !box_beyond(lo, hi, q.h, rho + limit) {
                    consider(&p.with_normal(), (lo, hi), q, world, acc);
                }
                true
            }
            None => {
                failed = Some(FallbackReason::MissingData);
                false
            }
        }
    }))?;
    match failed {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// One primitive's say: start overlap, then `lo`, `hi` and the nominal
/// contact. `origin` is the world position of the primitive's frame origin
/// (the capsule centre at the start).
/// `(lo, hi)` is the polygon's bounding box, which the caller found within
/// reach of the swept capsule.
fn consider<const N: usize>(p: &Poly<N>, (lo, hi): (V3, V3), q: &SweepQuery, origin: V3, acc: &mut Acc) {
    let (r, h, u) = (q.r, q.h, q.u);
    let rho_max = r + p.e_bnd;
    // (Only the move up to the time by which a contact already found has
    // certainly happened counts: nothing met after it is first.)
    let limit = q.len.min(acc.hi);
    if p.normal.is_some_and(|n| plane_misses(n, p.v[0], h, u, limit, rho_max)) {
        return;
    }
    // The axis moves at unit speed, so nothing farther than ρ + s from it
    // at the start is touched before s: the box distance, then the exact
    // distance at the start (which also decides an overlap), bound the
    // first contact from below.
    let reach = rho_max + limit;
    if box_beyond(lo, hi, h, reach) {
        return;
    }
    // (Its box, or else the cheaper bound of the polygon's distance,
    // beyond the radius and error: neither overlap nor a near start, and
    // the bound bounds the start distance from below. Both are computed on
    // the stored polygon like the exact distance, with rounding far below
    // the error bound's slack.)
    let d0 = if box_beyond(lo, hi, h, rho_max) {
        box_distance(lo, hi, h)
    } else {
        let bound = p.distance_lower_bound(h);
        if bound > rho_max { bound } else { p.start_distance(h) }
    };
    if d0 + p.e_bnd < r {
        acc.overlap = true;
    } else if d0 - p.e_bnd <= r {
        acc.near_start = true;
    }
    if q.len == 0.0 || d0 > reach {
        return;
    }
    let radii = Radii {
        face: [r + p.e_face, r, r - p.e_face],
        bnd: [r + p.e_bnd, r, r - p.e_bnd],
        min_depth: [-p.band, 0.0, p.band],
        count: if r - p.e_bnd > 0.0 { 3 } else { 2 },
    };
    // Contacts after the earliest certain one cannot be first, nor widen
    // the interval.
    let t = p.contacts(h, u, &radii, q.len.min(acc.hi));
    acc.lo = acc.lo.min(t.s[0]);
    acc.hi = acc.hi.min(t.s[2]);
    if let Some(f) = t.nominal
        && acc.best.is_none_or(|b| t.s[1] < b.s)
        && let Some(nom) = p.feature_contact(f, h, u, r)
    {
        let face = matches!(f, Feature::Face(_));
        let impact_normal = match p.normal {
            Some(n) if !face => {
                if dot(n, nom.normal) >= 0.0 {
                    n
                } else {
                    scale(n, -1.0)
                }
            }
            _ => nom.normal,
        };
        acc.best = Some(Best {
            s: t.s[1],
            point: add(nom.point, origin),
            normal: nom.normal,
            impact_normal,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::rng;

    fn tri(seed: &mut u64, scale_xy: f64, scale_z: f64) -> [V3; 3] {
        std::array::from_fn(|_| [scale_xy * rng(seed), scale_xy * rng(seed), scale_z * rng(seed)])
    }

    /// The polygon start distance agrees with the triangle distance used by
    /// `find_floor` (a different decomposition), on random triangles of
    /// every tilt, vertical ones and slivers included.
    #[test]
    fn start_distance_matches_triangle_distance() {
        let mut seed = 3;
        for i in 0..20_000 {
            let mut t = tri(&mut seed, 80.0, 120.0);
            match i % 5 {
                0 => {
                    t[2] = [
                        t[0][0] + 0.3 * (t[1][0] - t[0][0]),
                        t[0][1] + 0.3 * (t[1][1] - t[0][1]),
                        t[2][2],
                    ]
                }
                1 => t[2][2] = t[0][2],
                _ => {}
            }
            let h = 54.0 * (1.0 + rng(&mut seed)) / 2.0;
            let p = Poly::blocker(t, [0.0; 3]).with_normal();
            let ours = p.start_distance(h);
            let want = vertical_segment_triangle_distance(0.0, 0.0, -h, h, t);
            assert!((ours - want).abs() < 1e-9, "{t:?} h {h}: {ours} vs {want}");
        }
    }

    /// The cheap bound never exceeds the start distance, and it proves most
    /// primitives near the capsule but out of its reach out of reach (the
    /// case it is there for): random triangles of every tilt, vertical ones
    /// and slivers included.
    #[test]
    fn distance_lower_bound_bounds_the_start_distance() {
        let mut seed = 11;
        let (mut far, mut proved) = (0, 0);
        for i in 0..20_000 {
            let mut t = tri(&mut seed, 160.0, 240.0);
            match i % 4 {
                0 => t[2] = [t[1][0], t[1][1], t[2][2]],
                1 => t[2][2] = t[0][2],
                _ => {}
            }
            let h = 54.0 * (1.0 + rng(&mut seed)) / 2.0;
            let p = Poly::blocker(t, [0.0; 3]).with_normal();
            let exact = p.start_distance(h);
            let bound = p.distance_lower_bound(h);
            assert!(bound <= exact + 1e-9, "{t:?} h {h}: bound {bound} > {exact}");
            if exact > 42.0 {
                far += 1;
                proved += usize::from(bound > 42.0);
            }
        }
        assert!(far > 2_000 && proved * 10 > far * 7, "proved {proved} of {far}");
    }

    /// A stored piece is its triangle: the 3-vertex piece and the blocker
    /// of the same triangle give the same first contacts.
    #[test]
    fn contacts_are_continuous_in_rho() {
        let mut seed = 9;
        for _ in 0..5_000 {
            let t = tri(&mut seed, 120.0, 150.0);
            let p = Poly::blocker(t, [0.0; 3]).with_normal();
            let a = std::f64::consts::PI * rng(&mut seed);
            let u = [a.cos(), a.sin(), 0.0];
            let h = 54.0;
            if p.start_distance(h) <= 42.1 {
                continue;
            }
            let radii = Radii {
                face: [42.1, 42.0, 41.9],
                bnd: [42.1, 42.0, 41.9],
                min_depth: [0.0; 3],
                count: 3,
            };
            let times = p.contacts(h, u, &radii, 256.0);
            let some = |s: f64| s.is_finite().then_some(s);
            let (lo, mid, hi) = (some(times.s[0]), some(times.s[1]), some(times.s[2]));
            // The nominal contact's feature gives the nominal time.
            if let Some(m) = mid {
                let f = times.nominal.expect("a nominal feature");
                let c = p.feature_contact(f, h, u, 42.0).expect("the feature's contact");
                assert!((c.s - m).abs() < 1e-9, "{f:?}: {} vs {m}", c.s);
            }
            // Monotone: a fatter capsule touches no later.
            if let Some(m) = mid {
                assert!(lo.is_some_and(|l| l <= m + 1e-9), "{t:?} {u:?}: {lo:?} {mid:?}");
            }
            if let Some(x) = hi {
                assert!(mid.is_some_and(|m| m <= x + 1e-9), "{t:?} {u:?}: {mid:?} {hi:?}");
            }
        }
    }

    /// The libm-free floor is libm's floor.
    #[test]
    fn fast_floor_matches_libm() {
        let mut seed = 5;
        for i in 0..100_000 {
            let v = match i % 4 {
                0 => 70_000.0 * rng(&mut seed),
                1 => (100.0 * rng(&mut seed)).round(),
                2 => 65_535.0 + rng(&mut seed),
                _ => rng(&mut seed) * 1e-3,
            };
            let _ = v;
            let w = 1e4 * rng(&mut seed);
            assert_eq!(floor_i32(w), w.floor() as i32, "{w}");
        }
    }
}
