//! The flat-floor certificates against the exact oracle where they are
//! easiest to get wrong: footprints stored in `f32` far from the tile
//! origin, a hole smaller than the coverage test's rounding slack, a
//! ceiling that must bound the clearance rather than void the certificate,
//! and random sloped floors with small obstacles and edges (found by a
//! review of the certificates of format 2.0; the first four failed before
//! their fixes, the random ones guard what held).
mod common;
use common::*;
use walksurf::{Agent, Surface};
use walksurf_oracle::Oracle;

/// A long diagonal vertical wall whose far ends lie ~2.5 km from the tile
/// origin: its footprint segment, stored in `f32`, moves by ~0.011 cm,
/// which its stored error must include. Capsules overlapping it by
/// 0.001–0.005 cm must not get a floor.
#[test]
fn far_wall_f32_rounding() {
    let x: f64 = 250000.0; // a multiple of the f32 ulp there (1/64)
    let e = 0.0077; // under half an ulp: rounds away
    let a = [-x + e, -x - e];
    let b = [x + e, x - e];
    // true line: x − y = 2e; stored (rounded) line: x − y = 0.
    let h = 300.0;
    let mut lb = LevelBuilder::new();
    lb.floor([0.0, 3200.0], [0.0, 3200.0], 0.0, Winding::Up);
    lb.quad(
        [[a[0], a[1], 0.0], [b[0], b[1], 0.0], [b[0], b[1], h], [a[0], a[1], h]],
        Winding::Both,
    );
    let mesh = lb.build();
    let (surface, oracle) = bake_generated("far_wall", &mesh);
    let agent = Agent::DEFAULT;
    let r = agent.radius_cm;
    let mut queries = Vec::new();
    for i in 0..400 {
        let t = 300.0 + i as f64 * 6.37;
        for overlap in [0.001, 0.003, 0.005] {
            // Point on the side x − y > 2e, true distance r − overlap.
            let s = std::f64::consts::SQRT_2 * (r - overlap) + 2.0 * e;
            queries.push(standing(agent, [t + s / 2.0, t - s / 2.0]));
        }
    }
    compare_capsule(&surface, &oracle, &queries).assert_no_errors("far_wall");
}

/// A capsule standing 5 cm over the floor at z = 0, axis at `p`.
fn standing(agent: Agent, p: [f64; 2]) -> FloorQuery {
    FloorQuery {
        pos: [p[0], p[1], 5.0 + agent.half_height_cm],
        down_cm: 47.4,
        agent,
    }
}

/// The same with a wall leaning 1 cm over its 300 cm (a single triangle,
/// listed by its footprint).
#[test]
fn far_leaning_wall_f32_rounding() {
    let x: f64 = 250000.0;
    let m = 1600.0;
    let d = 0.0075; // under half an ulp (1/128)
    let w = 1.0; // lean, cm
    let s2 = std::f64::consts::FRAC_1_SQRT_2;
    // Midline ends (what the bake stores, rounded to (±x + m, ±x + m)).
    let pa = [-x + m + d, -x + m - d];
    let pb = [x + m + d, x + m - d];
    let back = [-(w / 2.0) * s2, (w / 2.0) * s2];
    let a0 = [pa[0] + back[0], pa[1] + back[1], 0.0];
    let b0 = [pb[0] + back[0], pb[1] + back[1], 0.0];
    let c = [m + d + (w / 2.0) * s2, m - d - (w / 2.0) * s2, 300.0];
    let mut lb = LevelBuilder::new();
    lb.floor([0.0, 3200.0], [0.0, 3200.0], 0.0, Winding::Up);
    lb.tri(a0, b0, c).tri(a0, c, b0);
    let mesh = lb.build();
    let (surface, oracle) = bake_generated("far_leaning_wall", &mesh);
    let agent = Agent {
        radius_cm: 42.0,
        half_height_cm: 200.0,
    };
    let r = agent.radius_cm;
    let mut queries = Vec::new();
    for i in -20..=20 {
        let along = i as f64 * 0.5;
        for ov in [0.001, 0.002, 0.003, 0.005] {
            // Axis perpendicular from C (toward x − y > 0), true distance r − ov.
            queries.push(standing(
                agent,
                [c[0] + along + (r - ov) * s2, c[1] + along - (r - ov) * s2],
            ));
        }
    }
    compare_capsule(&surface, &oracle, &queries).assert_no_errors("far_leaning_wall");
}

/// A floor with a 0.03 cm square hole (welded triangles around it) over a
/// lower floor: the coverage test's 1e-3 cm² slack lets a certificate
/// cover the hole; a line trace (r = 0) or a thin capsule falls through.
#[test]
fn tiny_hole() {
    let (h0, h1) = (1610.0, 1610.03);
    let (o0, o1) = (0.0, 3200.0);
    let mut lb = LevelBuilder::new();
    let z = 0.0;
    let p = |x: f64, y: f64| [x, y, z];
    // Four trapezoids around the hole, counter-clockwise.
    lb.quad([p(o0, o0), p(o1, o0), p(h1, h0), p(h0, h0)], Winding::Up);
    lb.quad([p(o1, o0), p(o1, o1), p(h1, h1), p(h1, h0)], Winding::Up);
    lb.quad([p(o1, o1), p(o0, o1), p(h0, h1), p(h1, h1)], Winding::Up);
    lb.quad([p(o0, o1), p(o0, o0), p(h0, h0), p(h0, h1)], Winding::Up);
    lb.floor([1500.0, 1700.0], [1500.0, 1700.0], -30.0, Winding::Up);
    let mesh = lb.build();
    let (surface, oracle) = bake_generated("tiny_hole", &mesh);
    let mut queries = Vec::new();
    for i in 1..6 {
        for j in 1..6 {
            let (x, y) = (h0 + 0.005 * i as f64, h0 + 0.005 * j as f64);
            queries.push(FloorQuery::new([x, y, 10.0 + Agent::DEFAULT.half_height_cm], 47.4));
        }
    }
    let t = compare_line(&surface, &oracle, &queries);
    println!("tiny_hole line: {}", t.summary());
    for e in t.errors.iter().take(3) {
        println!("WRONG {e}");
    }
    let thin = Agent {
        radius_cm: 0.005,
        half_height_cm: 90.0,
    };
    let cq: Vec<FloorQuery> = queries.iter().map(|q| FloorQuery { agent: thin, ..*q }).collect();
    let t2 = compare_capsule(&surface, &oracle, &cq);
    println!("tiny_hole capsule r=0.005: {}", t2.summary());
    for e in t2.errors.iter().take(3) {
        println!("WRONG {e}");
    }
    assert!(t.errors.is_empty() && t2.errors.is_empty());
}

/// A room 220 cm high: the ceiling is within reach of every quarter of
/// the floor's cells, so listing it would leave the floor's certificates
/// useless; it bounds their clearance instead, and they stay.
#[test]
fn low_ceiling_bounds_the_clearance() {
    let mut lb = LevelBuilder::new();
    lb.floor([0.0, 3200.0], [0.0, 3200.0], 0.0, Winding::Up);
    lb.floor([0.0, 3200.0], [0.0, 3200.0], 220.0, Winding::Down);
    let mesh = lb.build();
    let (surface, oracle) = bake_generated("low_ceiling", &mesh);
    let view = walksurf_format::FileView::new(surface.bytes(), surface.layout()).expect("view");
    let mut certified = 0;
    for hot in view.hot {
        let tile = view.tile(hot).expect("tile");
        let z0 = hot.z_origin_cm.get() as f64;
        for j in 0..walksurf_format::CERT_CELLS {
            for i in 0..walksurf_format::CERT_CELLS {
                for c in tile.certs_in_cell(i, j) {
                    if (c.k.get() as f64 + z0).abs() < 0.01 {
                        assert!(
                            (c.clear_z.get() as f64 + z0 - 220.0).abs() < 0.01,
                            "clearance at the ceiling"
                        );
                        certified += 1;
                    }
                }
            }
        }
    }
    // The inner 78 × 78 cells of the floor's tile at least.
    assert!(certified >= 78 * 78, "{certified} floor certificates");
    // And what they answer is right.
    let agent = Agent {
        radius_cm: 42.0,
        half_height_cm: 96.0,
    };
    let queries: Vec<FloorQuery> = (0..400)
        .map(|k| {
            let (x, y) = (100.0 + 7.3 * k as f64, 1600.0 + 3.1 * (k % 37) as f64);
            FloorQuery {
                pos: [x, y, 2.0 + agent.half_height_cm],
                down_cm: 47.4,
                agent,
            }
        })
        .collect();
    let t = compare_capsule(&surface, &oracle, &queries);
    assert!(t.errors.is_empty(), "{}", t.summary());
}

/// A spike around `c` (XY): apex `h` above the surface `z`, base of
/// radius `s` 1 cm below it, turned by `ang`.
fn spike(lb: &mut LevelBuilder, z: impl Fn(f64, f64) -> f64, c: [f64; 2], s: f64, h: f64, ang: f64) {
    let base: Vec<[f64; 3]> = (0..3)
        .map(|i| {
            let t = i as f64 * 2.094 + ang;
            let p = [c[0] + s * t.cos(), c[1] + s * t.sin()];
            [p[0], p[1], z(p[0], p[1]) - 1.0]
        })
        .collect();
    let apex = [c[0], c[1], z(c[0], c[1]) + h];
    lb.tri(base[0], base[1], apex)
        .tri(base[1], base[2], apex)
        .tri(base[2], base[0], apex);
}

/// A vertical two-sided curb from `p0` to `p1` (XY), from 1 cm below the
/// surface `z` to `h` above it.
fn curb(lb: &mut LevelBuilder, z: impl Fn(f64, f64) -> f64, p0: [f64; 2], p1: [f64; 2], h: f64) {
    let (z0, z1) = (z(p0[0], p0[1]), z(p1[0], p1[1]));
    lb.wall(p0, p1, [z0 - 1.0, z1 - 1.0], [z0 + h, z1 + h]);
}

/// A thin horizontal bar from `p0` to `p1` (XY), `h` above the surface
/// `z`'s highest point under it.
fn bar(lb: &mut LevelBuilder, z: impl Fn(f64, f64) -> f64, p0: [f64; 2], p1: [f64; 2], h: f64) {
    let zt = z(p0[0], p0[1]).max(z(p1[0], p1[1])) + h;
    let w = [-(p1[1] - p0[1]) * 0.005, (p1[0] - p0[0]) * 0.005];
    lb.tri([p0[0], p0[1], zt], [p1[0], p1[1], zt], [p1[0] + w[0], p1[1] + w[1], zt]);
}

/// Sloped floors with small obstacles near where spheres rest: every
/// answer against the oracle.
#[test]
fn fuzz_slopes_and_obstacles() {
    let mut total = Tally::default();
    for seed in fuzz_seeds() {
        let mut rng = Rng::seeded(0x9E3779B97F4A7C15, seed);
        let (a, b) = (rng.range(-0.7, 0.7), rng.range(-0.7, 0.7));
        let k = 0.0;
        let z = |x: f64, y: f64| a * x + b * y + k;
        let mut lb = LevelBuilder::new();
        lb.plane([0.0, 3200.0], [0.0, 3200.0], [a, b, k], Winding::Up);
        lb.blocking_only = true;
        let mut obstacles = Vec::new();
        let nobs: usize = knob("FUZZ_OBS", 40);
        for _ in 0..nobs {
            let c = [rng.range(300.0, 2900.0), rng.range(300.0, 2900.0)];
            let kind = (rng.next() * 6.0) as usize;
            let h = [0.02, 0.3, 2.0, 10.0, 30.0][(rng.next() * 5.0) as usize] * rng.range(0.5, 1.0);
            let s = rng.range(0.5, 15.0);
            let ang = rng.range(0.0, std::f64::consts::TAU);
            let d = [ang.cos() * s, ang.sin() * s];
            let (p0, p1) = ([c[0] - d[0], c[1] - d[1]], [c[0] + d[0], c[1] + d[1]]);
            match kind {
                0 => spike(&mut lb, z, c, s, h, rng.range(0.0, 0.5)),
                1 => bar(&mut lb, z, p0, p1, h),
                2 => curb(&mut lb, z, p0, p1, h),
                4 | 5 => {
                    // A walkable platform (its own plane) h above, with sides.
                    lb.blocking_only = false;
                    let (da, db) = (rng.range(-0.2, 0.2), rng.range(-0.2, 0.2));
                    let zp = |x: f64, y: f64| z(x, y) + h + da * (x - c[0]) + db * (y - c[1]);
                    let q = [
                        [c[0] - s, c[1] - s],
                        [c[0] + s, c[1] - s],
                        [c[0] + s, c[1] + s],
                        [c[0] - s, c[1] + s],
                    ];
                    let top: Vec<[f64; 3]> = q.iter().map(|p| [p[0], p[1], zp(p[0], p[1])]).collect();
                    let bot: Vec<[f64; 3]> = q.iter().map(|p| [p[0], p[1], z(p[0], p[1]) - 1.0]).collect();
                    lb.quad([top[0], top[1], top[2], top[3]], Winding::Up);
                    for i in 0..4 {
                        let j = (i + 1) % 4;
                        lb.quad([bot[i], bot[j], top[j], top[i]], Winding::Up);
                    }
                    lb.blocking_only = true;
                }
                _ => {
                    // A plate parallel to the plane, h above it.
                    let p = |dx: f64, dy: f64| [c[0] + dx, c[1] + dy, z(c[0] + dx, c[1] + dy) + h];
                    lb.tri(p(-s, -s), p(s, -s), p(0.0, s));
                }
            }
            obstacles.push(c);
        }
        let mesh = lb.build();
        let (surface, oracle) = bake_generated("fuzz", &mesh);
        let mut queries = Vec::new();
        for c in &obstacles {
            let nq: usize = knob("FUZZ_Q", 60);
            for _ in 0..nq {
                let agent = rng.agent();
                let r = agent.radius_cm;
                let ang = rng.range(0.0, std::f64::consts::TAU);
                let dist = rng.range(0.0, r + 20.0);
                let (mut x, mut y) = (c[0] + dist * ang.cos(), c[1] + dist * ang.sin());
                if rng.next() < 0.3 {
                    // On a quarter line of the certificate grid (± a hair).
                    let eps = [0.0, 1e-9, -1e-9, 1e-12][(rng.next() * 4.0) as usize];
                    if rng.next() < 0.5 {
                        x = (x / 20.0).round() * 20.0 + eps;
                    } else {
                        y = (y / 20.0).round() * 20.0 + eps;
                    }
                }
                // Bottom sphere centre resting on the plane, then lifted.
                let rest_c = z(x, y) + r * (1.0 + a * a + b * b).sqrt();
                let lift = [0.001, 0.5, 5.0, 40.0][(rng.next() * 4.0) as usize];
                let cz = rest_c + lift;
                let pos = [x, y, cz - r + agent.half_height_cm];
                for down in [47.4, 200.0] {
                    queries.push(FloorQuery {
                        pos,
                        down_cm: down,
                        agent,
                    });
                }
                // The line trace too.
                queries.push(FloorQuery {
                    pos: [x, y, z(x, y) + lift + 96.0],
                    down_cm: 47.4,
                    agent: Agent::DEFAULT,
                });
            }
        }
        let (caps, lines): (Vec<FloorQuery>, Vec<FloorQuery>) = queries
            .iter()
            .partition(|q| q.agent.radius_cm != 42.0 || q.pos[2] != 0.0);
        let lines: Vec<FloorQuery> = lines.into_iter().chain(caps.iter().copied()).collect();
        let what = format!("seed {seed} slope ({a:.3}, {b:.3})");
        check(&mut total, &what, (&surface, &oracle), &caps, &lines);
    }
    println!("total: {}", total.summary());
    total.assert_no_errors("fuzz_slopes_and_obstacles");
}

/// Sloped floors with low obstacles (spikes, curbs, bars up to a few cm
/// high) and horizontal moves toward and past them, from just above the
/// floor: the certificates' footprint test along a move (a sphere may pass
/// over something low), every answer against the oracle.
#[test]
fn fuzz_sweeps_past_low_obstacles() {
    let mut total = Tally::default();
    for seed in fuzz_seeds() {
        let mut rng = Rng::seeded(0x94D049BB133111EB, seed);
        // Every other seed nearly flat: a move up a steep slope soon meets it.
        let steep = if seed % 2 == 0 { 0.5 } else { 0.02 };
        let (a, b) = (rng.range(-steep, steep), rng.range(-steep, steep));
        let z = |x: f64, y: f64| a * x + b * y;
        let mut lb = LevelBuilder::new();
        lb.plane([0.0, 3200.0], [0.0, 3200.0], [a, b, 0.0], Winding::Up);
        lb.blocking_only = true;
        let mut obstacles = Vec::new();
        for _ in 0..60 {
            let c = [rng.range(300.0, 2900.0), rng.range(300.0, 2900.0)];
            let h = [0.01, 0.1, 0.5, 2.0, 5.0, 12.0, 25.0][(rng.next() * 7.0) as usize] * rng.range(0.5, 1.0);
            let s = rng.range(0.5, 20.0);
            let ang = rng.range(0.0, std::f64::consts::TAU);
            let d = [ang.cos() * s, ang.sin() * s];
            let (p0, p1) = ([c[0] - d[0], c[1] - d[1]], [c[0] + d[0], c[1] + d[1]]);
            match (rng.next() * 3.0) as usize {
                0 => spike(&mut lb, z, c, s, h, ang),
                1 => curb(&mut lb, z, p0, p1, h),
                _ => bar(&mut lb, z, p0, p1, h),
            }
            obstacles.push(c);
        }
        let mesh = lb.build();
        let (surface, oracle) = bake_generated("fuzz_sweeps", &mesh);
        let mut sweeps = Vec::new();
        for c in &obstacles {
            for _ in 0..80 {
                let agent = rng.agent();
                let r = agent.radius_cm;
                // Start beside the obstacle, move toward it (give or take).
                let ang = rng.range(0.0, std::f64::consts::TAU);
                let dist = r + rng.range(0.0, 40.0);
                let (x, y) = (c[0] + dist * ang.cos(), c[1] + dist * ang.sin());
                let rest_c = z(x, y) + r * (1.0 + a * a + b * b).sqrt();
                let lift = [0.001, 0.05, 0.5, 2.15, 8.0][(rng.next() * 5.0) as usize];
                let pos = [x, y, rest_c + lift - r + agent.half_height_cm];
                let dir = ang + std::f64::consts::PI + rng.range(-1.2, 1.2);
                let len = rng.range(1.0, 39.9);
                sweeps.push(SweepQuery {
                    pos,
                    delta: [len * dir.cos(), len * dir.sin()],
                    agent,
                });
            }
        }
        let t = compare_sweep_tally(&surface, &oracle, &sweeps);
        println!("seed {seed} slope ({a:.3}, {b:.3}): sweep {}", t.summary());
        for e in t.errors.iter().take(4) {
            println!("WRONG {e}");
        }
        total.merge(&t);
    }
    println!("total: {}", total.summary());
    total.assert_no_errors("fuzz_sweeps_past_low_obstacles");
}

/// A floor bent along a line (a convex or concave crease, from nearly flat
/// to steep) with obstacles that pierce it: tilted blocking plates, walls
/// reaching far below it, walkable plates tilted through it. Certificates
/// count only the part of each that may rise above their plane (clipped
/// where it crosses); every answer against the oracle.
#[test]
fn fuzz_creases_and_crossings() {
    use std::f64::consts::TAU;
    let mut total = Tally::default();
    for seed in fuzz_seeds() {
        let mut rng = Rng::seeded(0xD6E8FEB86659FD93, seed);
        let (a, b) = (rng.range(-0.5, 0.5), rng.range(-0.5, 0.5));
        // Left of the line through `c0` along `dir`, the slope across it
        // changes by `bend` (< 0: a convex crease, a ridge).
        let c0 = [rng.range(1200.0, 2000.0), rng.range(1200.0, 2000.0)];
        let t = rng.range(0.0, TAU);
        let dir = [t.cos(), t.sin()];
        let left = [-dir[1], dir[0]];
        let bend = rng.pick(&[-0.3, -0.05, -0.004, 0.004, 0.05, 0.3]) * rng.range(0.5, 1.0);
        let across = |x: f64, y: f64| (x - c0[0]) * left[0] + (y - c0[1]) * left[1];
        let z = |x: f64, y: f64| a * x + b * y + bend * across(x, y).max(0.0);
        let mut lb = LevelBuilder::new();
        // The square split along the line: both halves share the crossing
        // points exactly.
        let square = [[0.0, 0.0], [3200.0, 0.0], [3200.0, 3200.0], [0.0, 3200.0]];
        let (mut right_half, mut left_half) = (Vec::new(), Vec::new());
        for i in 0..4 {
            let (p, q) = (square[i], square[(i + 1) % 4]);
            let (sp, sq) = (across(p[0], p[1]), across(q[0], q[1]));
            if sp >= 0.0 {
                left_half.push(p);
            }
            if sp <= 0.0 {
                right_half.push(p);
            }
            if (sp > 0.0 && sq < 0.0) || (sp < 0.0 && sq > 0.0) {
                let u = sp / (sp - sq);
                let m = [p[0] + u * (q[0] - p[0]), p[1] + u * (q[1] - p[1])];
                left_half.push(m);
                right_half.push(m);
            }
        }
        for half in [&left_half, &right_half] {
            let v: Vec<[f64; 3]> = half.iter().map(|p| [p[0], p[1], z(p[0], p[1])]).collect();
            for i in 1..v.len().saturating_sub(1) {
                lb.tri(v[0], v[i], v[i + 1]);
            }
        }
        let mut centres = Vec::new();
        for _ in 0..knob("FUZZ_OBS", 30usize) {
            // Near the crease, half of them.
            let c = if rng.next() < 0.5 {
                let (s, o) = (rng.range(-600.0, 600.0), rng.range(-60.0, 60.0));
                [c0[0] + s * dir[0] + o * left[0], c0[1] + s * dir[1] + o * left[1]]
            } else {
                [rng.range(300.0, 2900.0), rng.range(300.0, 2900.0)]
            };
            let s = rng.range(2.0, 30.0);
            let ang = rng.range(0.0, TAU);
            let h = rng.range(-5.0, 5.0);
            let tri_around = |tilt: [f64; 2], zc: f64| -> [[f64; 3]; 3] {
                std::array::from_fn(|i| {
                    let t = ang + i as f64 * TAU / 3.0;
                    let (dx, dy) = (s * t.cos(), s * t.sin());
                    [c[0] + dx, c[1] + dy, zc + tilt[0] * dx + tilt[1] * dy]
                })
            };
            match (rng.next() * 3.0) as usize {
                0 => {
                    // A blocking plate through the floor, tilted any way.
                    lb.blocking_only = true;
                    let tilt = [rng.range(-2.0, 2.0), rng.range(-2.0, 2.0)];
                    let [p, q, r] = tri_around(tilt, z(c[0], c[1]) + h);
                    lb.tri(p, q, r);
                }
                1 => {
                    // A wall from far below the floor to a little above.
                    lb.blocking_only = true;
                    let d = [ang.cos() * s, ang.sin() * s];
                    let (p0, p1) = ([c[0] - d[0], c[1] - d[1]], [c[0] + d[0], c[1] + d[1]]);
                    let (z0, z1) = (z(p0[0], p0[1]), z(p1[0], p1[1]));
                    let (deep, top) = (rng.range(1.0, 150.0), rng.range(-2.0, 3.0));
                    lb.wall(p0, p1, [z0 - deep, z1 - deep], [z0 + top, z1 + top]);
                }
                _ => {
                    // A walkable plate tilted through the floor.
                    lb.blocking_only = false;
                    let tilt = [a + rng.range(-0.3, 0.3), b + rng.range(-0.3, 0.3)];
                    let [p, q, r] = tri_around(tilt, z(c[0], c[1]) + 0.2 * h);
                    lb.tri(p, q, r);
                }
            }
            lb.blocking_only = false;
            centres.push((c, s));
        }
        // Query centres: along the crease and around the obstacles.
        for _ in 0..40 {
            let (s, o) = (rng.range(-600.0, 600.0), rng.range(-5.0, 5.0));
            centres.push((
                [c0[0] + s * dir[0] + o * left[0], c0[1] + s * dir[1] + o * left[1]],
                0.0,
            ));
        }
        let mesh = lb.build();
        let (surface, oracle) = bake_generated("fuzz_creases", &mesh);
        let mut caps = Vec::new();
        let mut lines = Vec::new();
        for &(c, s) in &centres {
            for _ in 0..knob("FUZZ_Q", 40usize) {
                let agent = rng.agent();
                let r = agent.radius_cm;
                let ang = rng.range(0.0, TAU);
                let dist = rng.range(0.0, s + r + 20.0);
                let (x, y) = (c[0] + dist * ang.cos(), c[1] + dist * ang.sin());
                let Some(rest) = capsule_rest_bottom(&oracle, x, y, z(x, y) + 40.0, agent) else {
                    continue;
                };
                let lift = [0.0, 0.001, 0.02, 0.5, 5.0, 40.0][(rng.next() * 6.0) as usize];
                for down in [47.4, 200.0] {
                    caps.push(FloorQuery {
                        pos: [x, y, rest + lift + agent.half_height_cm],
                        down_cm: down,
                        agent,
                    });
                }
                lines.push(FloorQuery {
                    pos: [x, y, z(x, y) + lift + 96.0],
                    down_cm: 47.4,
                    agent: Agent::DEFAULT,
                });
            }
        }
        let what = format!("seed {seed} slope ({a:.3}, {b:.3}) bend {bend:.4}");
        check(&mut total, &what, (&surface, &oracle), &caps, &lines);
    }
    println!("total: {}", total.summary());
    total.assert_no_errors("fuzz_creases_and_crossings");
}

/// A sloped rectangle over a lower floor: queries near its edges, where a
/// capsule's contact may fall off the slope's uphill edge.
#[test]
fn fuzz_slope_edges() {
    let nq: usize = knob("FUZZ_Q", 3000);
    let mut total = Tally::default();
    for seed in fuzz_seeds() {
        slope_edges(seed, nq, &mut total);
    }
    println!("total: {}", total.summary());
    total.assert_no_errors("fuzz_slope_edges");
}

/// Seed 145 of [`fuzz_slope_edges`]: a capsule of radius 20 touching the
/// slope's edge with a normal 9e-6 below the walkable threshold (z 0.71);
/// the stored edge's rounding moves the computed normal more than that,
/// so the walkable flag needs the normal's error bound, not a fixed band.
#[test]
fn an_edge_normal_at_the_walkable_threshold() {
    let mut total = Tally::default();
    slope_edges(145, 3000, &mut total);
    assert!(total.errors.is_empty(), "{}", total.summary());
}

/// One level of [`fuzz_slope_edges`], its tallies added to `total`.
fn slope_edges(seed: u64, nq: usize, total: &mut Tally) {
    let mut rng = Rng::seeded(0xD1B54A32D192ED03, seed);
    let (a, b) = (rng.range(-0.9, 0.9), rng.range(-0.5, 0.5));
    let k = 200.0;
    let z = |x: f64, y: f64| a * x + b * y + k;
    let (x0, x1) = (rng.range(200.0, 1400.0), rng.range(1800.0, 3000.0));
    let (y0, y1) = (rng.range(200.0, 1400.0), rng.range(1800.0, 3000.0));
    let mut lb = LevelBuilder::new();
    lb.plane([x0, x1], [y0, y1], [a, b, k], Winding::Up);
    let zl = -3000.0;
    lb.floor([0.0, 3200.0], [0.0, 3200.0], zl, Winding::Up);
    let mesh = lb.build();
    let (surface, oracle) = bake_generated("slope_edges", &mesh);
    let mut queries = Vec::new();
    for _ in 0..nq {
        // (Its own choice of shapes: seed 145 must stay the case it pins.)
        let agent = match (rng.next() * 3.0) as usize {
            0 => Agent::DEFAULT,
            1 => Agent {
                radius_cm: rng.range(0.1, 42.0),
                half_height_cm: 96.0,
            },
            _ => Agent {
                radius_cm: 20.0,
                half_height_cm: 20.0,
            },
        };
        let r = agent.radius_cm;
        // Near an edge.
        let side = (rng.next() * 4.0) as usize;
        let off = rng.range(-45.0, 45.0);
        let (x, y) = match side {
            0 => (x0 + off, rng.range(y0, y1)),
            1 => (x1 + off, rng.range(y0, y1)),
            2 => (rng.range(x0, x1), y0 + off),
            _ => (rng.range(x0, x1), y1 + off),
        };
        let rest_c = z(x, y) + r * (1.0 + a * a + b * b).sqrt();
        let lift = [0.001, 0.5, 5.0, 40.0][(rng.next() * 4.0) as usize];
        let cz = rest_c + lift;
        let pos = [x, y, cz - r + agent.half_height_cm];
        queries.push(FloorQuery {
            pos,
            down_cm: 200.0,
            agent,
        });
    }
    let what = format!("seed {seed} slope ({a:.3}, {b:.3})");
    check(total, &what, (&surface, &oracle), &queries, &queries);
}

/// Compares capsule floors at `caps` and line traces (default agent) at
/// `lines` with the oracle, prints the tallies (and a few errors), and adds
/// them to `total`.
fn check(
    total: &mut Tally,
    what: &str,
    (surface, oracle): (&Surface, &Oracle),
    caps: &[FloorQuery],
    lines: &[FloorQuery],
) {
    let capsule = compare_capsule(surface, oracle, caps);
    let lines: Vec<FloorQuery> = lines
        .iter()
        .map(|q| FloorQuery {
            agent: Agent::DEFAULT,
            ..*q
        })
        .collect();
    let line = compare_line(surface, oracle, &lines);
    // Horizontal moves from the capsule positions: within a certificate
    // cell and beyond, in directions spread by the golden angle.
    let sweeps: Vec<SweepQuery> = caps
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let ang = i as f64 * 2.399_963_229_728_653;
            let len = [5.0, 16.67, 33.33, 39.9, 80.0][i % 5];
            SweepQuery {
                pos: q.pos,
                delta: [len * ang.cos(), len * ang.sin()],
                agent: q.agent,
            }
        })
        .collect();
    let sweep = compare_sweep_tally(surface, oracle, &sweeps);
    println!(
        "{what}: capsule {} | line {} | sweep {}",
        capsule.summary(),
        line.summary(),
        sweep.summary()
    );
    for e in capsule.errors.iter().chain(&line.errors).chain(&sweep.errors).take(4) {
        println!("WRONG {e}");
    }
    total.merge(&capsule);
    total.merge(&line);
    total.merge(&sweep);
}

/// Open flat ground (format 2.2): a tile whose every cell holds the same
/// certificate list stores one entry for all of them, and the queries
/// over it (and over the tile beside it, where a box stands and the lists
/// differ) agree with the oracle and are certified.
#[test]
fn open_ground_stores_one_list_for_the_tile() {
    use walksurf_format::{FileView, tile_flags};
    let mut lb = LevelBuilder::new();
    lb.floor([-1000.0, 7400.0], [-1000.0, 4200.0], 0.0, Winding::Up);
    // A box on the second tile.
    let (x0, y0, s, h) = (4600.0, 1500.0, 120.0, 80.0);
    lb.quad(
        [[x0, y0, h], [x0 + s, y0, h], [x0 + s, y0 + s, h], [x0, y0 + s, h]],
        Winding::Up,
    );
    for (a, b) in [
        ([x0, y0], [x0 + s, y0]),
        ([x0 + s, y0], [x0 + s, y0 + s]),
        ([x0 + s, y0 + s], [x0, y0 + s]),
        ([x0, y0 + s], [x0, y0]),
    ] {
        lb.quad(
            [[a[0], a[1], 0.0], [b[0], b[1], 0.0], [b[0], b[1], h], [a[0], a[1], h]],
            Winding::Both,
        );
    }
    let mesh = lb.build();
    let baked = walksurf_bake::bake_mesh(&mesh, &walksurf_bake::BakeConfig::default(), 1, &walksurf_bake::Silent)
        .expect("bake");
    let layout = FileView::parse(&baked.bytes).expect("parse");
    let view = FileView::new(&baked.bytes, &layout).expect("view");
    let uniform = |x: i32, y: i32| {
        let slot = view.tile_slot(x, y).expect("tile");
        let hot = &view.hot[slot as usize];
        let tile = view.tile(hot).expect("tile view");
        (
            hot.flags.get() & tile_flags::CERT_LISTS_UNIFORM != 0,
            tile.cert_cells.len(),
        )
    };
    assert_eq!(uniform(0, 0), (true, 2), "the open tile: one entry and the count");
    assert!(!uniform(1, 0).0, "the tile with the box has lists of its own");
    let surface = Surface::from_bytes(&baked.bytes).expect("open");
    let oracle = Oracle::new(&mesh.vertices, &mesh.triangles).expect("oracle");
    let agent = Agent::DEFAULT;
    let mut floors = Vec::new();
    let mut sweeps = Vec::new();
    for i in 0..60 {
        for j in 0..30 {
            let p = [-300.0 + i as f64 * 113.7, -300.0 + j as f64 * 131.3];
            floors.push(standing(agent, p));
            let d = [16.67 * (i as f64 * 0.37).cos(), 16.67 * (j as f64 * 0.61).sin()];
            sweeps.push(SweepQuery::new([p[0], p[1], 2.15 + agent.half_height_cm], d));
        }
    }
    let t = compare_capsule(&surface, &oracle, &floors);
    t.assert_no_errors("open ground capsule");
    let s = compare_sweep_tally(&surface, &oracle, &sweeps);
    s.assert_no_errors("open ground sweeps");
    // Over the open tile's interior the certificates answer every query.
    let inner = |p: [f64; 3]| (100.0..3100.0).contains(&p[0]) && (100.0..3100.0).contains(&p[1]);
    let certified = sweeps
        .iter()
        .filter(|q| inner(q.pos))
        .filter(|q| surface.sweep_certified_clear(q.pos, q.delta, q.agent))
        .count();
    let inside = sweeps.iter().filter(|q| inner(q.pos)).count();
    assert!(inside > 400 && certified == inside, "{certified} of {inside} certified");
    assert!(
        t.answered_pct() > 99.0 && s.answered_pct() > 99.0,
        "{} / {}",
        t.summary(),
        s.summary()
    );
}
