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
//!   at its start falls back (`InitialOverlap`). A piece whose face contact
//!   misses it is touched, if at all, only after the sphere has gone on far
//!   enough to reach it in its plane ([`reach_after_descent`]): its edges
//!   are read only if that can come before a contact already certain.
//! * A blocker hidden under the walkable surface (a riser under its
//!   nosing: [`walksurf_format::blocker_flags::HIDDEN`]) is skipped while
//!   that surface, at most [`walksurf_format::HIDDEN_RISE_CM`] above the
//!   blocker, is below the capsule's top sphere centre: the sphere meets
//!   the surface above it first. So is a blocker whose plane stays beyond
//!   the radius from the axis all the way down (a wall beside the capsule),
//!   and one whose box lies below the sphere's lower surface over it where
//!   a contact already found happens (a wall under the edge of the floor
//!   the capsule stands on).
//! * Interior edges (the flat group's surface goes on across them:
//!   `PieceGeom::interior`) are no edges of the true surface. A sphere
//!   meets a nearly planar region first at its face contact point, if that
//!   lies in the region, else on the region's boundary; never at a line
//!   drawn across it. So they give no edge contact, and a face contact
//!   point beside one is on the surface (`PieceGeom::side`).

use crate::Surface;
use crate::bvh::{QBox, floor_u16};
use crate::cache::QueryCache;
use crate::contact::*;
use crate::query::*;
use crate::tile_geom::*;
use crate::tolerance::*;
use walksurf_format::{CERT_CELL_CM, TILE_SIZE_CM};

/// Pieces whose edges one capsule query defers until every face contact is
/// known (more are looked at straight away).
const MAX_LATER_PIECES: usize = 16;

/// A piece whose face contact missed it, its edges deferred.
#[derive(Clone, Copy)]
struct Later<'a> {
    g: PieceGeom<'a>,
    /// Its face contact time less its errors.
    t0: f64,
    /// The face contact point (XY).
    p: [f64; 2],
    /// Wholly below the bottom sphere's centre.
    below: bool,
}

impl Surface {
    /// Finds the floor under an agent at `pos` (capsule centre, world cm),
    /// looking at most `down_cm` below the capsule bottom.
    pub fn find_floor(&self, pos: [f64; 3], down_cm: f64, agent: Agent, mode: FloorMode) -> FloorOutcome {
        self.find_floor_impl(pos, down_cm, agent, mode, None)
    }

    /// [`Surface::find_floor`] through an agent's [`QueryCache`]: reuses the
    /// last tile when it is the same tile of the same file generation, and
    /// counts the outcome in `cache.stats`.
    pub fn find_floor_cached(
        &self,
        cache: &mut QueryCache,
        pos: [f64; 3],
        down_cm: f64,
        agent: Agent,
        mode: FloorMode,
    ) -> FloorOutcome {
        let out = self.find_floor_impl(pos, down_cm, agent, mode, Some(cache));
        cache.stats.record_floor(&out);
        out
    }

    fn find_floor_impl(
        &self,
        pos: [f64; 3],
        down_cm: f64,
        agent: Agent,
        mode: FloorMode,
        cache: Option<&mut QueryCache>,
    ) -> FloorOutcome {
        if !pos.iter().all(|v| v.is_finite()) || !down_cm.is_finite() || down_cm < 0.0 || !agent.is_valid() {
            return FloorOutcome::Fallback(FallbackReason::InvalidInput);
        }
        if pos[2].abs() > MAX_QUERY_Z_CM {
            return FloorOutcome::Fallback(FallbackReason::OutsideCoverage);
        }
        if !self.precision_known() {
            return FloorOutcome::Fallback(FallbackReason::PrecisionBudget);
        }
        let result = match mode {
            FloorMode::LineTrace => self.find_floor_line(pos, down_cm, agent, cache),
            FloorMode::Capsule => self.find_floor_capsule(pos, down_cm, agent, cache),
        };
        result.unwrap_or_else(FloorOutcome::Fallback)
    }

    /// The tile under `pos`, `Ok(None)` if the file has none there (then no
    /// triangle lies within the halo of that tile's square). A cache hint is
    /// used only after checking the record is that tile's. (Always inlined,
    /// as are the reader's steps: the frame is then built in place, where
    /// returning it by value cost a tenth of a certified answer.)
    #[inline(always)]
    pub(crate) fn home_frame(
        &self,
        pos: [f64; 3],
        cache: Option<&mut QueryCache>,
    ) -> Result<Option<Frame<'_>>, FallbackReason> {
        let view = self.view().ok_or(FallbackReason::MissingData)?;
        let (Some(tx), Some(ty)) = (tile_coord(pos[0]), tile_coord(pos[1])) else {
            return Err(FallbackReason::OutsideCoverage);
        };
        let generation = self.generation();
        let hinted = match cache {
            Some(c) => {
                let hint = c.hint(generation, tx, ty).filter(|&i| {
                    view.hot
                        .get(i as usize)
                        .is_some_and(|h| h.tile_x.get() == tx && h.tile_y.get() == ty)
                });
                let slot = hint.or_else(|| view.tile_slot(tx, ty));
                c.tile = slot.map(|i| (tx, ty, i));
                slot
            }
            None => view.tile_slot(tx, ty),
        };
        let Some(hot) = hinted.and_then(|i| view.hot.get(i as usize)) else {
            return Ok(None);
        };
        let tile = view.tile(hot).ok_or(FallbackReason::MissingData)?;
        Ok(Some(Frame {
            origin: tile.origin_cm(),
            quant: tile.quant(),
            tile,
            path: self.precision_path(),
        }))
    }

    pub(crate) fn walkable_z(&self) -> f64 {
        self.bake_params().walkable_normal_z.get() as f64
    }

    /// A floor answer, unless the true normal (within `normal_err` of
    /// `normal`) may be beyond the contract's tolerance or on the other side
    /// of the walkable threshold.
    fn floor_hit(
        &self,
        pos: [f64; 3],
        floor_dist: f64,
        point: V3,
        normal: V3,
        normal_err: f64,
    ) -> Result<FloorOutcome, FallbackReason> {
        let walkable_z = self.walkable_z();
        if normal_err.is_nan()
            || normal_err > MAX_NORMAL_ERR
            || (normal[2] - walkable_z).abs() < WALKABLE_Z_BAND + normal_err
        {
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

    fn find_floor_line(
        &self,
        pos: [f64; 3],
        down_cm: f64,
        agent: Agent,
        cache: Option<&mut QueryCache>,
    ) -> Result<FloorOutcome, FallbackReason> {
        let Some(f) = self.home_frame(pos, cache)? else {
            return Ok(FloorOutcome::NoFloor);
        };
        let (x, y) = (pos[0] - f.origin[0], pos[1] - f.origin[1]);
        let bottom = pos[2] - agent.half_height_cm - f.origin[2];
        let top = bottom + LINE_TRACE_ABOVE_CM;
        let lo = bottom - down_cm;
        if let Some(z) = certified_line(&f, x, y, lo, top)? {
            return match z {
                Some((z, normal)) => self.floor_hit(
                    pos,
                    bottom - z,
                    [pos[0], pos[1], z + f.origin[2]],
                    normal,
                    PIECE_NORMAL_ERR,
                ),
                None => Ok(FloorOutcome::NoFloor),
            };
        }
        f.touch_tops();
        let q = f.query_box([x, y, lo - 1.0], [x, y, top + 1.0]);
        let mut hits = Hits::new();
        let mut failed = None;
        walk_result(f.visit_pieces(&q, |word| {
            let Some(g) = f.piece_geom(word, &mut failed) else {
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
                    normal_err: PIECE_NORMAL_ERR,
                }),
                Side::Band => hits.undecided(top - z - g.z_err),
            }
            true
        }))?;
        walk_result(f.visit_blockers(q, |i, _| {
            let Some(b) = f.tile.blockers.get(i as usize) else {
                failed = Some(FallbackReason::MissingData);
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
                        normal_err: triangle_normal_err(&tri, BLOCKER_VERTEX_ERR_CM),
                    });
                }
                _ => {
                    let z_hi = tri[0][2].max(tri[1][2]).max(tri[2][2]);
                    hits.undecided(top - z_hi - VERTEX_Z_ERR_CM);
                }
            }
            true
        }))?;
        if let Some(e) = failed {
            return Err(e);
        }
        let Some(c) = hits.decide(0.0, top - lo)? else {
            return Ok(FloorOutcome::NoFloor);
        };
        let z = top - c.t;
        self.floor_hit(
            pos,
            bottom - z,
            [pos[0], pos[1], z + f.origin[2]],
            c.normal,
            c.normal_err,
        )
    }

    fn find_floor_capsule(
        &self,
        pos: [f64; 3],
        down_cm: f64,
        agent: Agent,
        cache: Option<&mut QueryCache>,
    ) -> Result<FloorOutcome, FallbackReason> {
        let r = agent.radius_cm;
        if r > self.bake_params().max_agent_radius_cm.get() as f64 {
            return Err(FallbackReason::BudgetExceeded);
        }
        let Some(f) = self.home_frame(pos, cache)? else {
            return Ok(FloorOutcome::NoFloor);
        };
        let half_seg = agent.half_height_cm - r;
        let c = [
            pos[0] - f.origin[0],
            pos[1] - f.origin[1],
            pos[2] - half_seg - f.origin[2],
        ];
        let top_z = c[2] + 2.0 * half_seg;
        if let Some(found) = certified_capsule(&f, c, r, top_z + r, down_cm)? {
            return match found {
                Some(best) => self.floor_hit(pos, best.t, f.to_world(best.point), best.normal, best.normal_err),
                None => Ok(FloorOutcome::NoFloor),
            };
        }
        f.touch_tops();
        let m = 1.0;
        let q = f.query_box(
            [c[0] - r - m, c[1] - r - m, c[2] - down_cm - r - m],
            [c[0] + r + m, c[1] + r + m, top_z + r + m],
        );
        let mut hits = Hits::new();
        let overlap = std::cell::Cell::new(false);
        let mut failed = None;

        // Overlap of the capsule at its start with a triangle.
        // (`plane`: the triangle's unit normal and offset, if not degenerate.)
        // (`(lo, hi)`: the triangle's box; `d2`: its squared XY distance
        // from the axis, [`box_xy_dist2`].)
        let check_overlap =
            |tri: [V3; 3], (lo, hi, d2): (V3, V3, f64), plane: Option<(V3, f64)>, band: f64, hits: &mut Hits| {
                // Cheap rejection: a box gap larger than the radius.
                let gz = (lo[2] - top_z).max(c[2] - hi[2]).max(0.0);
                if d2 + gz * gz > (r + band) * (r + band) {
                    return;
                }
                if plane.is_some_and(|(n, d)| axis_clear_of_plane(c, top_z, n, d, r + band)) {
                    return;
                }
                let d = vertical_segment_triangle_distance(c[0], c[1], c[2], top_z, tri);
                if d < r - band {
                    overlap.set(true);
                } else if d <= r + band {
                    hits.undecided(f64::NEG_INFINITY);
                }
            };

        // Overlap of the capsule at its start with a piece.
        let check_overlap_piece = |g: &PieceGeom<'_>, band: f64, hits: &mut Hits| {
            // Cheap rejection: the axis beyond an edge line by more than the
            // radius (XY distance bounds the distance).
            if g.outside_by(c[0], c[1], r + band) {
                return;
            }
            let d = g.vertical_segment_distance(c[0], c[1], c[2], top_z);
            if d < r - band {
                overlap.set(true);
            } else if d <= r + band {
                hits.undecided(f64::NEG_INFINITY);
            }
        };

        // A piece's edges and vertices (after its face contact missed it):
        // two flat groups of one patch may meet at a slight crease, where
        // the edge is the first contact and neither face's contact point
        // lies inside its piece. An edge the sphere may touch already: the
        // exact overlap test (skipped for a piece below the centre) tells the
        // reason.
        let edges = |g: &PieceGeom<'_>, below: bool, band: f64, hits: &mut Hits| {
            let e = g.edge_err() + g.z_err;
            let mut at_start = false;
            // (Interior edges are no edges of the true surface.)
            for i in (0..g.n).filter(|&i| g.interior >> i & 1 == 0) {
                at_start |= push_edge_contact(hits, c, r, g.v(i), g.v(i + 1), e);
            }
            if below && at_start {
                check_overlap_piece(g, band, hits);
            }
        };
        // Pieces whose face contact missed them: every point of such a
        // piece lies some way (XY) from the face contact point, so the
        // sphere must go on past the face contact before it touches any.
        // Their edges are looked at once every face contact is known, and
        // most then go unread.
        let mut later: [Option<Later<'_>>; MAX_LATER_PIECES] = [None; MAX_LATER_PIECES];
        let mut n_later = 0;
        // Whether no point of the piece can be touched before a contact
        // that certainly happens.
        let out_of_reach = |g: &PieceGeom<'_>, t0: f64, p: [f64; 2], bound: f64| {
            let slack = bound + PRUNE_MARGIN_CM - t0;
            if slack < 0.0 {
                return true;
            }
            if !slack.is_finite() {
                return false;
            }
            let e = g.edge_err() + g.z_err;
            let slope = g.a.abs() + g.b.abs(); // ≥ |∇z|
            g.outside_by(p[0], p[1], reach_after_descent(slack, r + e, slope) + e)
        };
        walk_result(f.visit_pieces(&q, |word| {
            let Some(g) = f.piece_geom(word, &mut failed) else {
                return false;
            };
            let band = g.xy_err + g.z_err + Z_MARGIN_CM;
            // Wholly below where the sphere will be when a contact already
            // found happens: neither first contact nor overlap.
            let (z_lo, z_hi) = g.z_range();
            let z_top = z_hi + band;
            if c[2] - r - z_top > hits.bound() + PRUNE_MARGIN_CM {
                return true;
            }
            let (face, normal) = sphere_down_plane_normal(c, r, g.a, g.b, g.k);
            // Wholly below the bottom sphere's centre, the piece overlaps the
            // capsule iff the sphere already touches it: its contacts say so
            // (t ≤ 0). Else: the capsule's axis far from the piece's plane on
            // one side is no overlap either.
            let below = z_top <= c[2];
            if !below && !axis_clear_of_plane(c, top_z, normal, g.k * normal[2], r + band) {
                check_overlap_piece(&g, band, &mut hits);
            }
            // Wholly above the centre: the capsule moving down only moves
            // away from it (DESIGN §9); the overlap test was all there is.
            if z_lo - band > c[2] {
                return true;
            }
            match g.side(face.point[0], face.point[1]) {
                Side::Outside => {
                    let t0 = face.t - g.edge_err() - g.z_err - Z_MARGIN_CM;
                    let p = [face.point[0], face.point[1]];
                    if out_of_reach(&g, t0, p, hits.bound()) {
                        return true;
                    }
                    // (Deferred only while no contact bounds the answer.)
                    if hits.bound() == f64::INFINITY
                        && let Some(slot) = later.get_mut(n_later)
                    {
                        *slot = Some(Later { g, t0, p, below });
                        n_later += 1;
                        return true;
                    }
                }
                Side::Inside => {
                    if below && face_touches_at_start(face.t, g.z_err, &overlap, &mut hits) {
                        return true;
                    }
                    hits.push(Cand {
                        t: face.t,
                        err: g.z_err,
                        point: face.point,
                        normal,
                        normal_err: PIECE_NORMAL_ERR,
                    });
                    // The face contact is the highest point at which the
                    // sphere meets the plane at all: the piece's edges and
                    // vertices (in that plane) come later.
                    return true;
                }
                Side::Band => hits.undecided(face.t - g.z_err),
            }
            edges(&g, below, band, &mut hits);
            true
        }))?;
        for &Later { g, t0, p, below } in later[..n_later].iter().flatten() {
            if !out_of_reach(&g, t0, p, hits.bound()) {
                edges(&g, below, g.xy_err + g.z_err + Z_MARGIN_CM, &mut hits);
            }
        }
        // Blockers wholly below where the sphere is when a contact already
        // found happens (the test below) are skipped a whole subtree at a
        // time: the box's floor rises with the bound.
        let narrow = |q: &mut QBox, bound: f64| {
            let z = c[2] - r - bound - PRUNE_MARGIN_CM - BLOCKER_VERTEX_ERR_CM - Z_MARGIN_CM;
            q.min[2] = q.min[2].max(floor_u16(f.quant.z_query(z)));
        };
        let mut q = q;
        narrow(&mut q, hits.bound());
        walk_result(f.visit_blockers(q, |i, q| {
            let Some(b) = f.tile.blockers.get(i as usize) else {
                failed = Some(FallbackReason::MissingData);
                return false;
            };
            let tri = load_blocker(b);
            let z_top = blocker_top(&tri);
            if c[2] - r - z_top > hits.bound() + PRUNE_MARGIN_CM || hidden_below(b, z_top, top_z) {
                return true;
            }
            // Every point of the stored triangle lies at least its box's XY
            // distance `d` from the axis, where the sphere's lower surface
            // is at most √(r² − d²) below its centre: beyond the radius it
            // is never touched, and wholly below that surface at the time
            // by which a contact already found has certainly happened it
            // is neither first contact nor overlap (a wall under the edge
            // of the floor the capsule stands on). (The radius is grown by
            // the true triangle's distance from the stored one and the
            // overlap test's band, and more.)
            let reach = r + BLOCKER_VERTEX_ERR_CM + VERTEX_XY_ERR_CM + VERTEX_Z_ERR_CM + Z_MARGIN_CM;
            let lo = [0, 1, 2].map(|k| tri[0][k].min(tri[1][k]).min(tri[2][k]));
            let hi = [0, 1, 2].map(|k| tri[0][k].max(tri[1][k]).max(tri[2][k]));
            let d2 = box_xy_dist2(lo, hi, c);
            if d2 > reach * reach || c[2] - (reach * reach - d2).sqrt() - z_top > hits.bound() + PRUNE_MARGIN_CM {
                return true;
            }
            // Its plane beside the axis all the way down to where a
            // contact could still count (a wall beside the capsule): the
            // capsule never comes within its radius of it.
            let band = VERTEX_XY_ERR_CM + VERTEX_Z_ERR_CM + Z_MARGIN_CM;
            let plane = unit_plane(&tri);
            let deepest = hits.bound().min(down_cm) + PRUNE_MARGIN_CM;
            if plane.is_some_and(|(n, d)| axis_clear_of_plane([c[0], c[1], c[2] - deepest], top_z, n, d, r + band)) {
                return true;
            }
            // As for pieces: wholly below the sphere's centre, the contacts
            // tell an overlap.
            let below = z_top <= c[2];
            if !below {
                check_overlap(tri, (lo, hi, d2), plane, band, &mut hits);
            }
            // As for pieces: wholly above the centre, only the overlap counts.
            if tri[0][2].min(tri[1][2]).min(tri[2][2]) - BLOCKER_VERTEX_ERR_CM - Z_MARGIN_CM > c[2] {
                return true;
            }
            if let Some((normal, a, bb, k)) = triangle_plane(&tri) {
                let face = sphere_down_plane(c, r, a, bb, k);
                let err = VERTEX_Z_ERR_CM + (a * a + bb * bb).sqrt() * VERTEX_XY_ERR_CM;
                match triangle_side(&tri, face.point[0], face.point[1]) {
                    Side::Outside => {}
                    Side::Inside if below && face_touches_at_start(face.t, err, &overlap, &mut hits) => {}
                    Side::Inside => hits.push(Cand {
                        t: face.t,
                        err,
                        point: face.point,
                        normal,
                        normal_err: triangle_normal_err(&tri, BLOCKER_VERTEX_ERR_CM),
                    }),
                    Side::Band => hits.undecided(face.t - err),
                }
            }
            let mut at_start = false;
            for k in 0..3 {
                at_start |= push_edge_contact(&mut hits, c, r, tri[k], tri[(k + 1) % 3], BLOCKER_VERTEX_ERR_CM);
            }
            if below && at_start {
                check_overlap(tri, (lo, hi, d2), plane, band, &mut hits);
            }
            narrow(q, hits.bound());
            true
        }))?;
        if let Some(e) = failed {
            return Err(e);
        }
        if overlap.get() {
            return Err(FallbackReason::InitialOverlap);
        }
        let Some(best) = hits.decide(0.0, down_cm)? else {
            return Ok(FloorOutcome::NoFloor);
        };
        self.floor_hit(pos, best.t, f.to_world(best.point), best.normal, best.normal_err)
    }
}

/// Squared XY distance from `c` to the box `[lo, hi]`: at most that of
/// any point in it.
#[inline]
fn box_xy_dist2(lo: V3, hi: V3, c: V3) -> f64 {
    let gap = |k: usize| (lo[k] - c[k]).max(c[k] - hi[k]).max(0.0);
    let (gx, gy) = (gap(0), gap(1));
    gx * gx + gy * gy
}

/// A triangle's unit normal `n` and offset `d` (`n·p = d` on it), `None`
/// if it is degenerate.
#[inline]
fn unit_plane(tri: &[V3; 3]) -> Option<(V3, f64)> {
    let n = cross(sub(tri[1], tri[0]), sub(tri[2], tri[0]));
    let l = len(n);
    (l > 0.0).then(|| (scale(n, 1.0 / l), dot(n, tri[0]) / l))
}

/// For a primitive wholly below the bottom sphere's centre, whose face
/// contact (inside it) is at `t` within `err`: whether the sphere may touch
/// it already at the start. Then it records an overlap (certain) or an
/// undecided order (within the error) and returns `true`.
#[inline]
fn face_touches_at_start(t: f64, err: f64, overlap: &std::cell::Cell<bool>, hits: &mut Hits) -> bool {
    let e = err + Z_MARGIN_CM;
    if t + e < 0.0 {
        overlap.set(true);
    } else if t - e <= 0.0 {
        hits.undecided(f64::NEG_INFINITY);
    } else {
        return false;
    }
    true
}

/// Whether the capsule axis (vertical, from `c` up to `top_z`) stays at
/// least `clear` from the plane `n·p = d` (`n` unit), wholly on one side: the
/// capsule of radius `clear` then touches nothing in that plane.
#[inline]
fn axis_clear_of_plane(c: V3, top_z: f64, n: V3, d: f64, clear: f64) -> bool {
    let d0 = dot(n, c) - d;
    let d1 = d0 + n[2] * (top_z - c[2]);
    (d0 >= clear && d1 >= clear) || (d0 <= -clear && d1 <= -clear)
}

/// `⌊v / TILE_SIZE_CM⌋` as a tile coordinate (without a libm call), or `None`
/// beyond the `i32` range.
#[inline]
pub(crate) fn tile_coord(v: f64) -> Option<i32> {
    // (A product, then the exact floor by comparing whole tiles: on every
    // query's path, where a division is the slowest step.)
    let q = v * (1.0 / TILE_SIZE_CM);
    if q.is_nan() || q.abs() >= i32::MAX as f64 {
        return None;
    }
    let t = q as i32; // truncates toward zero
    let t = if (t as f64) > q { t - 1 } else { t };
    let start = t as f64 * TILE_SIZE_CM; // (exact: an integer below 2^44)
    Some(if start > v {
        t - 1
    } else if start + TILE_SIZE_CM <= v {
        t + 1
    } else {
        t
    })
}

/// Whether a vertical line (`r = 0`) or capsule (bottom sphere radius `r`)
/// at `(x, y)`, moving down onto the certificate's plane, meets none of the
/// footprints it lists before the plane ([`walksurf_format::CertWall::passes`]).
/// A corrupt list: no.
fn clear_of_walls(f: &Frame<'_>, cert: &walksurf_format::Cert, x: f64, y: f64, r: f64) -> bool {
    let Some(walls) = f.tile.cert_walls_of(cert) else {
        return false;
    };
    let slope = cert.slope();
    walls.iter().all(|w| w.passes([x, y], r, slope, Z_MARGIN_CM))
}

/// `(x, y)` (frame cm) relative to the low corner of certificate cell `cell`.
#[inline]
fn in_cell(cell: (usize, usize), x: f64, y: f64) -> (f64, f64) {
    (x - cell.0 as f64 * CERT_CELL_CM, y - cell.1 as f64 * CERT_CELL_CM)
}

/// The fast path of a line trace: a certificate of the cell proves the
/// column between its plane and `clear_z` is empty. `Some(Some((z,
/// normal)))`: the floor; `Some(None)`: certainly no floor; `None`: the
/// certificates decide nothing (take the full path). `Err`: the Reference
/// path cannot bound a certificate.
fn certified_line(
    f: &Frame<'_>,
    x: f64,
    y: f64,
    lo: f64,
    top: f64,
) -> Result<Option<Option<(f64, V3)>>, FallbackReason> {
    let Some(cell) = f.cert_cell(x, y) else {
        return Ok(None);
    };
    let (u, v) = in_cell(cell, x, y);
    let mut best: Option<(f64, f64, &walksurf_format::Cert)> = None;
    for cert in f
        .tile
        .certs_in_cell(cell.0, cell.1)
        .iter()
        .filter(|c| c.covers_at(u, v))
    {
        let (a, b, k) = (cert.a.get() as f64, cert.b.get() as f64, cert.k.get() as f64);
        let Some(z_err) = f.cert_z_err(cert, cell, 0.0)? else {
            return Ok(None);
        };
        let err = z_err + Z_MARGIN_CM;
        let z = a * x + b * y + k;
        if z + err <= top && best.is_none_or(|(bz, _, _)| z > bz) {
            best = Some((z, err, cert));
        }
    }
    let Some((z, err, cert)) = best else {
        return Ok(None);
    };
    // (Written so that a NaN `clear_z` or error bound does not pass.)
    let clear = top + Z_MARGIN_CM < cert.clear_z.get() as f64 && err <= MAX_CONTACT_ERR_CM;
    if !(clear && clear_of_walls(f, cert, x, y, 0.0)) {
        return Ok(None);
    }
    Ok(if z - err >= lo {
        Some(Some((z, plane_normal(cert.a.get() as f64, cert.b.get() as f64))))
    } else if z + err < lo {
        Some(None)
    } else {
        None
    })
}

/// The fast path of a capsule floor: the capsule (bottom sphere centre `c`,
/// radius `r`, top `top_z`) over a certified cell, clear of everything but
/// the certified plane, meets only that plane. `None`: take the full path.
/// `Err`: the Reference path cannot bound a certificate.
fn certified_capsule(
    f: &Frame<'_>,
    c: V3,
    r: f64,
    top_z: f64,
    down: f64,
) -> Result<Option<Option<Cand>>, FallbackReason> {
    let Some(cell) = f.cert_cell(c[0], c[1]) else {
        return Ok(None);
    };
    let (u, v) = in_cell(cell, c[0], c[1]);
    let mut best: Option<(f64, f64, &walksurf_format::Cert)> = None;
    for cert in f
        .tile
        .certs_in_cell(cell.0, cell.1)
        .iter()
        .filter(|c| c.covers_at(u, v))
    {
        let (a, b, k) = (cert.a.get() as f64, cert.b.get() as f64, cert.k.get() as f64);
        let Some(z_err) = f.cert_z_err(cert, cell, r)? else {
            return Ok(None);
        };
        let err = z_err + Z_MARGIN_CM;
        let t = c[2] - (a * c[0] + b * c[1] + k) - r * plane_root(a, b);
        if t >= err && best.is_none_or(|(bt, _, _)| t < bt) {
            best = Some((t, err, cert));
        }
    }
    let Some((t, err, cert)) = best else {
        return Ok(None);
    };
    // (Written so that a NaN `clear_z` or error bound does not pass.)
    let clear = top_z + Z_MARGIN_CM < cert.clear_z.get() as f64 && err <= MAX_CONTACT_ERR_CM;
    if !(clear && clear_of_walls(f, cert, c[0], c[1], r)) {
        return Ok(None);
    }
    Ok(if t + err <= down {
        let (a, b) = (cert.a.get() as f64, cert.b.get() as f64);
        let normal = plane_normal(a, b);
        let centre = [c[0], c[1], c[2] - t];
        Some(Some(Cand {
            t,
            err,
            point: sub(centre, scale(normal, r)),
            normal,
            normal_err: PIECE_NORMAL_ERR,
        }))
    } else if t - err > down {
        Some(None)
    } else {
        None
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn tile_coord_is_floor() {
        // Exactly ⌊v / 3200⌋ next to tile lines (checked by whole tiles).
        for k in -5i32..5 {
            for d in [-1e-9, -1e-12, -1e-300, 0.0, 1e-300, 1e-12, 1e-9] {
                let v = k as f64 * super::TILE_SIZE_CM + d;
                let want = if v < k as f64 * super::TILE_SIZE_CM { k - 1 } else { k };
                assert_eq!(super::tile_coord(v), Some(want), "{v}");
            }
        }
        for v in [
            0.0,
            1.0,
            3199.999,
            3200.0,
            -0.0,
            -1e-9,
            -3200.0,
            -3200.5,
            5e5,
            -5e5,
            1e10,
            f64::NAN,
        ] {
            let want = (v / super::TILE_SIZE_CM).floor();
            let want = (want.abs() < i32::MAX as f64).then_some(want as i32);
            assert_eq!(super::tile_coord(v), want, "{v}");
        }
    }
}
