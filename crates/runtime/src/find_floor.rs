//! `find_floor`: the highest surface under the agent.
//!
//! Line-trace mode: tile by direct index → piece BVH (4-ary, pruned on z) →
//! point-in-convex-piece with an undecided band at every edge → plane z.
//! Then the blocker BVH: any surface the file does not hold as a piece that
//! may lie in the window above the floor makes the answer a Fallback.

use crate::Surface;
use crate::bvh::{QBox, Walk, visit};
use crate::query::*;
use crate::tolerance::*;
use walksurf_format::{Blocker, TILE_SIZE_CM, TileQuant, TileView, VERTEX_STEPS_PER_CM};

/// Where a point lies relative to a convex polygon with an undecided band.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Inside,
    Band,
    Outside,
}

impl Surface {
    /// Finds the floor under an agent at `pos` (capsule centre, world cm),
    /// looking at most `down_cm` below the capsule bottom.
    pub fn find_floor(&self, pos: [f64; 3], down_cm: f64, agent: Agent, mode: FloorMode) -> FloorOutcome {
        if !pos.iter().all(|v| v.is_finite()) || !down_cm.is_finite() || down_cm < 0.0 || !agent.is_valid() {
            return FloorOutcome::Fallback(FallbackReason::InvalidInput);
        }
        match mode {
            FloorMode::LineTrace => self.find_floor_line(pos, down_cm, agent),
            FloorMode::Capsule => FloorOutcome::Fallback(FallbackReason::Unsupported),
        }
    }

    fn find_floor_line(&self, pos: [f64; 3], down_cm: f64, agent: Agent) -> FloorOutcome {
        use FallbackReason::*;
        if !self.precision_known() {
            return FloorOutcome::Fallback(PrecisionBudget);
        }
        let Some(view) = self.view() else {
            return FloorOutcome::Fallback(MissingData);
        };
        let bottom = pos[2] - agent.half_height_cm;
        let top = bottom + LINE_TRACE_ABOVE_CM;
        let lo = bottom - down_cm;
        let tx = (pos[0] / TILE_SIZE_CM).floor();
        let ty = (pos[1] / TILE_SIZE_CM).floor();
        if tx.abs() > i32::MAX as f64 || ty.abs() > i32::MAX as f64 {
            return FloorOutcome::Fallback(OutsideCoverage);
        }
        let Some(hot) = view.tile_hot(tx as i32, ty as i32) else {
            // No triangle overlaps this tile's square at all.
            return FloorOutcome::NoFloor;
        };
        let Some(tile) = view.tile(hot) else {
            return FloorOutcome::Fallback(MissingData);
        };
        let origin = tile.origin_cm();
        let (lx, ly) = (pos[0] - origin[0], pos[1] - origin[1]);
        let quant = tile.quant();
        let (zlo, ztop) = (lo - origin[2], top - origin[2]);

        let q = query_box(lx, ly, zlo - 1.0, ztop + 1.0, &quant);
        let mut best: Option<(f64, f64, [f64; 3])> = None; // (z, err, normal)
        let mut band_hits: [(f64, f64, [f64; 3]); 8] = [(0.0, 0.0, [0.0; 3]); 8];
        let mut bands = 0usize;
        let mut undecided = false;
        let walk = visit(tile.piece_bvh, &q, |word| {
            let Some((header, verts)) = tile.piece(word) else {
                undecided = true;
                return false;
            };
            let side = point_in_piece(verts, lx, ly);
            if side == Side::Outside {
                return true;
            }
            let (a, b, c) = (
                header.plane_a.get() as f64,
                header.plane_b.get() as f64,
                header.plane_c.get() as f64,
            );
            let z = a * lx + b * ly + c;
            let err = header.z_err_cm.get() as f64 + Z_MARGIN_CM;
            if !err.is_finite() || !z.is_finite() {
                undecided = true;
                return false;
            }
            if z - err > ztop || z + err < zlo {
                return true; // certainly outside the window
            }
            if z + err > ztop || z - err < zlo {
                undecided = true; // straddles a window end
                return false;
            }
            let n = unit_normal(a, b);
            match side {
                Side::Inside => match best {
                    Some((bz, berr, bn)) if (z - bz).abs() <= err + berr + SAME_Z_CM => {
                        if !same_normal(n, bn) {
                            undecided = true;
                            return false;
                        }
                        if z > bz {
                            best = Some((z, err, n));
                        }
                    }
                    Some((bz, _, _)) if bz > z => {}
                    _ => best = Some((z, err, n)),
                },
                _ => {
                    if bands == band_hits.len() {
                        undecided = true;
                        return false;
                    }
                    band_hits[bands] = (z, err, n);
                    bands += 1;
                }
            }
            true
        });
        match walk {
            Err(Walk::Corrupt) => return FloorOutcome::Fallback(MissingData),
            Err(Walk::TooDeep) => return FloorOutcome::Fallback(BudgetExceeded),
            Ok(()) => {}
        }
        if undecided {
            return FloorOutcome::Fallback(PrecisionBudget);
        }
        // A piece whose edge passes (almost) through the point decides
        // nothing unless it is the same surface as the floor found inside.
        for &(z, err, n) in &band_hits[..bands] {
            match best {
                Some((bz, berr, _)) if z + err < bz - berr - SAME_Z_CM => {}
                Some((bz, berr, bn)) if (z - bz).abs() <= err + berr + SAME_Z_CM && same_normal(n, bn) => {}
                _ => return FloorOutcome::Fallback(PrecisionBudget),
            }
        }

        // Anything the file does not hold as a piece, between the floor (or
        // the window bottom) and the window top, might be hit first.
        let floor_lo = best.map_or(zlo, |(z, err, _)| z - err - SAME_Z_CM);
        if let Some(reason) = blockers_in_column(&tile, lx, ly, floor_lo, ztop, &quant) {
            return FloorOutcome::Fallback(reason);
        }

        let Some((z, _, normal)) = best else {
            return FloorOutcome::NoFloor;
        };
        let walkable_z = self.bake_params().walkable_normal_z.get() as f64;
        if (normal[2] - walkable_z).abs() < WALKABLE_Z_BAND {
            return FloorOutcome::Fallback(PrecisionBudget);
        }
        let z_world = z + origin[2];
        let floor_dist = bottom - z_world;
        FloorOutcome::Floor(FloorHit {
            floor_dist,
            location: [pos[0], pos[1], pos[2] - floor_dist],
            impact_point: [pos[0], pos[1], z_world],
            normal,
            walkable: normal[2] >= walkable_z,
        })
    }
}

fn query_box(lx: f64, ly: f64, zlo: f64, zhi: f64, quant: &TileQuant) -> QBox {
    QBox::new(
        [TileQuant::xy_query(lx), TileQuant::xy_query(ly), quant.z_query(zlo)],
        [TileQuant::xy_query(lx), TileQuant::xy_query(ly), quant.z_query(zhi)],
    )
}

fn unit_normal(a: f64, b: f64) -> [f64; 3] {
    let len = (a * a + b * b + 1.0).sqrt();
    [-a / len, -b / len, 1.0 / len]
}

fn same_normal(n: [f64; 3], m: [f64; 3]) -> bool {
    (0..3).all(|k| (n[k] - m[k]).abs() <= SAME_NORMAL)
}

/// Classifies `(lx, ly)` (tile-relative cm) against a CCW convex piece.
#[inline]
fn point_in_piece(verts: &[walksurf_format::VertexFixed], lx: f64, ly: f64) -> Side {
    if verts.len() < 3 {
        return Side::Outside;
    }
    let (qx, qy) = (lx * VERTEX_STEPS_PER_CM, ly * VERTEX_STEPS_PER_CM);
    let band = EDGE_BAND_CM * VERTEX_STEPS_PER_CM;
    let mut side = Side::Inside;
    let mut prev = verts[verts.len() - 1];
    for v in verts {
        let (ax, ay) = (prev.x.get() as f64, prev.y.get() as f64);
        let (bx, by) = (v.x.get() as f64, v.y.get() as f64);
        let (ex, ey) = (bx - ax, by - ay);
        let len = (ex * ex + ey * ey).sqrt();
        // Signed distance (fixed-point units), positive on the left (inside).
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
        prev = *v;
    }
    side
}

/// `Some(reason)` if a blocker's footprint (plus the band) contains the point
/// and its z band meets `[zlo, zhi]` (tile-relative).
fn blockers_in_column(
    tile: &TileView,
    lx: f64,
    ly: f64,
    zlo: f64,
    zhi: f64,
    quant: &TileQuant,
) -> Option<FallbackReason> {
    let q = query_box(lx, ly, zlo - 1.0, zhi + 1.0, quant);
    let mut found = None;
    let walk = visit(tile.blocker_bvh, &q, |i| {
        let Some(b) = tile.blockers.get(i as usize) else {
            found = Some(FallbackReason::MissingData);
            return false;
        };
        let bz_lo = b.z_min.get() as f64 / VERTEX_STEPS_PER_CM;
        let bz_hi = b.z_max.get() as f64 / VERTEX_STEPS_PER_CM;
        if bz_hi < zlo - Z_MARGIN_CM || bz_lo > zhi + Z_MARGIN_CM {
            return true;
        }
        if footprint_contains(b, lx, ly) {
            found = Some(FallbackReason::UncollectedSurface);
            return false;
        }
        true
    });
    match walk {
        Err(Walk::Corrupt) => Some(FallbackReason::MissingData),
        Err(Walk::TooDeep) => Some(FallbackReason::BudgetExceeded),
        Ok(()) => found,
    }
}

/// Whether the blocker's XY footprint, grown by the edge band, contains the
/// point. Works for footprints of either orientation and for degenerate
/// (vertical) ones.
fn footprint_contains(b: &Blocker, lx: f64, ly: f64) -> bool {
    let p = [lx * VERTEX_STEPS_PER_CM, ly * VERTEX_STEPS_PER_CM];
    let v = b.xy.map(|c| [c[0].get() as f64, c[1].get() as f64]);
    let band = EDGE_BAND_CM * VERTEX_STEPS_PER_CM;
    let cross = |a: [f64; 2], b: [f64; 2], c: [f64; 2]| (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
    let s = [cross(v[0], v[1], p), cross(v[1], v[2], p), cross(v[2], v[0], p)];
    if s.iter().all(|&x| x >= 0.0) || s.iter().all(|&x| x <= 0.0) {
        return true;
    }
    (0..3).any(|k| dist_to_segment(p, v[k], v[(k + 1) % 3]) <= band)
}

fn dist_to_segment(p: [f64; 2], a: [f64; 2], b: [f64; 2]) -> f64 {
    let (ex, ey) = (b[0] - a[0], b[1] - a[1]);
    let len2 = ex * ex + ey * ey;
    let t = if len2 > 0.0 {
        (((p[0] - a[0]) * ex + (p[1] - a[1]) * ey) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (dx, dy) = (a[0] + t * ex - p[0], a[1] + t * ey - p[1]);
    (dx * dx + dy * dy).sqrt()
}

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
