//! Line-trace `find_floor` against the exact oracle on generated levels
//! (DESIGN §2, §7): every non-Fallback answer must agree with the oracle
//! (same floor / no floor, floor_dist within 0.01 cm, normal within 1e-3,
//! same walkable flag), and ground queries must be answered ≥ 95%.
//!
//! Each level is baked with `bake_mesh` and queried three ways:
//! * a dense XY grid; in each column, capsule bottoms around every surface
//!   the oracle finds there (both ends of the window, the hover height) and
//!   above / below everything, each with `down` 47.4, 0, 10 and 200 cm;
//! * the seeded corpus of DESIGN §7 (ground and abnormal), same `down`s;
//! * hand-derived spot checks: the oracle must give the closed-form answer
//!   (so the level is what the test thinks it is), the runtime must agree or
//!   fall back, and must answer where the answer is unambiguous.

mod common;

use common::*;
use std::time::Instant;
use walksurf::{Agent, DEFAULT_FLOOR_DOWN_CM, FloorMode, FloorOutcome, Surface};
use walksurf_bake::{BakeConfig, Mesh, Silent, bake_mesh};
use walksurf_oracle::corpus::{CorpusConfig, QueryClass, Rng, generate};
use walksurf_oracle::{Oracle, OracleFloor};

/// Grid columns per axis.
const GRID: usize = 41;
/// Ground and abnormal corpus queries per level.
const CORPUS: usize = 4000;
/// Ground queries (default `down`) must be answered at least this often.
const MIN_GROUND_ANSWERED_PCT: f64 = 95.0;
/// A level must yield at least this many ground queries for the rate to mean anything.
const MIN_GROUND_QUERIES: usize = 500;
const H: f64 = 96.0;

/// What the oracle must answer at a spot (hand-derived).
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// A floor at `floor_dist` below the capsule bottom whose normal has this z.
    Floor {
        dist: f64,
        nz: f64,
    },
    NoFloor,
}

#[derive(Clone, Copy, Debug)]
struct Spot {
    q: FloorQuery,
    expect: Expect,
    /// The runtime must not fall back here.
    must_answer: bool,
}

/// A spot with the default agent whose capsule bottom is at `bottom`.
fn spot(x: f64, y: f64, bottom: f64, down: f64, expect: Expect, must_answer: bool) -> Spot {
    Spot {
        q: FloorQuery::new([x, y, bottom + H], down),
        expect,
        must_answer,
    }
}

fn floor_at(dist: f64, nz: f64) -> Expect {
    Expect::Floor { dist, nz }
}

/// Extra checks of one level beyond the defaults.
#[derive(Clone, Debug)]
struct Extra {
    /// Further dense grids: `(lo, hi, nx, ny)` in XY (z from the level's bounds).
    grids: Vec<([f64; 2], [f64; 2], usize, usize)>,
    /// Required ground answered rate; `None` for stress levels that only
    /// assert agreement.
    min_ground_pct: Option<f64>,
}

impl Default for Extra {
    fn default() -> Self {
        Extra {
            grids: Vec::new(),
            min_ground_pct: Some(MIN_GROUND_ANSWERED_PCT),
        }
    }
}

/// Bakes, queries and reports one level; panics on any disagreement.
fn run_level(name: &str, mesh: &Mesh, spots: &[Spot]) {
    run_level_with(name, mesh, spots, Extra::default());
}

fn run_level_with(name: &str, mesh: &Mesh, spots: &[Spot], extra: Extra) {
    let start = Instant::now();
    let (surface, oracle) = bake_generated(name, mesh);

    check_spots(name, &surface, &oracle, spots);

    let (mut lo, mut hi) = bounds(mesh);
    for k in 0..2 {
        lo[k] -= 60.0;
        hi[k] += 60.0;
    }
    let mut queries = grid_queries(&oracle, lo, hi, GRID, GRID);
    for &(glo, ghi, nx, ny) in &extra.grids {
        queries.extend(grid_queries(
            &oracle,
            [glo[0], glo[1], lo[2]],
            [ghi[0], ghi[1], hi[2]],
            nx,
            ny,
        ));
    }
    let grid = compare_line(&surface, &oracle, &queries);
    println!("  grid            {}", grid.summary());

    let cfg = CorpusConfig {
        seed: 0x5eed,
        ground: scaled(CORPUS),
        abnormal: scaled(CORPUS),
        ..CorpusConfig::default()
    };
    let corpus = generate(&oracle, &mesh.vertices, &mesh.triangles, &cfg);
    let mut all = vec![("grid".to_owned(), grid)];
    for class in [QueryClass::Ground, QueryClass::Abnormal] {
        for down in DOWNS_CM {
            let t = compare_line(&surface, &oracle, &corpus_queries(&corpus, class, down));
            let label = format!("{class:?} down {down}").to_lowercase();
            println!("  {label:<15} {}", t.summary());
            all.push((label, t));
        }
    }
    println!("  {name}: {:.2} s", start.elapsed().as_secs_f64());

    for (label, t) in &all {
        t.assert_no_errors(&format!("{name}, {label}"));
    }
    let ground = &all[1].1;
    assert!(
        ground.n >= MIN_GROUND_QUERIES,
        "{name}: only {} ground queries could be generated",
        ground.n
    );
    if let Some(min) = extra.min_ground_pct {
        assert!(
            ground.answered_pct() >= min,
            "{name}: ground queries answered {:.2}% < {min}% ({})",
            ground.answered_pct(),
            ground.summary()
        );
    }
}

/// The oracle must match the hand-derived answer; the runtime must agree
/// with the oracle (or fall back where allowed).
fn check_spots(name: &str, surface: &Surface, oracle: &Oracle, spots: &[Spot]) {
    let mut answered = 0;
    for s in spots {
        let q = s.q;
        let truth = oracle.find_floor_line(q.pos, q.agent.half_height_cm, q.down_cm);
        match (s.expect, truth) {
            (Expect::NoFloor, OracleFloor::NoFloor) => {}
            (Expect::Floor { dist, nz }, OracleFloor::Floor { floor_dist, normal, .. })
                if (floor_dist - dist).abs() <= 1e-6 && (normal[2] - nz).abs() <= 1e-9 => {}
            (e, t) => panic!("{name}: spot {q:?}: the oracle says {t:?}, the level was built for {e:?}"),
        }
        let ours = surface.find_floor(q.pos, q.down_cm, q.agent, FloorMode::LineTrace);
        if let Err(why) = compare_floor(ours, truth) {
            panic!("{name}: spot {q:?}: {why}");
        }
        if !matches!(ours, FloorOutcome::Fallback(_)) {
            answered += 1;
        } else if s.must_answer {
            panic!("{name}: spot {q:?}: {ours:?}, but the answer ({truth:?}) is unambiguous");
        }
    }
    println!("  spots           {answered} of {} answered", spots.len());
}

/// Spots over a horizontal surface at `z`, well inside it, with nothing else
/// within 200 cm below or 2 cm above: every window case of DESIGN §2.
fn flat_spots(x: f64, y: f64, z: f64) -> Vec<Spot> {
    let d = DEFAULT_FLOOR_DOWN_CM;
    vec![
        spot(x, y, z + 2.15, d, floor_at(2.15, 1.0), true),
        spot(x, y, z, d, floor_at(0.0, 1.0), true),
        spot(x, y, z - 1.0, d, floor_at(-1.0, 1.0), true),
        spot(x, y, z - 2.5, d, Expect::NoFloor, true),
        spot(x, y, z + 47.0, d, floor_at(47.0, 1.0), true),
        spot(x, y, z + 48.0, d, Expect::NoFloor, true),
        spot(x, y, z + 0.5, 0.0, Expect::NoFloor, true),
        spot(x, y, z - 0.5, 0.0, floor_at(-0.5, 1.0), true),
        spot(x, y, z + 9.0, 10.0, floor_at(9.0, 1.0), true),
        spot(x, y, z + 11.0, 10.0, Expect::NoFloor, true),
        spot(x, y, z + 150.0, 200.0, floor_at(150.0, 1.0), true),
    ]
}

#[test]
fn flat_floor() {
    let mut b = LevelBuilder::new();
    b.floor([100.0, 1900.0], [100.0, 1900.0], 0.0, Winding::Up);
    let mut spots = flat_spots(1000.3, 700.6, 0.0);
    spots.push(spot(50.0, 1000.0, 2.15, 200.0, Expect::NoFloor, true));
    run_level("flat_floor", &b.build(), &spots);
}

/// Ten 20 cm steps, 30 cm treads, vertical risers, between a floor and a
/// landing (a box standing on the floor: its bottom face duplicates the floor).
#[test]
fn stairs() {
    let mut b = LevelBuilder::new();
    b.floor([-400.0, 700.0], [-200.0, 400.0], 0.0, Winding::Up)
        .stairs(0.0, [0.0, 200.0], 0.0, 10, 30.0, 20.0)
        .cuboid([300.0, 0.0, 0.0], [700.0, 200.0, 200.0]);
    let d = DEFAULT_FLOOR_DOWN_CM;
    let mut spots = Vec::new();
    for i in 0..10 {
        let (x, z) = (15.0 + 30.0 * i as f64, 20.0 * (i + 1) as f64);
        spots.push(spot(x, 63.7, z + 2.15, d, floor_at(2.15, 1.0), true));
        // From one step up: the tread below is 22.15 cm down.
        spots.push(spot(x, 63.7, z + 22.15, d, floor_at(22.15, 1.0), true));
    }
    // Just in front of the first riser, from above the second tread's height.
    spots.push(spot(-5.0, 100.0, 40.0, d, floor_at(40.0, 1.0), true));
    spots.extend(flat_spots(500.3, 61.9, 200.0));
    run_level("stairs", &b.build(), &spots);
}

#[test]
fn ramp_30_degrees() {
    let run = 200.0 / 30f64.to_radians().tan();
    let mut b = LevelBuilder::new();
    b.floor([-400.0, 1100.0], [-300.0, 500.0], 0.0, Winding::Up)
        .ramp_x([0.0, run], [0.0, 200.0], [0.0, 200.0])
        .cuboid([run, 0.0, 0.0], [run + 350.0, 200.0, 200.0]);
    let nz = 30f64.to_radians().cos();
    let d = DEFAULT_FLOOR_DOWN_CM;
    let x = 0.5 * run; // the ramp is 100 cm high here
    let spots = vec![
        spot(x, 71.3, 102.15, d, floor_at(2.15, nz), true),
        spot(x, 71.3, 140.0, d, floor_at(40.0, nz), true),
        spot(x, 71.3, 99.0, d, floor_at(-1.0, nz), true),
        spot(x, 71.3, 97.5, d, Expect::NoFloor, true),
        spot(x, 71.3, 110.0, 0.0, Expect::NoFloor, true),
        spot(run + 100.0, 100.0, 202.15, d, floor_at(2.15, 1.0), true),
    ];
    run_level("ramp_30_degrees", &b.build(), &spots);
}

/// A slope of exactly 45° (normal z 0.7071 < 0.71: not walkable, so a
/// blocker: the runtime must fall back or agree), one of 44.5° (walkable),
/// and two whose normal z straddles 0.71 by 2e-5.
#[test]
fn slopes_45_degrees_and_near_threshold() {
    let mut b = LevelBuilder::new();
    b.floor([-400.0, 1000.0], [-300.0, 1300.0], 0.0, Winding::Up);
    let mut spots = Vec::new();
    let d = DEFAULT_FLOOR_DOWN_CM;
    for (i, nz) in [45f64.to_radians().cos(), 44.5f64.to_radians().cos(), 0.71002, 0.70998]
        .into_iter()
        .enumerate()
    {
        let y0 = 300.0 * i as f64;
        let slope = (1.0 - nz * nz).sqrt() / nz; // dz/dx
        let run = 200.0 / slope;
        b.ramp_x([0.0, run], [y0, y0 + 200.0], [0.0, 200.0])
            .cuboid([run, y0, 0.0], [run + 200.0, y0 + 200.0, 200.0]);
        let x = 0.5 * run;
        let walkable = nz >= ORACLE_WALKABLE_Z + 1e-4;
        spots.push(spot(x, y0 + 61.3, 102.15, d, floor_at(2.15, nz), walkable));
        spots.push(spot(x, y0 + 61.3, 130.0, d, floor_at(30.0, nz), walkable));
    }
    run_level("slopes_45_and_near_threshold", &b.build(), &spots);
}

/// A 20 cm thick bridge whose top is 300 cm above the floor, on two pillars:
/// which surface the line meets depends on the capsule's height and half-height.
#[test]
fn bridge_over_floor() {
    let mut b = LevelBuilder::new();
    b.floor([-500.0, 1500.0], [-500.0, 500.0], 0.0, Winding::Up)
        .cuboid([0.0, -100.0, 280.0], [1000.0, 100.0, 300.0])
        .cuboid([0.0, -100.0, 0.0], [60.0, 100.0, 280.0])
        .cuboid([940.0, -100.0, 0.0], [1000.0, 100.0, 280.0]);
    let d = DEFAULT_FLOOR_DOWN_CM;
    let (x, y) = (500.3, 10.7);
    let mut spots = vec![
        spot(x, y, 302.15, d, floor_at(2.15, 1.0), true),
        spot(x, y, 2.15, d, floor_at(2.15, 1.0), true),
        // Inside the slab: the underside (facing down, double-sided) is hit.
        spot(x, y, 290.0, d, floor_at(10.0, 1.0), true),
        spot(x, y, 281.0, d, floor_at(1.0, 1.0), true),
        // Under the bridge: its underside is above the window.
        spot(x, y, 277.0, d, Expect::NoFloor, true),
        spot(x, y, 278.5, d, floor_at(-1.5, 1.0), true),
        spot(x, y, 250.0, 200.0, Expect::NoFloor, true),
        spot(x, y, 190.0, 200.0, floor_at(190.0, 1.0), true),
        spot(x, y, 320.0, 200.0, floor_at(20.0, 1.0), true),
        // Beside the bridge the floor is all there is.
        spot(x, 300.0, 302.15, 200.0, Expect::NoFloor, true),
        spot(x, 300.0, 150.0, 200.0, floor_at(150.0, 1.0), true),
    ];
    // One capsule centre, different agents: the bottom moves with H.
    let z = 400.0;
    for (radius, half, expect, must) in [
        (42.0, 96.0, floor_at(4.0, 1.0), true),     // bottom 304: the bridge top
        (30.0, 30.0, Expect::NoFloor, true),        // bottom 370
        (42.0, 110.0, floor_at(10.0, 1.0), false),  // bottom 290: the underside
        (42.0, 150.0, Expect::NoFloor, false),      // bottom 250
        (42.0, 397.85, floor_at(2.15, 1.0), false), // bottom 2.15: the floor
        (42.0, 399.5, floor_at(0.5, 1.0), false),   // bottom 0.5
        (42.0, 403.0, Expect::NoFloor, false),      // bottom −3: floor above the window
    ] {
        spots.push(Spot {
            q: FloorQuery {
                pos: [x, y, z],
                down_cm: d,
                agent: Agent {
                    radius_cm: radius,
                    half_height_cm: half,
                },
            },
            expect,
            must_answer: must,
        });
    }
    run_level("bridge_over_floor", &b.build(), &spots);
}

/// A floor with a 400 cm square hole, and a pit floor 150 cm below it that
/// reaches 100 cm under the upper floor's edges.
#[test]
fn floor_with_hole() {
    let mut b = LevelBuilder::new();
    let w = Winding::Up;
    b.floor([0.0, 2000.0], [0.0, 800.0], 0.0, w)
        .floor([0.0, 2000.0], [1200.0, 2000.0], 0.0, w)
        .floor([0.0, 800.0], [800.0, 1200.0], 0.0, w)
        .floor([1200.0, 2000.0], [800.0, 1200.0], 0.0, w)
        .floor([700.0, 1300.0], [700.0, 1300.0], -150.0, w);
    let d = DEFAULT_FLOOR_DOWN_CM;
    let spots = vec![
        spot(1000.3, 1071.7, 2.15, d, Expect::NoFloor, true),
        spot(1000.3, 1071.7, 2.15, 200.0, floor_at(152.15, 1.0), true),
        spot(750.0, 1000.0, 2.15, 200.0, floor_at(2.15, 1.0), true),
        // Under the upper floor's edge, looking down at the pit floor 50 cm below.
        spot(750.0, 1000.0, -100.0, d, Expect::NoFloor, true),
        spot(750.0, 1000.0, -100.0, 49.0, Expect::NoFloor, true),
        spot(750.0, 1000.0, -100.0, 51.0, floor_at(50.0, 1.0), true),
        spot(750.0, 1000.0, -100.0, 200.0, floor_at(50.0, 1.0), true),
        spot(1000.3, 1071.7, -147.85, d, floor_at(2.15, 1.0), true),
    ];
    run_level("floor_with_hole", &b.build(), &spots);
}

/// A 20 cm slab whose underside is 150 cm above the floor. From below, the
/// underside is hit only when it is within 2 cm above the capsule bottom;
/// from inside the slab it is a floor (collision is double-sided).
#[test]
fn low_ceiling_slab() {
    let mut b = LevelBuilder::new();
    b.floor([0.0, 2000.0], [0.0, 1000.0], 0.0, Winding::Up)
        .cuboid([500.0, 200.0, 150.0], [1500.0, 800.0, 170.0]);
    let d = DEFAULT_FLOOR_DOWN_CM;
    let (x, y) = (1000.2, 433.7);
    let spots = vec![
        spot(x, y, 2.15, d, floor_at(2.15, 1.0), true),
        spot(x, y, 100.0, d, Expect::NoFloor, true),
        spot(x, y, 147.9, d, Expect::NoFloor, true),
        spot(x, y, 148.5, d, floor_at(-1.5, 1.0), true),
        spot(x, y, 149.0, 200.0, floor_at(-1.0, 1.0), true),
        spot(x, y, 147.9, 200.0, floor_at(147.9, 1.0), true),
        spot(x, y, 160.0, d, floor_at(10.0, 1.0), true),
        spot(x, y, 160.0, 0.0, Expect::NoFloor, true),
        spot(x, y, 172.15, d, floor_at(2.15, 1.0), true),
        spot(x, y, 172.15, 200.0, floor_at(2.15, 1.0), true),
        spot(x, y, 230.0, d, Expect::NoFloor, true),
    ];
    run_level("low_ceiling_slab", &b.build(), &spots);
}

/// Tilted floors whose triangles all face down (clockwise from above): the
/// runtime must stand on them from above with an upward normal.
#[test]
fn tilted_down_facing() {
    let planes = [
        ([0.0, 1500.0], [0.0, 1000.0], [0.2, 0.15, 30.0]),
        ([0.0, 1500.0], [1200.0, 2000.0], [-0.8, 0.3, 900.0]),
        ([1700.0, 2500.0], [0.0, 1000.0], [0.0, 0.0, 40.0]),
    ];
    let mut b = LevelBuilder::new();
    let mut spots = Vec::new();
    let d = DEFAULT_FLOOR_DOWN_CM;
    for &(xs, ys, [a, bb, c]) in &planes {
        b.plane(xs, ys, [a, bb, c], Winding::Down);
        let (x, y) = (0.5 * (xs[0] + xs[1]) + 0.37, 0.5 * (ys[0] + ys[1]) - 0.21);
        let z = a * x + bb * y + c;
        let nz = 1.0 / (a * a + bb * bb + 1.0).sqrt();
        spots.push(spot(x, y, z + 2.15, d, floor_at(2.15, nz), true));
        spots.push(spot(x, y, z + 30.0, d, floor_at(30.0, nz), true));
        spots.push(spot(x, y, z - 1.0, d, floor_at(-1.0, nz), true));
    }
    run_level("tilted_down_facing", &b.build(), &spots);
}

/// Stairs, a 30° ramp, a tilted floor and a bridge, translated to `offset`.
fn compound_level(offset: [f64; 3]) -> (Mesh, Vec<Spot>) {
    let run = 200.0 / 30f64.to_radians().tan();
    let mut b = LevelBuilder::with_offset(offset);
    b.floor([-400.0, 1100.0], [-300.0, 1300.0], 0.0, Winding::Up)
        .stairs(0.0, [0.0, 200.0], 0.0, 10, 30.0, 20.0)
        .cuboid([300.0, 0.0, 0.0], [700.0, 200.0, 200.0])
        .ramp_x([0.0, run], [400.0, 600.0], [0.0, 200.0])
        .cuboid([run, 400.0, 0.0], [run + 300.0, 600.0, 200.0])
        .plane([-300.0, 500.0], [800.0, 1200.0], [0.13, -0.07, 80.0], Winding::Up)
        .cuboid([600.0, 700.0, 280.0], [1000.0, 1100.0, 300.0]);
    let [ox, oy, oz] = offset;
    let d = DEFAULT_FLOOR_DOWN_CM;
    let (x, y) = (100.3, 1041.7);
    let z = 0.13 * x - 0.07 * y + 80.0;
    let nz = 1.0 / (0.13f64 * 0.13 + 0.07 * 0.07 + 1.0).sqrt();
    let spots = vec![
        spot(ox + 45.0, oy + 63.7, oz + 42.15, d, floor_at(2.15, 1.0), true),
        spot(ox + x, oy + y, oz + z + 2.15, d, floor_at(2.15, nz), true),
        spot(ox + 800.3, oy + 871.9, oz + 302.15, d, floor_at(2.15, 1.0), true),
        spot(ox + 800.3, oy + 871.9, oz + 2.15, d, floor_at(2.15, 1.0), true),
        spot(
            ox + 0.5 * run,
            oy + 461.3,
            oz + 102.15,
            d,
            floor_at(2.15, 30f64.to_radians().cos()),
            true,
        ),
    ];
    (b.build(), spots)
}

#[test]
fn far_from_origin() {
    let (mesh, spots) = compound_level([5.0e5 + 0.37, 5.0e5 - 0.21, 1234.5]);
    run_level("far_from_origin", &mesh, &spots);
}

#[test]
fn far_from_origin_extreme() {
    // 400 km out: still within the format's ±1e8 cm.
    let (mesh, spots) = compound_level([4.0e7 + 0.37, -4.0e7 + 0.21, 3.0e4]);
    run_level("far_from_origin_extreme", &mesh, &spots);
}

#[test]
fn far_from_origin_negative() {
    let (mesh, spots) = compound_level([-5.0e5 - 0.37, -5.0e5 + 0.21, -777.25]);
    run_level("far_from_origin_negative", &mesh, &spots);
}

/// Floors across the tile borders x = 3200, x = −3200 and y = 0: a flat one,
/// a tilted one (its plane is stored relative to each tile's origin) and a
/// 30° ramp; plus queries at and around the border lines.
#[test]
fn tile_borders() {
    let run = 200.0 / 30f64.to_radians().tan();
    let tilt = [0.1, 0.05, 400.0];
    let mut b = LevelBuilder::new();
    b.floor([2800.0, 3600.0], [-400.0, 400.0], 0.0, Winding::Up)
        .plane([-3600.0, -2800.0], [-400.0, 400.0], tilt, Winding::Up)
        .ramp_x([3100.0, 3100.0 + run], [600.0, 800.0], [0.0, 200.0])
        .floor([2800.0, 3600.0], [500.0, 900.0], 0.0, Winding::Up);
    let d = DEFAULT_FLOOR_DOWN_CM;
    let mut spots = Vec::new();
    for dx in [
        -1.0f64, -0.01, -0.006, -0.004, -0.001, 0.0, 0.001, 0.004, 0.006, 0.01, 1.0,
    ] {
        for y in [-100.3f64, -0.003, 0.0, 0.003, 100.3] {
            let far = dx.abs() >= 0.01 && y != 0.0 && y.abs() > 0.01;
            spots.push(spot(3200.0 + dx, y, 2.15, d, floor_at(2.15, 1.0), far));
            let x = -3200.0 + dx;
            let z = tilt[0] * x + tilt[1] * y + tilt[2];
            let nz = 1.0 / (tilt[0] * tilt[0] + tilt[1] * tilt[1] + 1.0).sqrt();
            spots.push(spot(x, y, z + 2.15, d, floor_at(2.15, nz), far));
        }
        let x = 3200.0 + dx;
        let z = (x - 3100.0) * 30f64.to_radians().tan();
        let nz = 30f64.to_radians().cos();
        spots.push(spot(x, 700.3, z + 2.15, d, floor_at(2.15, nz), dx.abs() >= 0.01));
    }
    // Fine grids straddling each border line (the edge band is 0.005 cm).
    let extra = Extra {
        grids: vec![
            ([2800.0, -400.0], [3600.0, 400.0], 41, 41),
            ([-3600.0, -400.0], [-2800.0, 400.0], 41, 41),
            ([3199.98, -300.3], [3200.02, 300.3], 21, 7),
            ([-3200.02, -300.3], [-3199.98, 300.3], 21, 7),
            ([2900.3, -0.02], [3500.3, 0.02], 7, 21),
            ([-3500.3, -0.02], [-2900.3, 0.02], 7, 21),
            ([3199.98, 650.3], [3200.02, 750.3], 21, 3),
        ],
        ..Extra::default()
    };
    run_level_with("tile_borders", &b.build(), &spots, extra);
}

/// Coplanar duplicates: the same square in both windings and with the other
/// diagonal, a partly overlapping square, and near-duplicates 0.003 cm and
/// 0.02 cm apart (the line must report the higher one), flat and tilted.
#[test]
fn coplanar_duplicates() {
    let mut b = LevelBuilder::new();
    let (x0, x1) = (0.0, 1000.0);
    b.floor([x0, x1], [0.0, 1000.0], 0.0, Winding::Both)
        .quad(
            [[x1, 0.0, 0.0], [x1, 1000.0, 0.0], [x0, 1000.0, 0.0], [x0, 0.0, 0.0]],
            Winding::Up,
        )
        .floor([500.0, 1500.0], [500.0, 1500.0], 0.0, Winding::Down)
        .floor([0.0, 1000.0], [1600.0, 2400.0], 0.0, Winding::Up)
        .floor([0.0, 1000.0], [1600.0, 2400.0], 0.003, Winding::Down)
        .floor([1600.0, 2400.0], [0.0, 1000.0], 50.0, Winding::Up)
        .floor([1600.0, 2400.0], [0.0, 1000.0], 50.02, Winding::Up)
        .plane([1600.0, 2400.0], [1600.0, 2400.0], [0.1, 0.2, -300.0], Winding::Both)
        .plane([1700.0, 2300.0], [1700.0, 2300.0], [0.1, 0.2, -300.0], Winding::Up);
    let d = DEFAULT_FLOOR_DOWN_CM;
    let tilt_nz = 1.0 / (1.0f64 + 0.01 + 0.04).sqrt();
    let (tx, ty) = (2000.3, 1931.6);
    let tz = 0.1 * tx + 0.2 * ty - 300.0;
    let spots = vec![
        spot(300.2, 400.7, 2.15, d, floor_at(2.15, 1.0), true),
        spot(700.2, 640.7, 2.15, d, floor_at(2.15, 1.0), true),
        spot(500.2, 2051.3, 2.15, d, floor_at(2.147, 1.0), true),
        spot(2000.2, 431.7, 52.15, d, floor_at(2.13, 1.0), true),
        spot(tx, ty, tz + 2.15, d, floor_at(2.15, tilt_nz), true),
    ];
    run_level("coplanar_duplicates", &b.build(), &spots);
}

/// Rolling terrain: a 45 × 45 heightfield of 100 cm cells across the tile
/// borders x = 0, y = 0 and x = 3200, triangulated along alternating
/// diagonals, slopes mostly walkable and some just past the threshold.
#[test]
fn terrain_heightfield() {
    const N: usize = 45;
    let mut rng = Rng::new(11);
    let h: Vec<Vec<f64>> = (0..=N)
        .map(|i| {
            (0..=N)
                .map(|j| {
                    let (x, y) = (i as f64, j as f64);
                    60.0 * (0.31 * x).sin() * (0.23 * y).cos()
                        + 35.0 * (0.11 * x + 0.17 * y).sin()
                        + 25.0 * rng.next_f64()
                })
                .collect()
        })
        .collect();
    let mut b = LevelBuilder::with_offset([-1000.0, -900.0, 0.0]);
    let p = |i: usize, j: usize| [100.0 * i as f64, 100.0 * j as f64, h[i][j]];
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
    run_level("terrain_heightfield", &b.build(), &[]);
}

/// Stress: a random soup of overlapping triangles (walkable, steep and
/// vertical, some slivers) across the tile borders x = 0 and y = 0. Only
/// agreement is asserted; the answered rate is printed.
#[test]
fn random_soup() {
    let mut rng = Rng::new(0xD15EA5E);
    let mut b = LevelBuilder::new();
    b.floor([-1600.0, 1600.0], [-1600.0, 1600.0], 0.0, Winding::Up);
    let mut r = |lo: f64, hi: f64| lo + (hi - lo) * rng.next_f64();
    for k in 0..400 {
        let c = [r(-1500.0, 1500.0), r(-1500.0, 1500.0), r(0.0, 400.0)];
        let size = r(20.0, 600.0);
        // Tilt: walkable (most), steep, or vertical.
        let (gx, gy) = match k % 5 {
            0 => (r(-2.0, 2.0), r(-2.0, 2.0)),
            1 => (f64::NAN, f64::NAN),
            _ => (r(-0.9, 0.9), r(-0.9, 0.9)),
        };
        let mut v = [[0.0; 3]; 3];
        for p in &mut v {
            *p = [c[0] + r(-size, size), c[1] + r(-size, size), 0.0];
        }
        if k % 17 == 0 {
            // A sliver (or a segment): the third vertex 0.01, 0.001 or 0 cm
            // off the middle of the first edge.
            let off = [0.01, 0.001, 0.0][(k / 17) % 3];
            v[2] = [0.5 * (v[0][0] + v[1][0]) + off, 0.5 * (v[0][1] + v[1][1]) - off, 0.0];
        }
        // Every 13th triangle may not be stood on.
        b.blocking_only = k % 13 == 0;
        for p in &mut v {
            p[2] = if gx.is_nan() {
                c[2] + r(-size, size)
            } else {
                c[2] + gx * (p[0] - c[0]) + gy * (p[1] - c[1])
            };
        }
        if gx.is_nan() {
            // Vertical: all three vertices on one XY line.
            let (ux, uy) = (v[1][0] - v[0][0], v[1][1] - v[0][1]);
            let t = r(-1.0, 2.0);
            v[2][0] = v[0][0] + t * ux;
            v[2][1] = v[0][1] + t * uy;
        }
        b.tri(v[0], v[1], v[2]);
    }
    b.blocking_only = false;
    let extra = Extra {
        min_ground_pct: None,
        ..Extra::default()
    };
    run_level_with("random_soup", &b.build(), &[], extra);
}

/// Forty storeys 300 cm apart plus a platform 1 km up, all in one tile: the
/// tile's z range forces a coarse z quantisation of its BVH boxes.
#[test]
fn tall_tile() {
    let mut b = LevelBuilder::new();
    let mut spots = Vec::new();
    let d = DEFAULT_FLOOR_DOWN_CM;
    for k in 0..40 {
        let z = 300.0 * k as f64;
        b.cuboid([0.0, 0.0, z - 20.0], [2000.0, 1000.0, z]);
        spots.push(spot(700.3, 431.9, z + 2.15, d, floor_at(2.15, 1.0), true));
        spots.push(spot(700.3, 431.9, z - 1.0, d, floor_at(-1.0, 1.0), true));
        spots.push(spot(700.3, 431.9, z - 10.0, d, floor_at(10.0, 1.0), true));
    }
    b.cuboid([100.0, 100.0, 99_980.0], [600.0, 600.0, 100_000.0]);
    spots.push(spot(300.3, 231.9, 100_002.15, d, floor_at(2.15, 1.0), true));
    spots.push(spot(300.3, 231.9, 99_990.0, d, floor_at(10.0, 1.0), true));
    run_level("tall_tile", &b.build(), &spots);
}

/// The comparison is not vacuous: a file baked from a floor 0.02 cm below
/// the oracle's disagrees on every floor it reports, and one whose floor has
/// a slightly different tilt disagrees on the normal.
#[test]
fn comparison_detects_disagreement() {
    const Y: f64 = 431.9;
    // z = z0 + b·(y − Y): the same height along the query line y = Y.
    let bake = |z0: f64, b_y: f64| {
        let mut b = LevelBuilder::new();
        b.plane([0.0, 1000.0], [0.0, 1000.0], [0.0, b_y, z0 - b_y * Y], Winding::Up);
        let mesh = b.build();
        let baked = bake_mesh(&mesh, &BakeConfig::default(), 1, &Silent).expect("bake");
        (mesh, Surface::from_bytes(&baked.bytes).expect("open"))
    };
    let (truth_mesh, _) = bake(0.0, 0.0);
    let oracle = Oracle::new(&truth_mesh.vertices, &truth_mesh.triangles).expect("oracle");
    let queries: Vec<FloorQuery> = (0..50)
        .map(|i| FloorQuery::new([100.3 + 15.0 * i as f64, Y, 2.15 + H], DEFAULT_FLOOR_DOWN_CM))
        .collect();
    for (z0, b_y, what) in [(-0.02, 0.0, "floor_dist"), (0.0, 0.002, "normal")] {
        let (_, wrong) = bake(z0, b_y);
        let t = compare_line(&wrong, &oracle, &queries);
        assert_eq!(t.errors.len(), t.floors, "{what}: {}", t.summary());
        assert!(t.floors > 40, "{what}: {}", t.summary());
        assert!(
            t.errors.iter().all(|e| e.contains(what)),
            "{what}: {:?}",
            t.errors.first()
        );
    }
}

/// A tile whose z range is huge: floors near z = 0 share their tiles with a
/// floor 10 km (tile x = 0) or 100 km (tile x = 1) below. Each piece's plane
/// constant is an f32 relative to the tile's lowest z, so the pieces near
/// z = 0 carry z error bounds of ~0.0125 cm and ~0.37 cm: beyond the
/// contract's 0.01 cm, the runtime must fall back rather than answer.
#[test]
fn tile_with_a_huge_z_range() {
    let mut b = LevelBuilder::new();
    for (x0, deep) in [(0.0, -1.0e6), (3200.0, -1.0e7)] {
        b.floor([x0, x0 + 1000.0], [0.0, 1000.0], 0.3, Winding::Up)
            .plane(
                [x0 + 1000.0, x0 + 2000.0],
                [0.0, 1000.0],
                [0.013, 0.007, 40.37],
                Winding::Up,
            )
            .floor([x0 + 2000.0, x0 + 3000.0], [0.0, 1000.0], deep + 0.77, Winding::Up);
    }
    let d = DEFAULT_FLOOR_DOWN_CM;
    let mut spots = Vec::new();
    for x0 in [0.0, 3200.0] {
        // The exact floor is 2.15 cm below; the f32 plane puts it 2.1375
        // (10 km) or 2.45 cm (100 km) below.
        spots.push(spot(x0 + 500.3, 431.9, 2.45, d, floor_at(2.15, 1.0), false));
        let (x, y) = (x0 + 1500.3, 431.9);
        let z = 0.013 * x + 0.007 * y + 40.37;
        let nz = 1.0 / (0.013f64 * 0.013 + 0.007 * 0.007 + 1.0).sqrt();
        spots.push(spot(x, y, z + 2.15, d, floor_at(2.15, nz), false));
    }
    let extra = Extra {
        min_ground_pct: None,
        ..Extra::default()
    };
    run_level_with("tile_with_a_huge_z_range", &b.build(), &spots, extra);
}
