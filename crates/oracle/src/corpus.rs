//! The query corpus of DESIGN §7: ground short steps and abnormal queries,
//! generated deterministically from a seed.

use crate::geom::{cross, norm2, sub};
use crate::{AgentShape, Oracle, OracleFloor, Vec3};

/// Deterministic PRNG (SplitMix64). The same seed gives the same stream on
/// every platform.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// Next 64 uniformly distributed bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)` (53 random bits).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `[0, n)`, or 0 when `n` is 0 (the modulo bias is
    /// negligible for the small `n` of tests).
    pub fn below(&mut self, n: usize) -> usize {
        self.next_u64().checked_rem(n as u64).unwrap_or(0) as usize
    }

    /// Uniform in `[lo, hi)`.
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next_f64()
    }

    /// Unit vector in the XY plane with a uniformly random direction.
    fn direction_xy(&mut self) -> [f64; 2] {
        let a = std::f64::consts::TAU * self.next_f64();
        [a.cos(), a.sin()]
    }
}

/// Which population a query belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryClass {
    /// A capsule resting (hovering) on walkable ground, taking a short step.
    Ground,
    /// A random position and delta in the level bounds, overlapping or not.
    Abnormal,
}

/// One corpus query: a capsule centre and a horizontal move.
#[derive(Clone, Copy, Debug)]
pub struct CorpusQuery {
    /// Population of the query.
    pub class: QueryClass,
    /// Capsule centre (cm).
    pub pos: Vec3,
    /// Horizontal move (cm).
    pub delta_xy: [f64; 2],
}

/// Parameters of [`generate`].
#[derive(Clone, Copy, Debug)]
pub struct CorpusConfig {
    /// PRNG seed.
    pub seed: u64,
    /// Number of ground queries wanted (fewer if too few samples succeed).
    pub ground: usize,
    /// Number of abnormal queries.
    pub abnormal: usize,
    /// Agent capsule.
    pub agent: AgentShape,
    /// Minimum `|n.z|` of a walkable triangle (0.71).
    pub walkable_normal_z: f64,
    /// Lift above the resting position (cm; UE's 2.15).
    pub hover_cm: f64,
    /// Length of a ground step (cm; 16.67).
    pub step_cm: f64,
    /// Maximum length of an abnormal delta (cm; 256).
    pub max_delta_cm: f64,
}

impl Default for CorpusConfig {
    /// Seed 1, 1000 + 1000 queries, the default agent and DESIGN's constants.
    fn default() -> Self {
        CorpusConfig {
            seed: 1,
            ground: 1000,
            abnormal: 1000,
            agent: AgentShape::default(),
            walkable_normal_z: 0.71,
            hover_cm: 2.15,
            step_cm: 16.67,
            max_delta_cm: 256.0,
        }
    }
}

/// Draw attempts allowed per wanted ground query.
const GROUND_ATTEMPTS_PER_QUERY: usize = 20;
/// Heights (cm) of the capsule bottom above the sampled point from which it is
/// dropped, tried in order while the start overlaps.
const DROP_HEIGHTS_CM: [f64; 3] = [30.0, 10.0, 3.0];
/// Extra drop distance (cm) beyond the start height; covers a capsule resting
/// up to this much below the sampled point (e.g. slipping off a small piece).
const DROP_EXTRA_CM: f64 = 100.0;
/// Most queries [`generate`] allocates room for before it draws any.
const MAX_PREALLOCATED_QUERIES: usize = 1 << 16;
/// Seed perturbation of the abnormal stream (independent of the ground count).
const ABNORMAL_STREAM: u64 = 0xA5A5_5A5A_0F0F_F0F0;

/// Generates the corpus of DESIGN §7 for the level `vertices`/`triangles`
/// (the same mesh `oracle` was built from): up to `cfg.ground` ground queries
/// followed by `cfg.abnormal` abnormal queries. Deterministic in `cfg`.
///
/// Ground: area-weighted random points on triangles with `|n.z| >=
/// walkable_normal_z`; the capsule is dropped onto each from 30 cm above (10,
/// then 3 cm if that start overlaps), lifted by `hover_cm` at rest and kept
/// only if it then overlaps nothing; the delta is `step_cm` in a random
/// direction. At most `20 × ground` samples are drawn, so a level without
/// walkable triangles yields no ground queries. Triangles with bad indices
/// are ignored.
///
/// Abnormal: uniform positions in the bounding box of the triangles expanded
/// by `(R, R, H)`, deltas of uniform length in `[0, max_delta_cm]` and random
/// direction.
pub fn generate(oracle: &Oracle, vertices: &[Vec3], triangles: &[[u32; 3]], cfg: &CorpusConfig) -> Vec<CorpusQuery> {
    let tri_verts = |t: &[u32; 3]| -> Option<[Vec3; 3]> {
        Some([
            *vertices.get(t[0] as usize)?,
            *vertices.get(t[1] as usize)?,
            *vertices.get(t[2] as usize)?,
        ])
    };
    // Counts come from the caller (a command line): no overflow, and no
    // up-front allocation larger than a typical corpus (it grows as needed).
    let mut out = Vec::with_capacity(cfg.ground.saturating_add(cfg.abnormal).min(MAX_PREALLOCATED_QUERIES));

    // Walkable triangles with cumulative areas (in triangle order).
    let mut walkable: Vec<([Vec3; 3], f64)> = Vec::new();
    let mut total = 0.0;
    for t in triangles {
        let Some(v) = tri_verts(t) else { continue };
        let c = cross(sub(v[1], v[0]), sub(v[2], v[0]));
        let len = norm2(c).sqrt();
        if !(len > 0.0 && len.is_finite()) || c[2].abs() < cfg.walkable_normal_z * len {
            continue;
        }
        total += 0.5 * len;
        walkable.push((v, total));
    }

    let agent = cfg.agent;
    let mut rng = Rng::new(cfg.seed);
    let mut kept = 0;
    if !walkable.is_empty() && total > 0.0 {
        for _ in 0..cfg.ground.saturating_mul(GROUND_ATTEMPTS_PER_QUERY) {
            if kept == cfg.ground {
                break;
            }
            let target = rng.next_f64() * total;
            let k = walkable
                .partition_point(|&(_, cum)| cum <= target)
                .min(walkable.len() - 1);
            let v = walkable[k].0;
            // Uniform point in the triangle.
            let (r1, r2) = (rng.next_f64().sqrt(), rng.next_f64());
            let (a, b, c) = (1.0 - r1, r1 * (1.0 - r2), r1 * r2);
            let point: Vec3 = std::array::from_fn(|i| a * v[0][i] + b * v[1][i] + c * v[2][i]);
            let dir = rng.direction_xy();
            if let Some(rest) = drop_capsule(oracle, point, agent) {
                let pos = [rest[0], rest[1], rest[2] + cfg.hover_cm];
                if !oracle.overlaps(pos, agent) {
                    out.push(CorpusQuery {
                        class: QueryClass::Ground,
                        pos,
                        delta_xy: [dir[0] * cfg.step_cm, dir[1] * cfg.step_cm],
                    });
                    kept += 1;
                }
            }
        }
    }

    // Abnormal queries: bounds of the referenced vertices.
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for v in triangles.iter().filter_map(tri_verts) {
        for p in v {
            for i in 0..3 {
                lo[i] = lo[i].min(p[i]);
                hi[i] = hi[i].max(p[i]);
            }
        }
    }
    if lo[0] <= hi[0] {
        let ext = [agent.radius_cm, agent.radius_cm, agent.half_height_cm];
        let mut rng = Rng::new(cfg.seed ^ ABNORMAL_STREAM);
        for _ in 0..cfg.abnormal {
            let pos: Vec3 = std::array::from_fn(|i| {
                let (l, h) = (lo[i] - ext[i], hi[i] + ext[i]);
                l + rng.next_f64() * (h - l)
            });
            let len = rng.next_f64() * cfg.max_delta_cm;
            let dir = rng.direction_xy();
            out.push(CorpusQuery {
                class: QueryClass::Abnormal,
                pos,
                delta_xy: [dir[0] * len, dir[1] * len],
            });
        }
    }
    out
}

/// Drops the capsule onto `point` from the first non-overlapping start of
/// [`DROP_HEIGHTS_CM`]; returns the resting centre.
fn drop_capsule(oracle: &Oracle, point: Vec3, agent: AgentShape) -> Option<Vec3> {
    for lift in DROP_HEIGHTS_CM {
        let start = [point[0], point[1], point[2] + lift + agent.half_height_cm];
        match oracle.find_floor_capsule(start, agent, lift + DROP_EXTRA_CM) {
            OracleFloor::StartOverlap => continue,
            OracleFloor::Floor { location, .. } => return Some(location),
            OracleFloor::NoFloor => return None,
        }
    }
    None
}
