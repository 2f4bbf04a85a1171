//! Adversarial checks of the certified sweep fast path (`certified_sweep`:
//! any certificate of the cells a move crosses, footprints tested along the
//! move) against the exact oracle.
mod common;
use common::*;
use walksurf::{Agent, FloorMode, FloorOutcome, Surface, SweepOutcome};
use walksurf_bake::{BakeConfig, Silent, bake_mesh};
use walksurf_oracle::{Oracle, OracleFloor};

/// Bakes `mesh` with `config`, opens it and builds its oracle.
fn bake_with(name: &str, mesh: &walksurf_bake::Mesh, config: &BakeConfig) -> (Surface, Oracle) {
    let baked = bake_mesh(mesh, config, 1, &Silent).unwrap_or_else(|e| panic!("{name}: bake: {e}"));
    let surface = Surface::from_bytes(&baked.bytes).unwrap_or_else(|e| panic!("{name}: open: {e}"));
    let oracle = Oracle::new(&mesh.vertices, &mesh.triangles).unwrap_or_else(|e| panic!("{name}: oracle: {e}"));
    (surface, oracle)
}

/// A largest radius off the 1/1024 cm vertex grid (41.99 cm): the grown
/// square of cell 40 (x from 1600) starts at x = 1558.01. A floating
/// walkable slab whose edge lies at x = 1558.0102, inside that square, is
/// stored with its vertices rounded to 1558.009766, outside it. The
/// certificate stage must bucket primitives by their stored box grown by
/// the radius and the edge band (as far as the squares it tests them
/// against), or cell 40's certificate never sees the slab and a capsule
/// of the largest radius with its axis in cell 40, reaching 0.0002 cm
/// into the slab, is cleared (40 of 40 false answers before the fix).
#[test]
fn slab_rounded_out_of_the_grown_square() {
    let config = BakeConfig {
        max_agent_radius_cm: 41.99,
        max_agent_half_height_cm: 110.0,
        ..BakeConfig::default()
    };
    let edge = 1558.0102;
    let mut lb = LevelBuilder::new();
    lb.floor([0.0, 3200.0], [0.0, 3200.0], 0.0, Winding::Up);
    // The slab, 150 cm up (a walkable floor of its own), x ≤ edge,
    // y in [1700, 1900].
    lb.floor([1400.0, edge], [1700.0, 1900.0], 150.0, Winding::Up);
    let mesh = lb.build();
    let (surface, oracle) = bake_with("slab_rounded_out", &mesh, &config);
    let agent = Agent {
        radius_cm: 41.99,
        half_height_cm: 100.0,
    };
    // Axis at x = 1600 (cell 40), bottom 1 cm over the floor, moving +y into
    // the slab's span (its edge 41.9898 cm from the axis).
    let z = 1.0 + agent.half_height_cm;
    let mut errors = Vec::new();
    let (mut clear, mut fast) = (0, 0);
    for k in 0..40 {
        let x = 1600.0 + 0.0001 * k as f64;
        let pos = [x, 1675.0, z];
        let q = SweepQuery {
            pos,
            delta: [0.0, 30.0],
            agent,
        };
        let ours = surface.sweep_horizontal(q.pos, q.delta, agent);
        let truth = oracle.sweep(q.pos, q.delta, agent_shape(agent));
        clear += matches!(ours, SweepOutcome::Clear) as usize;
        fast += fast_clear(&surface, q.pos, q.delta, agent) as usize;
        if let Err(why) = compare_sweep(&q, ours, truth) {
            errors.push(format!("sweep x {x}: {why}"));
        }
        // The same capsule standing inside the slab's span: find_floor's
        // certificate path has the same blind spot.
        let fpos = [x, 1800.0, z];
        let floor = surface.find_floor(fpos, 47.4, agent, FloorMode::Capsule);
        let ftruth = oracle.find_floor_capsule(fpos, agent_shape(agent), 47.4);
        if matches!(ftruth, OracleFloor::StartOverlap) && !matches!(floor, FloorOutcome::Fallback(_)) {
            errors.push(format!("find_floor x {x}: {floor:?} vs oracle {ftruth:?}"));
        }
    }
    println!("clear {clear} of 40 ({fast} by the fast path); {} errors", errors.len());
    assert_agree("slab_rounded_out", &errors, 80, "answers");
}

/// Whether `certified_sweep` (the fast path, on `surface`'s precision
/// path) answers `Clear`: tells the fast path's answers from the full
/// path's and aims the fuzzers.
fn fast_clear(surface: &Surface, pos: [f64; 3], delta: [f64; 2], agent: Agent) -> bool {
    surface.sweep_certified_clear(pos, delta, agent)
}

/// The fuzzers' bake settings: the default ones, with the largest radius
/// `FUZZ_RADIUS` (42 cm) if set.
fn fuzz_config() -> BakeConfig {
    BakeConfig {
        max_agent_radius_cm: knob("FUZZ_RADIUS", 42.0),
        ..BakeConfig::default()
    }
}

/// A floor of 10 cm squares on the plane `z`, over `[x0, x0 + 10·n]²`,
/// with the squares `hole` says missing (the cells by a hole get
/// certificates of some quarters only).
fn holed_floor(
    lb: &mut LevelBuilder,
    z: &impl Fn(f64, f64) -> f64,
    x0: f64,
    n: usize,
    hole: &mut impl FnMut(usize, usize) -> bool,
) {
    for j in 0..n {
        for i in 0..n {
            if hole(i, j) {
                continue;
            }
            let (xa, xb) = (x0 + 10.0 * i as f64, x0 + 10.0 * (i + 1) as f64);
            let (ya, yb) = (x0 + 10.0 * j as f64, x0 + 10.0 * (j + 1) as f64);
            lb.quad(
                [
                    [xa, ya, z(xa, ya)],
                    [xb, ya, z(xb, ya)],
                    [xb, yb, z(xb, yb)],
                    [xa, yb, z(xa, yb)],
                ],
                Winding::Up,
            );
        }
    }
}

/// Levels where many certificates cover only some quarters (a floor with
/// holes, over a lower floor a hair to 30 cm below), with low obstacles,
/// thin plates just over the floor, walls rising from below through the
/// holes and low ceilings; sweeps the fast path answers `Clear` for (found
/// by [`fast_clear`], pushed to the lowest lift and the nearest approach
/// it still clears by bisection), each against the oracle.
#[test]
fn fuzz_fast_path_quarter_certificates() {
    let mut total = Tally::default();
    let mut fast = 0usize;
    for seed in fuzz_seeds() {
        let mut rng = Rng::seeded(0xA0761D6478BD642F, seed);
        let steep = rng.pick(&[0.0, 0.01, 0.3, 0.6]);
        let (a, b) = (rng.range(-steep, steep), rng.range(-steep, steep));
        let z = |x: f64, y: f64| a * x + b * y + 500.0;
        let (x0, n) = (1000.0, 64usize);
        let x1 = x0 + 10.0 * n as f64;
        let mut lb = LevelBuilder::new();
        // A few rectangular holes, 1–5 squares a side.
        let rects: Vec<[usize; 4]> = (0..8)
            .map(|_| {
                let (i, j) = ((rng.next() * n as f64) as usize, (rng.next() * n as f64) as usize);
                let (w, h) = (1 + (rng.next() * 5.0) as usize, 1 + (rng.next() * 5.0) as usize);
                [i, j, i + w, j + h]
            })
            .collect();
        let in_hole = |i: usize, j: usize| rects.iter().any(|r| i >= r[0] && i < r[2] && j >= r[1] && j < r[3]);
        let holes: Vec<(usize, usize)> = (0..n * n)
            .map(|k| (k % n, k / n))
            .filter(|&(i, j)| in_hole(i, j))
            .collect();
        holed_floor(&mut lb, &z, x0, n, &mut |i, j| in_hole(i, j));
        // The lower floor (its own plane), a hair to 30 cm below.
        let drop = rng.pick(&[0.004, 0.008, 0.0105, 0.012, 0.02, 0.5, 30.0]);
        let zl = |x: f64, y: f64| z(x, y) - drop;
        // (Under each hole only, a square wider: small pieces, tight
        // height ranges.)
        for r in &rects {
            let sq = |i: usize| x0 + 10.0 * i as f64;
            lb.plane(
                [sq(r[0]) - 10.0, sq(r[2]) + 10.0],
                [sq(r[1]) - 10.0, sq(r[3]) + 10.0],
                [a, b, 500.0 - drop],
                Winding::Up,
            );
        }
        lb.blocking_only = true;
        let mut obstacles: Vec<[f64; 2]> = Vec::new();
        for _ in 0..24 {
            let c = if !holes.is_empty() && rng.next() < 0.5 {
                let (i, j) = rng.pick(&holes);
                [
                    x0 + 10.0 * i as f64 + rng.range(0.0, 10.0),
                    x0 + 10.0 * j as f64 + rng.range(0.0, 10.0),
                ]
            } else {
                [rng.range(x0 + 20.0, x1 - 20.0), rng.range(x0 + 20.0, x1 - 20.0)]
            };
            obstacle(&mut lb, &z, &zl, c, &mut rng);
            obstacles.push(c);
        }
        let mesh = lb.build();
        let (surface, oracle) = bake_with("fuzz_fast_quarters", &mesh, &fuzz_config());
        let (ncert, nquarter) = cert_counts(&surface);
        let tries: usize = knob("FUZZ_Q", 400);
        let sweeps = hunt(&surface, &z, [a, b], &obstacles, &mut rng, tries);
        let mut reference = Surface::from_bytes(surface.bytes()).expect("reopen");
        reference.set_precision_path(walksurf::PrecisionPath::Reference);
        for q in &sweeps {
            assert!(fast_clear(&surface, q.pos, q.delta, q.agent));
            let ours = surface.sweep_horizontal(q.pos, q.delta, q.agent);
            assert!(
                matches!(ours, SweepOutcome::Clear),
                "the fast path's Clear is the answer: {ours:?}"
            );
        }
        // The Reference path's answers too (its own bounds).
        let t = compare_sweep_tally(&reference, &oracle, &sweeps);
        total.merge(&t);
        fast += sweeps.len();
        let t = compare_sweep_tally(&surface, &oracle, &sweeps);
        println!(
            "seed {seed} slope ({a:.3}, {b:.3}) drop {drop}: certs {ncert} ({nquarter} quarter-only): {}",
            t.summary()
        );
        for e in t.errors.iter().take(4) {
            println!("WRONG {e}");
        }
        total.merge(&t);
    }
    println!("total: {} ({fast} fast-path answers)", total.summary());
    total.assert_no_errors("fuzz_fast_path_quarter_certificates");
}

/// Certificates in the file, and how many cover only some quarters.
fn cert_counts(surface: &Surface) -> (usize, usize) {
    let Some(view) = walksurf_format::FileView::new(surface.bytes(), surface.layout()) else {
        return (0, 0);
    };
    let (mut all, mut part) = (0, 0);
    for hot in view.hot {
        let Some(tile) = view.tile(hot) else { continue };
        for j in 0..walksurf_format::CERT_CELLS {
            for i in 0..walksurf_format::CERT_CELLS {
                for c in tile.certs_in_cell(i, j) {
                    all += 1;
                    part += (c.cover.get() & walksurf_format::CERT_ALL_SUBCELLS != walksurf_format::CERT_ALL_SUBCELLS)
                        as usize;
                }
            }
        }
    }
    (all, part)
}

/// Sweeps near `obstacles` over the plane `z` (slope `[a, b]`) that the
/// fast path answers `Clear` for: `tries` random starts, directions,
/// lengths and agents, each pushed by bisection to the lowest lift over
/// the plane, the highest lift (under a ceiling) and the nearest approach
/// to the obstacle that [`fast_clear`] still clears.
fn hunt(
    surface: &Surface,
    z: &impl Fn(f64, f64) -> f64,
    [a, b]: [f64; 2],
    obstacles: &[[f64; 2]],
    rng: &mut Rng,
    tries: usize,
) -> Vec<SweepQuery> {
    let mut sweeps = Vec::new();
    // (The file stores the radius in `f32`; the runtime refuses more.)
    let rmax = fuzz_config().max_agent_radius_cm;
    let rmax = rmax.min(rmax as f32 as f64);
    for k in 0..tries {
        let c = obstacles[k % obstacles.len()];
        let agent = match (rng.next() * 4.0) as usize {
            0 => Agent {
                radius_cm: rmax,
                half_height_cm: 96.0,
            },
            1 => Agent {
                radius_cm: rng.range(0.2, rmax),
                half_height_cm: rng.range(rmax, 140.0),
            },
            2 => Agent {
                radius_cm: rmax,
                half_height_cm: rmax,
            },
            _ => Agent {
                radius_cm: rng.range(0.2, 10.0),
                half_height_cm: rng.range(10.0, 20.0),
            },
        };
        let r = agent.radius_cm;
        let ang = rng.range(0.0, std::f64::consts::TAU);
        let dist = rng.range(0.0, r + 30.0);
        let (x, y) = (c[0] + dist * ang.cos(), c[1] + dist * ang.sin());
        let dir = ang + std::f64::consts::PI + rng.range(-1.5, 1.5);
        let len = rng.pick(&[1e-6, 0.01, 1.0, 10.0, 25.0, 39.99, 40.0]) * rng.range(0.9, 1.0);
        let delta = [len * dir.cos(), len * dir.sin()];
        let rest = z(x, y) + r * (1.0 + a * a + b * b).sqrt() - r + agent.half_height_cm;
        let at = |lift: f64| [x, y, rest + lift];
        // The lowest lift (of a ladder) it clears, refined by bisection.
        let Some(hi) = [0.0011, 0.003, 0.02, 0.3, 3.0, 20.0, 80.0]
            .into_iter()
            .find(|&l| fast_clear(surface, at(l), delta, agent))
        else {
            continue;
        };
        let hi = edge(hi, 0.0, 30, |l| fast_clear(surface, at(l), delta, agent));
        sweeps.push(SweepQuery {
            pos: at(hi),
            delta,
            agent,
        });
        // And the highest lift it clears (a capsule top under a ceiling).
        let top = hi + 300.0;
        if !fast_clear(surface, at(top), delta, agent) {
            let lo = edge(hi, top, 40, |l| fast_clear(surface, at(l), delta, agent));
            sweeps.push(SweepQuery {
                pos: at(lo),
                delta,
                agent,
            });
        }
        // The nearest approach it clears: slide the start toward the
        // obstacle's centre.
        let toward = [c[0] - x, c[1] - y];
        let lift = hi * 1.5 + 0.002;
        if fast_clear(surface, at(lift), delta, agent) {
            let shifted = |s: f64| [x + s * toward[0], y + s * toward[1]];
            let q = |s: f64| {
                let p = shifted(s);
                let rest = z(p[0], p[1]) + r * (1.0 + a * a + b * b).sqrt() - r + agent.half_height_cm;
                [p[0], p[1], rest + lift]
            };
            if !fast_clear(surface, q(1.0), delta, agent) {
                let s0 = edge(0.0, 1.0, 40, |s| fast_clear(surface, q(s), delta, agent));
                sweeps.push(SweepQuery {
                    pos: q(s0),
                    delta,
                    agent,
                });
            }
        }
    }
    sweeps
}

/// One random obstacle around `c` over the floor `z` (a lower floor `zl`
/// below it): a wall from under the lower floor up through the floor, a
/// thin plate just over the floor, a spike, a plate just under the floor,
/// or a low ceiling plate.
fn obstacle(
    lb: &mut LevelBuilder,
    z: &impl Fn(f64, f64) -> f64,
    zl: &impl Fn(f64, f64) -> f64,
    c: [f64; 2],
    rng: &mut Rng,
) {
    let s = rng.range(0.3, 12.0);
    let ang = rng.range(0.0, std::f64::consts::TAU);
    let d = [ang.cos() * s, ang.sin() * s];
    let (p0, p1) = ([c[0] - d[0], c[1] - d[1]], [c[0] + d[0], c[1] + d[1]]);
    let h = rng.pick(&[0.005, 0.02, 0.2, 1.0, 4.0, 15.0]) * rng.range(0.5, 1.0);
    let zz = |p: [f64; 2]| z(p[0], p[1]);
    match (rng.next() * 5.0) as usize {
        0 => {
            // A wall from the lower floor up through the floor.
            let (za, zb) = (zl(p0[0], p0[1]) - 1.0, zl(p1[0], p1[1]) - 1.0);
            lb.wall(p0, p1, [za, zb], [zz(p0) + h, zz(p1) + h]);
        }
        1 => {
            // A thin plate parallel to the floor, h above it.
            let p = |dx: f64, dy: f64| [c[0] + dx, c[1] + dy, z(c[0] + dx, c[1] + dy) + h];
            lb.tri(p(-s, -s), p(s, -s), p(0.0, s));
        }
        2 => {
            // A spike.
            let base: Vec<[f64; 3]> = (0..3)
                .map(|k| {
                    let t = k as f64 * 2.094 + ang;
                    let q = [c[0] + s * t.cos(), c[1] + s * t.sin()];
                    [q[0], q[1], zz(q) - 1.0]
                })
                .collect();
            let apex = [c[0], c[1], zz(c) + h];
            lb.tri(base[0], base[1], apex)
                .tri(base[1], base[2], apex)
                .tri(base[2], base[0], apex);
        }
        3 => {
            // Something just under the floor (a plate 0.005–0.02 below).
            let under = rng.pick(&[0.002, 0.006, 0.0095, 0.0105, 0.015]);
            let p = |dx: f64, dy: f64| [c[0] + dx, c[1] + dy, z(c[0] + dx, c[1] + dy) - under];
            lb.tri(p(-s, -s), p(s, -s), p(0.0, s));
        }
        _ => {
            // A low ceiling plate, 170–260 cm over the floor.
            let up = rng.range(170.0, 260.0);
            let p = |dx: f64, dy: f64| [c[0] + 3.0 * dx, c[1] + 3.0 * dy, z(c[0], c[1]) + up];
            lb.tri(p(-s, -s), p(s, -s), p(0.0, s));
        }
    }
}

/// A sloped floor (up to the walkable limit) across a tile corner, far from
/// the world origin on some seeds, with obstacles on tile edges, cell lines
/// and quarter lines: moves that start by a tile edge (the fast path reads
/// the start's tile only) or cross cell lines, against the oracle.
#[test]
fn fuzz_fast_path_tile_edges() {
    let mut total = Tally::default();
    let mut fast = 0usize;
    for seed in fuzz_seeds() {
        let mut rng = Rng::seeded(0xE7037ED1A0B428DB, seed);
        let steep = rng.pick(&[0.0, 0.2, 0.7, 0.98]);
        let ang = rng.range(0.0, std::f64::consts::TAU);
        let (a, b) = (steep * ang.cos(), steep * ang.sin());
        let far = rng.pick(&[0.0, 0.0, 3200.0 * 300.0]);
        let t = 3200.0;
        let z = |x: f64, y: f64| a * (x - t) + b * (y - t) + 40.0;
        let zl = |x: f64, y: f64| z(x, y) - 50.0;
        let mut lb = LevelBuilder::with_offset([far, -far, 0.0]);
        let span = [t - 400.0, t + 400.0];
        lb.plane(span, span, [a, b, 40.0 - a * t - b * t], Winding::Up);
        lb.blocking_only = true;
        let mut obstacles = Vec::new();
        for _ in 0..30 {
            let line = |rng: &mut Rng| {
                let grid = rng.pick(&[3200.0, 40.0, 20.0]);
                let v = rng.range(span[0] + 60.0, span[1] - 60.0);
                (v / grid).round() * grid + rng.pick(&[0.0, 1e-7, -1e-7, 0.5, -0.5, 20.0])
            };
            let c = if rng.next() < 0.5 {
                [line(&mut rng), rng.range(span[0] + 60.0, span[1] - 60.0)]
            } else {
                [rng.range(span[0] + 60.0, span[1] - 60.0), line(&mut rng)]
            };
            obstacle(&mut lb, &z, &zl, c, &mut rng);
            obstacles.push(c);
        }
        let mesh = lb.build();
        let (surface, oracle) = bake_with("fuzz_fast_tile_edges", &mesh, &fuzz_config());
        let tries: usize = knob("FUZZ_Q", 400);
        // (World positions: the builder's offset moves every vertex.)
        let zw = |x: f64, y: f64| z(x - far, y + far);
        let moved: Vec<[f64; 2]> = obstacles.iter().map(|c| [c[0] + far, c[1] - far]).collect();
        let sweeps = hunt(&surface, &zw, [a, b], &moved, &mut rng, tries);
        let mut reference = Surface::from_bytes(surface.bytes()).expect("reopen");
        reference.set_precision_path(walksurf::PrecisionPath::Reference);
        fast += sweeps.len();
        let t = compare_sweep_tally(&surface, &oracle, &sweeps);
        let tr = compare_sweep_tally(&reference, &oracle, &sweeps);
        println!(
            "seed {seed} slope ({a:.3}, {b:.3}) far {far}: {} | reference {}",
            t.summary(),
            tr.summary()
        );
        for e in t.errors.iter().chain(&tr.errors).take(4) {
            println!("WRONG {e}");
        }
        total.merge(&t);
        total.merge(&tr);
    }
    println!("total: {} ({fast} fast-path answers)", total.summary());
    total.assert_no_errors("fuzz_fast_path_tile_edges");
}
