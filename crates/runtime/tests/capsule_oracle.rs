//! Capsule `find_floor` against the exact oracle on generated levels
//! (DESIGN §2, §7, §9): every non-Fallback answer must agree with the
//! oracle's capsule cast (same floor / no floor, `floor_dist` within
//! 0.01 cm, normal within 1e-3, same walkable flag, `location` and
//! `impact_point` consistent with them); a capsule that starts overlapping
//! geometry must not be answered; ground queries must be answered ≥ 95%;
//! agents wider than the bake's largest must get `BudgetExceeded`.
//!
//! Each level is baked with `bake_mesh` and queried four ways:
//! * hand-derived spot checks: the closed forms of DESIGN §9 (face
//!   `Zplane + R·(|N| − 1)`, sphere onto an edge or a vertex). The oracle must
//!   give the closed-form answer (so the level is what the test thinks it
//!   is); the runtime must agree or fall back, and must answer (or say
//!   `InitialOverlap`, for a start inside geometry) where the answer is
//!   unambiguous;
//! * grids of columns: in each, capsule bottoms around where each agent
//!   rests on every surface of the column (both window ends, the hover, and
//!   starts that overlap), each with `down` 47.4, 0, 10 and 200 cm;
//! * the seeded corpus of DESIGN §7 (ground and abnormal) generated for
//!   each agent of [`CAPSULE_AGENTS`] — (42, 96), (30, 90), (20, 20) — each
//!   query with the four `down`s;
//! * agents wider than the bake's largest radius at the spots and on part
//!   of the corpus: `Fallback(BudgetExceeded)`.

mod common;

use common::*;
use std::time::Instant;
use walksurf::{Agent, DEFAULT_FLOOR_DOWN_CM, FallbackReason, FloorMode, FloorOutcome, Surface};
use walksurf_bake::{BakeConfig, Mesh, Silent, bake_mesh};
use walksurf_oracle::corpus::{CorpusConfig, QueryClass, generate};
use walksurf_oracle::{Oracle, OracleFloor};

/// Columns per axis of the grid over a whole level.
const GRID: usize = 21;
/// Ground and abnormal corpus queries per level and agent.
const CORPUS: usize = 3000;
/// Ground queries (default `down`) must be answered at least this often.
const MIN_GROUND_ANSWERED_PCT: f64 = 95.0;
/// A level must yield at least this many ground queries per agent.
const MIN_GROUND_QUERIES: usize = 300;
/// Corpus queries per level also asked with each oversized agent.
const OVERSIZED_QUERIES: usize = 500;
/// A hand-derived floor distance and the oracle's agree within this. [Units: cm]
const CLOSED_FORM_DIST_CM: f64 = 1e-6;
/// A hand-derived normal and the oracle's agree within this (max component).
const CLOSED_FORM_NORMAL: f64 = 1e-7;

const D: f64 = DEFAULT_FLOOR_DOWN_CM;
const A42: Agent = CAPSULE_AGENTS[0];
const A30: Agent = CAPSULE_AGENTS[1];
const A20: Agent = CAPSULE_AGENTS[2];
/// Wider than the default bake's largest agent (R 42): never answered.
const OVERSIZED: [Agent; 2] = [
    Agent {
        radius_cm: 42.5,
        half_height_cm: 96.0,
    },
    Agent {
        radius_cm: 60.0,
        half_height_cm: 120.0,
    },
];

type V3 = [f64; 3];

// ---------------------------------------------------------------------------
// Closed forms (DESIGN §9) of the bottom sphere, centre `c`, radius `r`,
// moving straight down. Each gives the distance moved to the contact and the
// contact normal; the caller knows the contact is a real one (the contact
// point lies on the face / edge / vertex it names).

/// What the oracle must answer at a spot.
#[derive(Clone, Copy, Debug)]
enum Expect {
    Floor {
        dist: f64,
        normal: V3,
    },
    NoFloor,
    /// The capsule starts overlapping (or touching) geometry.
    Overlap,
}

/// Onto the upper side of the plane `z = a·x + b·y + k`:
/// `c.z − t = a·c.x + b·c.y + k + r·|N|`, normal `(−a, −b, 1)/|N|`.
fn onto_plane(c: V3, r: f64, [a, b, k]: V3) -> Expect {
    let n = (a * a + b * b + 1.0).sqrt();
    Expect::Floor {
        dist: c[2] - (a * c[0] + b * c[1] + k) - r * n,
        normal: [-a / n, -b / n, 1.0 / n],
    }
}

/// Onto the horizontal line through `p` with horizontal unit direction `u`:
/// the centre is `d` from the line horizontally, so the contact comes when
/// the vertical gap is `√(r² − d²)`; normal `(d⃗, √(r² − d²))/r`.
fn onto_line(c: V3, r: f64, p: V3, u: [f64; 2]) -> Expect {
    let w = [c[0] - p[0], c[1] - p[1]];
    let along = w[0] * u[0] + w[1] * u[1];
    let d = [w[0] - along * u[0], w[1] - along * u[1]];
    let v = (r * r - d[0] * d[0] - d[1] * d[1]).sqrt();
    Expect::Floor {
        dist: c[2] - p[2] - v,
        normal: [d[0] / r, d[1] / r, v / r],
    }
}

/// Onto the point `p`: `t = (c.z − p.z) − √(r² − |c.xy − p.xy|²)`.
fn onto_point(c: V3, r: f64, p: V3) -> Expect {
    let d = [c[0] - p[0], c[1] - p[1]];
    let v = (r * r - d[0] * d[0] - d[1] * d[1]).sqrt();
    Expect::Floor {
        dist: c[2] - p[2] - v,
        normal: [d[0] / r, d[1] / r, v / r],
    }
}

/// The first of several contacts (each a real one).
fn first(cands: &[Expect]) -> Expect {
    let dist = |e: &Expect| match e {
        Expect::Floor { dist, .. } => *dist,
        _ => f64::INFINITY,
    };
    cands
        .iter()
        .copied()
        .min_by(|a, b| dist(a).total_cmp(&dist(b)))
        .unwrap_or(Expect::NoFloor)
}

// ---------------------------------------------------------------------------
// Spots, grids and parts of levels.

#[derive(Clone, Copy, Debug)]
struct Spot {
    q: FloorQuery,
    expect: Expect,
    /// The runtime must answer (for [`Expect::Overlap`]: must say
    /// `InitialOverlap`).
    must: bool,
    what: &'static str,
}

/// A spot for `agent` with its capsule bottom at `bottom`; `contact` gets the
/// bottom sphere's centre and radius and returns the contact (a floor
/// beyond `down` becomes `NoFloor`).
fn spot(
    what: &'static str,
    agent: Agent,
    [x, y]: [f64; 2],
    bottom: f64,
    down_cm: f64,
    must: bool,
    contact: impl Fn(V3, f64) -> Expect,
) -> Spot {
    let r = agent.radius_cm;
    let c = [x, y, bottom + r];
    let expect = match contact(c, r) {
        Expect::Floor { dist, .. } if dist > down_cm => Expect::NoFloor,
        e => e,
    };
    Spot {
        q: FloorQuery {
            pos: [x, y, bottom + agent.half_height_cm],
            down_cm,
            agent,
        },
        expect,
        must,
        what,
    }
}

/// The capsule bottom at which `agent` rests at `xy` on the contact that
/// `contact` describes (contacts move with the capsule: evaluate it from a
/// reference height).
fn rest_bottom(agent: Agent, [x, y]: [f64; 2], contact: impl Fn(V3, f64) -> Expect) -> f64 {
    let r = agent.radius_cm;
    let reference = 1.0e4;
    match contact([x, y, reference + r], r) {
        Expect::Floor { dist, .. } => reference - dist,
        e => panic!("no contact to rest on at {x}, {y}: {e:?}"),
    }
}

/// A spot whose capsule starts overlapping geometry.
fn overlap(what: &'static str, agent: Agent, xy: [f64; 2], bottom: f64, must: bool) -> Spot {
    spot(what, agent, xy, bottom, D, must, |_, _| Expect::Overlap)
}

/// A dense grid of columns `lo..hi` (XY) with `n` columns per axis.
#[derive(Clone, Copy, Debug)]
struct Grid {
    lo: [f64; 2],
    hi: [f64; 2],
    n: [usize; 2],
}

/// Spots and local grids of one piece of a level, in builder coordinates.
#[derive(Clone, Debug, Default)]
struct Part {
    spots: Vec<Spot>,
    grids: Vec<Grid>,
}

impl Part {
    fn grid(&mut self, lo: [f64; 2], hi: [f64; 2], n: [usize; 2]) {
        self.grids.push(Grid { lo, hi, n });
    }

    /// The part moved by `o` (the builder's offset when it was added).
    fn shifted(mut self, o: V3) -> Part {
        for s in &mut self.spots {
            s.q.pos = [0, 1, 2].map(|k| s.q.pos[k] + o[k]);
        }
        for g in &mut self.grids {
            g.lo = [g.lo[0] + o[0], g.lo[1] + o[1]];
            g.hi = [g.hi[0] + o[0], g.hi[1] + o[1]];
        }
        self
    }

    fn extend(&mut self, other: Part) {
        self.spots.extend(other.spots);
        self.grids.extend(other.grids);
    }
}

/// Adds `part` to `b` with its offset set to `at`, and returns the part in
/// world coordinates.
fn place(b: &mut LevelBuilder, at: V3, part: fn(&mut LevelBuilder) -> Part) -> Part {
    b.offset = at;
    part(b).shifted(at)
}

// ---------------------------------------------------------------------------
// The level runner.

/// Bakes, queries and reports one level; panics (after printing everything)
/// on any disagreement, a must-answer spot that fell back, an oversized
/// agent that was answered, or a ground answered rate below the minimum.
fn run_level(name: &str, mesh: &Mesh, part: &Part) {
    let start = Instant::now();
    let (surface, oracle) = bake_generated(name, mesh);
    let mut problems = check_spots(name, &surface, &oracle, &part.spots);

    // Grids: the whole level, then the part's own.
    let (mut lo, mut hi) = bounds(mesh);
    for k in 0..2 {
        lo[k] -= 60.0;
        hi[k] += 60.0;
    }
    let mut queries = capsule_grid_queries(&oracle, lo, hi, GRID, GRID, &CAPSULE_AGENTS);
    for g in &part.grids {
        queries.extend(capsule_grid_queries(
            &oracle,
            [g.lo[0], g.lo[1], lo[2]],
            [g.hi[0], g.hi[1], hi[2]],
            g.n[0],
            g.n[1],
            &CAPSULE_AGENTS,
        ));
    }
    let grid = compare_capsule(&surface, &oracle, &queries);
    println!("  grid                      {}", grid.summary());
    let mut all = vec![("grid".to_owned(), grid)];

    // The corpus of each agent.
    let mut ground_rates = Vec::new();
    let mut oversized_at = Vec::new();
    for agent in CAPSULE_AGENTS {
        let cfg = CorpusConfig {
            seed: 0xCA95,
            ground: scaled(CORPUS),
            abnormal: scaled(CORPUS),
            agent: agent_shape(agent),
            ..CorpusConfig::default()
        };
        let corpus = generate(&oracle, &mesh.vertices, &mesh.triangles, &cfg);
        oversized_at.extend(
            corpus
                .iter()
                .take(OVERSIZED_QUERIES / CAPSULE_AGENTS.len())
                .map(|q| q.pos),
        );
        for class in [QueryClass::Ground, QueryClass::Abnormal] {
            for down in DOWNS_CM {
                let t = compare_capsule(&surface, &oracle, &corpus_queries_for(&corpus, class, down, agent));
                let label =
                    format!("R{} H{} {class:?} down {down}", agent.radius_cm, agent.half_height_cm).to_lowercase();
                println!("  {label:<25} {}", t.summary());
                if class == QueryClass::Ground && down == D {
                    ground_rates.push((agent, t.clone()));
                }
                all.push((label, t));
            }
        }
    }

    // Oversized agents.
    oversized_at.extend(part.spots.iter().map(|s| s.q.pos));
    let mut oversized_answered = 0;
    for pos in &oversized_at {
        for agent in OVERSIZED {
            for down in DOWNS_CM {
                let ours = surface.find_floor(*pos, down, agent, FloorMode::Capsule);
                if ours != FloorOutcome::Fallback(FallbackReason::BudgetExceeded) {
                    oversized_answered += 1;
                    if oversized_answered <= 5 {
                        problems.push(format!(
                            "oversized agent (R {}) at {pos:?} down {down}: {ours:?}, not BudgetExceeded",
                            agent.radius_cm
                        ));
                    }
                }
            }
        }
    }
    println!(
        "  oversized agents          n {:>7}  not BudgetExceeded {oversized_answered}",
        oversized_at.len() * OVERSIZED.len() * DOWNS_CM.len()
    );
    println!("  {name}: {:.2} s", start.elapsed().as_secs_f64());

    // Fidelity first, then the rest.
    for (label, t) in &all {
        t.assert_no_errors(&format!("{name}, {label}"));
    }
    assert!(problems.is_empty(), "{name}:\n  {}", problems.join("\n  "));
    for (agent, t) in &ground_rates {
        assert!(
            t.n >= MIN_GROUND_QUERIES,
            "{name}: only {} ground queries could be generated for {agent:?}",
            t.n
        );
        assert!(
            t.answered_pct() >= MIN_GROUND_ANSWERED_PCT,
            "{name}: ground queries of {agent:?} answered {:.2}% < {MIN_GROUND_ANSWERED_PCT}% ({})",
            t.answered_pct(),
            t.summary()
        );
    }
}

/// The oracle must give the hand-derived answer (else the test itself is
/// wrong: panics at once); the runtime must agree with the oracle, and
/// answer (or say `InitialOverlap`) where the spot says so. Returns the
/// runtime's failures.
fn check_spots(name: &str, surface: &Surface, oracle: &Oracle, spots: &[Spot]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut answered = 0;
    for s in spots {
        let q = s.q;
        let truth = oracle.find_floor_capsule(q.pos, agent_shape(q.agent), q.down_cm);
        let premise = match (s.expect, truth) {
            (Expect::NoFloor, OracleFloor::NoFloor) | (Expect::Overlap, OracleFloor::StartOverlap) => true,
            (
                Expect::Floor { dist, normal },
                OracleFloor::Floor {
                    floor_dist, normal: n, ..
                },
            ) => {
                (floor_dist - dist).abs() <= CLOSED_FORM_DIST_CM
                    && (0..3).all(|k| (n[k] - normal[k]).abs() <= CLOSED_FORM_NORMAL)
            }
            _ => false,
        };
        assert!(
            premise,
            "{name}: spot \"{}\" {q:?}: the oracle says {truth:?}, the closed form {:?}",
            s.what, s.expect
        );
        let ours = surface.find_floor(q.pos, q.down_cm, q.agent, FloorMode::Capsule);
        let label = format!(
            "spot \"{}\" pos {:?} down {} agent (R {}, H {})",
            s.what, q.pos, q.down_cm, q.agent.radius_cm, q.agent.half_height_cm
        );
        if let Err(why) = compare_capsule_floor(&q, ours, truth) {
            problems.push(format!("{label}: {why}"));
            continue;
        }
        match (s.expect, ours) {
            (Expect::Overlap, FloorOutcome::Fallback(FallbackReason::InitialOverlap)) => answered += 1,
            (Expect::Overlap, _) if s.must => problems.push(format!("{label}: {ours:?}, not InitialOverlap")),
            (_, FloorOutcome::Fallback(_)) if s.must => {
                problems.push(format!("{label}: {ours:?}, but the answer ({truth:?}) is unambiguous"))
            }
            (_, FloorOutcome::Fallback(_)) => {}
            _ => answered += 1,
        }
    }
    println!(
        "  spots                     {answered} of {} answered (or InitialOverlap), {} must",
        spots.len(),
        spots.iter().filter(|s| s.must).count()
    );
    problems
}

// ---------------------------------------------------------------------------
// Parts of levels. Each builds geometry around its own origin and returns
// the hand-derived spots and local grids.

/// A flat floor `[100, 1900]²` at z = 0: every window case, its boundary
/// edge and corner, and starts that overlap it.
fn part_flat(b: &mut LevelBuilder) -> Part {
    b.floor([100.0, 1900.0], [100.0, 1900.0], 0.0, Winding::Up);
    let floor = [0.0, 0.0, 0.0];
    let xy = [1000.3, 700.6];
    let mut p = Part::default();
    for a in CAPSULE_AGENTS {
        let face = move |c: V3, r: f64| onto_plane(c, r, floor);
        p.spots.extend([
            spot("hover", a, xy, 2.15, D, true, face),
            spot("window end", a, xy, 47.0, D, true, face),
            spot("beyond the window", a, xy, 48.0, D, true, face),
            spot("down 0", a, xy, 0.5, 0.0, true, face),
            spot("down 10", a, xy, 9.0, 10.0, true, face),
            spot("beyond down 10", a, xy, 11.0, 10.0, true, face),
            spot("down 200", a, xy, 150.0, 200.0, true, face),
            spot("a hair above", a, xy, 0.004, D, true, face),
            overlap("bottom 1 cm into the floor", a, xy, -1.0, true),
            overlap("bottom 0.01 cm into the floor", a, xy, -0.01, true),
            overlap("touching", a, xy, 0.0, false),
            // The floor's boundary edge x = 100, 15 cm away.
            spot("boundary edge", a, [85.0, 1000.3], 2.15, D, true, |c, r| {
                onto_line(c, r, [100.0, 0.0, 0.0], [0.0, 1.0])
            }),
            // Its corner (100, 100): beyond both edges' ends.
            spot("corner", a, [90.0, 88.0], 2.15, D, true, |c, r| {
                onto_point(c, r, [100.0, 100.0, 0.0])
            }),
            spot("beside the floor", a, [40.0, 1000.3], 2.15, 200.0, true, |_, _| {
                Expect::NoFloor
            }),
        ]);
    }
    p.grid([60.0, 980.0], [140.0, 1020.0], [17, 3]);
    p.grid([60.0, 60.0], [140.0, 140.0], [9, 9]);
    p
}

/// A 30° ramp (0 → 200 cm over `[0, run]`, y in `[0, 200]`) between a floor
/// and a landing box: face contact `Zplane + R·(|N| − 1)`, the concave foot
/// and the convex top edge.
fn part_slope(b: &mut LevelBuilder) -> Part {
    let tan = 30f64.to_radians().tan();
    let run = 200.0 / tan;
    b.floor([-400.0, 1100.0], [-300.0, 500.0], 0.0, Winding::Up)
        .ramp_x([0.0, run], [0.0, 200.0], [0.0, 200.0])
        .cuboid([run, 0.0, 0.0], [run + 350.0, 200.0, 200.0]);
    let slope = [tan, 0.0, 0.0];
    let floor = [0.0, 0.0, 0.0];
    let top = [0.0, 0.0, 200.0];
    let n_len = (1.0 + tan * tan).sqrt();
    let y = 100.3;
    let mut p = Part::default();
    for a in CAPSULE_AGENTS {
        let r = a.radius_cm;
        let x = 0.5 * run; // contact R·sin 30° uphill, well inside the ramp
        let rest = tan * x + r * (n_len - 1.0);
        let face = move |c: V3, r: f64| onto_plane(c, r, slope);
        p.spots.extend([
            spot("slope hover", a, [x, y], rest + 2.15, D, true, face),
            spot("slope from 40 cm", a, [x, y], rest + 40.0, D, true, face),
            spot("slope down 200", a, [x, y], rest + 150.0, 200.0, true, face),
            overlap("into the slope", a, [x, y], rest - 1.0, true),
            spot("top", a, [run + 100.0, y], 202.15, D, true, move |c, r| {
                onto_plane(c, r, top)
            }),
            spot("floor", a, [-200.0, -100.0], 2.15, D, true, move |c, r| {
                onto_plane(c, r, floor)
            }),
        ]);
    }
    // At the foot (x = −10): the slope's contact point (x + R/2) is on the
    // ramp; for R 42 the slope is touched 0.72 cm before the floor, for R 30
    // the floor 1.13 cm before the slope; the crease edge comes later.
    for a in [A42, A30] {
        p.spots.push(spot("foot", a, [-10.0, y], 2.15, D, true, move |c, r| {
            first(&[
                onto_plane(c, r, slope),
                onto_plane(c, r, floor),
                onto_line(c, r, [0.0, 0.0, 0.0], [0.0, 1.0]),
            ])
        }));
    }
    // Just below the convex top edge: for R 42 and 30 both faces' contact
    // points are off their faces, the edge is the contact; for R 20 at 15 cm
    // the slope's contact point is still on the slope.
    for (a, dx) in [(A42, 10.0), (A30, 10.0), (A20, 15.0)] {
        let x = run - dx;
        p.spots.push(spot(
            "below the top edge",
            a,
            [x, y],
            200.0 + 2.15,
            D,
            true,
            move |c, r| {
                if a == A20 {
                    onto_plane(c, r, slope)
                } else {
                    onto_line(c, r, [run, 0.0, 200.0], [0.0, 1.0])
                }
            },
        ));
    }
    p.grid([-60.0, 80.0], [60.0, 120.0], [25, 3]);
    p.grid([run - 60.0, 80.0], [run + 60.0, 120.0], [25, 3]);
    p
}

/// A 20 cm step (a box `[0, 600] × [−300, 300]`) on a floor, and a flight of
/// ten 20 cm steps with 30 cm treads: edge contact on the nosing with the
/// capsule centre just past it.
fn part_step(b: &mut LevelBuilder) -> Part {
    b.floor([-600.0, 1000.0], [-400.0, 1000.0], 0.0, Winding::Up)
        .cuboid([0.0, -300.0, 0.0], [600.0, 300.0, 20.0])
        .stairs(0.0, [500.0, 700.0], 0.0, 10, 30.0, 20.0)
        .cuboid([300.0, 500.0, 0.0], [700.0, 700.0, 200.0]);
    let nosing = [0.0, 0.0, 20.0];
    let floor = [0.0, 0.0, 0.0];
    let y = 10.3;
    let mut p = Part::default();
    for a in CAPSULE_AGENTS {
        let r = a.radius_cm;
        for d in [0.5, 1.0, 5.0, 10.0, 20.0, 29.5, 30.0] {
            if d >= 0.75 * r {
                continue; // the floor would come first, or a grazing contact
            }
            // Hover 2.15 cm above where the sphere rests on the nosing.
            let bottom = 20.0 + (r * r - d * d).sqrt() + 2.15 - r;
            p.spots
                .push(spot("past the nosing", a, [-d, y], bottom, D, true, move |c, r| {
                    first(&[onto_line(c, r, nosing, [0.0, 1.0]), onto_plane(c, r, floor)])
                }));
        }
        p.spots
            .push(spot("on the step", a, [10.0, y], 22.15, D, true, move |c, r| {
                onto_plane(c, r, [0.0, 0.0, 20.0])
            }));
        p.spots
            .push(spot("over the nosing", a, [0.0, y], 22.15, D, false, move |c, r| {
                onto_line(c, r, nosing, [0.0, 1.0])
            }));
        // 10 cm past the nosing, bottom 10 cm up: the sphere is 33.5 cm
        // (R 42) / 24.4 cm (R 30) / 10.2 cm (R 20) from the nosing.
        p.spots.push(overlap("into the nosing", a, [-10.0, y], 10.0, true));
    }
    // The flight: centre 9.7 cm before the nosing of step k (x = 30k, top
    // 20(k+1)), over tread k − 1. Candidates: that tread, the nosings ahead
    // within R.
    let flight = |c: V3, r: f64| {
        let mut cands = Vec::new();
        for i in 0..10 {
            let (x0, z) = (30.0 * i as f64, 20.0 * (i + 1) as f64);
            if (x0..x0 + 30.0).contains(&c[0]) {
                cands.push(onto_plane(c, r, [0.0, 0.0, z]));
            }
            if x0 > c[0] && x0 - c[0] < r {
                cands.push(onto_line(c, r, [x0, 0.0, z], [0.0, 1.0]));
            }
        }
        first(&cands)
    };
    for a in [A42, A20] {
        for k in 1..10 {
            let xy = [30.0 * k as f64 - 9.7, 600.3];
            let rest = rest_bottom(a, xy, flight);
            p.spots
                .push(spot("stairs, before a nosing", a, xy, rest + 2.15, D, true, flight));
            p.spots
                .push(spot("stairs, from a step higher", a, xy, rest + 22.15, D, true, flight));
        }
    }
    p.grid([-45.0, 0.0], [15.0, 20.0], [31, 3]);
    p.grid([-30.0, 590.0], [320.0, 610.0], [36, 2]);
    p
}

/// A 50 cm platform (box `[0, 500]²`) on a floor: vertex contact at its
/// outer corner (0, 0, 50), edge contact along its sides.
fn part_ledge(b: &mut LevelBuilder) -> Part {
    b.floor([-600.0, 1000.0], [-600.0, 1000.0], 0.0, Winding::Up)
        .cuboid([0.0, 0.0, 0.0], [500.0, 500.0, 50.0]);
    let corner = [0.0, 0.0, 50.0];
    let mut p = Part::default();
    let at_corner = move |c: V3, r: f64| onto_point(c, r, corner);
    for (a, offsets) in [
        (A42, &[[10.0, 12.0], [20.0, 20.0], [5.0, 30.0], [25.0, 25.0]][..]),
        (A30, &[[10.0, 15.0], [3.0, 4.0]][..]),
        (A20, &[[5.0, 8.0], [12.0, 9.0]][..]),
    ] {
        let r = a.radius_cm;
        for &[dx, dy] in offsets {
            let bottom = 50.0 + (r * r - dx * dx - dy * dy).sqrt() + 2.15 - r;
            p.spots
                .push(spot("outer corner", a, [-dx, -dy], bottom, D, true, at_corner));
            p.spots.push(spot(
                "outer corner from 30 cm",
                a,
                [-dx, -dy],
                bottom + 30.0,
                D,
                true,
                at_corner,
            ));
        }
        p.spots
            .push(spot("above the corner", a, [0.0, 0.0], 52.15, D, false, at_corner));
        p.spots
            .push(spot("side edge", a, [-10.0, 250.3], 52.15, D, true, move |c, r| {
                onto_line(c, r, [0.0, 0.0, 50.0], [0.0, 1.0])
            }));
        p.spots
            .push(spot("beside the platform", a, [-50.0, 250.3], 2.15, D, true, |c, r| {
                onto_plane(c, r, [0.0; 3])
            }));
        p.spots
            .push(spot("on the platform", a, [250.3, 230.7], 52.15, D, true, |c, r| {
                onto_plane(c, r, [0.0, 0.0, 50.0])
            }));
    }
    // Bottom 40: the sphere centre (R 42: 82) is 35.6 cm from the corner.
    p.spots
        .push(overlap("into the corner", A42, [-10.0, -12.0], 40.0, true));
    p.grid([-45.0, -45.0], [15.0, 15.0], [13, 13]);
    p
}

/// A capsule straddling two floors: a bare floor 12 cm above another
/// (`x ≥ 0`), and two floors 40 cm apart at heights 0 and 25.
fn part_two_floors(b: &mut LevelBuilder) -> Part {
    b.floor([-1000.0, 1000.0], [-500.0, 500.0], 0.0, Winding::Up)
        .floor([0.0, 1000.0], [-500.0, 500.0], 12.0, Winding::Up)
        .floor([2000.0, 2500.0], [-500.0, 500.0], 0.0, Winding::Up)
        .floor([2540.0, 3000.0], [-500.0, 500.0], 25.0, Winding::Up);
    let upper_edge = [0.0, 0.0, 12.0];
    let y = 10.3;
    let mut p = Part::default();
    let lower_or_edge =
        move |c: V3, r: f64| first(&[onto_line(c, r, upper_edge, [0.0, 1.0]), onto_plane(c, r, [0.0; 3])]);
    for a in CAPSULE_AGENTS {
        for x in [5.3, 20.3] {
            p.spots
                .push(spot("over the upper floor", a, [x, y], 14.15, D, true, |c, r| {
                    onto_plane(c, r, [0.0, 0.0, 12.0])
                }));
        }
        for x in [-5.3, -20.3, -35.3] {
            if -x < a.radius_cm - 1.0 {
                p.spots
                    .push(spot("over the lower floor", a, [x, y], 14.15, D, true, lower_or_edge));
            }
        }
    }
    // R 42 at 29 cm: the edge comes 0.38 cm before the floor; at 35 cm the
    // floor comes 6.8 cm before the edge.
    p.spots
        .push(spot("edge just first", A42, [-29.0, y], 14.15, D, true, lower_or_edge));
    p.spots
        .push(spot("floor first", A42, [-35.0, y], 14.15, D, true, lower_or_edge));
    // Sphere centre 47 cm up, 10 cm beside the upper edge: 36.4 cm from it.
    p.spots.push(overlap("into the upper edge", A42, [-10.0, y], 5.0, true));
    // Between the floors of the gap: both edges within reach, the higher
    // first.
    let gap = |c: V3, r: f64| {
        let mut cands = Vec::new();
        for (x, z) in [(2500.0, 0.0), (2540.0, 25.0)] {
            if (c[0] - x).abs() < r {
                cands.push(onto_line(c, r, [x, 0.0, z], [0.0, 1.0]));
            }
        }
        if c[0] <= 2500.0 {
            cands.push(onto_plane(c, r, [0.0; 3]));
        }
        first(&cands)
    };
    for (a, x) in [
        (A42, 2520.0),
        (A42, 2510.0),
        (A42, 2490.0),
        (A30, 2520.0),
        (A20, 2525.0),
    ] {
        p.spots.push(spot("between two floors", a, [x, y], 30.0, D, true, gap));
    }
    p.grid([-45.0, 0.0], [45.0, 20.0], [31, 2]);
    p.grid([2470.0, 0.0], [2570.0, 20.0], [31, 2]);
    p
}

/// A 20 cm slab whose underside rises at 20° from 150 cm (x = 0) to 368 cm
/// (x = 600) over a floor: a capsule beneath it, touching it, or standing on
/// it.
fn part_sloped_ceiling(b: &mut LevelBuilder) -> Part {
    let s = 20f64.to_radians().tan();
    let (x0, x1, y0, y1) = (0.0, 600.0, -300.0, 300.0);
    let under = |x: f64| 150.0 + s * x;
    b.floor([-500.0, 1500.0], [-500.0, 500.0], 0.0, Winding::Up)
        .plane([x0, x1], [y0, y1], [s, 0.0, 170.0], Winding::Up)
        .plane([x0, x1], [y0, y1], [s, 0.0, 150.0], Winding::Down);
    for ya in [y0, y1] {
        // Side walls.
        b.quad(
            [
                [x0, ya, under(x0)],
                [x1, ya, under(x1)],
                [x1, ya, under(x1) + 20.0],
                [x0, ya, under(x0) + 20.0],
            ],
            Winding::Up,
        );
    }
    for x in [x0, x1] {
        b.quad(
            [
                [x, y0, under(x)],
                [x, y1, under(x)],
                [x, y1, under(x) + 20.0],
                [x, y0, under(x) + 20.0],
            ],
            Winding::Up,
        );
    }
    let floor = |c: V3, r: f64| onto_plane(c, r, [0.0; 3]);
    let y = 0.3;
    let mut p = Part::default();
    // R 42, H 96: the top sphere's centre is 150 cm above the bottom.
    p.spots.extend([
        spot("far beneath", A42, [400.3, y], 2.15, D, true, floor),
        spot("far beneath, from 20 cm", A42, [400.3, y], 20.0, D, true, floor),
        spot("beneath", A42, [200.3, y], 2.15, D, true, floor),
        // Top sphere 15 cm below the underside (perpendicular distance).
        overlap("head in the ceiling", A42, [50.3, y], 2.15, true),
        // Top sphere 30.4 cm from the underside's low edge (0, ·, 150).
        overlap("head at the low edge", A42, [-30.3, y], 2.15, true),
        spot("beside the low edge", A42, [-60.3, y], 2.15, D, true, floor),
        spot("under the ceiling, sphere agent", A20, [50.3, y], 2.15, D, true, floor),
        // R 30, H 90: head 32.3 cm below the underside.
        spot("under the ceiling, slim agent", A30, [100.3, y], 2.15, D, true, floor),
    ]);
    // Head 0.5 cm from the underside (perpendicular).
    let x = 200.3;
    let head = under(x) - 42.5 / 20f64.to_radians().cos();
    p.spots.push(spot(
        "head 0.5 cm from the ceiling",
        A42,
        [x, y],
        head - 150.0,
        D,
        true,
        floor,
    ));
    p.spots
        .push(overlap("head 0.5 cm into the ceiling", A42, [x, y], head - 149.0, true));
    // On top of the slab.
    let n_len = (1.0 + s * s).sqrt();
    for a in CAPSULE_AGENTS {
        let x = 300.3;
        let rest = s * x + 170.0 + a.radius_cm * (n_len - 1.0);
        p.spots
            .push(spot("on the slab", a, [x, y], rest + 2.15, D, true, move |c, r| {
                onto_plane(c, r, [s, 0.0, 170.0])
            }));
        p.spots.push(overlap("in the slab", a, [x, y], rest - 10.0, true));
    }
    p.grid([-80.0, -10.0], [620.0, 10.0], [36, 2]);
    p
}

/// Starts inside geometry: a closed box on a floor, a shelf, a ramp.
fn part_inside(b: &mut LevelBuilder) -> Part {
    let run = 200.0 / 30f64.to_radians().tan();
    b.floor([-500.0, 1500.0], [-500.0, 1500.0], 0.0, Winding::Up)
        .cuboid([0.0, 0.0, 0.0], [400.0, 400.0, 300.0])
        .cuboid([600.0, 0.0, 100.0], [800.0, 400.0, 110.0])
        .ramp_x([900.0, 900.0 + run], [0.0, 200.0], [0.0, 200.0]);
    let floor = |c: V3, r: f64| onto_plane(c, r, [0.0; 3]);
    let mut p = Part::default();
    for a in CAPSULE_AGENTS {
        p.spots.extend([
            overlap("through the box top", a, [200.3, 200.7], 280.0, true),
            overlap("through the box wall", a, [10.3, 200.7], 50.0, true),
            overlap("bottom 1 cm into the floor", a, [-100.3, -130.7], -1.0, true),
            overlap("bottom 0.01 cm into the floor", a, [-100.3, -130.7], -0.01, true),
            overlap("bottom on the floor", a, [-100.3, -130.7], 0.0, false),
            spot(
                "bottom 0.01 cm above the floor",
                a,
                [-100.3, -130.7],
                0.01,
                D,
                true,
                floor,
            ),
            // Inside the box, clear of its faces: the box bottom and the
            // floor coincide.
            spot("inside the box", a, [200.3, 170.7], 2.15, D, true, floor),
            spot("on the box", a, [200.3, 170.7], 302.15, D, true, |c, r| {
                onto_plane(c, r, [0.0, 0.0, 300.0])
            }),
            // The shelf's end (x = 600) is 9.7 cm from the axis, at the
            // height of the capsule's straight part (R 42, 30) or sphere.
            overlap("beside the shelf end", a, [590.3, 200.7], 95.0, true),
            spot("clear of the shelf", a, [550.3, 200.7], 2.15, D, true, floor),
            overlap("into the ramp", a, [900.0 + 0.5 * run, 100.3], 0.5 * 200.0 - 5.0, true),
        ]);
    }
    // Through the shelf (100–110 cm) for the tall agents; under it for the
    // sphere (top at 42.15).
    p.spots
        .push(overlap("through the shelf", A42, [700.3, 200.7], 2.15, true));
    p.spots
        .push(overlap("through the shelf", A30, [700.3, 200.7], 2.15, true));
    p.spots
        .push(spot("under the shelf", A20, [700.3, 200.7], 2.15, D, true, floor));
    p
}

/// A 1 cm thick wall (a box) and a zero-thickness wall (one quad), 200 cm
/// high, beside the capsule.
fn part_thin_wall(b: &mut LevelBuilder) -> Part {
    b.floor([-600.0, 1400.0], [-500.0, 500.0], 0.0, Winding::Up)
        .cuboid([0.0, -300.0, 0.0], [1.0, 300.0, 200.0])
        .quad(
            [
                [800.0, -300.0, 0.0],
                [800.0, 300.0, 0.0],
                [800.0, 300.0, 200.0],
                [800.0, -300.0, 200.0],
            ],
            Winding::Up,
        );
    let floor = |c: V3, r: f64| onto_plane(c, r, [0.0; 3]);
    let y = 10.3;
    let mut p = Part::default();
    for a in CAPSULE_AGENTS {
        let r = a.radius_cm;
        for (face_x, side) in [(0.0, -1.0), (1.0, 1.0), (800.0, -1.0), (800.0, 1.0)] {
            for gap in [0.5, 0.1, 0.02] {
                p.spots.push(spot(
                    "beside a thin wall",
                    a,
                    [face_x + side * (r + gap), y],
                    2.15,
                    D,
                    true,
                    floor,
                ));
            }
            p.spots
                .push(overlap("touching a thin wall", a, [face_x + side * r, y], 2.15, false));
            p.spots.push(overlap(
                "0.5 cm into a thin wall",
                a,
                [face_x + side * (r - 0.5), y],
                2.15,
                true,
            ));
        }
        // On the zero-thickness wall's top edge.
        p.spots
            .push(spot("on a wall's top edge", a, [800.0, y], 202.15, D, true, |c, r| {
                onto_line(c, r, [800.0, 0.0, 200.0], [0.0, 1.0])
            }));
        // Over the 1 cm wall: its top face, with its two edges 0.5 cm away.
        p.spots
            .push(spot("on a 1 cm wall", a, [0.5, y], 202.15, D, false, |c, r| {
                onto_plane(c, r, [0.0, 0.0, 200.0])
            }));
    }
    p.grid([-50.0, 0.0], [51.0, 20.0], [41, 2]);
    p.grid([750.0, 0.0], [850.0, 20.0], [41, 2]);
    p
}

/// Low walls: a zero-thickness quad 30 cm high at x = 0 and a 10 cm thick
/// one (a box) at x = 400; a capsule beside them, bottom above their tops:
/// the top edge is the first contact.
fn part_low_wall(b: &mut LevelBuilder) -> Part {
    b.floor([-600.0, 1400.0], [-500.0, 500.0], 0.0, Winding::Up)
        .quad(
            [
                [0.0, -300.0, 0.0],
                [0.0, 300.0, 0.0],
                [0.0, 300.0, 30.0],
                [0.0, -300.0, 30.0],
            ],
            Winding::Up,
        )
        .cuboid([400.0, -300.0, 0.0], [410.0, 300.0, 30.0]);
    let y = 10.3;
    let edge_or_floor = |x_edge: f64| {
        move |c: V3, r: f64| {
            let mut cands = vec![onto_plane(c, r, [0.0; 3])];
            if (c[0] - x_edge).abs() < r {
                cands.push(onto_line(c, r, [x_edge, 0.0, 30.0], [0.0, 1.0]));
            }
            first(&cands)
        }
    };
    let mut p = Part::default();
    // R 42, bottom 35: the edge first up to 40.25 cm away.
    for d in [0.0, 5.0, 10.0, 20.0, 30.0, 40.0, 41.0] {
        p.spots.push(spot(
            "beside a low wall",
            A42,
            [-d, y],
            35.0,
            D,
            true,
            edge_or_floor(0.0),
        ));
    }
    for (a, d) in [(A30, 10.0), (A30, 25.0), (A20, 10.0), (A20, 0.0)] {
        p.spots
            .push(spot("beside a low wall", a, [-d, y], 35.0, D, true, edge_or_floor(0.0)));
    }
    // Away from the diagonal of the thick wall's top (which crosses
    // y = −150.3 at x = 402.5).
    let y_thick = -150.3;
    for a in CAPSULE_AGENTS {
        p.spots.extend([
            spot(
                "beside a thick low wall",
                a,
                [390.3, y_thick],
                35.0,
                D,
                true,
                edge_or_floor(400.0),
            ),
            spot(
                "beyond a thick low wall",
                a,
                [415.3, y_thick],
                35.0,
                D,
                true,
                edge_or_floor(410.0),
            ),
            spot("on a thick low wall", a, [405.0, y_thick], 32.15, D, true, |c, r| {
                onto_plane(c, r, [0.0, 0.0, 30.0])
            }),
        ]);
    }
    // Sphere centre (R 42) 52 cm up, 10 cm from the wall: 24.2 cm from its
    // top edge; and the straight part beside the wall.
    p.spots
        .push(overlap("into a low wall's edge", A42, [-10.0, y], 10.0, true));
    p.spots
        .push(overlap("beside a low wall, too close", A42, [-10.0, y], 2.15, true));
    p.grid([-45.0, 0.0], [45.0, 20.0], [37, 2]);
    p.grid([355.0, 0.0], [455.0, 20.0], [41, 2]);
    p
}

/// Two nearly coplanar triangles meeting at a slight convex crease: the
/// square `[0, 800]²` split along its diagonal x = y, the two other corners
/// 4 cm lower. Each face slopes down away from the ridge by
/// `s = √2·4/800`; within `R·s/√(1 + s²)` of the ridge (0.297 cm for R 42)
/// neither face's contact point is on its face and the ridge edge is the
/// first contact.
fn part_crease(b: &mut LevelBuilder) -> Part {
    let (l, e) = (800.0, 4.0);
    b.tri([0.0, 0.0, 0.0], [l, 0.0, -e], [l, l, 0.0])
        .tri([0.0, 0.0, 0.0], [l, l, 0.0], [0.0, l, -e]);
    let s = 2f64.sqrt() * e / l;
    let plane_below = [-e / l, e / l, 0.0]; // y < x
    let plane_above = [e / l, -e / l, 0.0]; // y > x
    let h = std::f64::consts::FRAC_1_SQRT_2;
    let ridge = move |c: V3, r: f64| {
        // Signed distance from the ridge, positive on the y < x side.
        let delta = (c[0] - c[1]) * h;
        if delta.abs() < r * s / (1.0 + s * s).sqrt() {
            onto_line(c, r, [0.0; 3], [h, h])
        } else if delta > 0.0 {
            onto_plane(c, r, plane_below)
        } else {
            onto_plane(c, r, plane_above)
        }
    };
    let mut p = Part::default();
    let on = |delta: f64| [400.3 + delta * h, 400.3 - delta * h];
    for delta in [0.0, 0.1, -0.1, 0.2, -0.2, 2.0, -2.0, 5.0, -5.0, 30.0, -30.0] {
        p.spots
            .push(spot("slight crease", A42, on(delta), 2.15, D, true, ridge));
    }
    for delta in [0.0, 0.07, -0.07, 5.0, -5.0] {
        p.spots
            .push(spot("slight crease", A20, on(delta), 2.15, D, true, ridge));
        p.spots
            .push(spot("slight crease", A30, on(delta), 2.15, D, true, ridge));
    }
    // Fine grids across the ridge.
    p.grid([399.0, 401.0], [401.0, 399.0], [41, 2]);
    p.grid([380.0, 420.0], [420.0, 380.0], [41, 2]);
    p
}

// ---------------------------------------------------------------------------
// The levels.

/// Two slabs (boxes 20 cm thick) side by side, their tops one floor at
/// z = 0: the faces where they touch, under the floor, are vertical walls
/// whose top edge lies in the floor (certificates list them as floor-level
/// walls). A capsule over the seam rests on the floor.
fn part_slab_seam(b: &mut LevelBuilder) -> Part {
    b.cuboid([100.0, 100.0, -20.0], [1000.0, 1900.0, 0.0]);
    b.cuboid([1000.0, 100.0, -20.0], [1900.0, 1900.0, 0.0]);
    let floor = [0.0, 0.0, 0.0];
    let mut p = Part::default();
    for a in CAPSULE_AGENTS {
        let face = move |c: V3, r: f64| onto_plane(c, r, floor);
        p.spots.extend([
            // On the pieces' common edge: exact if answered, may fall back.
            spot("over the seam", a, [1000.0, 700.6], 2.15, D, false, face),
            spot("a hair beside the seam", a, [1000.004, 700.6], 0.004, D, false, face),
            spot("1 cm beside the seam", a, [999.0, 700.6], 2.15, D, true, face),
            spot(
                "a radius beside the seam",
                a,
                [1000.0 + a.radius_cm, 700.6],
                2.15,
                D,
                true,
                face,
            ),
        ]);
    }
    p.grid([990.0, 690.0], [1010.0, 710.0], [21, 3]);
    p.grid([940.0, 400.0], [1060.0, 1600.0], [25, 25]);
    p
}

/// A floor whose halves meet at a T-junction that is not watertight: the
/// upper half is a fan from a vertex `t` on the lower half's edge, joined
/// to it through a strip on the left (so all of it is one flat group).
/// With `t` raised 0.001 cm the sphere may touch that step first, with a
/// tilted normal; with `t` 0.0003 cm off the edge a vertical line through
/// the crack meets nothing. Either way every answer must be the oracle's
/// (or a Fallback): from the flat-floor certificates, and (with small
/// steep plates out of reach, which keep the certificates off) from the
/// full path.
fn t_junction_floor(t: V3, plates: bool) -> Mesh {
    let mut b = LevelBuilder::new();
    let (p0, p1, p2, p3) = (
        [0.0, 0.0, 0.0],
        [200.0, 0.0, 0.0],
        [200.0, 100.0, 0.0],
        [0.0, 100.0, 0.0],
    );
    let (p4, p5, l0, l1) = (
        [200.0, 200.0, 0.0],
        [0.0, 200.0, 0.0],
        [-100.0, 0.0, 0.0],
        [-100.0, 200.0, 0.0],
    );
    b.tri(p0, p1, p2).tri(p0, p2, p3);
    b.tri(p3, t, p5).tri(t, p4, p5).tri(t, p2, p4);
    b.tri(l0, p0, p3).tri(l0, p3, l1).tri(l1, p3, p5);
    if plates {
        steep_plates(&mut b, &[[140.0, 40.0], [60.0, 40.0], [140.0, 150.0], [60.0, 150.0]]);
    }
    b.build()
}

/// A square ring of floor around a hole (south, east, north, west sides,
/// welded), except that the west side's two vertices on the south side's
/// edge are its own, raised by `h`: a seam of vertices that were not
/// welded, at the same place in XY. With steep plates out of reach (no
/// certificates).
fn unwelded_ring(h: f64) -> Mesh {
    let mut b = LevelBuilder::new();
    let p = |x: f64, y: f64| [x, y, 0.0];
    let quad = |b: &mut LevelBuilder, lo: [f64; 2], hi: [f64; 2]| {
        b.quad(
            [p(lo[0], lo[1]), p(hi[0], lo[1]), p(hi[0], hi[1]), p(lo[0], hi[1])],
            Winding::Up,
        );
    };
    // The south side's west square, then the west side above it (its
    // bottom vertices its own): one square each, sharing an edge exactly
    // in XY, their union a rectangle (a convex merge would join them).
    quad(&mut b, [0.0, 0.0], [100.0, 100.0]);
    b.quad(
        [[0.0, 100.0, h], [100.0, 100.0, h], p(100.0, 200.0), p(0.0, 200.0)],
        Winding::Up,
    );
    // The rest of the ring, welded: south, east, north.
    quad(&mut b, [100.0, 0.0], [200.0, 100.0]);
    quad(&mut b, [200.0, 0.0], [300.0, 100.0]);
    quad(&mut b, [200.0, 100.0], [300.0, 200.0]);
    quad(&mut b, [200.0, 200.0], [300.0, 300.0]);
    quad(&mut b, [100.0, 200.0], [200.0, 300.0]);
    quad(&mut b, [0.0, 200.0], [100.0, 300.0]);
    steep_plates(&mut b, &[[40.0, 20.0], [40.0, 170.0], [140.0, 20.0]]);
    b.build()
}

/// The small agent's capsule `find_floor` at `pos` (down [`D`]) against
/// the oracle's: `Ok(answered)`, or why they disagree.
fn capsule_vs_oracle(surface: &Surface, oracle: &Oracle, pos: V3) -> Result<bool, String> {
    let q = FloorQuery {
        pos,
        down_cm: D,
        agent: A20,
    };
    let ours = surface.find_floor(pos, D, A20, FloorMode::Capsule);
    compare_capsule_floor(&q, ours, oracle.find_floor_capsule(pos, agent_shape(A20), D))
}

#[test]
fn a_seam_of_vertices_that_were_not_welded() {
    for h in [0.0005, 0.001] {
        let name = format!("raised {h} cm");
        let (surface, oracle) = bake_generated(&name, &unwelded_ring(h));
        let mut errors = Vec::new();
        let mut n = 0;
        for dy in [-0.3, -0.1, -0.02, 0.0, 0.02, 0.1, 0.3] {
            for x in [50.0, 30.0, 70.0] {
                let pos = [x, 100.0 + dy, 30.0];
                if let Err(e) = capsule_vs_oracle(&surface, &oracle, pos) {
                    errors.push(format!("{name}: capsule at {pos:?}: {e}"));
                }
                n += 1;
            }
        }
        assert_agree(&name, &errors, n, "unwelded seam");
    }
}

#[test]
fn a_t_junction_that_is_not_watertight() {
    for (name, t, plates) in [
        ("exact", [100.0, 100.0, 0.0], false),
        ("raised 0.001 cm", [100.0, 100.0, 0.001], false),
        ("0.0003 cm off the edge", [100.0, 100.0003, 0.0], false),
        ("exact, full path", [100.0, 100.0, 0.0], true),
        ("raised 0.001 cm, full path", [100.0, 100.0, 0.001], true),
        ("0.0003 cm off the edge, full path", [100.0, 100.0003, 0.0], true),
    ] {
        let (surface, oracle) = bake_generated(name, &t_junction_floor(t, plates));
        let mut errors = Vec::new();
        let (mut n, mut answered) = (0, 0);
        for dy in [-0.3, -0.1, -0.02, -0.003, 0.0, 0.00015, 0.003, 0.02, 0.1] {
            for x in [100.0, 99.9, 100.05, 50.0] {
                let pos = [x, 100.0 + dy, 30.0];
                match capsule_vs_oracle(&surface, &oracle, pos) {
                    Ok(a) => answered += usize::from(a),
                    Err(e) => errors.push(format!("{name}: capsule at {pos:?}: {e}")),
                }
                let ours = surface.find_floor(pos, D, A20, FloorMode::LineTrace);
                let truth = oracle.find_floor_line(pos, A20.half_height_cm, D);
                match compare_floor(ours, truth) {
                    Ok(a) => answered += usize::from(a),
                    Err(e) => errors.push(format!("{name}: line trace at {pos:?}: {e}")),
                }
                n += 2;
            }
        }
        assert_agree(name, &errors, n, "T-junction");
        // The watertight junction is one surface: the certificates answer
        // its floor (the full path falls back near the junction's edges).
        if name == "exact" {
            assert!(2 * answered >= n, "{name}: only {answered} of {n} answered");
        }
    }
}

/// Small steep plates (5 cm, 60°) standing on the floor at `at`: kept out
/// of the agents' reach, they keep the flat-floor certificates off there, so
/// the full path answers.
fn steep_plates(b: &mut LevelBuilder, at: &[[f64; 2]]) {
    for &[x, y] in at {
        b.quad(
            [
                [x, y, 0.0],
                [x + 5.0, y, 0.0],
                [x + 5.0, y + 5.0, 8.66],
                [x, y + 5.0, 8.66],
            ],
            Winding::Both,
        );
    }
}

/// A floor under a thin slab 130 cm up (its top walkable): the slab takes
/// the floor's headroom, so the floor is cut along the 20 cm cells the slab
/// lies over, into pieces that meet along cut lines (with T-junctions at
/// the cut's corners). A cut line is no edge of the floor: a small agent
/// under the slab, with its contact on or beside one, rests on the floor.
/// (Small steep plates stand on the floor near the spots, out of the
/// agent's reach: no flat-floor certificate holds there, so the full path
/// answers.)
fn part_cut_floor(b: &mut LevelBuilder) -> Part {
    b.floor([100.0, 1900.0], [100.0, 1900.0], 0.0, Winding::Up);
    b.floor([600.3, 1200.7], [500.1, 1100.9], 130.0, Winding::Up);
    steep_plates(b, &[[560.0, 780.0], [880.0, 460.0], [560.0, 460.0]]);
    let floor = [0.0, 0.0, 0.0];
    let a = A20;
    let face = move |c: V3, r: f64| onto_plane(c, r, floor);
    let mut p = Part::default();
    // The cut runs along x = 600 and y = 500 (the cells the slab's edges
    // fall in begin there).
    for d in [-0.3, -0.1, -0.003, 0.0, 0.003, 0.1, 0.3] {
        p.spots.extend([
            spot("beside the cut x = 600", a, [600.0 + d, 800.3], 2.15, D, true, face),
            spot("beside the cut y = 500", a, [900.7, 500.0 + d], 2.15, D, true, face),
            // (Within the band of the corner itself it may fall back.)
            spot(
                "at the cut's corner",
                a,
                [600.0 + d, 500.0 + d],
                2.15,
                D,
                d.abs() > 0.01,
                face,
            ),
        ]);
    }
    p.grid([590.0, 490.0], [610.0, 510.0], [21, 21]);
    p
}

#[test]
fn floor_cut_under_a_slab() {
    let mut b = LevelBuilder::new();
    let part = place(&mut b, [0.0; 3], part_cut_floor);
    run_level("floor_cut_under_a_slab", &b.build(), &part);
}

#[test]
fn slab_seam_under_the_floor() {
    let mut b = LevelBuilder::new();
    let part = place(&mut b, [0.0; 3], part_slab_seam);
    run_level("slab_seam_under_the_floor", &b.build(), &part);
}

#[test]
fn flat_floor() {
    let mut b = LevelBuilder::new();
    let part = place(&mut b, [0.0; 3], part_flat);
    run_level("flat_floor", &b.build(), &part);
}

#[test]
fn slope_30_degrees() {
    let mut b = LevelBuilder::new();
    let part = place(&mut b, [0.0; 3], part_slope);
    run_level("slope_30_degrees", &b.build(), &part);
}

#[test]
fn stair_nosing() {
    let mut b = LevelBuilder::new();
    let part = place(&mut b, [0.0; 3], part_step);
    run_level("stair_nosing", &b.build(), &part);
}

#[test]
fn ledge_outer_corner() {
    let mut b = LevelBuilder::new();
    let part = place(&mut b, [0.0; 3], part_ledge);
    run_level("ledge_outer_corner", &b.build(), &part);
}

#[test]
fn straddling_two_floors() {
    let mut b = LevelBuilder::new();
    let part = place(&mut b, [0.0; 3], part_two_floors);
    run_level("straddling_two_floors", &b.build(), &part);
}

#[test]
fn under_a_sloped_ceiling() {
    let mut b = LevelBuilder::new();
    let part = place(&mut b, [0.0; 3], part_sloped_ceiling);
    run_level("under_a_sloped_ceiling", &b.build(), &part);
}

#[test]
fn starting_inside_geometry() {
    let mut b = LevelBuilder::new();
    let part = place(&mut b, [0.0; 3], part_inside);
    run_level("starting_inside_geometry", &b.build(), &part);
}

#[test]
fn thin_wall_beside() {
    let mut b = LevelBuilder::new();
    let part = place(&mut b, [0.0; 3], part_thin_wall);
    run_level("thin_wall_beside", &b.build(), &part);
}

#[test]
fn low_wall_top_edge() {
    let mut b = LevelBuilder::new();
    let part = place(&mut b, [0.0; 3], part_low_wall);
    run_level("low_wall_top_edge", &b.build(), &part);
}

#[test]
fn slight_convex_crease() {
    let mut b = LevelBuilder::new();
    let part = place(&mut b, [0.0; 3], part_crease);
    run_level("slight_convex_crease", &b.build(), &part);
}

/// The slope, step, ledge, low walls, crease and sloped ceiling 5 km out
/// (5e5 cm), with an offset that is not a whole number of anything.
#[test]
fn far_from_origin() {
    let o = [5.0e5 + 0.37, 5.0e5 - 0.21, 1234.5];
    let mut b = LevelBuilder::new();
    let mut part = Part::default();
    let parts: [fn(&mut LevelBuilder) -> Part; 6] = [
        part_slope,
        part_step,
        part_ledge,
        part_low_wall,
        part_crease,
        part_sloped_ceiling,
    ];
    for (i, f) in parts.into_iter().enumerate() {
        let at = [o[0] + 4000.0 * (i % 3) as f64, o[1] + 3000.0 * (i / 3) as f64, o[2]];
        part.extend(place(&mut b, at, f));
    }
    run_level("far_from_origin", &b.build(), &part);
}

/// Capsule footprints crossing the tile borders x = 0, x = 3200 and y = 0
/// (tiles are 3200 cm): the home tile (under the centre) must hold every
/// surface within the largest radius of its square.
///
/// * a 20° slope tessellated in 100 cm squares across x = 0: from a centre
///   at x = −5 the contact point (R·sin 20° = 14.4 cm uphill) is on a
///   triangle wholly in the next tile;
/// * a bare floor 10 cm up starting at x = 3210 (walkable, nothing else),
///   beside a floor at 0 ending at x = 3200: edge contact across the border;
/// * a platform whose outer corner (10, 10, 30) is across both borders from
///   a centre at (−5, −3);
/// * flat floors under centres on and around x = 3200.
#[test]
fn tile_borders() {
    let mut b = LevelBuilder::new();
    let tan = 20f64.to_radians().tan();
    let slope = [tan, 0.0, 100.0];
    for i in -6..6 {
        for j in -6..-2 {
            let (x, y) = (100.0 * i as f64, 100.0 * j as f64);
            b.plane([x, x + 100.0], [y, y + 100.0], slope, Winding::Up);
        }
    }
    b.floor([2600.0, 3200.0], [-600.0, -200.0], 0.0, Winding::Up)
        .floor([3210.0, 3600.0], [-600.0, -200.0], 10.0, Winding::Up)
        .floor([-600.0, 600.0], [-150.0, 600.0], 0.0, Winding::Up)
        .cuboid([10.0, 10.0, 0.0], [400.0, 400.0, 30.0])
        .floor([2600.0, 3800.0], [200.0, 600.0], 0.0, Winding::Up);
    for i in 0..12 {
        let x = 2600.0 + 100.0 * i as f64;
        b.floor([x, x + 100.0], [700.0, 800.0], 0.0, Winding::Up);
    }
    let n_len = (1.0 + tan * tan).sqrt();
    let mut p = Part::default();
    for a in CAPSULE_AGENTS {
        let r = a.radius_cm;
        for x in [-20.0, -5.0, -0.001, 0.0, 0.001, 5.0] {
            let rest = tan * x + 100.0 + r * (n_len - 1.0);
            p.spots.push(spot(
                "slope across x = 0",
                a,
                [x, -430.3],
                rest + 2.15,
                D,
                true,
                move |c, r| onto_plane(c, r, slope),
            ));
        }
        for x in [3199.0, 3199.999, 3200.0, 3200.001, 3201.0] {
            p.spots
                .push(spot("flat across x = 3200", a, [x, 430.3], 2.15, D, true, |c, r| {
                    onto_plane(c, r, [0.0; 3])
                }));
            // Within the edge band of the shared edge x = 3200 of two coplanar
            // squares the runtime may fall back.
            let must = (x - 3200.0f64).abs() > 0.01;
            p.spots.push(spot(
                "tessellated across x = 3200",
                a,
                [x, 750.3],
                2.15,
                D,
                must,
                |c, r| onto_plane(c, r, [0.0; 3]),
            ));
        }
        // The edge (3210, ·, 10) is always touched before the floor at 0.
        let edge = |c: V3, r: f64| onto_line(c, r, [3210.0, 0.0, 10.0], [0.0, 1.0]);
        for x in [3195.0, 3200.0, 3205.0] {
            if 3210.0 - x < 0.75 * r {
                let rest = rest_bottom(a, [x, -400.3], edge);
                p.spots
                    .push(spot("edge across x = 3200", a, [x, -400.3], rest + 2.15, D, true, edge));
            }
        }
    }
    for (a, [x, y]) in [(A42, [-5.0, -3.0]), (A30, [-5.0, -3.0]), (A20, [2.0, 1.0])] {
        let r = a.radius_cm;
        let (dx, dy) = (10.0 - x, 10.0 - y);
        let bottom = 30.0 + (r * r - dx * dx - dy * dy).sqrt() + 2.15 - r;
        p.spots.push(spot(
            "corner across x = 0, y = 0",
            a,
            [x, y],
            bottom,
            D,
            true,
            |c, r| onto_point(c, r, [10.0, 10.0, 30.0]),
        ));
    }
    p.grid([-50.0, -420.0], [50.0, -400.0], [41, 2]);
    p.grid([3150.0, -420.0], [3250.0, -400.0], [41, 2]);
    p.grid([-40.0, -40.0], [20.0, 20.0], [13, 13]);
    p.grid([3199.98, 300.3], [3200.02, 800.3], [5, 11]);
    run_level("tile_borders", &b.build(), &p);
}

/// The smallest case of a surface that only the neighbour tile's square
/// holds: a bare floor 10 cm up starting 10 cm past the border x = 3200.
/// From a centre at x = 3195 (tile 0) the sphere meets its edge first (15 cm
/// away), or overlaps it.
#[test]
fn walkable_surface_in_the_neighbour_tile() {
    let mut b = LevelBuilder::new();
    b.floor([2800.0, 3200.0], [0.0, 400.0], 0.0, Winding::Up)
        .floor([3210.0, 3600.0], [0.0, 400.0], 10.0, Winding::Up);
    let mesh = b.build();
    let baked = bake_mesh(&mesh, &BakeConfig::default(), 1, &Silent).expect("bake");
    let surface = Surface::from_bytes(&baked.bytes).expect("open");
    let oracle = Oracle::new(&mesh.vertices, &mesh.triangles).expect("oracle");
    let spots = [
        spot("edge across the border", A42, [3195.0, 200.0], 20.0, D, true, |c, r| {
            onto_line(c, r, [3210.0, 0.0, 10.0], [0.0, 1.0])
        }),
        overlap("into the edge across the border", A42, [3195.0, 200.0], 5.0, true),
    ];
    let problems = check_spots("walkable_surface_in_the_neighbour_tile", &surface, &oracle, &spots);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A sphere sliding down past an edge it grazes: the edge of a bare floor
/// at x = 100.0007 (stored at the nearest 1/1024 cm, 100.000977: 0.00028 cm
/// farther), the capsule's axis 0.0001–0.001 cm less than R from it, its
/// bottom sphere's centre 20 cm above the edge, nothing below. The true first contact is the edge, at the sphere's equator (a
/// steep, unwalkable normal); the runtime must report it or fall back, never
/// `NoFloor`.
#[test]
fn grazing_contact_with_a_rounded_edge() {
    let xe = 100.0007;
    let mut b = LevelBuilder::new();
    b.floor([xe, 600.0], [0.0, 400.0], 10.0, Winding::Up);
    let mesh = b.build();
    let baked = bake_mesh(&mesh, &BakeConfig::default(), 1, &Silent).expect("bake");
    let surface = Surface::from_bytes(&baked.bytes).expect("open");
    let oracle = Oracle::new(&mesh.vertices, &mesh.triangles).expect("oracle");
    let mut spots = Vec::new();
    for a in CAPSULE_AGENTS {
        for inside in [0.0001, 0.0003, 0.001] {
            let x = xe - (a.radius_cm - inside);
            spots.push(spot(
                "grazing an edge",
                a,
                [x, 200.3],
                30.0 - a.radius_cm,
                D,
                false,
                move |c, r| onto_line(c, r, [xe, 0.0, 10.0], [0.0, 1.0]),
            ));
        }
        let x = xe - (a.radius_cm + 0.001);
        spots.push(spot(
            "just clear of an edge",
            a,
            [x, 200.3],
            30.0 - a.radius_cm,
            D,
            false,
            |_, _| Expect::NoFloor,
        ));
    }
    let problems = check_spots("grazing_contact_with_a_rounded_edge", &surface, &oracle, &spots);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Rolling terrain (a 30 × 30 heightfield of 100 cm cells across x = 0 and
/// y = 0): only agreement and the answered rate, no spots.
#[test]
fn terrain_heightfield() {
    const N: usize = 30;
    let mut b = LevelBuilder::with_offset([-1500.0, -1400.0, 0.0]);
    let h = |i: usize, j: usize| {
        let (x, y) = (i as f64, j as f64);
        40.0 * (0.31 * x).sin() * (0.23 * y).cos() + 25.0 * (0.11 * x + 0.17 * y).sin()
    };
    let p = |i: usize, j: usize| [100.0 * i as f64, 100.0 * j as f64, h(i, j)];
    for i in 0..N {
        for j in 0..N {
            let (a, bb, c, d) = (p(i, j), p(i + 1, j), p(i + 1, j + 1), p(i, j + 1));
            if (i + j) % 2 == 0 {
                b.tri(a, bb, c).tri(a, c, d);
            } else {
                b.tri(a, bb, d).tri(bb, c, d);
            }
        }
    }
    run_level("terrain_heightfield", &b.build(), &Part::default());
}
