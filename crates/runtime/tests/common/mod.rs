//! Helpers shared by the runtime's oracle tests: the agreement rules of
//! DESIGN §2 (the same ones `walksurf validate` applies), a tiny level
//! builder, query generators and the shared-levels locator.

// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use walksurf::{Agent, FloorHit, FloorMode, FloorOutcome, Surface, SweepHit, SweepOutcome};
use walksurf_bake::{BakeConfig, Mesh, Silent, bake_mesh};
use walksurf_oracle::corpus::{CorpusQuery, QueryClass};
use walksurf_oracle::{AgentShape, Oracle, OracleFloor, OracleSweep};

/// Largest |floor_dist − oracle| of an answer that agrees (DESIGN §2). [Units: cm]
pub const MAX_DIST_ERR_CM: f64 = 0.01;
/// Largest component difference of an agreeing normal (DESIGN §2).
pub const MAX_NORMAL_ERR: f64 = 1e-3;
/// The oracle's surface is walkable when its normal z is at least this.
pub const ORACLE_WALKABLE_Z: f64 = 0.71;
/// The `down` values every test tries: the default window, none at all, a
/// short one and the seed's longest. [Units: cm]
pub const DOWNS_CM: [f64; 4] = [walksurf::DEFAULT_FLOOR_DOWN_CM, 0.0, 10.0, 200.0];

/// One line-trace floor query.
#[derive(Clone, Copy, Debug)]
pub struct FloorQuery {
    /// Capsule centre (cm).
    pub pos: [f64; 3],
    /// How far below the capsule bottom to look (cm).
    pub down_cm: f64,
    pub agent: Agent,
}

impl FloorQuery {
    pub fn new(pos: [f64; 3], down_cm: f64) -> FloorQuery {
        FloorQuery {
            pos,
            down_cm,
            agent: Agent::DEFAULT,
        }
    }
}

/// How a batch of queries went.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// Queries asked.
    pub n: usize,
    /// Answers that were not a Fallback.
    pub answered: usize,
    /// Answers that were a `Floor`.
    pub floors: usize,
    /// Fallbacks by reason.
    pub fallbacks: BTreeMap<&'static str, usize>,
    /// Every disagreement with the oracle, described.
    pub errors: Vec<String>,
}

impl Tally {
    pub fn answered_pct(&self) -> f64 {
        if self.n == 0 {
            100.0
        } else {
            100.0 * self.answered as f64 / self.n as f64
        }
    }

    pub fn merge(&mut self, other: &Tally) {
        self.n += other.n;
        self.answered += other.answered;
        self.floors += other.floors;
        for (k, v) in &other.fallbacks {
            *self.fallbacks.entry(k).or_default() += v;
        }
        self.errors.extend(other.errors.iter().cloned());
    }

    /// Counts one `find_floor` answer (asked, floor, fallback reason).
    pub fn count(&mut self, ours: FloorOutcome) {
        self.n += 1;
        match ours {
            FloorOutcome::Fallback(r) => *self.fallbacks.entry(r.as_str()).or_default() += 1,
            FloorOutcome::Floor(_) => self.floors += 1,
            FloorOutcome::NoFloor => {}
        }
    }

    /// Adds one comparison's verdict (`Ok(answered)` or `Err(why)`); a
    /// disagreement counts as answered and is described by `what(why)`.
    pub fn judge(&mut self, verdict: Result<bool, String>, what: impl FnOnce(String) -> String) {
        match verdict {
            Ok(answered) => self.answered += answered as usize,
            Err(why) => {
                self.answered += 1;
                self.errors.push(what(why));
            }
        }
    }

    /// `n, answered %, errors` plus the fallback reasons, for a report line.
    pub fn summary(&self) -> String {
        let reasons: Vec<String> = self.fallbacks.iter().map(|(k, v)| format!("{k} {v}")).collect();
        format!(
            "n {:>7}  answered {:>6.2}%  floors {:>7}  errors {}  [{}]",
            self.n,
            self.answered_pct(),
            self.floors,
            self.errors.len(),
            reasons.join(", ")
        )
    }

    /// Panics listing the first disagreements if there are any.
    #[track_caller]
    pub fn assert_no_errors(&self, what: &str) {
        assert_agree(what, &self.errors, self.n, "answers");
    }
}

/// Compares one runtime answer with the oracle's (the rules of DESIGN §2, as
/// `walksurf validate` applies them). `Ok(answered)`; `Err(why)` on a
/// disagreement. A Fallback always agrees and is not answered.
pub fn compare_floor(ours: FloorOutcome, truth: OracleFloor) -> Result<bool, String> {
    compare_floor_at(ours, truth, ORACLE_WALKABLE_Z)
}

/// Whether every number of a floor answer is finite.
pub fn floor_hit_is_finite(h: &FloorHit) -> bool {
    [h.floor_dist]
        .iter()
        .chain(&h.location)
        .chain(&h.impact_point)
        .chain(&h.normal)
        .all(|v| v.is_finite())
}

/// Whether every number of a sweep hit is finite.
pub fn sweep_hit_is_finite(h: &SweepHit) -> bool {
    [h.time, h.distance]
        .iter()
        .chain(&h.location)
        .chain(&h.impact_point)
        .chain(&h.normal)
        .chain(&h.impact_normal)
        .all(|v| v.is_finite())
}

/// [`compare_floor`] for a file baked with the walkable normal z `wz`.
pub fn compare_floor_at(ours: FloorOutcome, truth: OracleFloor, wz: f64) -> Result<bool, String> {
    match (ours, truth) {
        (FloorOutcome::Fallback(_), _) => Ok(false),
        (FloorOutcome::NoFloor, OracleFloor::NoFloor) => Ok(true),
        (FloorOutcome::Floor(h), OracleFloor::Floor { floor_dist, normal, .. }) => {
            let err = (h.floor_dist - floor_dist).abs();
            let nerr = (0..3).map(|k| (h.normal[k] - normal[k]).abs()).fold(0.0, f64::max);
            let oracle_walkable = normal[2] >= wz;
            if !floor_hit_is_finite(&h) {
                Err(format!("non-finite answer {h:?}"))
            } else if err > MAX_DIST_ERR_CM {
                Err(format!(
                    "floor_dist {} vs oracle {floor_dist} (diff {err:.6})",
                    h.floor_dist
                ))
            } else if nerr > MAX_NORMAL_ERR {
                Err(format!("normal {:?} vs oracle {normal:?}", h.normal))
            } else if h.walkable != oracle_walkable {
                Err(format!(
                    "walkable {} vs oracle {oracle_walkable} (normal z {}, threshold {wz})",
                    h.walkable, normal[2]
                ))
            } else {
                Ok(true)
            }
        }
        (ours, truth) => Err(format!("{ours:?} vs oracle {truth:?}")),
    }
}

/// Runs every query through the runtime (line-trace mode) and the oracle.
pub fn compare_line(surface: &Surface, oracle: &Oracle, queries: &[FloorQuery]) -> Tally {
    compare_line_at(surface, oracle, queries, ORACLE_WALKABLE_Z)
}

/// [`compare_line`] for a file baked with the walkable normal z `wz`.
pub fn compare_line_at(surface: &Surface, oracle: &Oracle, queries: &[FloorQuery], wz: f64) -> Tally {
    let mut t = Tally::default();
    for q in queries {
        let ours = surface.find_floor(q.pos, q.down_cm, q.agent, FloorMode::LineTrace);
        let truth = oracle.find_floor_line(q.pos, q.agent.half_height_cm, q.down_cm);
        t.count(ours);
        t.judge(compare_floor_at(ours, truth, wz), |why| {
            format!("pos {:?} down {} H {}: {why}", q.pos, q.down_cm, q.agent.half_height_cm)
        });
    }
    t
}

/// Corpus queries of one class, each asked with `down_cm` and the default agent.
pub fn corpus_queries(corpus: &[CorpusQuery], class: QueryClass, down_cm: f64) -> Vec<FloorQuery> {
    corpus
        .iter()
        .filter(|q| q.class == class)
        .map(|q| FloorQuery::new(q.pos, down_cm))
        .collect()
}

/// Heights (world cm, highest first) of every surface the oracle's vertical
/// line meets at `(x, y)` between `z_hi` and `z_lo`; at most `max` of them.
pub fn column_heights(oracle: &Oracle, x: f64, y: f64, z_hi: f64, z_lo: f64, max: usize) -> Vec<f64> {
    let mut out = Vec::new();
    let mut top = z_hi;
    while out.len() < max && top > z_lo {
        // Half-height 0: the window is [top − 2 − down, top].
        match oracle.find_floor_line([x, y, top - 2.0], 0.0, top - 2.0 - z_lo) {
            OracleFloor::Floor { impact_point, .. } => {
                out.push(impact_point[2]);
                // Step clearly below this surface (and any exact duplicate).
                top = impact_point[2] - 1e-3;
            }
            _ => break,
        }
    }
    out
}

/// Capsule-bottom heights relative to a surface that probe both ends of the
/// window `[bottom − down, bottom + 2]` and the usual hover. [Units: cm]
pub const BOTTOM_OFFSETS_CM: [f64; 22] = [
    -30.0, -2.01, -2.0, -1.995, -1.0, -0.004, 0.0, 0.004, 1.0, 2.15, 9.99, 10.0, 10.01, 25.0, 47.39, 47.4, 47.41,
    120.0, 199.99, 200.0, 200.01, 260.0,
];

/// Queries down the vertical line at `(x, y)`: for every surface the oracle
/// finds there between `z_lo − 300` and `z_hi + 300`, capsule bottoms at
/// [`BOTTOM_OFFSETS_CM`] above it, plus bottoms above, below and between
/// everything; each with every `down` of [`DOWNS_CM`] and the default agent.
pub fn column_queries(oracle: &Oracle, x: f64, y: f64, z_lo: f64, z_hi: f64, out: &mut Vec<FloorQuery>) {
    let h = Agent::DEFAULT.half_height_cm;
    let surfaces = column_heights(oracle, x, y, z_hi + 300.0, z_lo - 300.0, 8);
    let mut bottoms = vec![z_hi + 50.0, z_lo - 50.0, 0.5 * (z_lo + z_hi)];
    for z in &surfaces {
        bottoms.extend(BOTTOM_OFFSETS_CM.iter().map(|o| z + o));
    }
    for b in bottoms {
        for down in DOWNS_CM {
            out.push(FloorQuery::new([x, y, b + h], down));
        }
    }
}

/// [`column_queries`] over an `nx × ny` grid spanning `[lo, hi]` in XY.
pub fn grid_queries(oracle: &Oracle, lo: [f64; 3], hi: [f64; 3], nx: usize, ny: usize) -> Vec<FloorQuery> {
    let mut out = Vec::new();
    for i in 0..nx {
        for j in 0..ny {
            let x = lo[0] + (hi[0] - lo[0]) * i as f64 / (nx - 1).max(1) as f64;
            let y = lo[1] + (hi[1] - lo[1]) * j as f64 / (ny - 1).max(1) as f64;
            column_queries(oracle, x, y, lo[2], hi[2], &mut out);
        }
    }
    out
}

/// Bounding box of a mesh's vertices.
pub fn bounds(mesh: &Mesh) -> ([f64; 3], [f64; 3]) {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for v in &mesh.vertices {
        for k in 0..3 {
            lo[k] = lo[k].min(v[k]);
            hi[k] = hi[k].max(v[k]);
        }
    }
    (lo, hi)
}

/// Which way a surface's triangles face.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Winding {
    /// Counter-clockwise seen from above (normal up), or outward for walls.
    Up,
    /// The reverse.
    Down,
    /// Both: every triangle twice, once each way (a coplanar duplicate).
    Both,
}

/// A tiny level builder (Z up, cm). Vertices with identical positions are
/// welded, as ingest does, so shared edges are shared indices.
#[derive(Clone, Debug, Default)]
pub struct LevelBuilder {
    mesh: Mesh,
    index: HashMap<[u64; 3], u32>,
    /// Added to every vertex.
    pub offset: [f64; 3],
    /// `(cos, sin)` of a turn about the z axis applied to every vertex
    /// before the offset (none: as given).
    pub turn: Option<[f64; 2]>,
    /// Triangles added while this is set may not be stood on (the input's
    /// `walkable: false`): the bake keeps them as blockers only.
    pub blocking_only: bool,
}

impl LevelBuilder {
    pub fn new() -> LevelBuilder {
        LevelBuilder::default()
    }

    /// A builder whose every vertex is moved by `offset` (e.g. far from the origin).
    pub fn with_offset(offset: [f64; 3]) -> LevelBuilder {
        LevelBuilder {
            offset,
            ..LevelBuilder::default()
        }
    }

    fn vertex(&mut self, p: [f64; 3]) -> u32 {
        let o = self.offset;
        let p = match self.turn {
            None => [0, 1, 2].map(|k| p[k] + o[k]),
            Some([c, s]) => [o[0] + (c * p[0] - s * p[1]), o[1] + (s * p[0] + c * p[1]), o[2] + p[2]],
        };
        let key = p.map(|v| if v == 0.0 { 0u64 } else { v.to_bits() });
        let next = self.mesh.vertices.len() as u32;
        *self.index.entry(key).or_insert_with(|| {
            self.mesh.vertices.push(p);
            next
        })
    }

    /// One triangle, as given.
    pub fn tri(&mut self, a: [f64; 3], b: [f64; 3], c: [f64; 3]) -> &mut Self {
        let t = [self.vertex(a), self.vertex(b), self.vertex(c)];
        self.mesh.triangles.push(t);
        self.mesh.walkable_allowed.push(!self.blocking_only);
        self
    }

    /// Quad `a b c d` (in order around its boundary, counter-clockwise for
    /// [`Winding::Up`]) as triangles `(a, b, c)`, `(a, c, d)`.
    pub fn quad(&mut self, [a, b, c, d]: [[f64; 3]; 4], w: Winding) -> &mut Self {
        if w != Winding::Down {
            self.tri(a, b, c).tri(a, c, d);
        }
        if w != Winding::Up {
            self.tri(a, c, b).tri(a, d, c);
        }
        self
    }

    /// A two-sided vertical wall over the segment `p0 p1` (XY), from
    /// `lo[i]` up to `hi[i]` at `p_i`.
    pub fn wall(&mut self, p0: [f64; 2], p1: [f64; 2], lo: [f64; 2], hi: [f64; 2]) -> &mut Self {
        self.quad(
            [
                [p0[0], p0[1], lo[0]],
                [p1[0], p1[1], lo[1]],
                [p1[0], p1[1], hi[1]],
                [p0[0], p0[1], hi[0]],
            ],
            Winding::Both,
        )
    }

    /// Horizontal rectangle `[x0, x1] × [y0, y1]` at height `z`.
    pub fn floor(&mut self, [x0, x1]: [f64; 2], [y0, y1]: [f64; 2], z: f64, w: Winding) -> &mut Self {
        self.quad([[x0, y0, z], [x1, y0, z], [x1, y1, z], [x0, y1, z]], w)
    }

    /// The plane `z = a·x + b·y + c` over the rectangle `[x0, x1] × [y0, y1]`.
    pub fn plane(&mut self, [x0, x1]: [f64; 2], [y0, y1]: [f64; 2], [a, b, c]: [f64; 3], w: Winding) -> &mut Self {
        let z = |x: f64, y: f64| a * x + b * y + c;
        self.quad(
            [
                [x0, y0, z(x0, y0)],
                [x1, y0, z(x1, y0)],
                [x1, y1, z(x1, y1)],
                [x0, y1, z(x0, y1)],
            ],
            w,
        )
    }

    /// Closed axis-aligned box, faces outward.
    pub fn cuboid(&mut self, lo: [f64; 3], hi: [f64; 3]) -> &mut Self {
        let [x0, y0, z0] = lo;
        let [x1, y1, z1] = hi;
        self.floor([x0, x1], [y0, y1], z1, Winding::Up)
            .floor([x0, x1], [y0, y1], z0, Winding::Down)
            .quad([[x0, y0, z0], [x1, y0, z0], [x1, y0, z1], [x0, y0, z1]], Winding::Up)
            .quad([[x1, y1, z0], [x0, y1, z0], [x0, y1, z1], [x1, y1, z1]], Winding::Up)
            .quad([[x0, y1, z0], [x0, y0, z0], [x0, y0, z1], [x0, y1, z1]], Winding::Up)
            .quad([[x1, y0, z0], [x1, y1, z0], [x1, y1, z1], [x1, y0, z1]], Winding::Up)
    }

    /// A solid ramp rising along +x from `z0` at `x0` to `z1` at `x1` over
    /// `[y0, y1]`: the slope, two vertical side triangles and the vertical
    /// back face at `x1` (when `z1 > z0`).
    pub fn ramp_x(&mut self, [x0, x1]: [f64; 2], [y0, y1]: [f64; 2], [z0, z1]: [f64; 2]) -> &mut Self {
        self.quad([[x0, y0, z0], [x1, y0, z1], [x1, y1, z1], [x0, y1, z0]], Winding::Up)
            .tri([x0, y0, z0], [x1, y0, z0], [x1, y0, z1])
            .tri([x0, y1, z0], [x1, y1, z1], [x1, y1, z0])
            .quad([[x1, y0, z0], [x1, y1, z0], [x1, y1, z1], [x1, y0, z1]], Winding::Up)
    }

    /// `steps` steps climbing along +x from `(x0, z0)` over `[y0, y1]`:
    /// horizontal treads `tread` deep, vertical risers `riser` high, and
    /// vertical sides. The top tread ends at `x0 + steps·tread`, height
    /// `z0 + steps·riser`.
    pub fn stairs(&mut self, x0: f64, [y0, y1]: [f64; 2], z0: f64, steps: usize, tread: f64, riser: f64) -> &mut Self {
        for i in 0..steps {
            let (xa, xb) = (x0 + i as f64 * tread, x0 + (i + 1) as f64 * tread);
            let (za, zb) = (z0 + i as f64 * riser, z0 + (i + 1) as f64 * riser);
            self.floor([xa, xb], [y0, y1], zb, Winding::Up)
                .quad([[xa, y1, za], [xa, y0, za], [xa, y0, zb], [xa, y1, zb]], Winding::Up)
                .quad([[xa, y0, z0], [xb, y0, z0], [xb, y0, zb], [xa, y0, zb]], Winding::Up)
                .quad([[xb, y1, z0], [xa, y1, z0], [xa, y1, zb], [xb, y1, zb]], Winding::Up);
        }
        self
    }

    pub fn build(self) -> Mesh {
        self.mesh
    }
}

/// `n` scaled by the environment variable `WALKSURF_TEST_SCALE` (a positive
/// number, default 1): a deeper local run without editing the tests.
pub fn scaled(n: usize) -> usize {
    let scale = std::env::var("WALKSURF_TEST_SCALE")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v > 0.0)
        .unwrap_or(1.0);
    ((n as f64 * scale).round() as usize).max(1)
}

/// The shared levels folder (`../shared/levels` beside the workspace), or
/// `None` with a notice when it is absent. Panics when it is absent and
/// `CI=true`: CI must not silently skip the real levels.
pub fn shared_levels_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/levels"));
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "CI=true but the shared levels folder {} is missing: check out ../shared beside the workspace",
            dir.display()
        );
    }
    eprintln!(
        "notice: {} is absent; skipping the shared-level tests (they fail when CI=true)",
        dir.display()
    );
    None
}

// ---------------------------------------------------------------------------
// Capsule mode (`FloorMode::Capsule` against `Oracle::find_floor_capsule`).

/// The agents every capsule test tries: the default one, a slimmer one, and
/// a sphere (`H = R`: no straight part).
pub const CAPSULE_AGENTS: [Agent; 3] = [
    Agent::DEFAULT,
    Agent {
        radius_cm: 30.0,
        half_height_cm: 90.0,
    },
    Agent {
        radius_cm: 20.0,
        half_height_cm: 20.0,
    },
];

/// The oracle's spelling of an agent.
pub fn agent_shape(a: Agent) -> AgentShape {
    AgentShape {
        radius_cm: a.radius_cm,
        half_height_cm: a.half_height_cm,
    }
}

/// Largest distance between the runtime's and the oracle's capsule contact
/// points when `floor_dist` and the normal agree: both points are the
/// sphere centre at rest minus `R·n̂`, so they differ by at most the
/// distance error plus `R` times the normal error (`√3 ×` the largest
/// component difference). [Units: cm]
pub fn max_impact_err_cm(radius_cm: f64) -> f64 {
    MAX_DIST_ERR_CM + radius_cm * 3f64.sqrt() * MAX_NORMAL_ERR
}

/// Compares one capsule answer with the oracle's: the rules of
/// [`compare_floor`], plus
/// * the oracle says the capsule starts overlapping: only a Fallback agrees
///   (the runtime must say `InitialOverlap` or another reason);
/// * a floor's `location` is `pos − floor_dist·ẑ` and its `impact_point`
///   is within [`max_impact_err_cm`] of the oracle's.
pub fn compare_capsule_floor(q: &FloorQuery, ours: FloorOutcome, truth: OracleFloor) -> Result<bool, String> {
    compare_capsule_floor_at(q, ours, truth, ORACLE_WALKABLE_Z)
}

/// [`compare_capsule_floor`] for a file baked with the walkable normal z
/// `wz`.
pub fn compare_capsule_floor_at(
    q: &FloorQuery,
    ours: FloorOutcome,
    truth: OracleFloor,
    wz: f64,
) -> Result<bool, String> {
    if let (FloorOutcome::Floor(_) | FloorOutcome::NoFloor, OracleFloor::StartOverlap) = (ours, truth) {
        return Err(format!(
            "{ours:?}, but the capsule starts overlapping (oracle StartOverlap)"
        ));
    }
    let answered = compare_floor_at(ours, truth, wz)?;
    if let (FloorOutcome::Floor(h), OracleFloor::Floor { impact_point, .. }) = (ours, truth) {
        let want = [q.pos[0], q.pos[1], q.pos[2] - h.floor_dist];
        let loc_err = (0..3).map(|k| (h.location[k] - want[k]).abs()).fold(0.0, f64::max);
        let scale = q.pos.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        if loc_err > 1e-12 * scale {
            return Err(format!(
                "location {:?} is not pos − floor_dist·ẑ = {want:?}",
                h.location
            ));
        }
        let d = (0..3)
            .map(|k| (h.impact_point[k] - impact_point[k]).powi(2))
            .sum::<f64>()
            .sqrt();
        if d > max_impact_err_cm(q.agent.radius_cm) {
            return Err(format!(
                "impact_point {:?} vs oracle {impact_point:?} ({d:.5} cm apart)",
                h.impact_point
            ));
        }
    }
    Ok(answered)
}

/// Runs every query through the runtime (capsule mode) and the oracle.
pub fn compare_capsule(surface: &Surface, oracle: &Oracle, queries: &[FloorQuery]) -> Tally {
    compare_capsule_at(surface, oracle, queries, ORACLE_WALKABLE_Z)
}

/// [`compare_capsule`] for a file baked with the walkable normal z `wz`.
pub fn compare_capsule_at(surface: &Surface, oracle: &Oracle, queries: &[FloorQuery], wz: f64) -> Tally {
    let mut t = Tally::default();
    for q in queries {
        let ours = surface.find_floor(q.pos, q.down_cm, q.agent, FloorMode::Capsule);
        let truth = oracle.find_floor_capsule(q.pos, agent_shape(q.agent), q.down_cm);
        t.count(ours);
        t.judge(compare_capsule_floor_at(q, ours, truth, wz), |why| {
            format!(
                "pos {:?} down {} agent (R {}, H {}): {why}; oracle {truth:?}",
                q.pos, q.down_cm, q.agent.radius_cm, q.agent.half_height_cm
            )
        });
    }
    t
}

/// Corpus queries of one class, each asked with `down_cm` and `agent`.
pub fn corpus_queries_for(corpus: &[CorpusQuery], class: QueryClass, down_cm: f64, agent: Agent) -> Vec<FloorQuery> {
    corpus
        .iter()
        .filter(|q| q.class == class)
        .map(|q| FloorQuery {
            pos: q.pos,
            down_cm,
            agent,
        })
        .collect()
}

/// Capsule-bottom heights relative to where the capsule rests that probe
/// both ends of the window `[0, down]` (for every `down` of [`DOWNS_CM`]),
/// the hover, and starts that overlap (negative). [Units: cm]
pub const REST_OFFSETS_CM: [f64; 18] = [
    -5.0, -0.01, 0.0, 0.004, 0.01, 1.0, 2.15, 9.99, 10.0, 10.01, 25.0, 47.39, 47.4, 47.41, 199.99, 200.0, 200.01, 260.0,
];

/// Capsule-bottom height (world cm) at which `agent` rests when dropped at
/// `(x, y)` from just above the surface at height `z`, or `None` when it
/// cannot start above it without overlapping or falls further than 300 cm.
pub fn capsule_rest_bottom(oracle: &Oracle, x: f64, y: f64, z: f64, agent: Agent) -> Option<f64> {
    for lift in [30.0, 10.0, 3.0, 1.0] {
        let bottom = z + lift;
        match oracle.find_floor_capsule([x, y, bottom + agent.half_height_cm], agent_shape(agent), 300.0) {
            OracleFloor::StartOverlap => continue,
            OracleFloor::Floor { floor_dist, .. } => return Some(bottom - floor_dist),
            OracleFloor::NoFloor => return None,
        }
    }
    None
}

/// Capsule queries down the vertical line at `(x, y)`: for every surface the
/// oracle's line meets there (between `z_lo − 300` and `z_hi + 300`), capsule
/// bottoms at [`REST_OFFSETS_CM`] above where `agent` rests when dropped onto
/// it, and at the surface itself (a start that overlaps it); plus bottoms
/// above, below and between everything. Each with every `down` of [`DOWNS_CM`].
pub fn capsule_column_queries(
    oracle: &Oracle,
    x: f64,
    y: f64,
    z_lo: f64,
    z_hi: f64,
    agent: Agent,
    out: &mut Vec<FloorQuery>,
) {
    let surfaces = column_heights(oracle, x, y, z_hi + 300.0, z_lo - 300.0, 8);
    let mut bottoms = vec![z_hi + 50.0, z_lo - 50.0, 0.5 * (z_lo + z_hi)];
    for &z in &surfaces {
        bottoms.push(z);
        if let Some(rest) = capsule_rest_bottom(oracle, x, y, z, agent) {
            bottoms.extend(REST_OFFSETS_CM.iter().map(|o| rest + o));
        }
    }
    for b in bottoms {
        for down_cm in DOWNS_CM {
            out.push(FloorQuery {
                pos: [x, y, b + agent.half_height_cm],
                down_cm,
                agent,
            });
        }
    }
}

/// [`capsule_column_queries`] over an `nx × ny` grid spanning `[lo, hi]` in
/// XY, for every agent of `agents`.
pub fn capsule_grid_queries(
    oracle: &Oracle,
    lo: [f64; 3],
    hi: [f64; 3],
    nx: usize,
    ny: usize,
    agents: &[Agent],
) -> Vec<FloorQuery> {
    let mut out = Vec::new();
    for i in 0..nx {
        for j in 0..ny {
            let x = lo[0] + (hi[0] - lo[0]) * i as f64 / (nx - 1).max(1) as f64;
            let y = lo[1] + (hi[1] - lo[1]) * j as f64 / (ny - 1).max(1) as f64;
            for &agent in agents {
                capsule_column_queries(oracle, x, y, lo[2], hi[2], agent, &mut out);
            }
        }
    }
    out
}

// Test-name lists over the shared levels (macros must come before the
// modules that use them: `#[macro_use] mod common;`).

/// Calls `$callback!($($arg)*; name => file, ...)` with every shared level
/// (the one list the per-level tests and [`COVERED`] are made from).
#[allow(unused_macros)]
macro_rules! shared_level_list {
    ($callback:ident!($($arg:tt)*)) => {
        $callback! { $($arg)*;
            avian_character_controller_demo => "avian_character_controller_demo.glb",
            godot_level_mesh => "godot_level_mesh.obj",
            godot_zdm2 => "godot_zdm2.glb",
            landmass_dungeon => "landmass_dungeon.glb",
            landmass_playground_scene_1 => "landmass_playground.glb",
            navcat_bridges => "navcat_bridges.glb",
            navcat_crowd_simulation_stress_test => "navcat_crowd-simulation-stress-test.glb",
            navcat_dungeon => "navcat_dungeon.gltf",
            navcat_lowpoly_fps_tdm => "navcat_lowpoly__fps__tdm__game__map_by_resoforge.glb",
            navcat_nav_test => "navcat_nav-test.glb",
            navcat_proto_level => "navcat_proto-level.glb",
            navcat_tower_big_without_navmesh => "navcat_tower-big.glb",
            recast_dungeon => "recast_dungeon.obj",
            recast_nav_test => "recast_nav_test.obj",
            recast_undulating => "recast_undulating.obj",
        }
    };
}

/// One test per level, `$check(file)`.
#[allow(unused_macros)]
macro_rules! per_level {
    ($check:ident; $($name:ident => $file:literal,)*) => {
        $(
            #[test]
            fn $name() {
                super::$check($file);
            }
        )*
    };
}

/// Every level of the folder and the settings PROVENANCE.md documents for
/// it: `(file, glTF scene, excluded node globs)`. All are Y-up metres.
pub const SHARED_LEVELS: &[(&str, Option<usize>, &[&str])] = &[
    ("avian_character_controller_demo.glb", None, &[]),
    ("godot_level_mesh.obj", None, &[]),
    ("godot_zdm2.glb", None, &[]),
    ("landmass_dungeon.glb", None, &[]),
    // The default scene is a hand-made navmesh; the level is scene 1.
    ("landmass_playground.glb", Some(1), &[]),
    ("navcat_bridges.glb", None, &[]),
    ("navcat_crowd-simulation-stress-test.glb", None, &[]),
    ("navcat_dungeon.gltf", None, &[]),
    ("navcat_lowpoly__fps__tdm__game__map_by_resoforge.glb", None, &[]),
    ("navcat_nav-test.glb", None, &[]),
    ("navcat_proto-level.glb", None, &[]),
    // Node "navmesh" is a reference navmesh, not collision.
    ("navcat_tower-big.glb", None, &["navmesh"]),
    ("recast_dungeon.obj", None, &[]),
    ("recast_nav_test.obj", None, &[]),
    ("recast_undulating.obj", None, &[]),
];

/// Ingests and bakes shared level `file` (from `dir`) with the settings of
/// [`SHARED_LEVELS`]; panics naming the file on any failure.
pub fn bake_shared_level(
    dir: &std::path::Path,
    file: &str,
) -> (walksurf_bake::BakeConfig, Mesh, walksurf_bake::BakeOutput) {
    let &(_, scene, exclude) = SHARED_LEVELS
        .iter()
        .find(|l| l.0 == file)
        .unwrap_or_else(|| panic!("{file} is not in SHARED_LEVELS"));
    let path = dir.join(file);
    let config = walksurf_bake::BakeConfig {
        scene,
        exclude: exclude.iter().map(|&g| g.to_owned()).collect(),
        ..walksurf_bake::BakeConfig::default()
    };
    let (mesh, _) =
        walksurf_bake::stage::ingest::ingest(&path, &config).unwrap_or_else(|e| panic!("{file}: ingest: {e}"));
    let baked = walksurf_bake::bake_file(&path, &config, 1, &walksurf_bake::Silent)
        .unwrap_or_else(|e| panic!("{file}: bake: {e}"));
    (config, mesh, baked)
}

/// Bakes a generated level with the default settings, opens it and builds
/// its oracle; prints the bake's counts under `name`. Panics naming the
/// level on any failure.
pub fn bake_generated(name: &str, mesh: &Mesh) -> (Surface, Oracle) {
    let baked = bake_mesh(mesh, &BakeConfig::default(), 1, &Silent).unwrap_or_else(|e| panic!("{name}: bake: {e}"));
    let surface = Surface::from_bytes(&baked.bytes).unwrap_or_else(|e| panic!("{name}: open: {e}"));
    let oracle = Oracle::new(&mesh.vertices, &mesh.triangles).unwrap_or_else(|e| panic!("{name}: oracle: {e}"));
    let r = &baked.report;
    println!(
        "{name}: {} tris ({} walkable), {} tiles, {} pieces, {} blockers, {} demoted",
        r.triangles, r.walkable_triangles, r.tiles, r.pieces, r.blockers, r.demoted_triangles
    );
    (surface, oracle)
}

/// Panics listing the first of `errors` (disagreements with the oracle out
/// of `n` `kind`), if there are any.
#[track_caller]
pub fn assert_agree(what: &str, errors: &[String], n: usize, kind: &str) {
    if errors.is_empty() {
        return;
    }
    let shown: Vec<&str> = errors.iter().take(12).map(String::as_str).collect();
    panic!(
        "{what}: {} of {n} {kind} disagree with the oracle; first ones:\n  {}",
        errors.len(),
        shown.join("\n  ")
    );
}

/// One sweep query.
#[derive(Clone, Copy, Debug)]
pub struct SweepQuery {
    pub pos: [f64; 3],
    pub delta: [f64; 2],
    pub agent: Agent,
}

impl SweepQuery {
    pub fn new(pos: [f64; 3], delta: [f64; 2]) -> SweepQuery {
        SweepQuery {
            pos,
            delta,
            agent: Agent::DEFAULT,
        }
    }
}

/// Largest gap between R and the distance from a Hit's `impact_point` to
/// the capsule axis at `location`: the distance bound, less what the
/// quantised geometry may move the point. [Units: cm]
pub const MAX_IMPACT_GAP_CM: f64 = 0.02;

/// The rules of DESIGN §2 (as `walksurf validate` applies them, plus: only a
/// Fallback may answer a start the oracle sees overlapping), and a Hit's
/// own consistency: `location = pos + time·delta`, the impact point on the
/// capsule's surface there, `normal` from it toward the axis, unit normals.
/// `Ok(answered)`.
pub fn compare_sweep(q: &SweepQuery, ours: SweepOutcome, truth: OracleSweep) -> Result<bool, String> {
    match (ours, truth) {
        (SweepOutcome::Fallback(_), _) => Ok(false),
        (SweepOutcome::Clear, OracleSweep::Clear) => Ok(true),
        (SweepOutcome::Clear, truth) => Err(format!("FALSE CLEAR: oracle {truth:?}")),
        (SweepOutcome::Hit(h), OracleSweep::Hit { distance, time, .. }) => {
            let err = (h.distance - distance).abs();
            if !sweep_hit_is_finite(&h) {
                Err(format!("non-finite hit {h:?}"))
            } else if err > MAX_DIST_ERR_CM {
                Err(format!("distance {} vs oracle {distance} (diff {err:.6})", h.distance))
            } else if (h.time - time).abs() * len2(q.delta) > MAX_DIST_ERR_CM {
                // (The contract bounds the distance moved: a short move's
                // time may differ more.)
                Err(format!("time {} vs oracle {time}", h.time))
            } else if (len3(h.normal) - 1.0).abs() > 1e-9 || (len3(h.impact_normal) - 1.0).abs() > 1e-9 {
                Err(format!("normals are not unit: {h:?}"))
            } else {
                hit_consistency(q, &h)?;
                Ok(true)
            }
        }
        (ours, truth) => Err(format!("{ours:?} vs oracle {truth:?}")),
    }
}

/// `location`, `impact_point` and `normal` of a Hit agree with each other.
pub fn hit_consistency(q: &SweepQuery, h: &walksurf::SweepHit) -> Result<(), String> {
    let want = [q.pos[0] + h.time * q.delta[0], q.pos[1] + h.time * q.delta[1], q.pos[2]];
    if (0..3).any(|k| (h.location[k] - want[k]).abs() > 1e-9 * (1.0 + q.pos[k].abs())) {
        return Err(format!("location {:?} is not pos + time·delta = {want:?}", h.location));
    }
    if (h.distance - h.time * len2(q.delta)).abs() > 1e-9 * (1.0 + h.distance) {
        return Err(format!("distance {} is not time·|delta|", h.distance));
    }
    let r = q.agent.radius_cm;
    let half = q.agent.half_height_cm - r;
    let z = h.impact_point[2].clamp(h.location[2] - half, h.location[2] + half);
    let axis = [h.location[0], h.location[1], z];
    let to_axis = [
        axis[0] - h.impact_point[0],
        axis[1] - h.impact_point[1],
        axis[2] - h.impact_point[2],
    ];
    let d = len3(to_axis);
    if (d - r).abs() > MAX_IMPACT_GAP_CM {
        return Err(format!(
            "impact_point {:?} is {d} from the axis, not R = {r}",
            h.impact_point
        ));
    }
    let cos = (0..3).map(|k| to_axis[k] * h.normal[k]).sum::<f64>() / d;
    if cos < 0.999 {
        return Err(format!(
            "normal {:?} does not point from the impact point to the axis",
            h.normal
        ));
    }
    Ok(())
}

fn len2(v: [f64; 2]) -> f64 {
    (v[0] * v[0] + v[1] * v[1]).sqrt()
}

pub fn len3(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

/// Runs every sweep through the runtime and the oracle ([`compare_sweep`]);
/// a `Clear` counts as a floor-less answer, a `Hit` as a floor.
pub fn compare_sweep_tally(surface: &Surface, oracle: &Oracle, queries: &[SweepQuery]) -> Tally {
    let mut t = Tally::default();
    for q in queries {
        let ours = surface.sweep_horizontal(q.pos, q.delta, q.agent);
        let truth = oracle.sweep(q.pos, q.delta, agent_shape(q.agent));
        t.n += 1;
        match ours {
            SweepOutcome::Fallback(r) => *t.fallbacks.entry(r.as_str()).or_default() += 1,
            SweepOutcome::Hit(_) => t.floors += 1,
            SweepOutcome::Clear => {}
        }
        t.judge(compare_sweep(q, ours, truth), |why| {
            format!(
                "sweep pos {:?} delta {:?} agent (R {}, H {}): {why}",
                q.pos, q.delta, q.agent.radius_cm, q.agent.half_height_cm
            )
        });
    }
    t
}

/// The fuzzers' generator (xorshift64), seeded per stream and seed.
pub struct Rng(u64);
impl Rng {
    /// Seed `seed` of the stream `stream`, its first draws skipped.
    pub fn seeded(stream: u64, seed: u64) -> Rng {
        let mut rng = Rng(stream ^ (seed.wrapping_mul(0x2545F4914F6CDD1D) + 1));
        for _ in 0..20 {
            rng.next();
        }
        rng
    }

    pub fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }

    /// One of `v`, uniformly.
    pub fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[((self.next() * v.len() as f64) as usize).min(v.len() - 1)]
    }

    /// One of the shapes a fuzzer tries: the default agent, a slimmer
    /// one, any radius up to the largest, a short one.
    pub fn agent(&mut self) -> Agent {
        match (self.next() * 4.0) as usize {
            0 => Agent::DEFAULT,
            1 => Agent {
                radius_cm: 30.0,
                half_height_cm: 90.0,
            },
            2 => Agent {
                radius_cm: self.range(0.5, 42.0),
                half_height_cm: 96.0,
            },
            _ => Agent {
                radius_cm: 20.0,
                half_height_cm: 20.0,
            },
        }
    }
}

/// The value of the environment variable `name` (a fuzzer's knob), else
/// `default`.
pub fn knob<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// The seeds a fuzzer runs: `FUZZ_SEEDS` (12) from `FUZZ_FIRST` (0).
pub fn fuzz_seeds() -> std::ops::Range<u64> {
    let first = knob("FUZZ_FIRST", 0);
    first..first + knob("FUZZ_SEEDS", 12)
}

/// Bisects `steps` times between `yes` (where `holds`) and `no` (where
/// not): the last point found where it holds, as near `no` as that gets.
pub fn edge(yes: f64, no: f64, steps: usize, holds: impl Fn(f64) -> bool) -> f64 {
    bisect(yes, no, steps, holds).0
}

/// [`edge`], with the first point found where it does not hold.
pub fn bisect(mut yes: f64, mut no: f64, steps: usize, holds: impl Fn(f64) -> bool) -> (f64, f64) {
    for _ in 0..steps {
        let mid = 0.5 * (yes + no);
        if holds(mid) {
            yes = mid;
        } else {
            no = mid;
        }
    }
    (yes, no)
}
