//! What every query reads from a tile: its frame, pieces and blockers as 3D
//! geometry, and the candidate-contact bookkeeping that turns error bounds
//! into "answer" or "fall back".

use crate::bvh::{QBox, Walk, touch_top, visit, visit_narrowing};
use crate::contact::*;
use crate::precision::{PrecisionPath, cert_z_err_reference, piece_z_err_reference};
use crate::query::FallbackReason;
use crate::tolerance::*;
use walksurf_format::{
    Blocker, CERT_CELL_CM, CERT_CELLS, Cert, HIDDEN_RISE_CM, MAX_PIECE_VERTICES, PieceHeader, TileQuant, TileView,
    VERTEX_STEPS_PER_CM, VertexFixed, blocker_flags,
};

/// Where a point lies relative to a polygon, with an undecided band.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Inside,
    Band,
    Outside,
}

/// One tile and its frame: x/y relative to the tile origin, z to its z origin.
pub(crate) struct Frame<'a> {
    pub tile: TileView<'a>,
    pub origin: [f64; 3],
    pub quant: TileQuant,
    /// Where this query reads error bounds (the surface's setting).
    pub path: PrecisionPath,
}

impl<'a> Frame<'a> {
    pub fn query_box(&self, lo: V3, hi: V3) -> QBox {
        QBox::new(
            [
                TileQuant::xy_query(lo[0]),
                TileQuant::xy_query(lo[1]),
                self.quant.z_query(lo[2]),
            ],
            [
                TileQuant::xy_query(hi[0]),
                TileQuant::xy_query(hi[1]),
                self.quant.z_query(hi[2]),
            ],
        )
    }

    pub fn to_world(&self, p: V3) -> V3 {
        add(p, self.origin)
    }

    /// Starts loading the top levels of both BVHs ([`touch_top`]): once
    /// a query knows it will walk them (the certificates did not answer).
    #[inline]
    pub fn touch_tops(&self) {
        touch_top(self.tile.piece_bvh);
        touch_top(self.tile.blocker_bvh);
    }

    /// The certificate cell holding `(x, y)` (frame cm); `None` outside the
    /// tile square.
    #[inline]
    pub fn cert_cell(&self, x: f64, y: f64) -> Option<(usize, usize)> {
        let n = CERT_CELLS as f64;
        // (A product, not a division: on every query's path. Within an ulp
        // of a cell line it may give the cell beside, which the bake's
        // margins cover: certificates hold over the cell grown by more.)
        let (i, j) = (x * (1.0 / CERT_CELL_CM), y * (1.0 / CERT_CELL_CM));
        (i >= 0.0 && j >= 0.0 && i < n && j < n).then_some((i as usize, j as usize))
    }

    /// Walks the piece BVH ([`visit`]) with the pieces' words.
    #[inline]
    pub fn visit_pieces(&self, q: &QBox, leaf: impl FnMut(u32) -> bool) -> Result<(), Walk> {
        let touch = |word: u32| self.tile.pieces.get(word as usize * 4).map_or(0, |&b| b as u32);
        visit(self.tile.piece_bvh, q, touch, leaf)
    }

    /// Walks the blocker BVH ([`visit_narrowing`]) with the blockers' indices.
    #[inline]
    pub fn visit_blockers(&self, q: QBox, leaf: impl FnMut(u32, &mut QBox) -> bool) -> Result<(), Walk> {
        let touch = |i: u32| self.tile.blockers.get(i as usize).map_or(0, |b| b.flags.get());
        visit_narrowing(self.tile.blocker_bvh, q, touch, leaf)
    }

    /// A piece read in place, with its z error bound from this query's
    /// precision path; else `None` with the reason put in `failed`
    /// (`MissingData`: corrupt; `PrecisionBudget`: Reference found no
    /// precision block for it). (Not a `Result`: an `Option` of a piece
    /// needs no tag of its own, which a visitor would store and reload.)
    #[inline(always)]
    pub fn piece_geom(&self, word: u32, failed: &mut Option<FallbackReason>) -> Option<PieceGeom<'a>> {
        let Some((header, verts)) = self.tile.piece(word) else {
            *failed = Some(FallbackReason::MissingData);
            return None;
        };
        let z_err = match self.piece_z_err(header, verts) {
            Ok(z_err) => z_err,
            Err(e) => {
                *failed = Some(e);
                return None;
            }
        };
        let geom = PieceGeom::load(header, verts, z_err);
        if geom.is_none() {
            *failed = Some(FallbackReason::MissingData);
        }
        geom
    }

    /// A piece's z error bound [cm]: its slot (Fast) or recomputed from its
    /// patch record (Reference). Not validated (the caller does).
    #[inline]
    pub fn piece_z_err(&self, header: &PieceHeader, verts: &[VertexFixed]) -> Result<f64, FallbackReason> {
        match self.path {
            PrecisionPath::Fast => Ok(header.z_err_cm.get() as f64),
            PrecisionPath::Reference => piece_z_err_reference(self.tile.patches, header, verts),
        }
    }

    /// A certificate's z error bound [cm] for a query centred in `cell`
    /// that reaches `r` around its centre: the stored copy (Fast) or the
    /// bound of the pieces it certifies there, recomputed (Reference).
    /// `Ok(None)`: none to recompute from, do not use the certificate.
    #[inline]
    pub fn cert_z_err(&self, cert: &Cert, cell: (usize, usize), r: f64) -> Result<Option<f64>, FallbackReason> {
        match self.path {
            // (A corrupt bound — negative or NaN — disables the certificate.)
            PrecisionPath::Fast => Ok(Some(cert.z_err_cm.get() as f64).filter(|e| *e >= 0.0)),
            PrecisionPath::Reference => cert_z_err_reference(self, cert, cell, r),
        }
    }
}

/// How far a piece's boundary may lie from the true one (XY).
#[inline]
pub(crate) fn piece_xy_err(header: &PieceHeader) -> f64 {
    if header.flags & walksurf_format::piece_flags::CUT_CROSSINGS != 0 {
        PIECE_CUT_XY_ERR_CM
    } else {
        PIECE_XY_ERR_CM
    }
}

/// A piece read in place: plane and fixed-point polygon, with 3D vertices
/// computed on demand (nothing copied, nothing zeroed).
#[derive(Clone, Copy)]
pub(crate) struct PieceGeom<'a> {
    pub n: usize,
    verts: &'a [VertexFixed],
    pub a: f64,
    pub b: f64,
    pub k: f64,
    pub z_err: f64,
    /// Largest XY distance of the boundary from the true one.
    pub xy_err: f64,
    /// Bit i: edge i → i + 1 is interior to its flat group's surface.
    pub interior: u32,
}

impl<'a> PieceGeom<'a> {
    /// The piece with z error bound `z_err` (from [`Frame::piece_z_err`]);
    /// `None` if it is corrupt. (Always inlined: built in place, not
    /// copied out of a call, on every piece a query visits.)
    #[inline(always)]
    pub fn load(header: &PieceHeader, verts: &'a [VertexFixed], z_err: f64) -> Option<PieceGeom<'a>> {
        let (a, b, k) = (
            header.plane_a.get() as f64,
            header.plane_b.get() as f64,
            header.plane_c.get() as f64,
        );
        if verts.len() < 3
            || verts.len() > MAX_PIECE_VERTICES
            || ![a, b, k, z_err].iter().all(|v| v.is_finite())
            || z_err < 0.0
        {
            return None;
        }
        Some(PieceGeom {
            n: verts.len(),
            verts,
            a,
            b,
            k,
            z_err,
            xy_err: piece_xy_err(header),
            interior: header.interior_edges.get(),
        })
    }

    /// Largest distance of a stored vertex from the true boundary, besides
    /// the z error bound: its XY error and the z that makes on a walkable
    /// plane (slope < 1).
    #[inline]
    pub fn edge_err(&self) -> f64 {
        self.xy_err * std::f64::consts::SQRT_2
    }

    /// Vertex `i` in fixed-point units, for `i ≤ n` (vertex `n` is vertex
    /// 0 again: the closing edge).
    #[inline]
    fn fixed(&self, i: usize) -> [f64; 2] {
        // (Wrapped by a subtraction, not `%`: an integer division per
        // vertex, on every query's path.)
        let i = if i < self.n { i } else { i - self.n };
        let p = self.verts.get(i).map_or([0, 0], |p| [p.x.get(), p.y.get()]);
        [p[0] as f64, p[1] as f64]
    }

    /// Vertex `i` (`i ≤ n`, as [`PieceGeom::fixed`]) in the frame, z on the
    /// plane.
    #[inline]
    pub fn v(&self, i: usize) -> V3 {
        let [fx, fy] = self.fixed(i);
        let (x, y) = (fx / VERTEX_STEPS_PER_CM, fy / VERTEX_STEPS_PER_CM);
        [x, y, self.a * x + self.b * y + self.k]
    }

    /// The lowest and highest z of its vertices (frame cm).
    #[inline]
    pub fn z_range(&self) -> (f64, f64) {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for i in 0..self.n {
            // (Comparisons skip a NaN as `f64::min` does, without its
            // extra dependent instructions per vertex.)
            let z = self.v(i)[2];
            lo = if z < lo { z } else { lo };
            hi = if z > hi { z } else { hi };
        }
        (lo, hi)
    }

    pub fn normal(&self) -> V3 {
        plane_normal(self.a, self.b)
    }

    /// Per edge (fixed point): its vector `(ex, ey)` and how far the XY
    /// point (frame cm) lies on its inner (left) side times its length.
    #[inline]
    fn edge_sides(&self, x: f64, y: f64) -> impl Iterator<Item = (f64, f64, f64)> + '_ {
        let (qx, qy) = (x * VERTEX_STEPS_PER_CM, y * VERTEX_STEPS_PER_CM);
        let mut prev = self.fixed(self.n - 1);
        (0..self.n).map(move |i| {
            let [ax, ay] = prev;
            let [bx, by] = self.fixed(i);
            prev = [bx, by];
            let (ex, ey) = (bx - ax, by - ay);
            (ex, ey, ex * (qy - ay) - ey * (qx - ax))
        })
    }

    /// Classifies the XY point (frame cm) against the polygon. The band
    /// along an interior edge is no band: the surface goes on across that
    /// edge (the neighbouring piece), so a point there that lies beside the
    /// edge itself (not beyond its ends) is on the surface, Inside.
    pub fn side(&self, x: f64, y: f64) -> Side {
        let band = EDGE_BAND_CM * VERTEX_STEPS_PER_CM;
        let (qx, qy) = (x * VERTEX_STEPS_PER_CM, y * VERTEX_STEPS_PER_CM);
        let mut side = Side::Inside;
        for i in 0..self.n {
            let ([ax, ay], [bx, by]) = (self.fixed(i), self.fixed(i + 1));
            let (ex, ey) = (bx - ax, by - ay);
            let (len2, d) = (ex * ex + ey * ey, ex * (qy - ay) - ey * (qx - ax));
            // Compare the signed distance with the band without a sqrt.
            let lim2 = band * band * len2;
            if d < 0.0 && d * d > lim2 {
                return Side::Outside;
            }
            if d <= 0.0 || d * d <= lim2 {
                let along = ex * (qx - ax) + ey * (qy - ay);
                if self.interior >> i & 1 == 0 || !(0.0..=len2).contains(&along) {
                    side = Side::Band;
                }
            }
        }
        side
    }

    /// Whether the XY point lies in the polygon or on its boundary.
    fn holds_xy(&self, x: f64, y: f64) -> bool {
        self.edge_sides(x, y).all(|(_, _, d)| d >= 0.0)
    }

    /// Whether `(x, y)` (frame cm) lies farther than `d` outside one of the
    /// polygon's edge lines (then farther than `d` from the polygon).
    pub fn outside_by(&self, x: f64, y: f64, d: f64) -> bool {
        let d = d * VERTEX_STEPS_PER_CM;
        self.edge_sides(x, y)
            .any(|(ex, ey, inner)| inner < 0.0 && inner * inner > d * d * (ex * ex + ey * ey))
    }

    /// Distance from the vertical segment `x = cx, y = cy, z ∈ [z0, z1]`
    /// (frame cm) to the piece: its polygon in its plane. Zero if the
    /// segment pierces it; else the closest pair has an end of the segment
    /// over the inside (the plane distance) or a polygon edge.
    pub fn vertical_segment_distance(&self, cx: f64, cy: f64, z0: f64, z1: f64) -> f64 {
        let z = self.a * cx + self.b * cy + self.k;
        if (z0..=z1).contains(&z) && self.holds_xy(cx, cy) {
            return 0.0;
        }
        let n = self.normal();
        let (p0, p1) = ([cx, cy, z0], [cx, cy, z1]);
        let mut d = f64::INFINITY;
        for p in [p0, p1] {
            // Signed distance above the plane, and the foot of the normal.
            let h = (p[2] - (self.a * p[0] + self.b * p[1] + self.k)) * n[2];
            if self.holds_xy(p[0] - h * n[0], p[1] - h * n[1]) {
                d = d.min(h.abs());
            }
        }
        for i in 0..self.n {
            d = d.min(segment_segment_distance(p0, p1, self.v(i), self.v(i + 1)));
        }
        d
    }
}

pub(crate) fn plane_normal(a: f64, b: f64) -> V3 {
    plane_normal_and_root(a, b).0
}

/// [`plane_normal`] and the length it normalised, `√(1 + a² + b²)`
/// ([`plane_root`]): one square root for both.
#[inline]
pub(crate) fn plane_normal_and_root(a: f64, b: f64) -> (V3, f64) {
    let l = plane_root(a, b);
    ([-a / l, -b / l, 1.0 / l], l)
}

pub(crate) fn load_blocker(b: &Blocker) -> [V3; 3] {
    b.v.map(|p| p.map(|c| c.get() as f64 / VERTEX_STEPS_PER_CM))
}

/// The highest a stored blocker's true triangle may reach (its highest
/// stored vertex, plus their rounding and the comparison margin).
#[inline]
pub(crate) fn blocker_top(tri: &[V3; 3]) -> f64 {
    tri[0][2].max(tri[1][2]).max(tri[2][2]) + BLOCKER_VERTEX_ERR_CM + Z_MARGIN_CM
}

/// Whether a capsule query may skip blocker `b` (whose true top is at
/// most `z_top`): it is hidden under the walkable surface
/// ([`blocker_flags::HIDDEN`]), and that surface, at most
/// [`HIDDEN_RISE_CM`] above `z_top`, is below the capsule's top sphere
/// centre `top_z`. Wherever the capsule reaches a point of the blocker —
/// moving down or sideways — the surface point above it lies between
/// that point and `top_z`, inside the capsule: it was met no later, or
/// overlapped at the start (which the surface's own primitive tells), with
/// the same normal where both are met at once.
#[inline]
pub(crate) fn hidden_below(b: &Blocker, z_top: f64, top_z: f64) -> bool {
    b.flags.get() & blocker_flags::HIDDEN != 0 && z_top + HIDDEN_RISE_CM < top_z
}

/// XY side of a point against a triangle's footprint (either orientation; a
/// vertical triangle's footprint is a segment: band or outside).
pub(crate) fn triangle_side(t: &[V3; 3], x: f64, y: f64) -> Side {
    let area2 = (t[1][0] - t[0][0]) * (t[2][1] - t[0][1]) - (t[1][1] - t[0][1]) * (t[2][0] - t[0][0]);
    let mut min_d = f64::INFINITY;
    let mut near = false;
    for k in 0..3 {
        let (p, q) = (t[k], t[(k + 1) % 3]);
        let (ex, ey) = (q[0] - p[0], q[1] - p[1]);
        let len = (ex * ex + ey * ey).sqrt();
        if len == 0.0 {
            continue;
        }
        let d = (ex * (y - p[1]) - ey * (x - p[0])) / len * area2.signum();
        min_d = min_d.min(d);
        // Distance to the edge segment, for thin footprints.
        let s = (((x - p[0]) * ex + (y - p[1]) * ey) / (len * len)).clamp(0.0, 1.0);
        let (dx, dy) = (p[0] + s * ex - x, p[1] + s * ey - y);
        near |= (dx * dx + dy * dy).sqrt() <= EDGE_BAND_CM;
    }
    if area2 != 0.0 && min_d > EDGE_BAND_CM {
        Side::Inside
    } else if near || (area2 != 0.0 && min_d >= -EDGE_BAND_CM) {
        Side::Band
    } else {
        Side::Outside
    }
}

/// The upward unit normal and plane `z = a·x + b·y + k` of a triangle;
/// `None` if it is vertical (or degenerate).
pub(crate) fn triangle_plane(t: &[V3; 3]) -> Option<(V3, f64, f64, f64)> {
    let mut n = cross(sub(t[1], t[0]), sub(t[2], t[0]));
    if n[2] < 0.0 {
        n = scale(n, -1.0);
    }
    // (Compared squared, `n.z ≤ 1e-9·|n|`: most blockers near a query are
    // walls, refused here before any square root.)
    let l2 = dot(n, n);
    if l2 == 0.0 || n[2] <= 0.0 || n[2] * n[2] <= 1e-18 * l2 {
        return None;
    }
    let l = l2.sqrt();
    let (a, b) = (-n[0] / n[2], -n[1] / n[2]);
    Some((scale(n, 1.0 / l), a, b, t[0][2] - a * t[0][0] - b * t[0][1]))
}

/// A candidate first contact.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cand {
    /// Distance moved (for the line trace: from the window top).
    pub t: f64,
    /// Bound on |t − true t|.
    pub err: f64,
    pub point: V3,
    pub normal: V3,
    /// Bound on how far the true contact's unit normal lies from `normal`
    /// (any component, and for an answer from [`Hits::decide`]: from the
    /// normal of whichever candidate truly comes first).
    pub normal_err: f64,
}

/// Candidate contacts of one query.
pub(crate) struct Hits {
    list: [Cand; MAX_CANDIDATES],
    n: usize,
    /// Smallest t (minus its error) of a contact that may or may not exist.
    undecided_t: f64,
    /// Smallest `t + err` of every candidate pushed (see [`Hits::bound`]).
    bound_t: f64,
}

impl Hits {
    pub fn new() -> Hits {
        Hits {
            list: [Cand {
                t: 0.0,
                err: 0.0,
                point: [0.0; 3],
                normal: [0.0; 3],
                normal_err: 0.0,
            }; MAX_CANDIDATES],
            n: 0,
            undecided_t: f64::INFINITY,
            bound_t: f64::INFINITY,
        }
    }

    /// Adds a candidate. Candidates certainly before the start (`t < 0`:
    /// surfaces above a line trace's window, or behind a moving sphere) can
    /// never be the first contact and are dropped.
    pub fn push(&mut self, c: Cand) {
        if !(c.t.is_finite() && c.err.is_finite()) {
            self.undecided_t = f64::NEG_INFINITY;
            return;
        }
        if c.t + c.err + Z_MARGIN_CM < 0.0 {
            return;
        }
        self.bound_t = self.bound_t.min(c.t + c.err);
        // Keep the MAX_CANDIDATES earliest (sorted by t); what falls off the
        // end is remembered as undecided, so it can still veto an answer.
        if self.n == self.list.len() {
            let Some(last) = self.list.last().copied() else { return };
            if c.t >= last.t {
                self.undecided_t = self.undecided_t.min(c.t - c.err);
                return;
            }
            self.undecided_t = self.undecided_t.min(last.t - last.err);
            self.n -= 1;
        }
        let Some(slot) = self.list.get_mut(self.n) else { return };
        *slot = c;
        let mut i = self.n;
        self.n += 1;
        while i > 0 && self.list.get(i - 1).is_some_and(|p| p.t > c.t) {
            self.list.swap(i - 1, i);
            i -= 1;
        }
    }

    /// A time by which a contact certainly happened (the smallest `t + err`
    /// of every candidate pushed, kept or not; +∞ if none): anything that cannot be touched before it (plus
    /// the margins `decide` uses) cannot change the answer.
    #[inline]
    pub fn bound(&self) -> f64 {
        self.bound_t
    }

    pub fn undecided(&mut self, t_lo: f64) {
        self.undecided_t = self.undecided_t.min(t_lo);
    }

    /// The first contact with `t ∈ [t_min, t_max]`, `Ok(None)` if there is
    /// certainly none, `Err` when the order or existence is uncertain.
    pub fn decide(&self, t_min: f64, t_max: f64) -> Result<Option<Cand>, FallbackReason> {
        let list = self.list.get(..self.n).unwrap_or(&[]);
        let mut best: Option<Cand> = None;
        for c in list {
            let e = c.err + Z_MARGIN_CM;
            if c.t + e < t_min || c.t - e > t_max {
                continue; // certainly outside the window
            }
            if c.t - e < t_min || c.t + e > t_max {
                return Err(FallbackReason::PrecisionBudget); // straddles a window end
            }
            if best.is_none_or(|b| c.t < b.t) {
                best = Some(*c);
            }
        }
        let Some(best) = best else {
            return if self.undecided_t <= t_max + Z_MARGIN_CM {
                Err(FallbackReason::PrecisionBudget)
            } else {
                Ok(None)
            };
        };
        // Another contact may come first only if its earliest possible t
        // reaches the best one's latest possible t.
        let reach = best.t + best.err + 2.0 * Z_MARGIN_CM;
        if self.undecided_t <= reach {
            return Err(FallbackReason::PrecisionBudget);
        }
        // Any candidate that may come first may be the true contact: the
        // answer's normal must lie within the contract's tolerance of each
        // one's true normal.
        let mut normal_err = best.normal_err;
        for c in list {
            if c.t - c.err <= reach {
                let apart = (0..3).map(|k| (c.normal[k] - best.normal[k]).abs()).fold(0.0, f64::max);
                if apart > SAME_NORMAL {
                    return Err(FallbackReason::PrecisionBudget);
                }
                normal_err = normal_err.max(apart + c.normal_err);
            }
        }
        if best.err > MAX_CONTACT_ERR_CM || normal_err.is_nan() || normal_err > MAX_NORMAL_ERR {
            return Err(FallbackReason::PrecisionBudget);
        }
        Ok(Some(Cand { normal_err, ..best }))
    }
}

pub(crate) fn walk_result(walk: Result<(), Walk>) -> Result<(), FallbackReason> {
    match walk {
        Ok(()) => Ok(()),
        Err(Walk::Corrupt) => Err(FallbackReason::MissingData),
        Err(Walk::TooDeep) => Err(FallbackReason::BudgetExceeded),
    }
}

/// Contacts of the sphere moving down with a stored segment (interior or
/// endpoints) whose true position lies within `e` of it.
///
/// The true first contact lies between the first time the sphere grown by
/// `e` touches the stored segment and the first time the sphere shrunk by
/// `e` does (the distance to the segment is convex along the motion, and
/// moving the segment by `e` changes every distance by at most `e`). So the
/// nominal contact is pushed with that interval as its error; if the shrunk
/// sphere never touches, the contact may not exist and is undecided. A
/// grown sphere that already touches at the start leaves even the order
/// undecided (the overlap test decides whether it overlaps): then it returns
/// `true`.
pub(crate) fn push_edge_contact(hits: &mut Hits, c: V3, r: f64, p0: V3, p1: V3, e: f64) -> bool {
    // Wholly above the sphere: touched (if ever) only before the start, which
    // is the overlap test's business.
    if p0[2].min(p1[2]) > c[2] + r + e {
        return false;
    }
    let re = r + e;
    if segment_box_dist2(c, p0, p1) > re * re {
        return false;
    }
    // Cheap lower bound of the grown sphere's first touch: at horizontal
    // distance ≥ d from the axis, its lowest point is sqrt(re² − d²) below
    // the centre, and no point of the segment is above the higher end.
    let d2 = segment_xy_dist2(c, p0, p1);
    if d2 > re * re || c[2] - (re * re - d2).sqrt() - p0[2].max(p1[2]) > hits.bound() + PRUNE_MARGIN_CM {
        return false;
    }
    let cast = SegmentCast::new(c, p0, p1);
    let Some((early, early_out)) = cast.interval(r + e) else {
        return false;
    };
    if early_out < 0.0 {
        return false; // behind the sphere (above it) for the whole motion
    }
    if early.t < 0.0 {
        hits.undecided(0.0);
        return true;
    }
    if early.t > hits.bound() + PRUNE_MARGIN_CM {
        return false; // after a contact that certainly happens
    }
    let nominal = cast.interval(r);
    let late = cast.interval(r - e);
    match (nominal, late) {
        (Some((n, _)), Some((l, _))) => {
            let centre = [c[0], c[1], c[2] - n.t];
            let err = (n.t - early.t).max(l.t - n.t);
            hits.push(Cand {
                t: n.t,
                err,
                point: n.point,
                normal: scale(sub(centre, n.point), 1.0 / r),
                normal_err: edge_normal_err(r, len(sub(p1, p0)), e, err),
            });
        }
        _ => hits.undecided(early.t),
    }
    false
}

/// Bound on the error of a sphere's contact normal with a segment of
/// length `l` whose true position lies within `e` of it, the contact time
/// being within `t_err` of the nominal one.
///
/// The normal is the part of `w` (from a segment end to the centre)
/// across the segment's direction `u`, over `r`. The true `w` is within
/// `t_err + e` of the nominal; the true direction within `2e/l` radians,
/// which moves the part across by at most that times `|w| ≤ √(r² + l²)`
/// (plus the same slack); and where either foot is the segment's end
/// rather than inside it the foot moves by as much again: twice the
/// first term. A segment shorter than that is a point within `e + l`.
pub(crate) fn edge_normal_err(r: f64, l: f64, e: f64, t_err: f64) -> f64 {
    let shift = t_err + e;
    let along = if l > 0.0 {
        (2.0 * shift + 2.0 * e / l * ((r * r + l * l).sqrt() + shift)) / r
    } else {
        f64::INFINITY
    };
    let point = 2.0 * (shift + l) / r;
    along.min(point)
}

/// Bound on the error of a triangle's unit normal when each vertex may lie
/// within `d` of where it is stored: the edge vectors move by at most `2d`,
/// their cross product by `2d(|e1| + |e2|) + 4d²`, and the unit normal by
/// at most twice that over the cross product's length.
pub(crate) fn triangle_normal_err(tri: &[V3; 3], d: f64) -> f64 {
    let (e1, e2) = (sub(tri[1], tri[0]), sub(tri[2], tri[0]));
    let area2 = len(cross(e1, e2));
    2.0 * (2.0 * d * (len(e1) + len(e2)) + 4.0 * d * d) / area2
}

#[cfg(test)]
mod tests {
    use super::*;
    use walksurf_format::{PieceHeader, VertexFixed};

    /// Uniform in [0, 1).
    fn unit(seed: &mut u64) -> f64 {
        0.5 * (crate::testing::rng(seed) + 1.0)
    }

    /// Triangles of every shape (slivers included), each vertex moved by up
    /// to `d`: the unit normal moves by no more than the bound (and the
    /// bound is not wildly loose on a fat triangle).
    #[test]
    fn triangle_normal_err_bounds_the_normal() {
        let mut seed = 7u64;
        let d = 0.01;
        let unit_normal = |t: &[V3; 3]| {
            let n = cross(sub(t[1], t[0]), sub(t[2], t[0]));
            scale(n, 1.0 / len(n))
        };
        let mut worst: f64 = 0.0;
        for _ in 0..20_000 {
            let size = 0.1 + 50.0 * unit(&mut seed);
            let tri: [V3; 3] = std::array::from_fn(|_| std::array::from_fn(|_| size * crate::testing::rng(&mut seed)));
            let bound = triangle_normal_err(&tri, d);
            if !bound.is_finite() || bound > 1.0 {
                continue;
            }
            let moved = tri.map(|v| {
                let m: V3 = std::array::from_fn(|_| crate::testing::rng(&mut seed));
                add(v, scale(m, d / len(m).max(1.0)))
            });
            let (n0, n1) = (unit_normal(&tri), unit_normal(&moved));
            // (Either orientation: the moved one may have flipped.)
            let err = len(sub(n0, n1)).min(len(add(n0, n1)));
            assert!(err <= bound, "{tri:?}: {err} > {bound}");
            worst = worst.max(err / bound);
        }
        assert!(worst > 0.05, "the bound is loose: at most {worst} of it reached");
    }

    /// Near an interior edge a point is Inside (the surface goes on across
    /// it), beside the edge on either side; near a boundary edge, or beyond
    /// an interior edge's ends, it is in the Band; farther out, Outside.
    /// Each edge of a pentagon in turn is the interior one.
    #[test]
    fn an_interior_edge_makes_no_band() {
        let pts = [[0.0, 0.0], [100.0, 0.0], [130.0, 60.0], [50.0, 110.0], [-20.0, 50.0]];
        let verts: Vec<VertexFixed> = pts
            .iter()
            .map(|p| VertexFixed {
                x: ((p[0] * VERTEX_STEPS_PER_CM) as i32).into(),
                y: ((p[1] * VERTEX_STEPS_PER_CM) as i32).into(),
            })
            .collect();
        let n = pts.len();
        for interior in 0..n {
            let header = PieceHeader {
                patch: 0.into(),
                vertex_count: n as u8,
                flags: 0,
                plane_a: 0.0.into(),
                plane_b: 0.0.into(),
                plane_c: 0.0.into(),
                z_err_cm: 0.0.into(),
                interior_edges: (1u32 << interior).into(),
            };
            let g = PieceGeom::load(&header, &verts, 0.0).expect("piece");
            for k in 0..n {
                let (a, b) = (pts[k], pts[(k + 1) % n]);
                let (ex, ey) = (b[0] - a[0], b[1] - a[1]);
                let l = ex.hypot(ey);
                // Outward unit normal (the polygon is CCW).
                let out = [ey / l, -ex / l];
                let at = |s: f64, off: f64| [a[0] + s * ex + off * out[0], a[1] + s * ey + off * out[1]];
                let near = if k == interior { Side::Inside } else { Side::Band };
                for off in [-0.4 * EDGE_BAND_CM, 0.0, 0.4 * EDGE_BAND_CM] {
                    let p = at(0.5, off);
                    assert_eq!(g.side(p[0], p[1]), near, "edge {k}, interior {interior}, offset {off}");
                }
                let p = at(0.5, 3.0 * EDGE_BAND_CM);
                assert_eq!(g.side(p[0], p[1]), Side::Outside, "edge {k}, interior {interior}");
                let p = at(0.5, -3.0 * EDGE_BAND_CM);
                assert_eq!(g.side(p[0], p[1]), Side::Inside, "edge {k}, interior {interior}");
                // Just beyond the edge's end, outside it: the next edge's
                // band, or beyond an interior edge's ends.
                let p = at(1.0 + 0.2 * EDGE_BAND_CM / l, 0.2 * EDGE_BAND_CM);
                assert_ne!(g.side(p[0], p[1]), Side::Inside, "edge {k}, interior {interior}");
            }
        }
    }

    /// The distance from a vertical segment to a piece equals the smallest
    /// distance to the triangles of its fan (the general triangle routine,
    /// an independent computation), on random convex pieces and segments:
    /// above, below, beside and through them.
    #[test]
    fn piece_segment_distance_is_its_fans() {
        let mut seed = 7;
        for case in 0..3000 {
            let mut u = || unit(&mut seed);
            // A convex polygon: points on an ellipse at increasing angles.
            let n = 3 + (u() * 6.0) as usize;
            let (cx, cy, rx, ry) = (u() * 400.0, u() * 400.0, 5.0 + u() * 80.0, 5.0 + u() * 80.0);
            let mut angles: Vec<f64> = (0..n).map(|_| u() * std::f64::consts::TAU).collect();
            angles.sort_by(f64::total_cmp);
            angles.dedup_by(|a, b| (*a - *b).abs() < 0.2);
            if angles.len() < 3 {
                continue;
            }
            let verts: Vec<VertexFixed> = angles
                .iter()
                .map(|t| VertexFixed {
                    x: (((cx + rx * t.cos()) * VERTEX_STEPS_PER_CM).round() as i32).into(),
                    y: (((cy + ry * t.sin()) * VERTEX_STEPS_PER_CM).round() as i32).into(),
                })
                .collect();
            let (a, b, k) = ((u() - 0.5) * 1.4, (u() - 0.5) * 1.4, u() * 100.0);
            let header = PieceHeader {
                patch: 0.into(),
                vertex_count: verts.len() as u8,
                flags: 0,
                plane_a: (a as f32).into(),
                plane_b: (b as f32).into(),
                plane_c: (k as f32).into(),
                z_err_cm: 0.0.into(),
                interior_edges: 0.into(),
            };
            let g = PieceGeom::load(&header, &verts, 0.0).expect("piece");
            let (x, y) = (cx + (u() - 0.5) * 3.0 * rx, cy + (u() - 0.5) * 3.0 * ry);
            let z0 = k + (u() - 0.5) * 400.0;
            let z1 = z0 + u() * 200.0;
            let fan = (1..g.n - 1)
                .map(|i| vertical_segment_triangle_distance(x, y, z0, z1, [g.v(0), g.v(i), g.v(i + 1)]))
                .fold(f64::INFINITY, f64::min);
            let got = g.vertical_segment_distance(x, y, z0, z1);
            assert!(
                (got - fan).abs() <= 1e-9 * (1.0 + fan),
                "case {case}: {got} vs fan {fan}"
            );
        }
    }
}
