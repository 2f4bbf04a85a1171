//! What the parry3d comparison benches (`shared_levels`, `cold`) share: the
//! ground corpus, answers reduced to a distance, parry's capsule casts,
//! accuracy against the exact oracle, and the timing loop.

use criterion::black_box;
use parry3d::math::{Isometry, Point, Vector};
use parry3d::query::ShapeCastOptions;
use parry3d::shape::{Capsule, TriMesh};
use std::time::{Duration, Instant};
use walksurf::{Agent, DEFAULT_FLOOR_DOWN_CM, FloorOutcome, SweepOutcome};
use walksurf_bake::stage::ingest::Mesh;
use walksurf_oracle::corpus::{CorpusConfig, CorpusQuery, QueryClass};
use walksurf_oracle::{AgentShape, Oracle, OracleFloor, OracleSweep};

/// Ground queries drawn from the oracle's corpus, and its seed.
pub const QUERIES: usize = 2000;
pub const SEED: u64 = 1;
/// An answer further than this from the exact oracle's is counted as off
/// (walksurf's contract is 0.01 cm). [Units: cm]
pub const OFF_CM: f64 = 0.05;

/// The oracle's ground queries on `mesh`, in corpus order.
pub fn ground_corpus(name: &str, oracle: &Oracle, mesh: &Mesh, walkable_normal_z: f64) -> Vec<CorpusQuery> {
    let config = CorpusConfig {
        seed: SEED,
        ground: QUERIES,
        abnormal: 0,
        walkable_normal_z,
        ..CorpusConfig::default()
    };
    let ground: Vec<_> = walksurf_oracle::corpus::generate(oracle, &mesh.vertices, &mesh.triangles, &config)
        .into_iter()
        .filter(|q| q.class == QueryClass::Ground)
        .collect();
    assert!(!ground.is_empty(), "{name}: no ground queries");
    ground
}

/// The oracle's capsule for `agent`.
pub fn agent_shape(agent: Agent) -> AgentShape {
    AgentShape {
        radius_cm: agent.radius_cm,
        half_height_cm: agent.half_height_cm,
    }
}

/// The bounding box of `vertices`: lowest and highest corner.
pub fn bbox(vertices: &[[f64; 3]]) -> ([f64; 3], [f64; 3]) {
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    for v in vertices {
        for k in 0..3 {
            lo[k] = lo[k].min(v[k]);
            hi[k] = hi[k].max(v[k]);
        }
    }
    (lo, hi)
}

/// `p` in parry's f32 frame, centred on `centre`.
pub fn to_local(centre: [f64; 3], p: &[f64; 3]) -> Point<f32> {
    Point::new(
        (p[0] - centre[0]) as f32,
        (p[1] - centre[1]) as f32,
        (p[2] - centre[2]) as f32,
    )
}

/// One query's answer, reduced to what the tables need.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Answer {
    Fallback,
    /// Nothing found (no floor; a clear sweep).
    Nothing,
    /// Distance moved to the contact, cm.
    At(f64),
}

impl From<FloorOutcome> for Answer {
    #[inline]
    fn from(o: FloorOutcome) -> Answer {
        match o {
            FloorOutcome::Floor(h) => Answer::At(h.floor_dist),
            FloorOutcome::NoFloor => Answer::Nothing,
            FloorOutcome::Fallback(_) => Answer::Fallback,
        }
    }
}

impl From<SweepOutcome> for Answer {
    #[inline]
    fn from(o: SweepOutcome) -> Answer {
        match o {
            SweepOutcome::Hit(h) => Answer::At(h.distance),
            SweepOutcome::Clear => Answer::Nothing,
            SweepOutcome::Fallback(_) => Answer::Fallback,
        }
    }
}

/// A start overlap is a `Fallback`.
impl From<OracleFloor> for Answer {
    fn from(o: OracleFloor) -> Answer {
        match o {
            OracleFloor::Floor { floor_dist, .. } => Answer::At(floor_dist),
            OracleFloor::NoFloor => Answer::Nothing,
            OracleFloor::StartOverlap => Answer::Fallback,
        }
    }
}

/// A start overlap is a `Fallback`.
impl From<OracleSweep> for Answer {
    fn from(o: OracleSweep) -> Answer {
        match o {
            OracleSweep::Hit { distance, .. } => Answer::At(distance),
            OracleSweep::Clear => Answer::Nothing,
            OracleSweep::StartOverlap => Answer::Fallback,
        }
    }
}

/// How far `a` is from the exact answer `truth` (∞ when one finds
/// something and the other not).
pub fn error_cm(a: Answer, truth: Answer) -> f64 {
    match (a, truth) {
        (Answer::At(a), Answer::At(b)) => (a - b).abs(),
        (Answer::Nothing, Answer::Nothing) => 0.0,
        _ => f64::INFINITY,
    }
}

/// A distance in cm for the tables; ∞ means a contact found by one side only.
pub fn cm(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.4} cm")
    } else {
        "missed/extra contact".to_owned()
    }
}

/// parry3d's copy of a level: the f32 `TriMesh` and the agent's capsule.
pub struct Parry {
    pub trimesh: TriMesh,
    pub capsule: Capsule,
}

impl Parry {
    pub fn new(trimesh: TriMesh, agent: Agent) -> Parry {
        let capsule = Capsule::new_z((agent.half_height_cm - agent.radius_cm) as f32, agent.radius_cm as f32);
        Parry { trimesh, capsule }
    }

    /// The capsule centred at `p` cast down `DEFAULT_FLOOR_DOWN_CM`.
    #[inline]
    pub fn floor(&self, p: Point<f32>) -> Answer {
        self.cast(p, -Vector::z(), DEFAULT_FLOOR_DOWN_CM as f32)
    }

    /// The capsule centred at `p` cast sideways by `d`, cm.
    #[inline]
    pub fn sweep(&self, p: Point<f32>, d: [f64; 2]) -> Answer {
        self.cast(p, Vector::new(d[0] as f32, d[1] as f32, 0.0), 1.0)
    }

    #[inline]
    fn cast(&self, p: Point<f32>, vel: Vector<f32>, max: f32) -> Answer {
        let hit = parry3d::query::cast_shapes(
            &Isometry::translation(p.x, p.y, p.z),
            &vel,
            &self.capsule,
            &Isometry::identity(),
            &Vector::zeros(),
            &self.trimesh,
            ShapeCastOptions::with_max_time_of_impact(max),
        );
        match black_box(hit) {
            Ok(Some(h)) => Answer::At(h.time_of_impact as f64 * vel.norm() as f64),
            _ => Answer::Nothing,
        }
    }
}

/// How right walksurf's and parry's answers to a batch are, against the
/// exact oracle.
#[derive(Clone, Copy, Debug, Default)]
pub struct Accuracy {
    pub n: usize,
    pub fallbacks: usize,
    /// Largest error of a walksurf answer, cm.
    pub walksurf_max_err: f64,
    /// parry answers further than `OFF_CM` from the oracle's (∞ counts).
    pub parry_off: usize,
    pub parry_max_err: f64,
}

impl Accuracy {
    pub fn add(&mut self, truth: Answer, walksurf: Answer, parry: Answer) {
        self.n += 1;
        match walksurf {
            Answer::Fallback => self.fallbacks += 1,
            a => self.walksurf_max_err = self.walksurf_max_err.max(error_cm(a, truth)),
        }
        let e = error_cm(parry, truth);
        self.parry_max_err = self.parry_max_err.max(e);
        self.parry_off += usize::from(e > OFF_CM);
    }

    /// Share of the queries walksurf answers (no Fallback), %.
    pub fn answered_pct(&self) -> f64 {
        100.0 * (self.n - self.fallbacks) as f64 / self.n as f64
    }

    /// Markdown cells: walksurf max error | parry off | parry max error.
    pub fn cells(&self) -> String {
        format!(
            "{} | {} of {} | {}",
            cm(self.walksurf_max_err),
            self.parry_off,
            self.n,
            cm(self.parry_max_err)
        )
    }
}

/// Median ns per query over timed runs of `pass` (a pass over `n` queries):
/// at least `passes`, for at least `time`.
pub fn ns_per_query(n: usize, passes: usize, time: Duration, mut pass: impl FnMut() -> usize) -> f64 {
    black_box(pass()); // warm-up
    let start = Instant::now();
    let mut ns = Vec::new();
    while ns.len() < passes || (start.elapsed() < time && ns.len() < 1000) {
        let t = Instant::now();
        black_box(pass());
        ns.push(t.elapsed().as_nanos() as f64 / n as f64);
    }
    ns.sort_by(f64::total_cmp);
    ns[ns.len() / 2]
}
