//! Fuzzes the bake *settings* (largest agent radius on and off the 1/1024 cm
//! vertex grid, large and tiny; half-height; walkable and collected normal
//! thresholds; longest sweep; flat-group tolerance) together with agent
//! shapes (up to and including the radius the file stores), levels built
//! around those settings (slopes at the walkable threshold, ceilings at the
//! headroom, slabs whose edges lie one largest radius from a cell line,
//! holes, duplicate and coplanar neighbouring floors, tile edges, far from
//! the origin) and queries (capsule and line-trace `find_floor`, sweeps,
//! the certified sweep fast path pushed to its edges), every answer against
//! the exact oracle, on both precision paths.
//!
//! Knobs: `FUZZ_SEEDS` (12), `FUZZ_FIRST` (0), `FUZZ_Q` (points per level,
//! 24), `FUZZ_HUNT` (fast-path hunts, 40), `FUZZ_EDGE` (answer-change
//! bisections, 30), `FUZZ_TANGENT` (capsules one radius from an edge, 60),
//! `FUZZ_VERBOSE`. A deep run: `FUZZ_SEEDS=20000` (about 2.5 min on 2 cores).
mod common;
use common::*;
use std::collections::BTreeMap;
use walksurf::{Agent, FloorMode, FloorOutcome, PrecisionPath, Surface, SweepOutcome};
use walksurf_bake::{BakeConfig, Mesh, Silent, bake_mesh};
use walksurf_oracle::Oracle;

/// Cell and tile sizes of the file. [Units: cm]
const CELL: f64 = walksurf_format::CERT_CELL_CM;
const TILE: f64 = walksurf_format::TILE_SIZE_CM;

/// Capsule-mode answers of `surface` against the oracle, errors labelled.
fn check_capsule(surface: &Surface, oracle: &Oracle, qs: &[FloorQuery], wz: f64, what: &str) -> Tally {
    labelled(compare_capsule_at(surface, oracle, qs, wz), &format!("{what} capsule"))
}

/// Line-trace answers of `surface` against the oracle, errors labelled.
fn check_line(surface: &Surface, oracle: &Oracle, qs: &[FloorQuery], wz: f64, what: &str) -> Tally {
    labelled(compare_line_at(surface, oracle, qs, wz), &format!("{what} line"))
}

/// `t` with `label` before each error.
fn labelled(mut t: Tally, label: &str) -> Tally {
    for e in &mut t.errors {
        *e = format!("{label} {e}");
    }
    t
}

/// Sweeps against the oracle ([`compare_sweep_tally`], labelled).
fn check_sweeps(surface: &Surface, oracle: &Oracle, qs: &[SweepQuery], what: &str) -> Tally {
    labelled(compare_sweep_tally(surface, oracle, qs), what)
}

/// One fuzzed bake setting.
fn random_config(rng: &mut Rng) -> BakeConfig {
    let r = rng.pick(&[
        42.0,
        41.99,
        25.4,
        34.3,
        10.001,
        3.0,
        60.0,
        0.7,
        42.0009765625,
        17.3,
        99.99,
        150.0,
        41.99,
        440.0,
        213.7,
        39.999,
        40.0,
        40.001,
        20.0005,
    ]);
    let wz = rng.pick(&[
        0.71,
        0.5,
        0.9,
        0.99,
        std::f64::consts::FRAC_1_SQRT_2,
        0.7072,
        0.3,
        1.0,
        0.8660254,
    ]);
    let h = match (rng.next() * 5.0) as usize {
        0 => r,
        1 => r + 0.3,
        2 => 96.0f64.max(r),
        3 => rng.range(r, r + 150.0),
        _ => rng.pick(&[110.0f64, 47.3, 200.0, 55.55]).max(r),
    };
    let collected = match (rng.next() * 3.0) as usize {
        0 => 0.015f64.min(0.5 * wz),
        1 => 0.0,
        _ => rng.range(0.0, wz * 0.999),
    };
    BakeConfig {
        max_agent_radius_cm: r,
        max_agent_half_height_cm: h,
        walkable_normal_z: wz,
        collected_normal_z: collected,
        max_sweep_len_cm: rng.pick(&[256.0, 40.0, 100.0, 33.3, 500.0, 3199.0]),
        coplanar_dist_cm: rng.pick(&[0.002, 0.002, 0.0005, 0.01, 0.05, 0.3]),
        threads: 1,
        ..BakeConfig::default()
    }
}

/// Slope (rise per cm) whose plane normal's z is `nz`.
fn slope_for(nz: f64) -> f64 {
    let nz = nz.clamp(0.05, 1.0);
    (1.0 / (nz * nz) - 1.0).max(0.0).sqrt()
}

/// A generated level and where its interesting places are (world XY).
struct Level {
    mesh: Mesh,
    /// Region (world XY) the level covers.
    lo: [f64; 2],
    hi: [f64; 2],
    /// Points near features (world XY).
    spots: Vec<[f64; 2]>,
    /// Every triangle edge of the mesh (world).
    edges: Vec<([f64; 3], [f64; 3])>,
    /// What was built, for the report.
    what: Vec<&'static str>,
}

/// A value near a cell line (or a tile line): `k·40 + off`, the offset
/// one largest radius (either side), or a hair off that, or a hair off the
/// line itself.
fn near_line(rng: &mut Rng, lo: f64, hi: f64, rmax: f64) -> f64 {
    let grid = if rng.next() < 0.2 { TILE } else { CELL };
    let v = (rng.range(lo, hi) / grid).round() * grid;
    // (Within a vertex step or two: the stored vertex may round across a
    // bound the true one does not cross.)
    let hair = if rng.next() < 0.5 {
        rng.range(-0.0012, 0.0012)
    } else {
        rng.pick(&[
            0.0, 1e-4, -1e-4, 2e-4, -2e-4, 0.001, -0.001, 0.005, -0.005, 0.0102, -0.0102,
        ])
    };
    let off = rng.pick(&[0.0, rmax, -rmax, rmax + 0.005, -rmax - 0.005, 0.5 * CELL]);
    v + off + hair
}

/// A random level built around `config`.
fn random_level(rng: &mut Rng, config: &BakeConfig) -> Level {
    let rmax = config.max_agent_radius_cm;
    let hmax = config.max_agent_half_height_cm;
    let wz = config.walkable_normal_z;
    // Where: in a tile's interior, across a tile edge or corner, far away.
    let (centre, far) = match (rng.next() * 4.0) as usize {
        0 => ([1000.0, 1400.0], 0.0),
        1 => ([TILE, TILE + rng.range(-200.0, 200.0)], 0.0),
        2 => ([TILE, TILE], 0.0),
        _ => ([TILE, TILE], TILE * rng.pick(&[37.0, 300.0, 2000.0, 30000.0])),
    };
    let half = rng.pick(&[200.0, 320.0, 450.0]);
    let (x0, x1) = (centre[0] - half, centre[0] + half);
    let (y0, y1) = (centre[1] - half, centre[1] + half);
    let z0 = rng.pick(&[0.0, 37.3, -512.0001, 1000.0]);
    let mut lb = LevelBuilder::with_offset([far, -far, 0.0]);
    let mut spots: Vec<[f64; 2]> = Vec::new();
    let mut what = Vec::new();
    // The base floor: one quad, squares with holes, or strips of coplanar
    // neighbours (T-junctions); sometimes doubled.
    match (rng.next() * 4.0) as usize {
        0 => {
            lb.floor([x0, x1], [y0, y1], z0, Winding::Up);
            what.push("floor");
        }
        1 => {
            let s = rng.pick(&[CELL, 25.0, 0.5 * CELL + 0.3]);
            let n = ((x1 - x0) / s) as usize;
            let p = rng.pick(&[0.03, 0.1, 0.3]);
            for j in 0..n {
                for i in 0..n {
                    let (xa, ya) = (x0 + s * i as f64, y0 + s * j as f64);
                    if rng.next() < p {
                        spots.push([xa + 0.5 * s, ya + 0.5 * s]);
                        continue;
                    }
                    lb.floor([xa, xa + s], [ya, ya + s], z0, Winding::Up);
                }
            }
            what.push("holed floor");
        }
        2 => {
            let mut x = x0;
            while x < x1 {
                let w = rng.range(5.0, 120.0).min(x1 - x);
                let cut = rng.range(y0 + 10.0, y1 - 10.0);
                lb.floor([x, x + w], [y0, cut], z0, Winding::Up);
                lb.floor([x, x + w], [cut, y1], z0, Winding::Up);
                spots.push([x, cut]);
                x += w;
            }
            what.push("strips");
        }
        _ => {
            lb.floor([x0, x1], [y0, y1], z0, Winding::Both);
            let (a, b) = (rng.range(x0, x1), rng.range(y0, y1));
            lb.floor([a, a.max(x1 - 1.0)], [y0, b], z0, Winding::Up);
            spots.push([a, b]);
            what.push("doubled floor");
        }
    }
    let nfeat = 3 + (rng.next() * 6.0) as usize;
    // (A feature's corner, sometimes snapped near a cell line, or one
    // largest radius from one.)
    let inner = |rng: &mut Rng, m: f64| {
        let mut c = [rng.range(x0 + m, x1 - m), rng.range(y0 + m, y1 - m)];
        if rng.next() < 0.3 {
            let k = (rng.next() * 2.0) as usize;
            c[k] = near_line(rng, c[k] - 20.0, c[k] + 20.0, rmax);
        }
        c
    };
    for _ in 0..nfeat {
        match (rng.next() * 12.0) as usize {
            9 => {
                // A bumpy patch: squares whose corners are jittered by a
                // hair (flat groups with a fit residual), raised.
                let c = inner(rng, 100.0);
                let sq = rng.pick(&[CELL, 20.0, 13.3]);
                let j = rng.pick(&[0.0005, 0.002, 0.004, 0.008, 0.02]);
                let up = z0 + rng.pick(&[0.0, 0.01, 3.0, 50.0]);
                let n = 2 + (rng.next() * 4.0) as usize;
                let zs: Vec<f64> = (0..(n + 1) * (n + 1)).map(|_| up + rng.range(-j, j)).collect();
                let v = |i: usize, k: usize| [c[0] + sq * i as f64, c[1] + sq * k as f64, zs[k * (n + 1) + i]];
                for k in 0..n {
                    for i in 0..n {
                        lb.quad([v(i, k), v(i + 1, k), v(i + 1, k + 1), v(i, k + 1)], Winding::Up);
                    }
                }
                spots.push(c);
                spots.push([c[0] + sq, c[1] + sq]);
                what.push("bumpy patch");
            }
            10 => {
                // Random triangles near the floor.
                let c = inner(rng, 60.0);
                for _ in 0..(1 + (rng.next() * 4.0) as usize) {
                    let s = rng.pick(&[0.5, 5.0, 30.0, 80.0]);
                    let pt = |rng: &mut Rng| {
                        [
                            c[0] + rng.range(-s, s),
                            c[1] + rng.range(-s, s),
                            z0 + rng.pick(&[0.0, 0.01, 1.0, 20.0]) + rng.range(0.0, s),
                        ]
                    };
                    let (a, b, cc) = (pt(rng), pt(rng), pt(rng));
                    lb.tri(a, b, cc);
                    spots.push([a[0], a[1]]);
                }
                what.push("random triangles");
            }
            11 => {
                // A slope at the threshold, any azimuth.
                let nz = (wz + rng.pick(&[0.0, 1e-5, -1e-5, 1e-3, -1e-3, 0.02, -0.02])).clamp(0.2, 1.0);
                let s = slope_for(nz);
                let az = rng.range(0.0, std::f64::consts::TAU);
                let (a, b) = (s * az.cos(), s * az.sin());
                let c = inner(rng, 100.0);
                let w = rng.range(20.0, 80.0);
                let zc = z0 + rng.pick(&[0.0, 10.0]);
                lb.plane(
                    [c[0], c[0] + w],
                    [c[1], c[1] + w],
                    [a, b, zc - a * c[0] - b * c[1]],
                    Winding::Up,
                );
                spots.push(c);
                spots.push([c[0] + w, c[1] + w]);
                what.push("azimuth slope");
            }
            0 => {
                // A slope at the walkable threshold (either side), rising
                // from the floor along x or y.
                let nz = (wz + rng.pick(&[0.0, 1e-6, -1e-6, 1e-5, -1e-5, 1e-4, -1e-4, 2e-3, -2e-3, 0.03, -0.03]))
                    .clamp(0.2, 1.0);
                let s = slope_for(nz);
                let c = inner(rng, 100.0);
                let (len, w) = (rng.range(20.0, 90.0), rng.range(20.0, 90.0));
                let rise = (s * len).min(400.0);
                if rng.next() < 0.5 {
                    lb.ramp_x([c[0], c[0] + len], [c[1], c[1] + w], [z0, z0 + rise]);
                } else {
                    let sy = rise / len;
                    lb.plane(
                        [c[0], c[0] + w],
                        [c[1], c[1] + len],
                        [0.0, sy, z0 - sy * c[1]],
                        Winding::Up,
                    );
                }
                spots.push(c);
                spots.push([c[0] + 0.5 * len, c[1] + 0.5 * w]);
                what.push("threshold slope");
            }
            1 => {
                let c = inner(rng, 120.0);
                let riser = rng.pick(&[1.0, 10.0, 20.0, 30.0, 45.0, 47.4, 60.0]);
                let tread = rng.pick(&[20.0, 28.0, CELL, rmax]);
                let steps = 2 + (rng.next() * 3.0) as usize;
                lb.stairs(c[0], [c[1], c[1] + rng.range(30.0, 100.0)], z0, steps, tread, riser);
                spots.push([c[0] + tread, c[1] + 10.0]);
                what.push("stairs");
            }
            2 => {
                // A wall or box, low to tall.
                let c = inner(rng, 60.0);
                let (w, d) = (rng.pick(&[0.5, 2.0, 10.0, 50.0]), rng.range(5.0, 120.0));
                let h = rng.pick(&[0.5, 5.0, 30.0, 2.0 * hmax, 400.0]);
                let (w, d) = if rng.next() < 0.5 { (w, d) } else { (d, w) };
                lb.cuboid([c[0], c[1], z0 - 1.0], [c[0] + w, c[1] + d, z0 + h]);
                spots.push(c);
                what.push("box");
            }
            3 => {
                // A floating slab whose edge lies one largest radius (and a
                // hair) from a cell line.
                let e = near_line(rng, x0 + 80.0, x1 - 80.0, rmax);
                let yy = inner(rng, 60.0)[1];
                let up = rng.pick(&[0.005, 1.0, 30.0, 150.0, hmax, 2.0 * hmax, 2.0 * hmax + 0.01]);
                let wd = rng.range(10.0, 200.0);
                let winding = rng.pick(&[Winding::Up, Winding::Both, Winding::Down]);
                if rng.next() < 0.5 {
                    lb.floor([e - wd, e], [yy, yy + rng.range(10.0, 150.0)], z0 + up, winding);
                } else {
                    lb.floor([yy, yy + rng.range(10.0, 150.0)], [e - wd, e], z0 + up, winding);
                }
                spots.push([e, yy]);
                spots.push([yy, e]);
                what.push("slab by cell line");
            }
            4 => {
                // A ceiling about the largest agent's height over the floor.
                let c = inner(rng, 40.0);
                let up = 2.0 * hmax + rng.pick(&[-1.0, -0.01, 0.0, 0.01, 1.0, 30.0, -30.0]);
                let s = rng.range(30.0, 200.0);
                let winding = rng.pick(&[Winding::Down, Winding::Both]);
                lb.floor([c[0], c[0] + s], [c[1], c[1] + s], z0 + up, winding);
                spots.push(c);
                spots.push([c[0] + 0.5 * s, c[1] + 0.5 * s]);
                what.push("ceiling");
            }
            5 => {
                // A thin plate or spike just over (or under) the floor.
                let c = inner(rng, 40.0);
                let s = rng.range(0.3, 15.0);
                let h = rng.pick(&[0.002, 0.006, 0.0105, 0.02, 0.3, 4.0, -0.006, -0.0105]);
                if rng.next() < 0.5 {
                    lb.tri(
                        [c[0] - s, c[1] - s, z0 + h],
                        [c[0] + s, c[1] - s, z0 + h],
                        [c[0], c[1] + s, z0 + h],
                    );
                } else {
                    let hh = h.abs().max(0.01) * 10.0;
                    let base = |k: f64| [c[0] + s * (k * 2.094).cos(), c[1] + s * (k * 2.094).sin(), z0 - 1.0];
                    let apex = [c[0], c[1], z0 + hh];
                    lb.tri(base(0.0), base(1.0), apex)
                        .tri(base(1.0), base(2.0), apex)
                        .tri(base(2.0), base(0.0), apex);
                }
                spots.push(c);
                what.push("plate/spike");
            }
            6 => {
                // A gentle crease: two planes a hair apart in slope, raised
                // on a block (a flat group's fit).
                let c = inner(rng, 120.0);
                let s = rng.pick(&[1e-5, 1e-4, 3e-4, 2e-3]);
                let h = rng.pick(&[0.0, 20.0]) + z0;
                let l = rng.range(40.0, 110.0);
                lb.plane([c[0], c[0] + l], [c[1], c[1] + l], [0.0, 0.0, h], Winding::Up);
                lb.plane(
                    [c[0] + l, c[0] + 2.0 * l],
                    [c[1], c[1] + l],
                    [s, 0.0, h - s * (c[0] + l)],
                    Winding::Up,
                );
                spots.push([c[0] + l, c[1] + 0.5 * l]);
                what.push("crease");
            }
            7 => {
                // A floor that may not be stood on (blocking only), raised.
                let c = inner(rng, 60.0);
                let up = rng.pick(&[0.004, 5.0, 40.0]);
                lb.blocking_only = true;
                lb.floor([c[0], c[0] + 50.0], [c[1], c[1] + 50.0], z0 + up, Winding::Up);
                lb.blocking_only = false;
                spots.push(c);
                what.push("blocking floor");
            }
            _ => {
                // A second floor at the same height overlapping the base, or
                // a raised floor with coplanar neighbours at a cell line.
                let c = inner(rng, 60.0);
                let e = near_line(rng, c[0] - 30.0, c[0] + 30.0, rmax);
                let up = rng.pick(&[0.0, 0.0, 12.5, 100.0]);
                lb.floor([e - 37.0, e], [c[1], c[1] + 50.0], z0 + up, Winding::Up);
                lb.floor([e, e + 23.0], [c[1], c[1] + 50.0], z0 + up, Winding::Up);
                spots.push([e, c[1] + 25.0]);
                what.push("coplanar neighbours");
            }
        }
    }
    let spots = spots.into_iter().map(|p| [p[0] + far, p[1] - far]).collect();
    let mesh = lb.build();
    let mut edges = Vec::new();
    for t in &mesh.triangles {
        for k in 0..3 {
            let (a, b) = (mesh.vertices[t[k] as usize], mesh.vertices[t[(k + 1) % 3] as usize]);
            edges.push((a, b));
        }
    }
    Level {
        edges,
        mesh,
        lo: [x0 + far, y0 - far],
        hi: [x1 + far, y1 - far],
        spots,
        what,
    }
}

/// Agents to try against a file whose stored largest radius is `rs`
/// (config `rc`), largest half-height `hmax`.
fn random_agent(rng: &mut Rng, rs: f64, rc: f64, hmax: f64) -> Agent {
    let r = match (rng.next() * 6.0) as usize {
        0 => rs,
        1 => rc.min(rs),
        2 => rng.range(0.05, rs),
        3 => rs.min(42.0),
        4 => rng.range(0.5 * rs, rs),
        _ => rng.range(0.1, 5.0f64.min(rs)),
    };
    let h = match (rng.next() * 5.0) as usize {
        0 => r,
        1 => hmax.max(r),
        2 => rng.range(r, hmax.max(r) * 1.2),
        3 => (2.0 * hmax).max(r),
        _ => (r + rng.range(0.0, 100.0)).max(r),
    };
    Agent {
        radius_cm: r,
        half_height_cm: h,
    }
}

/// All queries of one level.
#[derive(Default)]
struct Queries {
    capsule: Vec<FloorQuery>,
    line: Vec<FloorQuery>,
    sweeps: Vec<SweepQuery>,
    /// Sweeps the fast path clears, pushed to its edges.
    hunted: Vec<SweepQuery>,
    /// Queries on both sides of a change of the runtime's answer.
    edge_capsule: Vec<FloorQuery>,
    edge_line: Vec<FloorQuery>,
    edge_sweeps: Vec<SweepQuery>,
    /// Agents placed one radius (and a hair) from a triangle edge.
    tan_capsule: Vec<FloorQuery>,
    tan_line: Vec<FloorQuery>,
    tan_sweeps: Vec<SweepQuery>,
}

/// Capsules whose axis lies one radius, give or take a hair, from a
/// triangle edge (beside it or beyond its ends), at heights that reach it,
/// asked for the floor and swept toward, along and away from it.
fn tangents(rng: &mut Rng, level: &Level, surface: &Surface, oracle: &Oracle, config: &BakeConfig, out: &mut Queries) {
    let rs = surface.bake_params().max_agent_radius_cm.get() as f64;
    let rc = config.max_agent_radius_cm;
    let hmax = config.max_agent_half_height_cm;
    let n: usize = knob("FUZZ_TANGENT", 60);
    if level.edges.is_empty() {
        return;
    }
    let (zlo, zhi) = {
        let (lo, hi) = bounds(&level.mesh);
        (lo[2], hi[2])
    };
    for _ in 0..n {
        let (a, b) = rng.pick(&level.edges);
        let mut agent = random_agent(rng, rs, rc, hmax);
        if rng.next() < 0.4 {
            agent.radius_cm = rs;
            agent.half_height_cm = agent.half_height_cm.max(rs);
        }
        let (r, h) = (agent.radius_cm, agent.half_height_cm);
        let d = [b[0] - a[0], b[1] - a[1]];
        let dl = (d[0] * d[0] + d[1] * d[1]).sqrt();
        let u = if dl > 1e-9 {
            [d[0] / dl, d[1] / dl]
        } else {
            let ang = rng.range(0.0, std::f64::consts::TAU);
            [ang.cos(), ang.sin()]
        };
        let side = if rng.next() < 0.5 { 1.0 } else { -1.0 };
        let perp = [-u[1] * side, u[0] * side];
        let t = match (rng.next() * 4.0) as usize {
            0 => rng.pick(&[0.0, 1.0]),
            1 => rng.pick(&[-0.3, 1.3, -0.01, 1.01]),
            _ => rng.next(),
        };
        let delta = if rng.next() < 0.4 {
            rng.range(-0.0012, 0.0012)
        } else {
            rng.pick(&[-0.01, -0.001, -0.0002, 0.0, 1e-4, 2e-4, 0.001, 0.005, 0.0102, 0.02, 0.3])
        };
        let off = r + delta;
        let mut p = [a[0] + t * d[0] + perp[0] * off, a[1] + t * d[1] + perp[1] * off];
        // An axis a hair from a cell line stays there (just inside either
        // cell): which cell's certificate answers is then the question.
        if rng.next() < 0.6 {
            let k = if perp[0].abs() > perp[1].abs() { 0 } else { 1 };
            let line = (p[k] / CELL).round() * CELL;
            if (p[k] - line).abs() < 0.006 {
                p[k] = line + rng.pick(&[0.0, 1.0, -1.0]) * rng.range(0.0, 3e-4);
            }
        }
        // Along a segment past a vertex: the end's distance is what counts.
        let ze = a[2] + t.clamp(0.0, 1.0) * (b[2] - a[2]);
        let mut zs = vec![];
        for _ in 0..2 {
            // The capsule's bottom near the edge's height, below it (the
            // straight part beside it), or its top near it.
            let bottom = match (rng.next() * 4.0) as usize {
                0 => ze + rng.pick(&[0.001, 0.01, 0.5, 2.15, -0.001]),
                1 => ze - rng.range(0.0, 2.0 * h),
                2 => ze - 2.0 * h + rng.pick(&[-0.01, -0.001, 0.001, 0.01, 1.0]),
                _ => ze - h,
            };
            zs.push(bottom + h);
        }
        // And resting on whatever is under it, lifted.
        let below = column_heights(oracle, p[0], p[1], zhi + 300.0, zlo - 300.0, 3);
        if let Some(&z) = below.iter().find(|&&z| z <= ze + 1.0).or(below.first())
            && let Some(rest) = capsule_rest_bottom(oracle, p[0], p[1], z, agent)
        {
            zs.push(rest + rng.pick(&[0.001, 0.01, 1.0, 2.15, 10.0]) + h);
        }
        for cz in zs {
            let pos = [p[0], p[1], cz];
            out.tan_capsule.push(FloorQuery {
                pos,
                down_cm: rng.pick(&DOWNS_CM),
                agent,
            });
            out.tan_line.push(FloorQuery {
                pos: [
                    a[0] + t * d[0],
                    a[1] + t * d[1],
                    cz + rng.pick(&[0.0, 1e-3, -1e-3, 2.0]),
                ],
                down_cm: rng.pick(&DOWNS_CM),
                agent,
            });
            let len = rng
                .pick(&[0.001f64, 0.01, 0.5, 5.0, 39.99, 40.0, 100.0, 256.0])
                .min(config.max_sweep_len_cm);
            let dir = match (rng.next() * 5.0) as usize {
                0 => [-perp[0], -perp[1]],
                1 => u,
                2 => [-u[0], -u[1]],
                3 => perp,
                _ => {
                    let ang = rng.range(0.0, std::f64::consts::TAU);
                    [ang.cos(), ang.sin()]
                }
            };
            out.tan_sweeps.push(SweepQuery {
                pos,
                delta: [dir[0] * len, dir[1] * len],
                agent,
            });
        }
    }
}

/// Where along `t ∈ [0, 1]` the runtime's answer stops being "like" the
/// one at 0: bisected to the last `t` that is like it and the first that
/// is not (both returned), if the answer at 1 is not like it.
fn transition(like: impl Fn(f64) -> bool, steps: usize) -> Option<(f64, f64)> {
    (!like(1.0)).then(|| bisect(0.0, 1.0, steps, like))
}

/// Whether two floor answers are alike: the same kind, and for floors the
/// same walkable flag and normal (within 0.02) and a distance within
/// `slack` of each other.
fn floor_like(a: FloorOutcome, b: FloorOutcome, slack: f64) -> bool {
    match (a, b) {
        (FloorOutcome::Fallback(x), FloorOutcome::Fallback(y)) => x == y,
        (FloorOutcome::NoFloor, FloorOutcome::NoFloor) => true,
        (FloorOutcome::Floor(x), FloorOutcome::Floor(y)) => {
            x.walkable == y.walkable
                && (0..3).all(|k| (x.normal[k] - y.normal[k]).abs() < 0.02)
                && (x.floor_dist - y.floor_dist).abs() < slack
        }
        _ => false,
    }
}

fn sweep_like(a: SweepOutcome, b: SweepOutcome, slack: f64) -> bool {
    match (a, b) {
        (SweepOutcome::Fallback(x), SweepOutcome::Fallback(y)) => x == y,
        (SweepOutcome::Clear, SweepOutcome::Clear) => true,
        (SweepOutcome::Hit(x), SweepOutcome::Hit(y)) => {
            (0..3).all(|k| (x.normal[k] - y.normal[k]).abs() < 0.02) && (x.distance - y.distance).abs() < slack
        }
        _ => false,
    }
}

fn make_queries(rng: &mut Rng, level: &Level, surface: &Surface, oracle: &Oracle, config: &BakeConfig) -> Queries {
    let rs = surface.bake_params().max_agent_radius_cm.get() as f64;
    let rc = config.max_agent_radius_cm;
    let hmax = config.max_agent_half_height_cm;
    let mut out = Queries::default();
    let npts: usize = knob("FUZZ_Q", 24);
    let (zlo, zhi) = {
        let (lo, hi) = bounds(&level.mesh);
        (lo[2], hi[2])
    };
    let point = |rng: &mut Rng| -> [f64; 2] {
        match (rng.next() * 4.0) as usize {
            0 if !level.spots.is_empty() => {
                let s = rng.pick(&level.spots);
                let j = rng.pick(&[0.0, 1e-3, 0.1, 5.0, rs, 60.0]);
                [s[0] + rng.range(-j, j), s[1] + rng.range(-j, j)]
            }
            1 => {
                // By a cell line, a largest radius from one, or a tile line.
                let x = rng.range(level.lo[0], level.hi[0]);
                let y = rng.range(level.lo[1], level.hi[1]);
                let snap = |v: f64, rng: &mut Rng| {
                    let g = if rng.next() < 0.3 { TILE } else { CELL };
                    (v / g).round() * g + rng.pick(&[0.0, 1e-4, -1e-4, 0.01, -0.01, rs, -rs])
                };
                if rng.next() < 0.5 {
                    [snap(x, rng), y]
                } else {
                    [x, snap(y, rng)]
                }
            }
            _ => [rng.range(level.lo[0], level.hi[0]), rng.range(level.lo[1], level.hi[1])],
        }
    };
    for _ in 0..npts {
        let p = point(rng);
        let agent = random_agent(rng, rs, rc, hmax);
        let surfaces = column_heights(oracle, p[0], p[1], zhi + 300.0, zlo - 300.0, 4);
        // Line traces down the column.
        let mut bottoms = vec![zhi + 20.0, rng.range(zlo - 20.0, zhi + 20.0)];
        for z in &surfaces {
            for _ in 0..3 {
                bottoms.push(z + rng.pick(&BOTTOM_OFFSETS_CM));
            }
        }
        for b in bottoms {
            out.line.push(FloorQuery {
                pos: [p[0], p[1], b + agent.half_height_cm],
                down_cm: rng.pick(&DOWNS_CM),
                agent,
            });
        }
        // Capsules resting on each surface, lifted.
        let mut rests = Vec::new();
        for &z in &surfaces {
            if let Some(rest) = capsule_rest_bottom(oracle, p[0], p[1], z, agent) {
                rests.push(rest);
            }
        }
        let lifts = [0.001, 0.004, 0.0101, 0.1, 1.0, 2.15, 10.0];
        for &rest in &rests {
            for _ in 0..4 {
                let lift = if rng.next() < 0.7 {
                    rng.pick(&lifts)
                } else {
                    rng.range(0.001, 10.0)
                };
                out.capsule.push(FloorQuery {
                    pos: [p[0], p[1], rest + lift + agent.half_height_cm],
                    down_cm: rng.pick(&DOWNS_CM),
                    agent,
                });
            }
            // Sweeps from the lifted rest.
            for _ in 0..3 {
                let lift = rng.pick(&lifts);
                let ang = rng.range(0.0, std::f64::consts::TAU);
                let len = rng.pick(&[0.001, 0.01, 1.0, 10.0, 39.99, 40.0, 100.0, 256.0]) * rng.range(0.5, 1.0);
                let len = if rng.next() < 0.1 {
                    config.max_sweep_len_cm * rng.pick(&[1.0, 0.999, 1.001])
                } else {
                    len
                };
                out.sweeps.push(SweepQuery {
                    pos: [p[0], p[1], rest + lift + agent.half_height_cm],
                    delta: [len * ang.cos(), len * ang.sin()],
                    agent,
                });
            }
        }
        // Random capsules.
        out.capsule.push(FloorQuery {
            pos: [p[0], p[1], rng.range(zlo - 20.0, zhi + 250.0)],
            down_cm: rng.pick(&DOWNS_CM),
            agent,
        });
    }
    // The fast path pushed to its edges: the lowest lift it clears and the
    // nearest approach to a feature.
    let hunts: usize = knob("FUZZ_HUNT", 40);
    for _ in 0..hunts {
        let p = point(rng);
        let agent = random_agent(rng, rs, rc, hmax);
        let Some(&z) = column_heights(oracle, p[0], p[1], zhi + 300.0, zlo - 300.0, 2).first() else {
            continue;
        };
        let Some(rest) = capsule_rest_bottom(oracle, p[0], p[1], z, agent) else {
            continue;
        };
        let ang = rng.range(0.0, std::f64::consts::TAU);
        let len = rng.pick(&[1e-6, 0.01, 1.0, 10.0, 25.0, 39.99, 40.0]) * rng.range(0.9, 1.0);
        let delta = [len * ang.cos(), len * ang.sin()];
        let at = |lift: f64| [p[0], p[1], rest + agent.half_height_cm + lift];
        let clears = |lift: f64| surface.sweep_certified_clear(at(lift), delta, agent);
        let Some(hi) = [0.0011, 0.003, 0.02, 0.3, 3.0, 20.0, 80.0]
            .into_iter()
            .find(|&l| clears(l))
        else {
            continue;
        };
        let low = edge(hi, 0.0, 30, clears);
        out.hunted.push(SweepQuery {
            pos: at(low),
            delta,
            agent,
        });
        let top = hi + 2.0 * hmax + 50.0;
        if !clears(top) {
            let l = edge(hi, top, 40, clears);
            out.hunted.push(SweepQuery {
                pos: at(l),
                delta,
                agent,
            });
        }
        // Slide the start along the move's reverse until the fast path
        // stops clearing (toward whatever it was clear of).
        let back = [-ang.cos(), -ang.sin()];
        let lift = low * 1.5 + 0.002;
        let shifted = |s: f64| {
            [
                p[0] + s * back[0],
                p[1] + s * back[1],
                rest + agent.half_height_cm + lift,
            ]
        };
        let ok = |s: f64| surface.sweep_certified_clear(shifted(s), delta, agent);
        if ok(0.0) && !ok(-60.0) {
            let s = edge(0.0, -60.0, 40, ok);
            // (The floor height there may differ: the oracle decides.)
            out.hunted.push(SweepQuery {
                pos: shifted(s),
                delta,
                agent,
            });
        }
    }
    edge_hunts(rng, &point, surface, oracle, config, zlo, zhi, &mut out);
    tangents(rng, level, surface, oracle, config, &mut out);
    out
}

/// Queries on both sides of every change of the runtime's answer along a
/// random segment (toward a feature), a lift, or a radius.
#[allow(clippy::too_many_arguments)]
fn edge_hunts(
    rng: &mut Rng,
    point: &impl Fn(&mut Rng) -> [f64; 2],
    surface: &Surface,
    oracle: &Oracle,
    config: &BakeConfig,
    zlo: f64,
    zhi: f64,
    out: &mut Queries,
) {
    let rs = surface.bake_params().max_agent_radius_cm.get() as f64;
    let rc = config.max_agent_radius_cm;
    let hmax = config.max_agent_half_height_cm;
    let n: usize = knob("FUZZ_EDGE", 30);
    for _ in 0..n {
        let p = point(rng);
        let agent = random_agent(rng, rs, rc, hmax);
        let Some(&z) = column_heights(oracle, p[0], p[1], zhi + 300.0, zlo - 300.0, 3).first() else {
            continue;
        };
        let rest = capsule_rest_bottom(oracle, p[0], p[1], z, agent).unwrap_or(z + 1.0);
        let lift = rng.pick(&[0.001, 0.004, 0.0101, 0.1, 1.0, 2.15, 10.0, 40.0]);
        let down = rng.pick(&DOWNS_CM);
        let q = point(rng);
        // (A segment toward another point, at most 3 cm to a few metres.)
        let len = rng.pick(&[0.05, 3.0, 50.0, 1000.0]);
        let d = [q[0] - p[0], q[1] - p[1]];
        let dl = (d[0] * d[0] + d[1] * d[1]).sqrt().max(1e-9);
        let k = (len / dl).min(1.0);
        let d = [d[0] * k, d[1] * k];
        let cz = rest + lift + agent.half_height_cm;
        match (rng.next() * 5.0) as usize {
            0 | 1 => {
                // Capsule find_floor along the segment at a fixed height, or
                // down a lift to 0 (and into overlap), or over radii.
                let mode = (rng.next() * 3.0) as usize;
                let at = |t: f64| -> FloorQuery {
                    match mode {
                        0 => FloorQuery {
                            pos: [p[0] + t * d[0], p[1] + t * d[1], cz],
                            down_cm: down,
                            agent,
                        },
                        1 => FloorQuery {
                            pos: [p[0], p[1], cz - t * (lift + 0.01)],
                            down_cm: down,
                            agent,
                        },
                        _ => {
                            let r = agent.radius_cm + t * (rs - agent.radius_cm);
                            FloorQuery {
                                pos: [p[0], p[1], cz],
                                down_cm: down,
                                agent: Agent {
                                    radius_cm: r,
                                    half_height_cm: agent.half_height_cm.max(r),
                                },
                            }
                        }
                    }
                };
                let ask = |t: f64| {
                    let q = at(t);
                    surface.find_floor(q.pos, q.down_cm, q.agent, FloorMode::Capsule)
                };
                let a0 = ask(0.0);
                let slack = 0.5 + len;
                if let Some((y, n)) = transition(|t| floor_like(ask(t), a0, slack), 44) {
                    out.edge_capsule.push(at(y));
                    out.edge_capsule.push(at(n));
                }
            }
            2 => {
                // Line trace along the segment, or over the bottom height.
                let along = rng.next() < 0.6;
                let at = |t: f64| -> FloorQuery {
                    if along {
                        FloorQuery {
                            pos: [p[0] + t * d[0], p[1] + t * d[1], z + lift + agent.half_height_cm],
                            down_cm: down,
                            agent,
                        }
                    } else {
                        FloorQuery {
                            pos: [p[0], p[1], z + agent.half_height_cm + 3.0 - t * (down + 6.0)],
                            down_cm: down,
                            agent,
                        }
                    }
                };
                let ask = |t: f64| {
                    let q = at(t);
                    surface.find_floor(q.pos, q.down_cm, q.agent, FloorMode::LineTrace)
                };
                let a0 = ask(0.0);
                let slack = if along { 0.5 + len } else { 1e9 };
                if let Some((y, n)) = transition(|t| floor_like(ask(t), a0, slack), 44) {
                    out.edge_line.push(at(y));
                    out.edge_line.push(at(n));
                }
            }
            _ => {
                // Full-path sweeps: along the segment (start moved), down a
                // lift, or over the move's length.
                let ang = rng.range(0.0, std::f64::consts::TAU);
                let mlen = rng
                    .pick(&[0.01f64, 1.0, 10.0, 39.99, 100.0, 256.0])
                    .min(config.max_sweep_len_cm);
                let u = [ang.cos(), ang.sin()];
                let mode = (rng.next() * 3.0) as usize;
                let at = |t: f64| -> SweepQuery {
                    match mode {
                        0 => SweepQuery {
                            pos: [p[0] + t * d[0], p[1] + t * d[1], cz],
                            delta: [mlen * u[0], mlen * u[1]],
                            agent,
                        },
                        1 => SweepQuery {
                            pos: [p[0], p[1], cz - t * (lift + 0.01)],
                            delta: [mlen * u[0], mlen * u[1]],
                            agent,
                        },
                        _ => SweepQuery {
                            pos: [p[0], p[1], cz],
                            delta: [mlen * t * u[0], mlen * t * u[1]],
                            agent,
                        },
                    }
                };
                let ask = |t: f64| {
                    let q = at(t);
                    surface.sweep_horizontal(q.pos, q.delta, q.agent)
                };
                let a0 = ask(if mode == 2 { 1e-6 } else { 0.0 });
                let slack = 0.5 + len;
                if let Some((y, n)) = transition(|t| sweep_like(ask(t.max(1e-6)), a0, slack), 44) {
                    out.edge_sweeps.push(at(y.max(1e-6)));
                    out.edge_sweeps.push(at(n.max(1e-6)));
                }
            }
        }
    }
}

/// The cached entry points answer as the plain ones (one cache through
/// every query, so hints from other tiles and agents are tried).
fn cache_agrees(surface: &Surface, qs: &Queries, what: &str) -> Vec<String> {
    let mut cache = walksurf::QueryCache::new();
    let mut errors = Vec::new();
    for (q, mode) in qs
        .capsule
        .iter()
        .chain(&qs.edge_capsule)
        .map(|q| (q, FloorMode::Capsule))
        .chain(qs.line.iter().chain(&qs.edge_line).map(|q| (q, FloorMode::LineTrace)))
    {
        let a = surface.find_floor(q.pos, q.down_cm, q.agent, mode);
        let b = surface.find_floor_cached(&mut cache, q.pos, q.down_cm, q.agent, mode);
        if a != b {
            errors.push(format!("{what} cached {mode:?} {q:?}: {b:?} vs uncached {a:?}"));
        }
    }
    for q in qs.sweeps.iter().chain(&qs.edge_sweeps) {
        let a = surface.sweep_horizontal(q.pos, q.delta, q.agent);
        let b = surface.sweep_horizontal_cached(&mut cache, q.pos, q.delta, q.agent);
        if a != b {
            errors.push(format!("{what} cached sweep {q:?}: {b:?} vs uncached {a:?}"));
        }
    }
    errors
}

/// Per-setting counts for the report.
#[derive(Default)]
struct PerSetting {
    capsule: Tally,
    line: Tally,
    sweep: Tally,
    hunted: Tally,
    edges: Tally,
    tangent: Tally,
}

fn config_label(c: &BakeConfig) -> String {
    format!(
        "R {} H {:.2} wz {} cz {:.3} sweep {} coplanar {}",
        c.max_agent_radius_cm,
        c.max_agent_half_height_cm,
        c.walkable_normal_z,
        c.collected_normal_z,
        c.max_sweep_len_cm,
        c.coplanar_dist_cm
    )
}

/// One seed: a setting, a level, queries, both precision paths.
fn run_seed(
    seed: u64,
    stream: u64,
    config: Option<BakeConfig>,
    report: &mut BTreeMap<String, PerSetting>,
) -> Vec<String> {
    let mut rng = Rng::seeded(stream, seed);
    let config = config.unwrap_or_else(|| random_config(&mut rng));
    config.validate().expect("a legal setting");
    let level = random_level(&mut rng, &config);
    let baked = match bake_mesh(&level.mesh, &config, 1, &Silent) {
        Ok(b) => b,
        Err(e) => panic!("seed {seed}: bake with {}: {e}", config_label(&config)),
    };
    let surface = Surface::from_bytes(&baked.bytes).expect("open");
    let oracle = Oracle::new(&level.mesh.vertices, &level.mesh.triangles).expect("oracle");
    let mut reference = Surface::from_bytes(&baked.bytes).expect("reopen");
    reference.set_precision_path(PrecisionPath::Reference);
    let qs = make_queries(&mut rng, &level, &surface, &oracle, &config);
    let wz = config.walkable_normal_z;
    let label = config_label(&config);
    let entry = report.entry(label.clone()).or_default();
    let mut errors = Vec::new();
    for (s, path) in [(&surface, "fast"), (&reference, "reference")] {
        let what = format!("seed {seed} [{label}] {path}:");
        let c = check_capsule(s, &oracle, &qs.capsule, wz, &what);
        let l = check_line(s, &oracle, &qs.line, wz, &what);
        let w = check_sweeps(s, &oracle, &qs.sweeps, &what);
        let h = check_sweeps(s, &oracle, &qs.hunted, &format!("{what} hunted"));
        let mut e = check_capsule(s, &oracle, &qs.edge_capsule, wz, &format!("{what} edge"));
        e.merge(&check_line(s, &oracle, &qs.edge_line, wz, &format!("{what} edge")));
        e.merge(&check_sweeps(s, &oracle, &qs.edge_sweeps, &format!("{what} edge")));
        let mut tg = check_capsule(s, &oracle, &qs.tan_capsule, wz, &format!("{what} tangent"));
        tg.merge(&check_line(s, &oracle, &qs.tan_line, wz, &format!("{what} tangent")));
        tg.merge(&check_sweeps(s, &oracle, &qs.tan_sweeps, &format!("{what} tangent")));
        entry.tangent.merge(&tg);
        for t in [&c, &l, &w, &h, &e, &tg] {
            errors.extend(t.errors.iter().cloned());
        }
        entry.capsule.merge(&c);
        entry.line.merge(&l);
        entry.sweep.merge(&w);
        entry.hunted.merge(&h);
        entry.edges.merge(&e);
    }
    errors.extend(cache_agrees(&surface, &qs, &format!("seed {seed} [{label}]")));
    if knob("FUZZ_VERBOSE", 0) != 0 {
        println!(
            "seed {seed} [{label}] {:?}: {} tris, {} tiles; q capsule {} line {} sweep {} hunted {}; errors {}",
            level.what,
            level.mesh.triangles.len(),
            baked.report.tiles,
            qs.capsule.len(),
            qs.line.len(),
            qs.sweeps.len(),
            qs.hunted.len(),
            errors.len()
        );
    }
    errors
}

fn print_report(report: &BTreeMap<String, PerSetting>) {
    for (label, p) in report {
        println!("[{label}]");
        println!("  capsule {}", p.capsule.summary());
        println!("  line    {}", p.line.summary());
        println!("  sweep   {}", p.sweep.summary());
        println!("  hunted  {}", p.hunted.summary());
        println!("  edges   {}", p.edges.summary());
        println!("  tangent {}", p.tangent.summary());
    }
}

/// Random settings, levels, agents and queries.
#[test]
fn fuzz_random_settings() {
    let mut report = BTreeMap::new();
    let mut errors = Vec::new();
    let mut n = 0;
    for seed in fuzz_seeds() {
        errors.extend(run_seed(seed, 0x5E77_1465_F022_0001, None, &mut report));
        n += 1;
    }
    print_report(&report);
    for e in errors.iter().take(20) {
        println!("WRONG {e}");
    }
    assert_agree("fuzz_random_settings", &errors, n, "seeds' answers");
}

/// The radii a reviewer named (off the vertex grid, tiny, large), each
/// with otherwise default settings but for the one seed's random level.
#[test]
fn fuzz_named_radii() {
    let mut report = BTreeMap::new();
    let mut errors = Vec::new();
    let radii = [41.99, 25.4, 34.3, 10.001, 3.0, 60.0];
    let mut n = 0;
    for seed in fuzz_seeds() {
        let r = radii[(seed as usize) % radii.len()];
        let config = BakeConfig {
            max_agent_radius_cm: r,
            max_agent_half_height_cm: 96.0f64.max(r),
            threads: 1,
            ..BakeConfig::default()
        };
        errors.extend(run_seed(seed, 0x5E77_1465_F022_0002, Some(config), &mut report));
        n += 1;
    }
    print_report(&report);
    for e in errors.iter().take(20) {
        println!("WRONG {e}");
    }
    assert_agree("fuzz_named_radii", &errors, n, "seeds' answers");
}
