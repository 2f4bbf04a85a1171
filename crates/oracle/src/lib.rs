//! The exact reference for walksurf (DESIGN §2): floor and horizontal-sweep
//! answers of an upright capsule against **all** triangles of a level, and
//! the query corpus used to measure the runtime against it (DESIGN §7).
//!
//! Frame: Z up, centimetres. Triangles are double-sided.
//!
//! The triangles live in a `parry3d-f64` [`TriMesh`] whose BVH selects the
//! candidate triangles of each query; the answer for each candidate is then
//! computed in closed form (moving sphere / segment against face, edges and
//! vertices, as in Ericson, *Real-Time Collision Detection* §5.5), so it is
//! exact up to floating-point round-off rather than to an iterative tolerance.
//! The mesh is stored relative to its bounding-box centre to keep precision
//! for levels far from the origin.

#![forbid(unsafe_code)]

pub mod corpus;
mod geom;

use std::fmt;

use geom::{Tri, add, cast_capsule_triangle, closest_segment_triangle, scale, sub};
use parry3d_f64::bounding_volume::Aabb;
use parry3d_f64::math::Point;
use parry3d_f64::shape::TriMesh;

/// A point or vector, `[x, y, z]`, Z up, centimetres.
pub type Vec3 = [f64; 3];

/// Margin (cm) added to every BVH query box so that round-off can never drop
/// a candidate triangle; candidates are then tested exactly.
const BVH_MARGIN_CM: f64 = 1e-3;

/// Capsule agent: upright capsule, centre `P`, radius `R`, half-height `H`
/// (`H >= R`; total height `2H`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AgentShape {
    /// Radius `R` (cm), `> 0`.
    pub radius_cm: f64,
    /// Half-height `H` (cm), `>= radius_cm`.
    pub half_height_cm: f64,
}

impl Default for AgentShape {
    /// The default agent of DESIGN §2: `R = 42`, `H = 96`.
    fn default() -> Self {
        AgentShape {
            radius_cm: 42.0,
            half_height_cm: 96.0,
        }
    }
}

impl AgentShape {
    /// Whether the shape is usable: finite, `R > 0`, `H >= R`.
    fn is_valid(&self) -> bool {
        self.radius_cm.is_finite()
            && self.half_height_cm.is_finite()
            && self.radius_cm > 0.0
            && self.half_height_cm >= self.radius_cm
    }
}

/// Why an [`Oracle`] could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OracleError {
    /// No triangles (or no vertices) were given.
    EmptyMesh,
    /// Triangle `triangle` refers to a vertex index past the vertex array.
    BadIndex {
        /// Index of the offending triangle.
        triangle: usize,
    },
    /// Vertex `vertex` has a NaN or infinite coordinate.
    NonFiniteVertex {
        /// Index of the offending vertex.
        vertex: usize,
    },
}

impl fmt::Display for OracleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OracleError::EmptyMesh => write!(f, "the mesh has no triangles"),
            OracleError::BadIndex { triangle } => {
                write!(f, "triangle {triangle} refers to a vertex that does not exist")
            }
            OracleError::NonFiniteVertex { vertex } => {
                write!(f, "vertex {vertex} has a non-finite coordinate")
            }
        }
    }
}

impl std::error::Error for OracleError {}

/// Answer of a floor query ([`Oracle::find_floor_line`], [`Oracle::find_floor_capsule`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OracleFloor {
    /// A floor was found.
    Floor {
        /// How far the agent moves down until contact (line mode: `bottom - z`,
        /// negative when the hit is above the capsule bottom).
        floor_dist: f64,
        /// Agent centre at contact: `pos - floor_dist·ẑ`.
        location: Vec3,
        /// Contact point on the mesh.
        impact_point: Vec3,
        /// Unit contact normal, pointing from the mesh toward the agent.
        normal: Vec3,
    },
    /// Nothing within the search distance.
    NoFloor,
    /// The capsule overlaps geometry at its start (capsule mode only).
    StartOverlap,
}

/// Answer of a horizontal sweep ([`Oracle::sweep`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OracleSweep {
    /// Nothing is touched along the whole move.
    Clear,
    /// First contact along the move.
    Hit {
        /// Fraction of the delta travelled before contact, in `[0, 1]`.
        time: f64,
        /// `time · |delta|` (cm).
        distance: f64,
        /// Agent centre at contact: `pos + time·delta`.
        location: Vec3,
        /// Contact point on the mesh.
        impact_point: Vec3,
        /// Unit contact normal, pointing from the mesh toward the agent.
        normal: Vec3,
    },
    /// The capsule overlaps (or touches) geometry at its start.
    StartOverlap,
}

/// The exact reference: a triangle mesh (all triangles of a level) answering
/// capsule and line queries. Immutable, `Send + Sync`.
pub struct Oracle {
    /// World position of the local origin (mesh bounding-box centre).
    origin: Vec3,
    /// All triangles, local frame; used for its BVH. Indices match `tris`.
    mesh: TriMesh,
    /// Triangles in the local frame with their unit normals.
    tris: Vec<Tri>,
}

impl fmt::Debug for Oracle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Oracle")
            .field("origin", &self.origin)
            .field("triangles", &self.tris.len())
            .finish()
    }
}

/// A capsule translated into the oracle's local frame, with its move.
struct Cast {
    /// Local capsule centre.
    p: Vec3,
    /// Half-length of the axis segment, `H - R`.
    h: f64,
    r: f64,
    /// Unit direction of the move (zero for no move).
    u: Vec3,
    /// Length of the move (cm).
    len: f64,
}

/// Outcome of a capsule cast in the local frame.
enum CastResult {
    Overlap,
    Clear,
    Hit { s: f64, point: Vec3, normal: Vec3 },
}

impl Oracle {
    /// Builds the oracle over `triangles` (indices into `vertices`).
    ///
    /// Triangles are double-sided (a triangle blocks from both sides whatever
    /// its winding). Degenerate triangles (segments, points) keep their edges
    /// and vertices as obstacles.
    pub fn new(vertices: &[Vec3], triangles: &[[u32; 3]]) -> Result<Oracle, OracleError> {
        if triangles.is_empty() || vertices.is_empty() {
            return Err(OracleError::EmptyMesh);
        }
        if let Some(vertex) = vertices.iter().position(|v| !v.iter().all(|c| c.is_finite())) {
            return Err(OracleError::NonFiniteVertex { vertex });
        }
        if let Some(triangle) = triangles
            .iter()
            .position(|t| t.iter().any(|&i| i as usize >= vertices.len()))
        {
            return Err(OracleError::BadIndex { triangle });
        }
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for t in triangles {
            for &i in t {
                let v = vertices[i as usize];
                for k in 0..3 {
                    lo[k] = lo[k].min(v[k]);
                    hi[k] = hi[k].max(v[k]);
                }
            }
        }
        let origin = [0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), 0.5 * (lo[2] + hi[2])];
        let local: Vec<Vec3> = vertices.iter().map(|&v| sub(v, origin)).collect();
        let tris: Vec<Tri> = triangles
            .iter()
            .map(|t| Tri::new([local[t[0] as usize], local[t[1] as usize], local[t[2] as usize]]))
            .collect();
        let points: Vec<Point<f64>> = local.iter().map(|v| Point::new(v[0], v[1], v[2])).collect();
        // No TriMeshFlags: no pseudo-normals / orientation, so nothing one-sided.
        let mesh = TriMesh::new(points, triangles.to_vec());
        Ok(Oracle { origin, mesh, tris })
    }

    /// LineTrace FindFloor: `bottom = pos.z - half_height`; cast a ray straight
    /// down from `(pos.x, pos.y, bottom + 2)` over `down + 2`; the first hit at
    /// height `z` gives `floor_dist = bottom - z`, `impact_point = (pos.x,
    /// pos.y, z)`, `location = pos - floor_dist·ẑ`, `normal` = unit normal of
    /// the hit triangle facing up. No hit (or non-finite input) gives `NoFloor`.
    ///
    /// Vertical triangles are parallel to the ray and never hit. Of several
    /// triangles hit at the same height the lowest-indexed one gives the normal.
    pub fn find_floor_line(&self, pos: Vec3, half_height_cm: f64, down_cm: f64) -> OracleFloor {
        let down = down_cm.max(0.0);
        if !pos.iter().all(|c| c.is_finite()) || !half_height_cm.is_finite() || !down_cm.is_finite() {
            return OracleFloor::NoFloor;
        }
        let p = sub(pos, self.origin);
        let bottom = p[2] - half_height_cm;
        let top = bottom + 2.0;
        let low = bottom - down;
        let mut best: Option<(f64, usize)> = None;
        for i in self.candidates([p[0], p[1], low], [p[0], p[1], top]) {
            let tri = &self.tris[i];
            if let Some(z) = geom::vertical_line_triangle(p[0], p[1], tri)
                && z <= top
                && z >= low
                && best.is_none_or(|(bz, _)| z > bz)
            {
                best = Some((z, i));
            }
        }
        match best {
            None => OracleFloor::NoFloor,
            Some((z, i)) => {
                let n = self.tris[i].n.unwrap_or([0.0, 0.0, 1.0]);
                let normal = if n[2] < 0.0 { scale(n, -1.0) } else { n };
                let floor_dist = bottom - z;
                OracleFloor::Floor {
                    floor_dist,
                    location: [pos[0], pos[1], pos[2] - floor_dist],
                    impact_point: [pos[0], pos[1], z + self.origin[2]],
                    normal,
                }
            }
        }
    }

    /// Capsule FindFloor: cast the capsule (segment `pos ± (H-R)ẑ` inflated by
    /// `R`) straight down by at most `down_cm`.
    ///
    /// Overlapping or touching geometry at the start gives `StartOverlap`; a
    /// contact after moving `t <= down_cm` gives `Floor` with `floor_dist = t`,
    /// `location = pos - t·ẑ`, the contact point and the unit contact normal
    /// (face normal toward the capsule for a face contact, contact point to
    /// sphere centre for an edge or vertex); otherwise `NoFloor`. A negative
    /// `down_cm` counts as 0; an invalid agent or non-finite input gives
    /// `StartOverlap`. Of contacts at the same distance, the lowest-indexed
    /// triangle's is reported.
    pub fn find_floor_capsule(&self, pos: Vec3, agent: AgentShape, down_cm: f64) -> OracleFloor {
        if down_cm.is_nan() {
            return OracleFloor::StartOverlap;
        }
        let len = down_cm.max(0.0);
        let Some(cast) = self.make_cast(pos, agent, [0.0, 0.0, -1.0], len) else {
            return OracleFloor::StartOverlap;
        };
        match self.cast(&cast) {
            CastResult::Overlap => OracleFloor::StartOverlap,
            CastResult::Clear => OracleFloor::NoFloor,
            CastResult::Hit { s, point, normal } => OracleFloor::Floor {
                floor_dist: s,
                location: [pos[0], pos[1], pos[2] - s],
                impact_point: add(point, self.origin),
                normal,
            },
        }
    }

    /// Horizontal sweep of the capsule by `(dx, dy, 0)`.
    ///
    /// `time` in `[0, 1]` is the fraction of the delta travelled,
    /// `distance = time·|delta|`, `location = pos + time·delta`; `impact_point`
    /// and `normal` as in [`Oracle::find_floor_capsule`]. A contact exactly at
    /// the end of the move is a `Hit`. With a zero delta the answer is `Clear`
    /// unless the capsule overlaps (`StartOverlap`). An invalid agent or
    /// non-finite input gives `StartOverlap`.
    ///
    /// When the contact is not a single point (the capsule's straight side
    /// against a vertical face), `impact_point` is one point of the contact set.
    pub fn sweep(&self, pos: Vec3, delta_xy: [f64; 2], agent: AgentShape) -> OracleSweep {
        let len = delta_xy[0].hypot(delta_xy[1]);
        let u = if len > 0.0 {
            [delta_xy[0] / len, delta_xy[1] / len, 0.0]
        } else {
            [0.0; 3]
        };
        let Some(cast) = self.make_cast(pos, agent, u, len) else {
            return OracleSweep::StartOverlap;
        };
        match self.cast(&cast) {
            CastResult::Overlap => OracleSweep::StartOverlap,
            CastResult::Clear => OracleSweep::Clear,
            CastResult::Hit { s, point, normal } => {
                let time = (s / len).clamp(0.0, 1.0);
                OracleSweep::Hit {
                    time,
                    distance: s,
                    location: [pos[0] + time * delta_xy[0], pos[1] + time * delta_xy[1], pos[2]],
                    impact_point: add(point, self.origin),
                    normal,
                }
            }
        }
    }

    /// True when the capsule at `pos` intersects or touches any triangle
    /// (also true for an invalid agent or non-finite `pos`).
    pub fn overlaps(&self, pos: Vec3, agent: AgentShape) -> bool {
        match self.make_cast(pos, agent, [0.0; 3], 0.0) {
            None => true,
            Some(cast) => self.first_overlap(&cast, &self.cast_candidates(&cast)),
        }
    }

    /// Validates the inputs and moves the capsule into the local frame.
    fn make_cast(&self, pos: Vec3, agent: AgentShape, u: Vec3, len: f64) -> Option<Cast> {
        if !agent.is_valid() || !pos.iter().all(|c| c.is_finite()) || !len.is_finite() {
            return None;
        }
        Some(Cast {
            p: sub(pos, self.origin),
            h: agent.half_height_cm - agent.radius_cm,
            r: agent.radius_cm,
            u,
            len,
        })
    }

    /// Triangle indices (ascending) whose BVH boxes meet the box swept by the cast.
    fn cast_candidates(&self, c: &Cast) -> Vec<usize> {
        let ext = [c.r, c.r, c.h + c.r];
        let end = add(c.p, scale(c.u, c.len));
        let mut lo = [0.0; 3];
        let mut hi = [0.0; 3];
        for k in 0..3 {
            lo[k] = c.p[k].min(end[k]) - ext[k];
            hi[k] = c.p[k].max(end[k]) + ext[k];
        }
        self.candidates(lo, hi)
    }

    /// Triangle indices (ascending) whose BVH boxes meet `[lo, hi]` (local frame).
    fn candidates(&self, lo: Vec3, hi: Vec3) -> Vec<usize> {
        let m = BVH_MARGIN_CM;
        let aabb = Aabb::new(
            Point::new(lo[0] - m, lo[1] - m, lo[2] - m),
            Point::new(hi[0] + m, hi[1] + m, hi[2] + m),
        );
        let mut out = Vec::new();
        self.mesh.qbvh().intersect_aabb(&aabb, &mut out);
        let mut idx: Vec<usize> = out
            .into_iter()
            .map(|i| i as usize)
            .filter(|&i| i < self.tris.len())
            .collect();
        idx.sort_unstable();
        idx.dedup();
        idx
    }

    /// Whether the capsule at its start touches any of `cands`.
    fn first_overlap(&self, c: &Cast, cands: &[usize]) -> bool {
        let a = [c.p[0], c.p[1], c.p[2] - c.h];
        let b = [c.p[0], c.p[1], c.p[2] + c.h];
        cands.iter().any(|&i| {
            let (d2, _, _) = closest_segment_triangle(a, b, &self.tris[i]);
            d2 <= c.r * c.r
        })
    }

    /// The capsule cast in the local frame: overlap check, then the earliest
    /// contact over all candidate triangles (ties: lowest triangle index).
    fn cast(&self, c: &Cast) -> CastResult {
        let cands = self.cast_candidates(c);
        if self.first_overlap(c, &cands) {
            return CastResult::Overlap;
        }
        if c.len <= 0.0 {
            return CastResult::Clear;
        }
        let mut best: Option<geom::Contact> = None;
        for &i in &cands {
            let rel = self.tris[i].relative_to(c.p);
            if let Some(hit) = cast_capsule_triangle(c.h, c.r, c.u, c.len, &rel)
                && best.is_none_or(|b| hit.s < b.s)
            {
                best = Some(hit);
            }
        }
        match best {
            None => CastResult::Clear,
            Some(hit) => CastResult::Hit {
                s: hit.s,
                point: add(hit.point, c.p),
                normal: hit.normal,
            },
        }
    }
}
