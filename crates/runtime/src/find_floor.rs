//! `find_floor`: the first surface under the agent, exactly, or Fallback.
//!
//! Both modes read one tile (the one under the capsule centre: every tile
//! holds all geometry within its halo) through its two BVHs: convex pieces
//! of walkable surface (plane + fixed-point polygon) and blocker triangles
//! (everything else, stored exactly). Every primitive near the query gives
//! candidate contacts with an error bound; [`Hits::decide`] answers only when
//! the first contact is certain, else falls back.
//!
//! * Line trace: the vertical line under the centre, window
//!   `[bottom − down, bottom + 2]`.
//! * Capsule: the capsule moving straight down. Only its bottom sphere can
//!   make the first contact with something it does not already overlap
//!   (DESIGN §9): faces, edges and vertices of pieces and of blockers. A capsule that overlaps anything
//!   at its start falls back (`InitialOverlap`).

use crate::Surface;
use crate::bvh::{QBox, Walk, visit};
use crate::contact::*;
use crate::query::*;
use crate::tolerance::*;
use walksurf_format::{
    Blocker, MAX_PIECE_VERTICES, PieceHeader, TILE_SIZE_CM, TileQuant, TileView, VERTEX_STEPS_PER_CM, VertexFixed,
};

/// Where a point lies relative to a polygon, with an undecided band.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Inside,
    Band,
    Outside,
}

/// One tile and its frame: x/y relative to the tile origin, z to its z origin.
struct Frame<'a> {
    tile: TileView<'a>,
    origin: [f64; 3],
    quant: TileQuant,
}

impl Frame<'_> {
    fn query_box(&self, lo: V3, hi: V3) -> QBox {
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

    fn to_world(&self, p: V3) -> V3 {
        add(p, self.origin)
    }
}

/// A piece with 3D vertices in the frame.
struct PieceGeom {
    n: usize,
    v: [V3; MAX_PIECE_VERTICES],
    fixed: [[f64; 2]; MAX_PIECE_VERTICES],
    a: f64,
    b: f64,
    k: f64,
    z_err: f64,
}

impl PieceGeom {
    fn load(header: &PieceHeader, verts: &[VertexFixed]) -> Option<PieceGeom> {
        let (a, b, k) = (
            header.plane_a.get() as f64,
            header.plane_b.get() as f64,
            header.plane_c.get() as f64,
        );
        let z_err = header.z_err_cm.get() as f64;
        if verts.len() < 3 || ![a, b, k, z_err].iter().all(|v| v.is_finite()) || z_err < 0.0 {
            return None;
        }
        let mut g = PieceGeom {
            n: verts.len(),
            v: [[0.0; 3]; MAX_PIECE_VERTICES],
            fixed: [[0.0; 2]; MAX_PIECE_VERTICES],
            a,
            b,
            k,
            z_err,
        };
        for (i, p) in verts.iter().enumerate() {
            let (fx, fy) = (p.x.get() as f64, p.y.get() as f64);
            let (x, y) = (fx / VERTEX_STEPS_PER_CM, fy / VERTEX_STEPS_PER_CM);
            g.fixed[i] = [fx, fy];
            g.v[i] = [x, y, a * x + b * y + k];
        }
        Some(g)
    }

    fn normal(&self) -> V3 {
        plane_normal(self.a, self.b)
    }

    /// Classifies the XY point (frame cm) against the polygon.
    fn side(&self, x: f64, y: f64) -> Side {
        let (qx, qy) = (x * VERTEX_STEPS_PER_CM, y * VERTEX_STEPS_PER_CM);
        let band = EDGE_BAND_CM * VERTEX_STEPS_PER_CM;
        let mut side = Side::Inside;
        for i in 0..self.n {
            let [ax, ay] = self.fixed[i];
            let [bx, by] = self.fixed[(i + 1) % self.n];
            let (ex, ey) = (bx - ax, by - ay);
            let len = (ex * ex + ey * ey).sqrt();
            // Signed distance (fixed-point units), positive inside (left).
            let d = if len > 0.0 {
                (ex * (qy - ay) - ey * (qx - ax)) / len
            } else {
                0.0
            };
            if d < -band {
                return Side::Outside;
            }
            if d <= band {
                side = Side::Band;
            }
        }
        side
    }
}

fn plane_normal(a: f64, b: f64) -> V3 {
    let l = (a * a + b * b + 1.0).sqrt();
    [-a / l, -b / l, 1.0 / l]
}

fn load_blocker(b: &Blocker) -> [V3; 3] {
    b.v.map(|p| p.map(|c| c.get() as f64 / VERTEX_STEPS_PER_CM))
}

/// XY side of a point against a triangle's footprint (either orientation; a
/// vertical triangle's footprint is a segment: band or outside).
fn triangle_side(t: &[V3; 3], x: f64, y: f64) -> Side {
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
fn triangle_plane(t: &[V3; 3]) -> Option<(V3, f64, f64, f64)> {
    let mut n = cross(sub(t[1], t[0]), sub(t[2], t[0]));
    if n[2] < 0.0 {
        n = scale(n, -1.0);
    }
    let l = len(n);
    if l == 0.0 || n[2] <= l * 1e-9 {
        return None;
    }
    let (a, b) = (-n[0] / n[2], -n[1] / n[2]);
    Some((scale(n, 1.0 / l), a, b, t[0][2] - a * t[0][0] - b * t[0][1]))
}

/// A candidate first contact.
#[derive(Clone, Copy, Debug)]
struct Cand {
    /// Distance moved down (or, for the line trace, from the window top).
    t: f64,
    /// Bound on |t − true t|.
    err: f64,
    point: V3,
    normal: V3,
}

/// Candidate contacts of one query.
struct Hits {
    list: [Cand; MAX_CANDIDATES],
    n: usize,
    /// Smallest t (minus its error) of a contact that may or may not exist.
    undecided_t: f64,
    overflow: bool,
}

impl Hits {
    fn new() -> Hits {
        Hits {
            list: [Cand {
                t: 0.0,
                err: 0.0,
                point: [0.0; 3],
                normal: [0.0; 3],
            }; MAX_CANDIDATES],
            n: 0,
            undecided_t: f64::INFINITY,
            overflow: false,
        }
    }

    fn push(&mut self, c: Cand) {
        if !(c.t.is_finite() && c.err.is_finite()) {
            self.undecided_t = f64::NEG_INFINITY;
            return;
        }
        match self.list.get_mut(self.n) {
            Some(slot) => {
                *slot = c;
                self.n += 1;
            }
            None => self.overflow = true,
        }
    }

    fn undecided(&mut self, t_lo: f64) {
        self.undecided_t = self.undecided_t.min(t_lo);
    }

    /// The first contact with `t ∈ [t_min, t_max]`, `Ok(None)` if there is
    /// certainly none, `Err` when the order or existence is uncertain.
    fn decide(&self, t_min: f64, t_max: f64) -> Result<Option<Cand>, FallbackReason> {
        if self.overflow {
            return Err(FallbackReason::BudgetExceeded);
        }
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
        let reach = best.t + best.err + 2.0 * Z_MARGIN_CM + SAME_Z_CM;
        if self.undecided_t <= reach {
            return Err(FallbackReason::PrecisionBudget);
        }
        for c in list {
            if c.t - c.err <= reach && (0..3).any(|k| (c.normal[k] - best.normal[k]).abs() > SAME_NORMAL) {
                return Err(FallbackReason::PrecisionBudget);
            }
        }
        if best.err > MAX_CONTACT_ERR_CM {
            return Err(FallbackReason::PrecisionBudget);
        }
        Ok(Some(best))
    }
}

fn walk_result(walk: Result<(), Walk>) -> Result<(), FallbackReason> {
    match walk {
        Ok(()) => Ok(()),
        Err(Walk::Corrupt) => Err(FallbackReason::MissingData),
        Err(Walk::TooDeep) => Err(FallbackReason::BudgetExceeded),
    }
}

impl Surface {
    /// Finds the floor under an agent at `pos` (capsule centre, world cm),
    /// looking at most `down_cm` below the capsule bottom.
    pub fn find_floor(&self, pos: [f64; 3], down_cm: f64, agent: Agent, mode: FloorMode) -> FloorOutcome {
        if !pos.iter().all(|v| v.is_finite()) || !down_cm.is_finite() || down_cm < 0.0 || !agent.is_valid() {
            return FloorOutcome::Fallback(FallbackReason::InvalidInput);
        }
        if !self.precision_known() {
            return FloorOutcome::Fallback(FallbackReason::PrecisionBudget);
        }
        let result = match mode {
            FloorMode::LineTrace => self.find_floor_line(pos, down_cm, agent),
            FloorMode::Capsule => self.find_floor_capsule(pos, down_cm, agent),
        };
        result.unwrap_or_else(FloorOutcome::Fallback)
    }

    /// The tile under `pos`, `Ok(None)` if the file has none there (then no
    /// triangle lies within the halo of that tile's square).
    fn home_frame(&self, pos: [f64; 3]) -> Result<Option<Frame<'_>>, FallbackReason> {
        let view = self.view().ok_or(FallbackReason::MissingData)?;
        let tx = (pos[0] / TILE_SIZE_CM).floor();
        let ty = (pos[1] / TILE_SIZE_CM).floor();
        if tx.abs() > i32::MAX as f64 || ty.abs() > i32::MAX as f64 {
            return Err(FallbackReason::OutsideCoverage);
        }
        let Some(hot) = view.tile_hot(tx as i32, ty as i32) else {
            return Ok(None);
        };
        let tile = view.tile(hot).ok_or(FallbackReason::MissingData)?;
        Ok(Some(Frame {
            origin: tile.origin_cm(),
            quant: tile.quant(),
            tile,
        }))
    }

    fn walkable_z(&self) -> f64 {
        self.bake_params().walkable_normal_z.get() as f64
    }

    fn floor_hit(&self, pos: [f64; 3], floor_dist: f64, point: V3, normal: V3) -> Result<FloorOutcome, FallbackReason> {
        let walkable_z = self.walkable_z();
        if (normal[2] - walkable_z).abs() < WALKABLE_Z_BAND {
            return Err(FallbackReason::PrecisionBudget);
        }
        Ok(FloorOutcome::Floor(FloorHit {
            floor_dist,
            location: [pos[0], pos[1], pos[2] - floor_dist],
            impact_point: point,
            normal,
            walkable: normal[2] >= walkable_z,
        }))
    }

    fn find_floor_line(&self, pos: [f64; 3], down_cm: f64, agent: Agent) -> Result<FloorOutcome, FallbackReason> {
        let Some(f) = self.home_frame(pos)? else {
            return Ok(FloorOutcome::NoFloor);
        };
        let (x, y) = (pos[0] - f.origin[0], pos[1] - f.origin[1]);
        let bottom = pos[2] - agent.half_height_cm - f.origin[2];
        let top = bottom + LINE_TRACE_ABOVE_CM;
        let lo = bottom - down_cm;
        let q = f.query_box([x, y, lo - 1.0], [x, y, top + 1.0]);
        let mut hits = Hits::new();
        let mut corrupt = false;
        walk_result(visit(f.tile.piece_bvh, &q, |word| {
            let Some(g) = f.tile.piece(word).and_then(|(h, v)| PieceGeom::load(h, v)) else {
                corrupt = true;
                return false;
            };
            let z = g.a * x + g.b * y + g.k;
            match g.side(x, y) {
                Side::Outside => {}
                Side::Inside => hits.push(Cand {
                    t: top - z,
                    err: g.z_err,
                    point: [x, y, z],
                    normal: g.normal(),
                }),
                Side::Band => hits.undecided(top - z - g.z_err),
            }
            true
        }))?;
        walk_result(visit(f.tile.blocker_bvh, &q, |i| {
            let Some(b) = f.tile.blockers.get(i as usize) else {
                corrupt = true;
                return false;
            };
            let tri = load_blocker(b);
            match (triangle_side(&tri, x, y), triangle_plane(&tri)) {
                (Side::Outside, _) => {}
                (Side::Inside, Some((normal, a, b, k))) => {
                    let z = a * x + b * y + k;
                    hits.push(Cand {
                        t: top - z,
                        err: VERTEX_Z_ERR_CM + (a * a + b * b).sqrt() * VERTEX_XY_ERR_CM,
                        point: [x, y, z],
                        normal,
                    });
                }
                _ => {
                    let z_hi = tri[0][2].max(tri[1][2]).max(tri[2][2]);
                    hits.undecided(top - z_hi - VERTEX_Z_ERR_CM);
                }
            }
            true
        }))?;
        if corrupt {
            return Err(FallbackReason::MissingData);
        }
        let Some(c) = hits.decide(0.0, top - lo)? else {
            return Ok(FloorOutcome::NoFloor);
        };
        let z = top - c.t;
        self.floor_hit(pos, bottom - z, [pos[0], pos[1], z + f.origin[2]], c.normal)
    }

    fn find_floor_capsule(&self, pos: [f64; 3], down_cm: f64, agent: Agent) -> Result<FloorOutcome, FallbackReason> {
        let r = agent.radius_cm;
        if r > self.bake_params().max_agent_radius_cm.get() as f64 {
            return Err(FallbackReason::BudgetExceeded);
        }
        let Some(f) = self.home_frame(pos)? else {
            return Ok(FloorOutcome::NoFloor);
        };
        let half_seg = agent.half_height_cm - r;
        let c = [
            pos[0] - f.origin[0],
            pos[1] - f.origin[1],
            pos[2] - half_seg - f.origin[2],
        ];
        let top_z = c[2] + 2.0 * half_seg;
        let m = 1.0;
        let q = f.query_box(
            [c[0] - r - m, c[1] - r - m, c[2] - down_cm - r - m],
            [c[0] + r + m, c[1] + r + m, top_z + r + m],
        );
        let mut hits = Hits::new();
        let mut overlap = false;
        let mut corrupt = false;

        // Overlap of the capsule at its start with a triangle.
        let mut check_overlap = |tri: [V3; 3], band: f64, hits: &mut Hits| {
            // Cheap rejection: a box gap larger than the radius.
            let lo = [0, 1, 2].map(|k| tri[0][k].min(tri[1][k]).min(tri[2][k]));
            let hi = [0, 1, 2].map(|k| tri[0][k].max(tri[1][k]).max(tri[2][k]));
            let gap = |v: f64, a: f64, b: f64| (a - v).max(v - b).max(0.0);
            let gz = (lo[2] - top_z).max(c[2] - hi[2]).max(0.0);
            let (gx, gy) = (gap(c[0], lo[0], hi[0]), gap(c[1], lo[1], hi[1]));
            if gx * gx + gy * gy + gz * gz > (r + band) * (r + band) {
                return;
            }
            let d = vertical_segment_triangle_distance(c[0], c[1], c[2], top_z, tri);
            if d < r - band {
                overlap = true;
            } else if d <= r + band {
                hits.undecided(f64::NEG_INFINITY);
            }
        };

        walk_result(visit(f.tile.piece_bvh, &q, |word| {
            let Some(g) = f.tile.piece(word).and_then(|(h, v)| PieceGeom::load(h, v)) else {
                corrupt = true;
                return false;
            };
            let band = VERTEX_XY_ERR_CM + g.z_err + Z_MARGIN_CM;
            for i in 1..g.n - 1 {
                check_overlap([g.v[0], g.v[i], g.v[i + 1]], band, &mut hits);
            }
            let normal = g.normal();
            let face = sphere_down_plane(c, r, g.a, g.b, g.k);
            match g.side(face.point[0], face.point[1]) {
                Side::Outside => {}
                Side::Inside => hits.push(Cand {
                    t: face.t,
                    err: g.z_err,
                    point: face.point,
                    normal,
                }),
                Side::Band => hits.undecided(face.t - g.z_err),
            }
            // Every edge and vertex, shared ones too: two pieces of one patch
            // may meet at a slight crease, where the edge is the first
            // contact and neither face's contact point lies inside its piece.
            for i in 0..g.n {
                if let Some(e) = sphere_down_segment(c, r, g.v[i], g.v[(i + 1) % g.n]) {
                    hits.push(edge_cand(c, r, e, g.z_err));
                }
                if let Some(e) = sphere_down_point(c, r, g.v[i]) {
                    hits.push(edge_cand(c, r, e, g.z_err));
                }
            }
            true
        }))?;
        walk_result(visit(f.tile.blocker_bvh, &q, |i| {
            let Some(b) = f.tile.blockers.get(i as usize) else {
                corrupt = true;
                return false;
            };
            let tri = load_blocker(b);
            check_overlap(tri, VERTEX_XY_ERR_CM + VERTEX_Z_ERR_CM + Z_MARGIN_CM, &mut hits);
            if let Some((normal, a, bb, k)) = triangle_plane(&tri) {
                let face = sphere_down_plane(c, r, a, bb, k);
                let err = VERTEX_Z_ERR_CM + (a * a + bb * bb).sqrt() * VERTEX_XY_ERR_CM;
                match triangle_side(&tri, face.point[0], face.point[1]) {
                    Side::Outside => {}
                    Side::Inside => hits.push(Cand {
                        t: face.t,
                        err,
                        point: face.point,
                        normal,
                    }),
                    Side::Band => hits.undecided(face.t - err),
                }
            }
            for k in 0..3 {
                if let Some(e) = sphere_down_segment(c, r, tri[k], tri[(k + 1) % 3]) {
                    hits.push(edge_cand(c, r, e, VERTEX_Z_ERR_CM));
                }
                if let Some(e) = sphere_down_point(c, r, tri[k]) {
                    hits.push(edge_cand(c, r, e, VERTEX_Z_ERR_CM));
                }
            }
            true
        }))?;
        if corrupt {
            return Err(FallbackReason::MissingData);
        }
        if overlap {
            return Err(FallbackReason::InitialOverlap);
        }
        let Some(best) = hits.decide(0.0, down_cm)? else {
            return Ok(FloorOutcome::NoFloor);
        };
        self.floor_hit(pos, best.t, f.to_world(best.point), best.normal)
    }
}

/// An edge or vertex contact with its error bound: vertical error of the
/// stored geometry plus its horizontal error magnified by the slope of the
/// contact normal (a grazing contact is imprecise).
fn edge_cand(c: V3, r: f64, e: Contact, z_err: f64) -> Cand {
    let centre = [c[0], c[1], c[2] - e.t];
    let n = scale(sub(centre, e.point), 1.0 / r);
    let h = (n[0] * n[0] + n[1] * n[1]).sqrt();
    let err = z_err
        + if n[2] > 1e-9 {
            VERTEX_XY_ERR_CM * h / n[2]
        } else {
            f64::INFINITY
        };
    Cand {
        t: e.t,
        err,
        point: e.point,
        normal: n,
    }
}

/// Sweeps are not answered by this runtime version yet.
impl Surface {
    /// Sweeps the capsule from `pos` by `(dx, dy, 0)`. This runtime version
    /// does not answer sweeps yet: every valid query returns
    /// `Fallback(Unsupported)`.
    pub fn sweep_horizontal(&self, pos: [f64; 3], delta_xy: [f64; 2], agent: Agent) -> SweepOutcome {
        if !pos.iter().chain(&delta_xy).all(|v| v.is_finite()) || !agent.is_valid() {
            return SweepOutcome::Fallback(FallbackReason::InvalidInput);
        }
        if delta_xy[0].hypot(delta_xy[1]) > self.bake_params().max_sweep_len_cm.get() as f64 {
            return SweepOutcome::Fallback(FallbackReason::BudgetExceeded);
        }
        SweepOutcome::Fallback(FallbackReason::Unsupported)
    }
}
