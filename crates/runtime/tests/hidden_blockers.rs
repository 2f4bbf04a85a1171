//! Capsule `find_floor` skips blockers hidden under the walkable surface (a
//! riser under its nosing, a curb under a shelf's edge) only where that
//! surface is below the capsule's top: answers checked against the oracle,
//! and against the same file with every `HIDDEN` bit cleared (a fuzz of
//! stairs, curbs under shelves, slabs, ramps and wedges; `FUZZ_SEEDS`
//! seeds, `HIDDEN_AGENTS` / `HIDDEN_COLUMNS` per level; `HIDDEN_REFERENCE=1`
//! for the Reference precision path).

mod common;

use common::*;
use walksurf::{Agent, FloorMode, FloorOutcome, Surface};
use walksurf_format::{FileView, blocker_flags};

/// A ball 40 cm tall (R 20): it fits between a curb and a shelf.
const SHORT: Agent = Agent {
    radius_cm: 20.0,
    half_height_cm: 20.0,
};

/// A floor at 0, a shelf at 50 cm over `[0, 100]²` and under the shelf's
/// edge `x = 100` a 5 cm curb (hidden: it lies directly below the shelf,
/// 45 cm above its top).
fn curb_under_shelf() -> walksurf_bake::Mesh {
    let mut b = LevelBuilder::new();
    b.floor([-200.0, 300.0], [-200.0, 300.0], 0.0, Winding::Up)
        .floor([0.0, 100.0], [0.0, 100.0], 50.0, Winding::Both)
        .wall([100.0, 0.0], [100.0, 100.0], [0.0, 0.0], [5.0, 5.0]);
    b.build()
}

#[test]
fn a_curb_under_a_shelf_is_met_by_a_capsule_below_the_shelf() {
    let mesh = curb_under_shelf();
    let (surface, oracle) = bake_generated("curb under shelf", &mesh);
    assert!(hidden_count(&mesh) > 0, "the curb should be flagged HIDDEN");
    // The ball's centre 10 cm outside the curb, 25 cm up: it comes down
    // onto the curb's top edge, at rest when the centre is √(20² − 10²)
    // above it. The shelf (50) is above the ball's top (45) and, 10 cm
    // from its centre, above the ball there (25 + √300 < 50): the curb
    // under the shelf is the first contact.
    let centre = [110.0, 50.0, 25.0];
    let pos = [centre[0], centre[1], centre[2] + SHORT.half_height_cm - SHORT.radius_cm];
    let q = FloorQuery {
        pos,
        down_cm: 30.0,
        agent: SHORT,
    };
    let truth = oracle.find_floor_capsule(pos, agent_shape(SHORT), q.down_cm);
    match truth {
        walksurf_oracle::OracleFloor::Floor { floor_dist, .. } => {
            let want = centre[2] - (5.0 + 300f64.sqrt());
            assert!((floor_dist - want).abs() < 1e-9, "oracle: {truth:?}, want {want}")
        }
        other => panic!("the oracle should meet the curb: {other:?}"),
    }
    let ours = surface.find_floor(pos, q.down_cm, SHORT, FloorMode::Capsule);
    assert!(matches!(ours, FloorOutcome::Floor(_)), "unanswered: {ours:?}");
    compare_capsule_floor(&q, ours, truth).unwrap_or_else(|e| panic!("{e}"));

    // And every column around the curb and the shelf's edge, for this
    // capsule and a tall one (whose top is above the shelf, so it may skip
    // the curb).
    let agents = [SHORT, Agent::DEFAULT];
    let queries = capsule_grid_queries(&oracle, [80.0, 40.0, -10.0], [125.0, 60.0, 100.0], 46, 3, &agents);
    let t = compare_capsule(&surface, &oracle, &queries);
    println!("curb under shelf: {}", t.summary());
    t.assert_no_errors("curb under shelf");
    assert!(t.answered > queries.len() / 2, "{}", t.summary());
}

#[test]
fn a_ball_sweeping_into_a_curb_under_a_shelf_meets_it() {
    let (surface, oracle) = bake_generated("curb under shelf", &curb_under_shelf());
    // The ball (R 20) 1 cm above the floor, moving −x under the shelf
    // (its top 41 < 50): it meets the curb's top edge (x 100, z 5) when its
    // centre is √(20² − 16²) = 12 cm from it, after 28 cm. The shelf over
    // the curb is above the ball's top: the curb is not skipped.
    let q = SweepQuery {
        pos: [140.0, 50.0, 21.0],
        delta: [-80.0, 0.0],
        agent: SHORT,
    };
    match oracle.sweep(q.pos, q.delta, agent_shape(SHORT)) {
        walksurf_oracle::OracleSweep::Hit { distance, .. } => assert!((distance - 28.0).abs() < 1e-9, "{distance}"),
        other => panic!("the oracle should meet the curb: {other:?}"),
    }
    let ours = surface.sweep_horizontal(q.pos, q.delta, SHORT);
    assert!(matches!(ours, walksurf::SweepOutcome::Hit(_)), "unanswered: {ours:?}");
    // And sweeps in every direction from around the curb: this ball, and
    // beyond the shelf a tall capsule (which may skip the curb: the shelf's
    // edge over it is then inside its reach first).
    let mut sweeps = Vec::new();
    for (agent, x0) in [(SHORT, 88.0), (Agent::DEFAULT, 143.0)] {
        for i in 0..24 {
            for dz in [0.5, 3.0, 8.0] {
                for k in 0..8 {
                    let a = k as f64 * std::f64::consts::TAU / 8.0;
                    sweeps.push(SweepQuery {
                        pos: [x0 + 2.0 * i as f64, 50.0, agent.half_height_cm + dz],
                        delta: [60.0 * a.cos(), 60.0 * a.sin()],
                        agent,
                    });
                }
            }
        }
    }
    let t = compare_sweep_tally(&surface, &oracle, &sweeps);
    println!("curb sweeps: {}", t.summary());
    t.assert_no_errors("curb sweeps");
    assert!(t.floors > 0 && t.answered > sweeps.len() / 2, "{}", t.summary());
}

#[test]
fn stairs_agree_with_the_oracle() {
    // Risers hidden under their nosings; the default agents and a short one.
    let mut b = LevelBuilder::new();
    b.floor([-100.0, 400.0], [-100.0, 200.0], 0.0, Winding::Up)
        .stairs(0.0, [0.0, 100.0], 0.0, 8, 28.0, 17.0);
    let mesh = b.build();
    let (surface, oracle) = bake_generated("stairs", &mesh);
    assert!(hidden_count(&mesh) > 0, "the risers should be flagged HIDDEN");
    let mut agents = CAPSULE_AGENTS.to_vec();
    agents.push(SHORT);
    let queries = capsule_grid_queries(&oracle, [-20.0, 10.0, -10.0], [250.0, 90.0, 200.0], 55, 3, &agents);
    let t = compare_capsule(&surface, &oracle, &queries);
    println!("stairs: {}", t.summary());
    t.assert_no_errors("stairs");
    assert!(t.answered > queries.len() / 2, "{}", t.summary());
    // Sweeps up and down the flight, and across it, from the same starts.
    let sweeps: Vec<SweepQuery> = queries
        .iter()
        .flat_map(|q| {
            [[40.0, 0.0], [-40.0, 0.0], [120.0, 0.0], [0.0, 60.0]].map(|delta| SweepQuery {
                pos: q.pos,
                delta,
                agent: q.agent,
            })
        })
        .collect();
    let t = compare_sweep_tally(&surface, &oracle, &sweeps);
    println!("stairs sweeps: {}", t.summary());
    t.assert_no_errors("stairs sweeps");
    assert!(t.floors > 0, "{}", t.summary());
}

#[test]
fn a_curb_more_than_the_rise_below_a_shelf_is_not_skipped() {
    // The shelf 50.5 cm above a 5 cm curb: not HIDDEN (the bound is 50), and
    // a ball between them meets the curb.
    let mut b = LevelBuilder::new();
    b.floor([-200.0, 300.0], [-200.0, 300.0], 0.0, Winding::Up)
        .floor([0.0, 100.0], [0.0, 100.0], 55.5, Winding::Both)
        .wall([100.0, 0.0], [100.0, 100.0], [0.0, 0.0], [5.0, 5.0]);
    let mesh = b.build();
    assert_eq!(hidden_count(&mesh), 0);
    let (surface, oracle) = bake_generated("curb far under shelf", &mesh);
    let queries = capsule_grid_queries(&oracle, [80.0, 40.0, -10.0], [125.0, 60.0, 100.0], 46, 3, &[SHORT]);
    let t = compare_capsule(&surface, &oracle, &queries);
    t.assert_no_errors("curb far under shelf");
    assert!(t.floors > 0, "{}", t.summary());
}

/// How many blockers of `mesh`'s default bake carry the `HIDDEN` flag.
fn hidden_count(mesh: &walksurf_bake::Mesh) -> usize {
    let baked =
        walksurf_bake::bake_mesh(mesh, &walksurf_bake::BakeConfig::default(), 1, &walksurf_bake::Silent).expect("bake");
    strip_hidden(&baked.bytes).1
}

/// The baked bytes with every HIDDEN bit cleared, and how many were set.
fn strip_hidden(bytes: &[u8]) -> (Vec<u8>, usize) {
    let layout = FileView::parse(bytes).expect("parse");
    let view = FileView::new(bytes, &layout).expect("view");
    let base = bytes.as_ptr() as usize;
    let mut at = Vec::new();
    for hot in view.hot {
        let tile = view.tile(hot).expect("tile");
        for b in tile.blockers {
            if b.flags.get() & blocker_flags::HIDDEN != 0 {
                at.push(b as *const _ as usize - base + 36);
            }
        }
    }
    let mut out = bytes.to_vec();
    for &o in &at {
        let f = u32::from_le_bytes(out[o..o + 4].try_into().unwrap()) & !blocker_flags::HIDDEN;
        out[o..o + 4].copy_from_slice(&f.to_le_bytes());
    }
    (out, at.len())
}

/// A feature's footprint and height range (for query placement), and the
/// tops of its (likely) hidden blockers.
struct Feature {
    lo: [f64; 3],
    hi: [f64; 3],
    hidden_tops: Vec<f64>,
}

impl Feature {
    fn new(lo: [f64; 3], hi: [f64; 3], hidden_tops: Vec<f64>) -> Feature {
        Feature { lo, hi, hidden_tops }
    }
}

fn random_level(rng: &mut Rng, seed: u64) -> (walksurf_bake::Mesh, Vec<Feature>) {
    // Near a tile corner for some seeds (tiles are 3200 cm).
    let base = if seed.is_multiple_of(3) {
        [3200.0 - rng.range(0.0, 120.0), 3200.0 - rng.range(0.0, 120.0)]
    } else {
        [rng.range(-50.0, 50.0), rng.range(-50.0, 50.0)]
    };
    let offset = if seed % 5 == 1 {
        [rng.range(-2e5, 2e5), rng.range(-2e5, 2e5), rng.range(-5e4, 5e4)]
    } else {
        [0.0; 3]
    };
    let mut b = LevelBuilder::with_offset(offset);
    b.floor(
        [base[0] - 400.0, base[0] + 900.0],
        [base[1] - 400.0, base[1] + 900.0],
        0.0,
        Winding::Up,
    );
    let mut feats = Vec::new();
    let n = 2 + (rng.next() * 3.0) as usize;
    for k in 0..n {
        let ox = base[0] + (k % 2) as f64 * 420.0 + rng.range(-20.0, 20.0);
        let oy = base[1] + (k / 2) as f64 * 420.0 + rng.range(-20.0, 20.0);
        let w = rng.range(40.0, 200.0);
        match (rng.next() * 8.0) as usize {
            6 => {
                // Shelf far above a curb (gap beyond the rise).
                let hc = rng.range(1.0, 30.0);
                let hs = hc + rng.range(45.0, 130.0);
                let d = rng.range(30.0, 150.0);
                b.floor([ox, ox + d], [oy, oy + w], hs, Winding::Both);
                b.wall([ox + d, oy], [ox + d, oy + w], [0.0, 0.0], [hc, hc]);
                feats.push(Feature::new([ox, oy, 0.0], [ox + d, oy + w, hs], vec![hc, hs - 50.0]));
            }
            7 => {
                // A platform with a blocking-only duplicate of its top (or
                // one just below it) and blocking-only steep plates under
                // its edge.
                let hs = rng.range(5.0, 60.0);
                let d = rng.range(30.0, 120.0);
                b.floor([ox, ox + d], [oy, oy + w], hs, Winding::Up);
                b.wall([ox + d, oy], [ox + d, oy + w], [0.0, 0.0], [hs, hs]);
                b.blocking_only = true;
                let dz = if rng.next() < 0.5 { 0.0 } else { rng.range(0.0, 0.02) };
                b.floor([ox, ox + d], [oy, oy + w], hs - dz, Winding::Down);
                b.tri(
                    [ox, oy, hs - rng.range(0.0, 3.0)],
                    [ox + d, oy, hs],
                    [ox + d, oy + w, hs],
                );
                b.blocking_only = false;
                feats.push(Feature::new([ox, oy, 0.0], [ox + d, oy + w, hs], vec![hs]));
            }
            0 => {
                let steps = 2 + (rng.next() * 6.0) as usize;
                let tread = rng.range(12.0, 45.0);
                let riser = rng.range(3.0, 45.0);
                let z0 = if rng.next() < 0.3 { rng.range(-30.0, 30.0) } else { 0.0 };
                b.stairs(ox, [oy, oy + w], z0, steps, tread, riser);
                let tops = (1..=steps).map(|i| z0 + i as f64 * riser).collect();
                feats.push(Feature::new(
                    [ox, oy, z0.min(0.0)],
                    [ox + steps as f64 * tread, oy + w, z0 + steps as f64 * riser],
                    tops,
                ));
                if rng.next() < 0.3 {
                    // A low ceiling over part of the stairs (headroom cut).
                    let zc = z0 + rng.range(100.0, 220.0);
                    b.floor(
                        [ox + tread, ox + steps as f64 * tread + 30.0],
                        [oy - 10.0, oy + w * 0.6],
                        zc,
                        Winding::Both,
                    );
                }
            }
            1 => {
                // Shelf (zero-thickness or slab) with a curb under its edge.
                let hs = rng.range(15.0, 130.0);
                let gap = if rng.next() < 0.5 {
                    rng.range(40.0, 60.0)
                } else {
                    rng.range(0.0, 50.0)
                };
                let hc = (hs - gap).max(0.5);
                let d = rng.range(30.0, 150.0);
                if rng.next() < 0.5 {
                    b.floor([ox, ox + d], [oy, oy + w], hs, Winding::Both);
                } else {
                    let th = rng.range(1.0, 30.0).min(hs - 0.5);
                    b.cuboid([ox, oy, hs - th], [ox + d, oy + w, hs]);
                }
                b.wall([ox + d, oy], [ox + d, oy + w], [0.0, 0.0], [hc, hc]);
                if rng.next() < 0.5 {
                    b.wall([ox, oy], [ox + d, oy], [0.0, 0.0], [hc, hc]);
                }
                feats.push(Feature::new([ox, oy, 0.0], [ox + d, oy + w, hs], vec![hc]));
            }
            2 => {
                // Slab / box, on the floor or floating.
                let h = rng.range(1.0, 80.0);
                let z = if rng.next() < 0.5 { 0.0 } else { rng.range(10.0, 120.0) };
                let d = rng.range(20.0, 200.0);
                b.cuboid([ox, oy, z], [ox + d, oy + w, z + h]);
                feats.push(Feature::new([ox, oy, z], [ox + d, oy + w, z + h], vec![z + h]));
            }
            3 => {
                // Ramp (its sides and back face under the slope).
                let d = rng.range(40.0, 200.0);
                let rise = rng.range(2.0, 0.95 * d).min(90.0);
                let z0 = if rng.next() < 0.3 { rng.range(0.0, 40.0) } else { 0.0 };
                b.ramp_x([ox, ox + d], [oy, oy + w], [z0, z0 + rise]);
                feats.push(Feature::new([ox, oy, z0], [ox + d, oy + w, z0 + rise], vec![z0 + rise]));
            }
            4 => {
                // Floating plate whose underside is a steep wedge (collected
                // faces hidden under it).
                let d = rng.range(30.0, 120.0);
                let z = rng.range(20.0, 120.0);
                let depth = rng.range(d * 1.1, d * 3.0).min(z - 1.0).max(2.0);
                b.floor([ox, ox + d], [oy, oy + w], z, Winding::Up);
                // Wedge: from the edge x = ox (at z) down to z − depth at
                // x = ox + d; its slope face and the back face.
                let p = |x: f64, y: f64, zz: f64| [x, y, zz];
                b.tri(p(ox, oy, z), p(ox + d, oy + w, z - depth), p(ox + d, oy, z - depth))
                    .tri(p(ox, oy, z), p(ox, oy + w, z), p(ox + d, oy + w, z - depth))
                    .wall([ox + d, oy], [ox + d, oy + w], [z - depth, z - depth], [z, z]);
                feats.push(Feature::new(
                    [ox, oy, z - depth],
                    [ox + d, oy + w, z],
                    vec![z, z - depth],
                ));
            }
            _ => {
                // Two-level curb: a platform with a riser and a lip just
                // above it on one side (not hidden) and just below (hidden).
                let hs = rng.range(5.0, 60.0);
                let d = rng.range(30.0, 120.0);
                b.floor([ox, ox + d], [oy, oy + w], hs, Winding::Up);
                b.wall([ox + d, oy], [ox + d, oy + w], [0.0, 0.0], [hs, hs]);
                b.wall([ox, oy], [ox, oy + w], [0.0, 0.0], [hs, hs + rng.range(0.0, 0.01)]);
                b.wall([ox, oy], [ox + d, oy], [0.0, 0.0], [hs, hs]);
                feats.push(Feature::new([ox, oy, 0.0], [ox + d, oy + w, hs], vec![hs]));
            }
        }
    }
    for f in &mut feats {
        for (k, o) in offset.iter().enumerate() {
            f.lo[k] += o;
            f.hi[k] += o;
        }
        for t in &mut f.hidden_tops {
            *t += offset[2];
        }
    }
    (b.build(), feats)
}

fn random_agent(rng: &mut Rng) -> Agent {
    let r = rng.range(5.0, 42.0);
    let h = if rng.next() < 0.25 {
        r
    } else {
        rng.range(r, 100.0f64.max(r))
    };
    Agent {
        radius_cm: r,
        half_height_cm: h,
    }
}

#[derive(Default)]
struct Stats {
    total: Tally,
    stripped: Tally,
    /// Sweeps from the same starts, with and without the bits.
    sweeps: Tally,
    sweeps_stripped: Tally,
    /// Sweeps whose outcome the bits changed.
    sweeps_changed: usize,
    changed: usize,
    gained: usize,
    lost: usize,
    hidden_bits: usize,
}

fn run_queries(surface: &Surface, plain: &Surface, oracle: &walksurf_oracle::Oracle, qs: &[FloorQuery], s: &mut Stats) {
    let t = compare_capsule(surface, oracle, qs);
    let u = compare_capsule(plain, oracle, qs);
    for q in qs {
        let a = surface.find_floor(q.pos, q.down_cm, q.agent, FloorMode::Capsule);
        let b = plain.find_floor(q.pos, q.down_cm, q.agent, FloorMode::Capsule);
        if a != b {
            s.changed += 1;
            if s.changed <= knob("HIDDEN_SHOW", 0) {
                println!("changed: {q:?}\n  hidden {a:?}\n  plain  {b:?}");
            }
            if matches!(b, FloorOutcome::Fallback(_)) && !matches!(a, FloorOutcome::Fallback(_)) {
                s.gained += 1;
            }
            if matches!(a, FloorOutcome::Fallback(_)) && !matches!(b, FloorOutcome::Fallback(_)) {
                s.lost += 1;
                if s.lost <= knob("HIDDEN_SHOW_LOST", 0) {
                    println!("lost: {q:?}\n  hidden {a:?}\n  plain  {b:?}");
                }
            }
        }
    }
    s.total.merge(&t);
    s.stripped.merge(&u);
    // A sweep from each start, its direction and length drawn from its
    // position (up to the bake's longest move).
    let sweeps: Vec<SweepQuery> = qs
        .iter()
        .map(|q| {
            let h = (q.pos[0] * 7.31 + q.pos[1] * 3.17 + q.pos[2] * 1.13).sin() * 1e4;
            let (angle, len) = (h.fract() * std::f64::consts::TAU, (h * 0.37).fract().abs() * 256.0);
            SweepQuery {
                pos: q.pos,
                delta: [len * angle.cos(), len * angle.sin()],
                agent: q.agent,
            }
        })
        .collect();
    let t = compare_sweep_tally(surface, oracle, &sweeps);
    let u = compare_sweep_tally(plain, oracle, &sweeps);
    for q in &sweeps {
        if surface.sweep_horizontal(q.pos, q.delta, q.agent) != plain.sweep_horizontal(q.pos, q.delta, q.agent) {
            s.sweeps_changed += 1;
        }
    }
    s.sweeps.merge(&t);
    s.sweeps_stripped.merge(&u);
}

#[test]
fn fuzz_hidden_levels_with_and_without_the_flag() {
    let mut s = Stats::default();
    for seed in fuzz_seeds() {
        let mut rng = Rng::seeded(0x4d1d_de11, seed);
        let (mesh, feats) = random_level(&mut rng, seed);
        let baked = walksurf_bake::bake_mesh(&mesh, &walksurf_bake::BakeConfig::default(), 1, &walksurf_bake::Silent)
            .unwrap_or_else(|e| panic!("seed {seed}: bake: {e}"));
        let mut surface = Surface::from_bytes(&baked.bytes).expect("open");
        let (stripped, bits) = strip_hidden(&baked.bytes);
        s.hidden_bits += bits;
        let mut plain = Surface::from_bytes(&stripped).expect("open stripped");
        if knob("HIDDEN_REFERENCE", 0) == 1 {
            surface.set_precision_path(walksurf::PrecisionPath::Reference);
            plain.set_precision_path(walksurf::PrecisionPath::Reference);
        }
        let oracle = walksurf_oracle::Oracle::new(&mesh.vertices, &mesh.triangles).expect("oracle");
        let agents: Vec<Agent> = (0..knob("HIDDEN_AGENTS", 6)).map(|_| random_agent(&mut rng)).collect();
        let mut qs = Vec::new();
        for f in &feats {
            // Columns at random around and across the feature's edges.
            for _ in 0..knob("HIDDEN_COLUMNS", 10) {
                let x = rng.range(f.lo[0] - 50.0, f.hi[0] + 50.0);
                let y = rng.range(f.lo[1] - 50.0, f.hi[1] + 50.0);
                let agent = rng.pick(&agents);
                capsule_column_queries(&oracle, x, y, f.lo[2] - 20.0, f.hi[2] + 20.0, agent, &mut qs);
                // Starts around the threshold of the skip for each hidden
                // top: top sphere centre at top + 50 (+ the runtime's
                // margins), and random heights.
                for &zt in &f.hidden_tops {
                    let thr = zt + 50.0 - agent.half_height_cm + agent.radius_cm;
                    for dz in [-0.5, -0.002, 0.0, 0.0005, 0.0015, 0.002, 0.003, 0.01, 0.5, 3.0] {
                        for down in [10.0, 47.4, 200.0] {
                            qs.push(FloorQuery {
                                pos: [x, y, thr + dz],
                                down_cm: down,
                                agent,
                            });
                        }
                    }
                }
                for _ in 0..20 {
                    let z = rng.range(f.lo[2], f.hi[2] + 150.0);
                    let any = rng.range(0.0, 200.0);
                    let down_cm = rng.pick(&[0.0, 10.0, 47.4, 200.0, any]);
                    qs.push(FloorQuery {
                        pos: [x, y, z],
                        down_cm,
                        agent,
                    });
                }
            }
        }
        let before = s.total.errors.len();
        run_queries(&surface, &plain, &oracle, &qs, &mut s);
        if s.total.errors.len() > before {
            println!("seed {seed}: {} new errors", s.total.errors.len() - before);
        }
    }
    println!("with HIDDEN:    {}", s.total.summary());
    println!("HIDDEN cleared: {}", s.stripped.summary());
    println!("sweeps with HIDDEN:    {}", s.sweeps.summary());
    println!("sweeps HIDDEN cleared: {}", s.sweeps_stripped.summary());
    println!(
        "hidden bits {}, outcomes changed {}, fallback -> answered {}, answered -> fallback {}",
        s.hidden_bits, s.changed, s.gained, s.lost
    );
    s.total.assert_no_errors("fuzz (HIDDEN)");
    s.stripped.assert_no_errors("fuzz (HIDDEN cleared)");
    s.sweeps.assert_no_errors("fuzz sweeps (HIDDEN)");
    s.sweeps_stripped.assert_no_errors("fuzz sweeps (HIDDEN cleared)");
    // The flag was set and changed answers of both queries (else this fuzz
    // tests nothing).
    println!("sweeps changed {}", s.sweeps_changed);
    assert!(s.hidden_bits > 0 && s.changed > 0, "no HIDDEN blocker changed a floor");
    assert!(s.sweeps_changed > 0, "no HIDDEN blocker changed a sweep");
}

/// Shared levels: columns sampled on and around HIDDEN blockers (world
/// positions from the file), random agents, starts around the skip's
/// threshold and around where the capsule rests.
#[test]
fn shared_levels_near_hidden_blockers() {
    let Some(dir) = shared_levels_dir() else {
        return;
    };
    let per_level = knob("HIDDEN_SHARED_COLUMNS", 400usize);
    let mut all = Tally::default();
    let mut all_plain = Tally::default();
    let (mut changed, mut gained) = (0usize, 0usize);
    for &(file, _, _) in SHARED_LEVELS {
        let (_, mesh, baked) = bake_shared_level(&dir, file);
        let surface = Surface::from_bytes(&baked.bytes).expect("open");
        let (stripped, bits) = strip_hidden(&baked.bytes);
        let plain = Surface::from_bytes(&stripped).expect("open stripped");
        let oracle = walksurf_oracle::Oracle::new(&mesh.vertices, &mesh.triangles).expect("oracle");
        // World triangles of the HIDDEN blockers (one copy per tile).
        let layout = FileView::parse(&baked.bytes).expect("parse");
        let view = FileView::new(&baked.bytes, &layout).expect("view");
        let mut hidden: Vec<[[f64; 3]; 3]> = Vec::new();
        for hot in view.hot {
            let tile = view.tile(hot).expect("tile");
            let o = tile.origin_cm();
            for b in tile.blockers {
                if b.flags.get() & blocker_flags::HIDDEN != 0 {
                    hidden.push(b.v.map(|p| [0, 1, 2].map(|k| p[k].get() as f64 / 1024.0 + o[k])));
                }
            }
        }
        if hidden.is_empty() {
            println!("{file}: no HIDDEN blockers");
            continue;
        }
        let mut rng = Rng::seeded(0x05ee_d0fa_ca42, file.len() as u64);
        let mut qs = Vec::new();
        for _ in 0..per_level {
            let t = hidden[((rng.next() * hidden.len() as f64) as usize).min(hidden.len() - 1)];
            // A point of the triangle, then a column within 50 cm of it.
            let (u, v) = (rng.next(), rng.next());
            let (u, v) = if u + v > 1.0 { (1.0 - u, 1.0 - v) } else { (u, v) };
            let p = [0, 1, 2].map(|k| t[0][k] + u * (t[1][k] - t[0][k]) + v * (t[2][k] - t[0][k]));
            let top = t[0][2].max(t[1][2]).max(t[2][2]);
            let (x, y) = (p[0] + rng.range(-50.0, 50.0), p[1] + rng.range(-50.0, 50.0));
            let agent = random_agent(&mut rng);
            if rng.next() < 0.3 {
                capsule_column_queries(&oracle, x, y, top - 60.0, top + 60.0, agent, &mut qs);
            }
            let thr = top + 50.0 - agent.half_height_cm + agent.radius_cm;
            for dz in [-0.5, -0.002, 0.0, 0.0015, 0.003, 0.01, 0.5, 3.0, rng.range(-20.0, 60.0)] {
                for down in [10.0, 47.4, 200.0] {
                    qs.push(FloorQuery {
                        pos: [x, y, thr + dz],
                        down_cm: down,
                        agent,
                    });
                }
            }
        }
        let mut s = Stats {
            hidden_bits: bits,
            ..Stats::default()
        };
        run_queries(&surface, &plain, &oracle, &qs, &mut s);
        let (summary, plain_pct) = (s.total.summary(), s.stripped.answered_pct());
        println!(
            "{file}: hidden {bits}; {summary} | plain answered {plain_pct:.2}% | changed {} gained {} lost {}",
            s.changed, s.gained, s.lost
        );
        all.merge(&s.total);
        all.merge(&s.sweeps);
        all_plain.merge(&s.stripped);
        all_plain.merge(&s.sweeps_stripped);
        changed += s.changed;
        gained += s.gained;
    }
    println!(
        "all: {} | plain {} | changed {changed} gained {gained}",
        all.summary(),
        all_plain.summary()
    );
    assert!(all.n > 0, "no shared level has a HIDDEN blocker");
    all.assert_no_errors("shared levels near HIDDEN blockers");
    all_plain.assert_no_errors("shared levels near HIDDEN blockers (cleared)");
}
