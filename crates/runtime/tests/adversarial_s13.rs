//! Adversarial review (session 13): geometry the other fuzzers do not
//! build, every answer against the exact oracle (capsule and line-trace
//! `find_floor`, `sweep_horizontal`; a Fallback always agrees), on the
//! baked file, on the same file with its certificates switched off (the
//! full path answers everything) and, for half the levels, on the
//! Reference precision path.
//!
//! * `rotated_levels_at_far_tile_corners`: compound levels (stairs, ramps,
//!   boxes, thin walls, shelves over curbs, slabs, ceilings, threshold
//!   slopes, walls and platform edges on the tile lines) rotated by
//!   arbitrary angles and placed with a tile corner in their middle, at the
//!   origin or 1e5–5e5 cm out (both signs); queries on and within a few cm
//!   of the tile lines and corners, capsules one radius (± a hair) from
//!   triangle edges, zero, tiny and long sweeps, along the tile lines and
//!   the rotated walls; bisected transitions of the oracle's answer.
//! * `specks_slivers_and_stacks`: sub-centimetre triangles (walkable and
//!   steep) on and a hair above a floor, needles lying and standing on it,
//!   nearly coplanar floors stacked 0.001–0.5 cm apart with opposite
//!   windings and T-junctions, unwelded duplicates, fans of slivers.
//! * `ceilings_at_the_capsule_top`: capsule tops 0–0.05 cm below (and a
//!   hair into) flat and sloped ceilings, under their edges, at and around
//!   the headroom, swept under and out from them.
//! * `hidden_rise_bound`: shelves whose edge hides a curb whose top lies
//!   within 1e-3 cm of the HIDDEN rise bound below them, agents whose top
//!   sphere centre is just above / below that bound.
//! * `extreme_downs`: `down` of 0, 1e-9, 1e-4, 600, 5e3 and 1e6 cm over floors
//!   far below and tiles with a large z range.
//! * `just_inside_the_fixed_point_range`: blockers reaching 1.9e6–2.09e6 cm
//!   from the tile origin (clipped, as every blocker reaching more than
//!   1e6 cm beyond its tile's square is) and a tile z range of 2.05e6 cm;
//!   and just beyond: a wall reaching 42 km out
//!   (`blockers_beyond_the_fixed_point_range_are_clipped`, wrong answers
//!   before the clip) and a tile whose heights span 3e6 cm, which the bake
//!   refuses (`a_tile_spanning_more_heights_than_the_fixed_point_holds_is_refused`).
//!
//! Knobs: `S13_SEEDS` (levels per fuzz test, 24), `S13_FIRST` (first seed, 0).
mod common;
use common::*;
use std::f64::consts::{PI, TAU};
use walksurf::DEFAULT_FLOOR_DOWN_CM;
use walksurf::{Agent, PrecisionPath, Surface};
use walksurf_bake::Mesh;
use walksurf_format::{FileView, tile_flags};
use walksurf_oracle::{Oracle, OracleFloor, OracleSweep};

const TILE: f64 = 3200.0;

/// A rigid placement: rotate by an angle about the local origin, then move
/// to `o`. The same local point always gives the same world bits (welded).
#[derive(Clone, Copy, Debug)]
struct Place {
    o: [f64; 3],
    c: f64,
    s: f64,
}

impl Place {
    fn new(o: [f64; 3], ang: f64) -> Place {
        let (s, c) = if ang == 0.0 { (0.0, 1.0) } else { ang.sin_cos() };
        Place { o, c, s }
    }
    fn p(&self, [x, y, z]: [f64; 3]) -> [f64; 3] {
        [
            self.o[0] + (self.c * x - self.s * y),
            self.o[1] + (self.s * x + self.c * y),
            self.o[2] + z,
        ]
    }
    fn xy(&self, x: f64, y: f64) -> [f64; 2] {
        let p = self.p([x, y, 0.0]);
        [p[0], p[1]]
    }
}

/// The level builder with a placement set while this lives: every shape
/// it adds is turned and moved by the place.
struct Pb<'a> {
    b: &'a mut LevelBuilder,
}

impl<'a> Pb<'a> {
    fn new(b: &'a mut LevelBuilder, pl: Place) -> Pb<'a> {
        b.offset = pl.o;
        b.turn = Some([pl.c, pl.s]);
        Pb { b }
    }
}

impl Drop for Pb<'_> {
    fn drop(&mut self) {
        self.b.offset = [0.0; 3];
        self.b.turn = None;
    }
}

impl std::ops::Deref for Pb<'_> {
    type Target = LevelBuilder;
    fn deref(&self) -> &LevelBuilder {
        self.b
    }
}

impl std::ops::DerefMut for Pb<'_> {
    fn deref_mut(&mut self) -> &mut LevelBuilder {
        self.b
    }
}

/// A generated level: its mesh, its region and where to look.
struct Level {
    mesh: Mesh,
    lo: [f64; 3],
    hi: [f64; 3],
    /// World XY points near features.
    spots: Vec<[f64; 2]>,
    /// Ceilings: a world XY point under one and the ceiling's height there.
    ceilings: Vec<([f64; 2], f64)>,
    /// Tile lines (world x, world y) to probe around.
    lines: Option<[f64; 2]>,
    what: Vec<String>,
}

impl Level {
    fn new(mesh: Mesh, spots: Vec<[f64; 2]>) -> Level {
        let (lo, hi) = bounds(&mesh);
        Level {
            mesh,
            lo,
            hi,
            spots,
            ceilings: Vec::new(),
            lines: None,
            what: Vec::new(),
        }
    }
}

/// Slope (rise per cm) whose plane normal's z is `nz`.
fn slope_for(nz: f64) -> f64 {
    (1.0 / (nz * nz) - 1.0).max(0.0).sqrt()
}

/// The agents a query set tries: shapes up to the bake's largest radius,
/// short, slim, tall.
fn agents_for(rng: &mut Rng) -> Vec<Agent> {
    let mut v = vec![Agent::DEFAULT];
    for _ in 0..2 {
        v.push(match (rng.next() * 5.0) as usize {
            0 => rng.agent(),
            1 => Agent {
                radius_cm: rng.range(0.05, 3.0),
                half_height_cm: rng.range(3.0, 96.0),
            },
            2 => {
                let r = rng.range(20.0, 42.0);
                Agent {
                    radius_cm: r,
                    half_height_cm: r,
                }
            }
            3 => Agent {
                radius_cm: 41.999,
                half_height_cm: rng.range(100.0, 250.0),
            },
            _ => Agent {
                radius_cm: rng.range(5.0, 42.0),
                half_height_cm: rng.range(42.0, 96.0),
            },
        });
    }
    v
}

/// Every query of one level.
#[derive(Default)]
struct Queries {
    caps: Vec<FloorQuery>,
    lines: Vec<FloorQuery>,
    sweeps: Vec<SweepQuery>,
}

/// Sweeps from `(x, y)` with the capsule bottom at `bottom`: `dirs`
/// directions (radians), each of every length of `lens`.
fn sweeps_at(out: &mut Vec<SweepQuery>, xy: [f64; 2], bottom: f64, agent: Agent, dirs: &[f64], lens: &[f64]) {
    for &d in dirs {
        for &l in lens {
            out.push(SweepQuery {
                pos: [xy[0], xy[1], bottom + agent.half_height_cm],
                delta: [l * d.cos(), l * d.sin()],
                agent,
            });
        }
    }
}

/// Lengths of sweeps: none, a hair, short steps, long moves.
const LENS: [f64; 8] = [0.0, 1e-9, 1e-4, 0.01, 1.0, 16.67, 80.0, 256.0];

/// Column queries (capsule and line) and sweeps from rest at `xy`.
fn column(
    rng: &mut Rng,
    oracle: &Oracle,
    level: &Level,
    xy: [f64; 2],
    agents: &[Agent],
    extra_dirs: &[f64],
    q: &mut Queries,
) {
    let (zlo, zhi) = (level.lo[2], level.hi[2]);
    let [x, y] = xy;
    column_queries(oracle, x, y, zlo, zhi, &mut q.lines);
    let surfaces = column_heights(oracle, x, y, zhi + 300.0, zlo - 300.0, 6);
    for &a in agents {
        capsule_column_queries(oracle, x, y, zlo, zhi, a, &mut q.caps);
        // Line traces for this agent's half-height too.
        for &z in &surfaces {
            for off in [-0.001, 0.0, 0.001, 2.15] {
                for down in [0.0, 10.0, 200.0] {
                    q.lines.push(FloorQuery {
                        pos: [x, y, z + off + a.half_height_cm],
                        down_cm: down,
                        agent: a,
                    });
                }
            }
        }
        for &z in &surfaces {
            let Some(rest) = capsule_rest_bottom(oracle, x, y, z, a) else {
                continue;
            };
            let mut dirs: Vec<f64> = (0..3).map(|_| rng.range(0.0, TAU)).collect();
            dirs.extend_from_slice(extra_dirs);
            // Toward some features.
            for _ in 0..3 {
                if let Some(&t) = level.spots.get((rng.next() * level.spots.len() as f64) as usize) {
                    let (dx, dy) = (t[0] - x, t[1] - y);
                    if dx.hypot(dy) > 1e-6 {
                        dirs.push(dy.atan2(dx));
                    }
                }
            }
            for lift in [0.0005, 2.15, 30.0] {
                let lens: Vec<f64> = (0..2).map(|_| rng.pick(&LENS)).collect();
                sweeps_at(&mut q.sweeps, xy, rest + lift, a, &dirs, &lens);
            }
        }
    }
}

/// Capsules one radius (± a hair) from triangle edges of the level: axis
/// beside the edge at heights that reach it; the floor below them and
/// sweeps toward, along and away from the edge, of tiny and normal lengths.
fn tangents(rng: &mut Rng, level: &Level, agents: &[Agent], n: usize, q: &mut Queries) {
    let m = &level.mesh;
    if m.triangles.is_empty() {
        return;
    }
    for _ in 0..n {
        let t = m.triangles[((rng.next() * m.triangles.len() as f64) as usize).min(m.triangles.len() - 1)];
        let k = (rng.next() * 3.0) as usize % 3;
        let (a, b) = (m.vertices[t[k] as usize], m.vertices[t[(k + 1) % 3] as usize]);
        let (ex, ey) = (b[0] - a[0], b[1] - a[1]);
        let l = ex.hypot(ey);
        let agent = rng.pick(agents);
        let r = agent.radius_cm;
        let h = agent.half_height_cm - r;
        let (ux, uy, nx, ny) = if l > 1e-6 {
            (ex / l, ey / l, -ey / l, ex / l)
        } else {
            let ang = rng.range(0.0, TAU);
            (ang.cos(), ang.sin(), -ang.sin(), ang.cos())
        };
        let any = rng.next();
        let s = rng.pick(&[0.0, 1.0, any, any, -1e-3, 1.0 + 1e-3]);
        let p = [
            a[0] + s * (b[0] - a[0]),
            a[1] + s * (b[1] - a[1]),
            a[2] + s * (b[2] - a[2]),
        ];
        let side = if rng.next() < 0.5 { 1.0 } else { -1.0 };
        let eps = rng.pick(&[-1e-3, -1e-4, -1e-5, 0.0, 1e-5, 1e-4, 1e-3, 0.01]);
        let d = r + eps;
        let xy = [p[0] + side * nx * d, p[1] + side * ny * d];
        // Floor: the bottom sphere's centre some way above the point.
        for up in [rng.range(0.01, 3.0), rng.range(3.0, 40.0)] {
            let cz = p[2] + up;
            for down in [DEFAULT_FLOOR_DOWN_CM, 200.0] {
                q.caps.push(FloorQuery {
                    pos: [xy[0], xy[1], cz + h],
                    down_cm: down,
                    agent,
                });
            }
        }
        // Sweeps: the point at the bottom sphere's centre height, in its
        // lower half, just below its reach, beside the straight part, in
        // the top sphere.
        let rel = rng.pick(&[
            0.0,
            -0.5 * r,
            -0.999 * r,
            -r - 1e-3,
            h,
            2.0 * h + 0.5 * r,
            2.0 * h + 0.999 * r,
        ]);
        let shift = rng.pick(&[0.0, 1e-4, 0.003]);
        let pos = [xy[0] + side * nx * shift, xy[1] + side * ny * shift, p[2] - rel + h];
        let toward = [-side * nx, -side * ny];
        let along = [ux, uy];
        let graze = |t: f64| [along[0] + t * toward[0], along[1] + t * toward[1]];
        for dir in [
            toward,
            along,
            [-along[0], -along[1]],
            graze(1e-4),
            graze(-1e-4),
            graze(0.01),
        ] {
            let dl = dir[0].hypot(dir[1]);
            for len in [
                rng.pick(&[1e-4, 1e-3, eps.abs() + 1e-5]),
                rng.pick(&[1.0, 16.67, 100.0]),
            ] {
                q.sweeps.push(SweepQuery {
                    pos,
                    delta: [len * dir[0] / dl, len * dir[1] / dl],
                    agent,
                });
            }
        }
    }
}

/// Whether two oracle floors are the same contact (same kind; a floor within
/// 0.5 cm and with a like normal).
fn floor_same(a: OracleFloor, b: OracleFloor) -> bool {
    match (a, b) {
        (OracleFloor::NoFloor, OracleFloor::NoFloor) | (OracleFloor::StartOverlap, OracleFloor::StartOverlap) => true,
        (
            OracleFloor::Floor {
                floor_dist: d0,
                normal: n0,
                ..
            },
            OracleFloor::Floor {
                floor_dist: d1,
                normal: n1,
                ..
            },
        ) => (d0 - d1).abs() < 0.5 && (0..3).all(|k| (n0[k] - n1[k]).abs() < 0.05),
        _ => false,
    }
}

/// [`floor_same`] for sweeps.
fn sweep_same(a: OracleSweep, b: OracleSweep) -> bool {
    match (a, b) {
        (OracleSweep::Clear, OracleSweep::Clear) | (OracleSweep::StartOverlap, OracleSweep::StartOverlap) => true,
        (
            OracleSweep::Hit {
                distance: d0,
                normal: n0,
                ..
            },
            OracleSweep::Hit {
                distance: d1,
                normal: n1,
                ..
            },
        ) => (d0 - d1).abs() < 0.5 && (0..3).all(|k| (n0[k] - n1[k]).abs() < 0.05),
        _ => false,
    }
}

/// Offsets (cm) around a transition at which the runtime is asked.
const AROUND: [f64; 9] = [-1e-3, -1e-4, -1e-5, -1e-6, 0.0, 1e-6, 1e-5, 1e-4, 1e-3];

/// Where the oracle's answer changes: along a segment from a point near a
/// feature (capsule and line floors at a fixed height; sweeps from starts
/// along it; sweeps and capsule floors from starts moved up or down),
/// bisected to the change, then asked at and a hair around it.
fn hunts(rng: &mut Rng, oracle: &Oracle, level: &Level, agents: &[Agent], n: usize, q: &mut Queries) {
    if level.spots.is_empty() {
        return;
    }
    for _ in 0..n {
        let s = level.spots[((rng.next() * level.spots.len() as f64) as usize).min(level.spots.len() - 1)];
        let p = [s[0] + rng.range(-40.0, 40.0), s[1] + rng.range(-40.0, 40.0)];
        let agent = rng.pick(agents);
        let hh = agent.half_height_cm;
        let surfaces = column_heights(oracle, p[0], p[1], level.hi[2] + 50.0, level.lo[2] - 50.0, 4);
        let z = if surfaces.is_empty() {
            level.lo[2]
        } else {
            rng.pick(&surfaces)
        };
        let rest = capsule_rest_bottom(oracle, p[0], p[1], z, agent).unwrap_or(z + 1.0);
        let bottom = rest + rng.pick(&[0.0005, 0.01, 2.15, 10.0, 40.0]);
        let dir = rng.range(0.0, TAU);
        let len = rng.pick(&[0.3, 5.0, 60.0]);
        let d = [len * dir.cos(), len * dir.sin()];
        let down = rng.pick(&[DEFAULT_FLOOR_DOWN_CM, 10.0, 200.0]);
        let mdir = rng.range(0.0, TAU);
        let mlen = rng.pick(&[1e-3, 1.0, 16.67, 100.0, 256.0]);
        let delta = [mlen * mdir.cos(), mlen * mdir.sin()];
        let dz = rng.pick(&[-2.0, -20.0, 20.0]);
        let mode = (rng.next() * 5.0) as usize;
        let fq = |t: f64| -> FloorQuery {
            let pos = if mode == 4 {
                [p[0], p[1], bottom + t * dz + hh]
            } else {
                [p[0] + t * d[0], p[1] + t * d[1], bottom + hh]
            };
            FloorQuery {
                pos,
                down_cm: down,
                agent,
            }
        };
        let sq = |t: f64| -> SweepQuery {
            let pos = if mode == 3 {
                [p[0], p[1], bottom + t * dz + hh]
            } else {
                [p[0] + t * d[0], p[1] + t * d[1], bottom + hh]
            };
            SweepQuery { pos, delta, agent }
        };
        let span = if mode >= 3 { dz.abs() } else { len };
        let around = |t: f64| AROUND.iter().map(move |o| t + o / span);
        match mode {
            0 | 4 => {
                let ask = |t: f64| {
                    let f = fq(t);
                    oracle.find_floor_capsule(f.pos, agent_shape(agent), down)
                };
                let a0 = ask(0.0);
                if floor_same(a0, ask(1.0)) {
                    continue;
                }
                let (_, no) = bisect(0.0, 1.0, 50, |t| floor_same(ask(t), a0));
                q.caps.extend(around(no).map(fq));
            }
            1 => {
                let ask = |t: f64| oracle.find_floor_line(fq(t).pos, hh, down);
                let a0 = ask(0.0);
                if floor_same(a0, ask(1.0)) {
                    continue;
                }
                let (_, no) = bisect(0.0, 1.0, 50, |t| floor_same(ask(t), a0));
                q.lines.extend(around(no).map(fq));
            }
            _ => {
                let ask = |t: f64| {
                    let w = sq(t);
                    oracle.sweep(w.pos, w.delta, agent_shape(agent))
                };
                let a0 = ask(0.0);
                if sweep_same(a0, ask(1.0)) {
                    continue;
                }
                let (_, no) = bisect(0.0, 1.0, 50, |t| sweep_same(ask(t), a0));
                q.sweeps.extend(around(no).map(sq));
            }
        }
    }
}

/// Capsules whose top is 0–0.05 cm below (or a hair into) each ceiling:
/// the floor below them (down reaching the floor) and sweeps under it.
fn ceiling_queries(rng: &mut Rng, level: &Level, agents: &[Agent], q: &mut Queries) {
    for &(xy, zc) in &level.ceilings {
        for &a in agents {
            for gap in [0.05, 0.01, 0.002, 0.0005, 1e-4, 0.0, -1e-4, -0.003] {
                let pos = [xy[0], xy[1], zc - gap - a.half_height_cm];
                for down in [DEFAULT_FLOOR_DOWN_CM, 200.0, 1000.0] {
                    q.caps.push(FloorQuery {
                        pos,
                        down_cm: down,
                        agent: a,
                    });
                }
                q.lines.push(FloorQuery {
                    pos,
                    down_cm: 200.0,
                    agent: a,
                });
                let dirs: Vec<f64> = (0..3).map(|_| rng.range(0.0, TAU)).collect();
                sweeps_at(
                    &mut q.sweeps,
                    xy,
                    pos[2] - a.half_height_cm,
                    a,
                    &dirs,
                    &[1e-4, 16.67, 120.0],
                );
            }
        }
    }
}

/// Points within a few cm of the tile lines through `c` (and its corner).
fn tile_line_points(rng: &mut Rng, c: [f64; 2], span: f64, n: usize) -> Vec<[f64; 2]> {
    const NEAR: [f64; 13] = [
        -42.0, -41.999, -10.0, -1.0, -0.01, -1e-4, 0.0, 1e-4, 0.01, 1.0, 10.0, 41.999, 42.0,
    ];
    let mut v = Vec::new();
    for _ in 0..n {
        let t = rng.range(-span, span);
        let d = rng.pick(&NEAR);
        v.push([c[0] + d, c[1] + t]);
        v.push([c[0] + t, c[1] + d]);
        v.push([c[0] + rng.pick(&NEAR), c[1] + rng.pick(&NEAR)]);
    }
    v
}

/// The file's bytes with every tile's certificates switched off (its
/// certificate flags cleared): every query takes the full path.
fn without_certs(bytes: &[u8]) -> Vec<u8> {
    let layout = FileView::parse(bytes).expect("parse");
    let view = FileView::new(bytes, &layout).expect("view");
    let base = bytes.as_ptr() as usize;
    let at: Vec<usize> = view.hot.iter().map(|h| &h.flags as *const _ as usize - base).collect();
    let mut out = bytes.to_vec();
    for o in at {
        let f = u32::from_le_bytes(out[o..o + 4].try_into().expect("4 bytes"))
            & !(tile_flags::HAS_CERTS | tile_flags::HAS_CERT_LISTS);
        out[o..o + 4].copy_from_slice(&f.to_le_bytes());
    }
    out
}

/// Runs every query kind on `surface` (and once more on the Reference
/// precision path when `reference`); prints a summary and returns the
/// tallies `(capsule, line, sweep)`.
fn run(name: &str, level: &Level, q: &Queries, reference: bool) -> [Tally; 3] {
    let (mut surface, oracle) = bake_generated(name, &level.mesh);
    let mut out = [
        compare_capsule(&surface, &oracle, &q.caps),
        compare_line(&surface, &oracle, &q.lines),
        compare_sweep_tally(&surface, &oracle, &q.sweeps),
    ];
    // The same file without certificates: the full path answers all.
    let full = Surface::from_bytes(&without_certs(surface.bytes())).expect("open");
    out[0].merge(&compare_capsule(&full, &oracle, &q.caps));
    out[1].merge(&compare_line(&full, &oracle, &q.lines));
    out[2].merge(&compare_sweep_tally(&full, &oracle, &q.sweeps));
    if reference {
        surface.set_precision_path(PrecisionPath::Reference);
        out[0].merge(&compare_capsule(&surface, &oracle, &q.caps));
        out[1].merge(&compare_line(&surface, &oracle, &q.lines));
        out[2].merge(&compare_sweep_tally(&surface, &oracle, &q.sweeps));
    }
    println!(
        "{name} [{}]\n  capsule {}\n  line    {}\n  sweep   {}",
        level.what.join(", "),
        out[0].summary(),
        out[1].summary(),
        out[2].summary()
    );
    for e in out.iter().flat_map(|t| t.errors.iter()).take(8) {
        println!("  WRONG {e}");
    }
    out
}

/// Totals over levels; asserts no disagreement and that each kind was
/// answered at least `min` times.
#[derive(Default)]
struct Totals([Tally; 3]);

impl Totals {
    fn add(&mut self, t: &[Tally; 3]) {
        for (mine, other) in self.0.iter_mut().zip(t) {
            mine.merge(other);
        }
    }
    #[track_caller]
    fn finish(&self, what: &str, min: [usize; 3]) {
        let names = ["capsule", "line", "sweep"];
        for (t, name) in self.0.iter().zip(names) {
            println!("{what} total {name}: {}", t.summary());
        }
        for (t, name) in self.0.iter().zip(names) {
            t.assert_no_errors(&format!("{what} ({name})"));
        }
        for ((t, name), min) in self.0.iter().zip(names).zip(min) {
            assert!(
                t.answered >= min,
                "{what}: only {} {name} answers (want {min})",
                t.answered
            );
        }
    }
}

fn seeds() -> std::ops::Range<u64> {
    let first = knob("S13_FIRST", 0);
    first..first + knob("S13_SEEDS", 24)
}

/// The generator of `seed` in `stream`, the seed mixed first (SplitMix64):
/// neighbouring seeds start far apart.
fn rng_for(stream: u64, seed: u64) -> Rng {
    let mut z = seed
        .wrapping_add(0x9E37_79B9_7F4A_7C15)
        .wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    Rng::seeded(stream, z ^ (z >> 31))
}

// ---------------------------------------------------------------------------
// Rotated compound levels at (far) tile corners.

/// A rotated compound level around the tile corner `corner` (world XY),
/// at height `z0`.
fn rotated_level(rng: &mut Rng, corner: [f64; 2], z0: f64) -> Level {
    let any = rng.range(0.0, TAU);
    let ang = rng.pick(&[0.0, PI / 4.0, PI / 6.0, 1e-3, -2e-5, any, any]);
    let (ox, oy) = (rng.range(-60.0, 60.0), rng.range(-60.0, 60.0));
    // The local origin a little off the corner (or on it).
    let off = [rng.pick(&[0.0, 0.3, -17.3, ox]), rng.pick(&[0.0, -0.7, 23.1, oy])];
    let pl = Place::new([corner[0] + off[0], corner[1] + off[1], z0], ang);
    let mut b = LevelBuilder::new();
    let mut spots = Vec::new();
    let mut ceilings = Vec::new();
    let mut what = vec![format!("angle {ang:.5}, corner {corner:?}, z {z0}")];
    {
        let mut pb = Pb::new(&mut b, pl);
        // The ground: four quads meeting at the local origin (or one quad).
        let g = 520.0;
        if rng.next() < 0.5 {
            for (xa, ya) in [(-g, -g), (0.0, -g), (-g, 0.0), (0.0, 0.0)] {
                pb.floor([xa, xa + g], [ya, ya + g], 0.0, Winding::Up);
            }
        } else {
            pb.floor([-g, g], [-g, g], 0.0, Winding::Up);
        }
    }
    {
        // On the tile lines themselves (when the placement is unrotated and
        // on the corner): a thin wall along x = 0 and a raised platform's
        // edge along y = 0, each a hair off or exact.
        let mut pb = Pb::new(&mut b, pl);
        let e = rng.pick(&[0.0, 0.0, 1e-4, -1e-3]);
        let h = rng.pick(&[3.0, 40.0, 250.0]);
        pb.wall([e, -480.0], [e, -400.0], [0.0, 0.0], [h, h]);
        let hp = rng.pick(&[0.5, 20.0]);
        pb.floor([-480.0, -400.0], [e, 60.0], hp, Winding::Up)
            .wall([-480.0, e], [-400.0, e], [0.0, 0.0], [hp, hp]);
        spots.extend([
            pl.xy(e + 20.0, -440.0),
            pl.xy(e - 20.0, -440.0),
            pl.xy(-440.0, e - 10.0),
        ]);
        what.push(format!("on the tile lines {e}"));
    }
    let slots = [
        [-330.0, -330.0],
        [60.0, -330.0],
        [-330.0, 60.0],
        [60.0, 60.0],
        [-120.0, -120.0],
    ];
    for &[sx, sy] in slots.iter() {
        if rng.next() < 0.2 {
            continue;
        }
        let mut pb = Pb::new(&mut b, pl);
        let w = rng.range(60.0, 220.0);
        match (rng.next() * 8.0) as usize {
            0 => {
                let steps = 2 + (rng.next() * 4.0) as usize;
                let tread = rng.pick(&[20.0, 28.0, 40.0, 42.0]);
                let riser = rng.pick(&[10.0, 18.0, 30.0, 45.0, 47.4]);
                pb.stairs(sx, [sy, sy + w], 0.0, steps, tread, riser);
                spots.push(pl.xy(sx + tread, sy + 0.5 * w));
                spots.push(pl.xy(sx + tread + 0.01, sy + 1.0));
                what.push("stairs".into());
            }
            1 => {
                let nz = 0.71 + rng.pick(&[1e-7, -1e-7, 1e-5, -1e-5, 1e-3, -1e-3, 0.05]);
                let s = slope_for(nz);
                let len = rng.range(40.0, 150.0);
                pb.ramp_x([sx, sx + len], [sy, sy + w], [0.0, s * len]);
                spots.push(pl.xy(sx + 0.5 * len, sy + 0.5 * w));
                spots.push(pl.xy(sx + len, sy + 0.3 * w));
                what.push(format!("ramp nz {nz}"));
            }
            2 => {
                let h = rng.pick(&[0.5, 5.0, 30.0, 200.0]);
                let d = rng.pick(&[0.5, 3.0, 60.0]);
                pb.cuboid([sx, sy, -1.0], [sx + d, sy + w, h]);
                spots.push(pl.xy(sx - 10.0, sy + 0.5 * w));
                spots.push(pl.xy(sx + d + 5.0, sy - 5.0));
                what.push("box".into());
            }
            3 => {
                // A zero-thickness wall, low or tall.
                let h = rng.pick(&[2.0, 20.0, 60.0, 300.0]);
                pb.wall([sx, sy], [sx + w, sy + 0.37 * w], [0.0, 0.0], [h, h]);
                spots.push(pl.xy(sx + 0.5 * w, sy + 0.185 * w + 20.0));
                spots.push(pl.xy(sx + w + 20.0, sy + 0.37 * w));
                what.push("thin wall".into());
            }
            4 => {
                // A shelf hiding a curb under its edge (gap near the rise bound).
                let hc = rng.range(1.0, 40.0);
                let gap = 50.0 + rng.pick(&[-1e-3, -1e-4, 0.0, 1e-4, 1e-3, -20.0]);
                let hs = hc + gap;
                let d = rng.range(40.0, 120.0);
                pb.floor([sx, sx + d], [sy, sy + w], hs, Winding::Both);
                pb.wall([sx + d, sy], [sx + d, sy + w], [0.0, 0.0], [hc, hc]);
                spots.push(pl.xy(sx + d + 10.0, sy + 0.5 * w));
                spots.push(pl.xy(sx + d - 10.0, sy + 0.5 * w));
                what.push(format!("shelf over curb, gap {gap}"));
            }
            5 => {
                // A ceiling slab near the headroom (or lower).
                let zc = rng.pick(&[192.0, 192.0 + 1e-3, 192.0 - 1e-3, 150.0, 100.3, 60.0]);
                let th = rng.pick(&[0.0, 5.0]);
                let d = rng.range(50.0, 160.0);
                if th == 0.0 {
                    pb.floor([sx, sx + d], [sy, sy + w], zc, Winding::Both);
                } else {
                    pb.cuboid([sx, sy, zc], [sx + d, sy + w, zc + th]);
                }
                let under = pl.xy(sx + 0.5 * d, sy + 0.5 * w);
                ceilings.push((under, z0 + zc));
                ceilings.push((pl.xy(sx + d - 5.0, sy + 0.5 * w), z0 + zc));
                spots.push(under);
                spots.push(pl.xy(sx + d + 3.0, sy + 0.5 * w));
                what.push(format!("ceiling {zc}"));
            }
            6 => {
                // A sloped ceiling (leaning down along x).
                let zc = rng.range(120.0, 200.0);
                let sl = rng.pick(&[0.05, 0.3, 1.2]);
                let d = rng.range(50.0, 160.0);
                pb.plane([sx, sx + d], [sy, sy + w], [-sl, 0.0, zc + sl * sx], Winding::Down);
                let x = sx + 0.5 * d;
                ceilings.push((pl.xy(x, sy + 0.5 * w), z0 + zc - sl * (x - sx)));
                spots.push(pl.xy(x, sy + 0.5 * w));
                what.push("sloped ceiling".into());
            }
            _ => {
                // A raised platform with a slightly tilted top.
                let h = rng.pick(&[0.004, 1.0, 12.0, 45.0]);
                let d = rng.range(40.0, 160.0);
                let tilt = rng.pick(&[0.0, 1e-4, 0.02]);
                pb.plane([sx, sx + d], [sy, sy + w], [tilt, 0.0, h - tilt * sx], Winding::Up);
                pb.wall([sx, sy], [sx, sy + w], [0.0, 0.0], [h, h]);
                pb.wall([sx + d, sy], [sx + d, sy + w], [0.0, 0.0], [h + tilt * d, h + tilt * d]);
                spots.push(pl.xy(sx - 2.0, sy + 0.5 * w));
                spots.push(pl.xy(sx + d + 2.0, sy + 0.5 * w));
                what.push(format!("platform {h}"));
            }
        }
    }
    let mut level = Level::new(b.build(), spots);
    level.ceilings = ceilings;
    level.lines = Some(corner);
    level.what = what;
    level
}

#[test]
fn rotated_levels_at_far_tile_corners() {
    let mut totals = Totals::default();
    for seed in seeds() {
        let mut rng = rng_for(0x5131, seed);
        let k = rng.pick(&[0.0, 0.0, 31.0, -47.0, 156.0, -156.0]);
        let ky = rng.pick(&[0.0, 1.0, 40.0, -93.0, 155.0]);
        let corner = [k * TILE, ky * TILE];
        let z0 = rng.pick(&[0.0, 37.25, -1234.5, 5.0e4]);
        let level = rotated_level(&mut rng, corner, z0);
        let oracle = Oracle::new(&level.mesh.vertices, &level.mesh.triangles).expect("oracle");
        let agents = agents_for(&mut rng);
        let mut q = Queries::default();
        let mut pts = tile_line_points(&mut rng, corner, 400.0, 6);
        pts.extend(level.spots.iter().copied());
        let axis_dirs = [0.0, 0.5 * PI, PI, 1.5 * PI];
        for p in pts {
            column(&mut rng, &oracle, &level, p, &agents, &axis_dirs, &mut q);
        }
        tangents(&mut rng, &level, &agents, 400, &mut q);
        hunts(&mut rng, &oracle, &level, &agents, 400, &mut q);
        ceiling_queries(&mut rng, &level, &agents, &mut q);
        let t = run(&format!("rotated seed {seed}"), &level, &q, seed % 2 == 0);
        totals.add(&t);
    }
    totals.finish("rotated levels", [100, 100, 100]);
}

// ---------------------------------------------------------------------------
// Specks, slivers and stacks.

fn specks_level(rng: &mut Rng) -> Level {
    let far = rng.pick(&[0.0, 1.0e5 + 0.37, -2.5e5 - 0.11]);
    let any = rng.range(0.0, TAU);
    let ang = rng.pick(&[0.0, any]);
    let pl = Place::new([far + 700.0, -far + 900.0, rng.pick(&[0.0, 12.5])], ang);
    let mut b = LevelBuilder::new();
    let mut spots = Vec::new();
    let mut what = vec![format!("angle {ang:.4}, far {far}")];
    let mut pb = Pb::new(&mut b, pl);
    pb.floor([-400.0, 400.0], [-400.0, 400.0], 0.0, Winding::Up);
    for _ in 0..(4 + (rng.next() * 5.0) as usize) {
        let c = [rng.range(-300.0, 300.0), rng.range(-300.0, 300.0)];
        spots.push(pl.xy(c[0], c[1]));
        match (rng.next() * 7.0) as usize {
            0 => {
                // A cluster of sub-centimetre walkable specks, a hair up.
                let s = rng.pick(&[0.01, 0.1, 0.5, 0.9]);
                let up = rng.pick(&[0.0005, 0.002, 0.006, 0.011, 0.3]);
                for _ in 0..6 {
                    let q = [c[0] + rng.range(-3.0, 3.0), c[1] + rng.range(-3.0, 3.0)];
                    pb.tri(
                        [q[0], q[1], up],
                        [q[0] + s, q[1] + 0.1 * s, up + rng.range(0.0, 0.1 * s)],
                        [q[0] + 0.3 * s, q[1] + s, up],
                    );
                }
                what.push(format!("specks {s} up {up}"));
            }
            1 => {
                // Steep specks: tiny tetrahedra standing on the floor.
                let s = rng.pick(&[0.05, 0.3, 0.8]);
                let hh = rng.pick(&[0.02, 0.5, 2.0]);
                let base = |k: f64| [c[0] + s * (k * 2.094).cos(), c[1] + s * (k * 2.094).sin(), -0.01];
                let apex = [c[0], c[1], hh];
                pb.tri(base(0.0), base(1.0), apex)
                    .tri(base(1.0), base(2.0), apex)
                    .tri(base(2.0), base(0.0), apex);
                what.push(format!("spike {s}x{hh}"));
            }
            2 => {
                // A needle lying on (or a hair over) the floor: a sliver
                // triangle 60 cm long, 1e-3 cm wide.
                let up = rng.pick(&[0.0, 0.0003, 0.004, 0.02]);
                let w = rng.pick(&[1e-3, 1e-2]);
                let tilt = rng.pick(&[0.0, w, 5.0 * w]);
                pb.tri(
                    [c[0], c[1], up],
                    [c[0] + 60.0, c[1], up],
                    [c[0] + 30.0, c[1] + w, up + tilt],
                );
                spots.push(pl.xy(c[0] + 30.0, c[1] + 0.5 * w));
                spots.push(pl.xy(c[0] + 61.0, c[1]));
                what.push(format!("needle up {up} w {w}"));
            }
            3 => {
                // A standing needle: vertical sliver 1e-3 cm thick at its base.
                let hh = rng.pick(&[3.0, 30.0, 150.0]);
                pb.tri([c[0], c[1], 0.0], [c[0] + 0.001, c[1], 0.0], [c[0], c[1] + 0.0005, hh]);
                spots.push(pl.xy(c[0] + 0.5, c[1]));
                what.push(format!("standing needle {hh}"));
            }
            4 => {
                // Nearly coplanar floors stacked a hair apart, opposite
                // windings, partly overlapping, one tessellated with a
                // T-junction.
                let d1 = rng.pick(&[0.001, 0.003, 0.0049, 0.0051, 0.012, 0.05, 0.5]);
                let d2 = rng.pick(&[0.0, d1, 2.0 * d1, 0.5 * d1]);
                let s = rng.range(30.0, 90.0);
                pb.floor([c[0], c[0] + s], [c[1], c[1] + s], d1, Winding::Down);
                let (xm, ym) = (c[0] + 0.5 * s, c[1] + 0.5 * s);
                // T-junction: a quad split at (xm, c1) on its lower edge only.
                let z = d1 + d2;
                pb.tri([xm - 20.0, ym - 20.0, z], [xm, ym - 20.0, z], [xm, ym + 25.0, z])
                    .tri([xm, ym - 20.0, z], [xm + 20.0, ym - 20.0, z], [xm, ym + 25.0, z])
                    .tri([xm + 20.0, ym - 20.0, z], [xm + 20.0, ym + 25.0, z], [xm, ym + 25.0, z])
                    .tri([xm - 20.0, ym - 20.0, z], [xm, ym + 25.0, z], [xm - 20.0, ym + 25.0, z]);
                spots.push(pl.xy(c[0] + s, c[1] + 0.3 * s));
                spots.push(pl.xy(xm, ym - 20.0));
                spots.push(pl.xy(xm + 20.0, ym));
                what.push(format!("stack {d1}/{d2}"));
            }
            5 => {
                // An unwelded duplicate of a floor patch, a hair off in XY
                // and in z, opposite winding.
                let s = rng.range(20.0, 80.0);
                let dx = rng.pick(&[0.0, 1e-4, 3e-4, 0.002]);
                let dz = rng.pick(&[0.0, 1e-4, 0.001]);
                pb.floor([c[0], c[0] + s], [c[1], c[1] + s], 5.0, Winding::Up);
                pb.floor([c[0] + dx, c[0] + s + dx], [c[1], c[1] + s], 5.0 + dz, Winding::Down);
                pb.wall([c[0], c[1]], [c[0], c[1] + s], [0.0, 0.0], [5.0, 5.0]);
                spots.push(pl.xy(c[0] + s, c[1] + 0.5 * s));
                spots.push(pl.xy(c[0] + s + dx + 0.001, c[1] + 0.5 * s));
                spots.push(pl.xy(c[0] - 0.001, c[1] + 0.5 * s));
                what.push(format!("dup dx {dx} dz {dz}"));
            }
            _ => {
                // A floor strip of slivers: a fan of thin triangles.
                let up = rng.pick(&[0.0, 2.0, 0.01]);
                let n = 40;
                let r = 40.0;
                let centre = [c[0], c[1], up];
                for i in 0..n {
                    let (a0, a1) = (PI * i as f64 / n as f64, PI * (i + 1) as f64 / n as f64);
                    pb.tri(
                        centre,
                        [c[0] + r * a0.cos(), c[1] + r * a0.sin(), up],
                        [c[0] + r * a1.cos(), c[1] + r * a1.sin(), up],
                    );
                }
                if up > 0.0 {
                    pb.wall([c[0] - r, c[1]], [c[0] + r, c[1]], [0.0, 0.0], [up, up]);
                }
                spots.push(pl.xy(c[0] + r + 0.002, c[1] + 0.5));
                spots.push(pl.xy(c[0] + 0.001, c[1] + 0.001));
                spots.push(pl.xy(c[0] + 0.5 * r, c[1] - 0.002));
                what.push(format!("fan up {up}"));
            }
        }
    }
    drop(pb);
    let mut level = Level::new(b.build(), spots);
    level.what = what;
    level
}

#[test]
fn specks_slivers_and_stacks() {
    let mut totals = Totals::default();
    for seed in seeds() {
        let mut rng = rng_for(0x5132, seed);
        let level = specks_level(&mut rng);
        let oracle = Oracle::new(&level.mesh.vertices, &level.mesh.triangles).expect("oracle");
        let agents = agents_for(&mut rng);
        let mut q = Queries::default();
        let spots = level.spots.clone();
        for p in spots {
            // Each spot and a few points a hair around it.
            for (dx, dy) in [(0.0, 0.0), (0.002, 0.0), (-0.004, 0.003), (0.5, -0.5), (3.0, 2.0)] {
                column(&mut rng, &oracle, &level, [p[0] + dx, p[1] + dy], &agents, &[], &mut q);
            }
        }
        tangents(&mut rng, &level, &agents, 600, &mut q);
        hunts(&mut rng, &oracle, &level, &agents, 400, &mut q);
        let t = run(&format!("specks seed {seed}"), &level, &q, seed % 2 == 1);
        totals.add(&t);
    }
    totals.finish("specks", [100, 100, 100]);
}

// ---------------------------------------------------------------------------
// Ceilings at the capsule top.

#[test]
fn ceilings_at_the_capsule_top() {
    let mut totals = Totals::default();
    for seed in seeds() {
        let mut rng = rng_for(0x5133, seed);
        let far = rng.pick(&[0.0, 3.0e5]);
        let any = rng.range(0.0, TAU);
        let ang = rng.pick(&[0.0, any]);
        let pl = Place::new([far + 1600.0, far + 1600.0, 0.0], ang);
        let mut b = LevelBuilder::new();
        let mut ceilings = Vec::new();
        let mut spots = Vec::new();
        let mut what = vec![format!("angle {ang:.4}, far {far}")];
        {
            let mut pb = Pb::new(&mut b, pl);
            // Flat floor left, a gentle slope right (from x = 0).
            let sl = rng.pick(&[0.0, 0.1, 0.5]);
            pb.floor([-400.0, 0.0], [-300.0, 300.0], 0.0, Winding::Up);
            pb.plane([0.0, 400.0], [-300.0, 300.0], [sl, 0.0, 0.0], Winding::Up);
            for i in 0..4 {
                let x0 = -380.0 + 190.0 * i as f64;
                let zc = rng.pick(&[192.0, 192.001, 191.999, 150.0, 120.5, 84.0, 40.0]);
                let d = rng.range(60.0, 150.0);
                let cs = rng.pick(&[0.0, 0.0, 0.01, -0.2]);
                let w = if rng.next() < 0.5 { Winding::Down } else { Winding::Both };
                let y0 = rng.range(-250.0, 0.0);
                let (ya, yb) = (y0, y0 + rng.range(60.0, 200.0));
                pb.plane([x0, x0 + d], [ya, yb], [cs, 0.0, zc - cs * x0], w);
                for t in [0.5, 0.02, 0.98] {
                    let x = x0 + t * d;
                    let y = 0.5 * (ya + yb);
                    ceilings.push((pl.xy(x, y), zc + cs * (x - x0)));
                    spots.push(pl.xy(x, y));
                }
                spots.push(pl.xy(x0 + d + 1.0, 0.5 * (ya + yb)));
                spots.push(pl.xy(x0 - 0.01, 0.5 * (ya + yb)));
                what.push(format!("ceiling {zc} slope {cs}"));
            }
        }
        let mut level = Level::new(b.build(), spots);
        level.ceilings = ceilings;
        level.what = what;
        let oracle = Oracle::new(&level.mesh.vertices, &level.mesh.triangles).expect("oracle");
        let mut agents = agents_for(&mut rng);
        agents.push(Agent {
            radius_cm: 20.0,
            half_height_cm: 60.0,
        });
        let mut q = Queries::default();
        for p in level.spots.clone() {
            column(&mut rng, &oracle, &level, p, &agents, &[], &mut q);
        }
        ceiling_queries(&mut rng, &level, &agents, &mut q);
        // Capsules resting on the floor under each ceiling whose top is
        // within 0.05 cm of it: agents made to fit.
        for &(xy, zc) in &level.ceilings.clone() {
            for r in [42.0, 30.0, 10.0] {
                for gap in [0.05, 0.004, 1e-4, 0.0] {
                    // Full height 2H so that rest bottom + 2H + hover = zc − gap.
                    let Some(rest) =
                        capsule_rest_bottom(&oracle, xy[0], xy[1], zc - 300.0, Agent::DEFAULT).filter(|&r| r < zc)
                    else {
                        continue;
                    };
                    let h = 0.5 * (zc - gap - rest - 2.15);
                    if h < r {
                        continue;
                    }
                    let a = Agent {
                        radius_cm: r,
                        half_height_cm: h,
                    };
                    let pos = [xy[0], xy[1], rest + 2.15 + h];
                    for down in [DEFAULT_FLOOR_DOWN_CM, 0.0, 2.15, 2.16] {
                        q.caps.push(FloorQuery {
                            pos,
                            down_cm: down,
                            agent: a,
                        });
                        q.lines.push(FloorQuery {
                            pos,
                            down_cm: down,
                            agent: a,
                        });
                    }
                    let dirs: Vec<f64> = (0..6).map(|_| rng.range(0.0, TAU)).collect();
                    sweeps_at(&mut q.sweeps, xy, rest + 2.15, a, &dirs, &[1e-4, 5.0, 16.67, 100.0]);
                }
            }
        }
        tangents(&mut rng, &level, &agents, 300, &mut q);
        hunts(&mut rng, &oracle, &level, &agents, 300, &mut q);
        let t = run(&format!("ceilings seed {seed}"), &level, &q, seed % 2 == 0);
        totals.add(&t);
    }
    totals.finish("ceilings", [100, 100, 100]);
}

// ---------------------------------------------------------------------------
// Hidden blockers at the rise bound.

#[test]
fn hidden_rise_bound() {
    let mut totals = Totals::default();
    for seed in seeds() {
        let mut rng = rng_for(0x5134, seed);
        let any = rng.range(0.0, TAU);
        let ang = rng.pick(&[0.0, any]);
        let far = rng.pick(&[0.0, -1.5e5]);
        let pl = Place::new([far + 3200.0 - 40.0, 3200.0 + 30.0, rng.pick(&[0.0, -300.25])], ang);
        let mut b = LevelBuilder::new();
        let mut spots = Vec::new();
        let mut what = vec![format!("angle {ang:.4}")];
        let mut tops = Vec::new();
        {
            let mut pb = Pb::new(&mut b, pl);
            pb.floor([-300.0, 300.0], [-300.0, 300.0], 0.0, Winding::Up);
            for i in 0..3 {
                let y0 = -280.0 + 190.0 * i as f64;
                let hc = rng.range(2.0, 40.0);
                let gap = 50.0 + rng.pick(&[-1e-3, -3e-4, -1e-4, 0.0, 1e-4, 1e-3]);
                let hs = hc + gap;
                let d = rng.range(60.0, 200.0);
                let x0 = -250.0;
                // Shelf (a slab or zero-thickness) with curbs under two edges,
                // and a sloped tread variant.
                if rng.next() < 0.5 {
                    pb.floor([x0, x0 + d], [y0, y0 + 150.0], hs, Winding::Both);
                } else {
                    pb.cuboid([x0, y0, hs - 3.0], [x0 + d, y0 + 150.0, hs]);
                }
                pb.wall([x0 + d, y0], [x0 + d, y0 + 150.0], [0.0, 0.0], [hc, hc]);
                pb.wall([x0, y0], [x0 + d, y0], [0.0, 0.0], [hc, hc]);
                tops.push((pl.xy(x0 + d, y0 + 75.0), hc, hs));
                spots.push(pl.xy(x0 + d + 5.0, y0 + 75.0));
                spots.push(pl.xy(x0 + d - 5.0, y0 + 75.0));
                spots.push(pl.xy(x0 + d, y0 - 3.0));
                what.push(format!("curb {hc:.3} gap {gap}"));
            }
        }
        let level = Level {
            what,
            ..Level::new(b.build(), spots)
        };
        let oracle = Oracle::new(&level.mesh.vertices, &level.mesh.triangles).expect("oracle");
        let agents = agents_for(&mut rng);
        let mut q = Queries::default();
        for p in level.spots.clone() {
            column(&mut rng, &oracle, &level, p, &agents, &[], &mut q);
        }
        // Capsules whose top sphere centre lies a hair above / below the
        // curb top + the rise bound (and the shelf), beside the shelf's
        // edge at and around one radius: the floor below and sweeps
        // toward, along and away from the edge.
        let z_off = pl.o[2];
        for &(edge_xy, hc, hs) in &tops {
            // The edge's outward normal (local +x) and direction (local +y).
            let n = [pl.c, pl.s];
            let u = [-pl.s, pl.c];
            for &a in &agents {
                let r = a.radius_cm;
                let h = a.half_height_cm - r;
                for top in [hc + 50.0, hs] {
                    for dt in [-1e-3, -1e-4, 0.0, 1e-4, 1e-3, 0.01] {
                        let top_c = z_off + top + dt;
                        for dist in [r + 1e-4, r + 0.01, r - 1e-4, 0.5 * r, r + 2.0, -0.5 * r] {
                            let xy = [edge_xy[0] + n[0] * dist, edge_xy[1] + n[1] * dist];
                            let pos = [xy[0], xy[1], top_c - h];
                            for down in [DEFAULT_FLOOR_DOWN_CM, 200.0] {
                                q.caps.push(FloorQuery {
                                    pos,
                                    down_cm: down,
                                    agent: a,
                                });
                            }
                            for d in [[-n[0], -n[1]], u, [n[0], n[1]], [-u[0], -u[1]]] {
                                for len in [1e-4, 0.02, 16.67, 100.0] {
                                    q.sweeps.push(SweepQuery {
                                        pos,
                                        delta: [len * d[0], len * d[1]],
                                        agent: a,
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
        tangents(&mut rng, &level, &agents, 300, &mut q);
        hunts(&mut rng, &oracle, &level, &agents, 300, &mut q);
        let t = run(&format!("hidden seed {seed}"), &level, &q, seed % 2 == 1);
        totals.add(&t);
    }
    totals.finish("hidden rise", [100, 100, 100]);
}

// ---------------------------------------------------------------------------
// Extreme `down`s.

#[test]
fn extreme_downs() {
    let mut b = LevelBuilder::new();
    // A floor at 0 with a hole, a pit floor 3000 cm below, a floor 4e5 cm
    // below in the next tile (large z range), a slope and a step.
    b.floor([0.0, 400.0], [0.0, 1000.0], 0.0, Winding::Up)
        .floor([600.0, 1000.0], [0.0, 1000.0], 0.0, Winding::Up)
        .floor([400.0, 600.0], [0.0, 400.0], 0.0, Winding::Up)
        .floor([350.0, 650.0], [350.0, 1050.0], -3000.0, Winding::Up)
        .plane([1000.0, 1400.0], [0.0, 1000.0], [0.3, 0.1, -300.0], Winding::Up)
        .floor([3300.0, 3800.0], [0.0, 500.0], -4.0e5, Winding::Up)
        .floor([3100.0, 3300.0], [0.0, 500.0], 0.0, Winding::Up)
        .cuboid([200.0, 200.0, 0.0], [260.0, 260.0, 30.0]);
    let level = Level::new(b.build(), Vec::new());
    let oracle = Oracle::new(&level.mesh.vertices, &level.mesh.triangles).expect("oracle");
    let mut rng = Rng::seeded(0x5135, 0);
    let mut q = Queries::default();
    let downs = [0.0, 1e-9, 1e-4, 600.0, 5.0e3, 1.0e6];
    for _ in 0..120 {
        let xy = match (rng.next() * 4.0) as usize {
            0 => [rng.range(380.0, 620.0), rng.range(380.0, 1020.0)],
            1 => [rng.range(3150.0, 3850.0), rng.range(-20.0, 520.0)],
            2 => [rng.range(180.0, 280.0), rng.range(180.0, 280.0)],
            _ => [rng.range(-50.0, 1450.0), rng.range(-50.0, 1050.0)],
        };
        let a = rng.agent();
        for z in [
            rng.range(-10.0, 60.0),
            rng.range(-3000.0, -2900.0),
            rng.range(-4.0e5, -3.999e5),
            1.0e4,
        ] {
            for down in downs {
                q.caps.push(FloorQuery {
                    pos: [xy[0], xy[1], z + a.half_height_cm],
                    down_cm: down,
                    agent: a,
                });
                q.lines.push(FloorQuery {
                    pos: [xy[0], xy[1], z + a.half_height_cm],
                    down_cm: down,
                    agent: a,
                });
            }
        }
        // Resting exactly on a surface, and a hair above, with down = 0 and tiny.
        for z in column_heights(&oracle, xy[0], xy[1], 1.0e4, -5.0e5, 4) {
            if let Some(rest) = capsule_rest_bottom(&oracle, xy[0], xy[1], z, a) {
                for (lift, down) in [(0.0, 0.0), (1e-9, 1e-9), (1e-4, 1e-4), (1e-4, 2e-4), (2e-4, 1e-4)] {
                    q.caps.push(FloorQuery {
                        pos: [xy[0], xy[1], rest + lift + a.half_height_cm],
                        down_cm: down,
                        agent: a,
                    });
                }
            }
            for (lift, down) in [(0.0, 0.0), (-2.0, 0.0), (-2.0 + 1e-9, 0.0), (-2.0 - 1e-9, 0.0)] {
                q.lines.push(FloorQuery {
                    pos: [xy[0], xy[1], z + lift + a.half_height_cm],
                    down_cm: down,
                    agent: a,
                });
            }
        }
    }
    let t = run("extreme downs", &level, &q, true);
    let mut totals = Totals::default();
    totals.add(&t);
    totals.finish("extreme downs", [100, 100, 0]);
}

/// Blockers whose far vertices lie just inside the fixed-point range of
/// the tile holding the queries (1.9e6–2.09e6 cm away in x, or a tile
/// whose z range is just under it): long diagonal walls and a cliff face
/// over a floor, a walkable triangle 2.05e6 cm below. Tangents and
/// transition hunts around them, every kind of query.
#[test]
fn just_inside_the_fixed_point_range() {
    let mut totals = Totals::default();
    for (k, (far_x, deep)) in [(-1.9e6, 0.0), (-2.09e6, 0.0), (0.0, -2.05e6)].into_iter().enumerate() {
        let mut rng = rng_for(0x5136, k as u64);
        let mut b = LevelBuilder::new();
        b.floor([0.0, 1600.0], [1000.0, 2200.0], 0.0, Winding::Up);
        let mut spots = vec![[1000.0, 1600.0], [1400.0, 1500.0]];
        if far_x != 0.0 {
            // A leaning wall and a steep cliff face (not walkable) from far away.
            let (near, far) = ([1600.0, 1600.0], [far_x, 1600.0 - 30000.0]);
            b.tri(
                [far[0], far[1], -10.0],
                [near[0], near[1], -10.0],
                [near[0], near[1], 300.0],
            );
            b.tri(
                [far[0], 2100.0 + 9000.0, 0.0],
                [1500.0, 2100.0, 0.0],
                [1500.0, 2000.0, 250.0],
            );
            spots.push([1500.0, 2050.0]);
        } else {
            b.tri([2000.0, 0.0, deep], [2100.0, 0.0, deep], [2000.0, 100.0, deep]);
            b.wall([300.0, 1100.0], [1300.0, 1900.0], [0.0, 0.0], [300.0, 300.0]);
            b.cuboid([700.0, 1200.0, 0.0], [760.0, 1260.0, 30.0]);
            spots.extend([[800.0, 1500.0], [730.0, 1230.0]]);
        }
        let mesh = b.build();
        let mut level = Level::new(mesh, spots);
        // (Queries in the playable part only.)
        level.lo = [0.0, 1000.0, -20.0];
        level.hi = [1600.0, 2200.0, 320.0];
        level.what = vec![format!("far x {far_x}, deep {deep}")];
        let oracle = Oracle::new(&level.mesh.vertices, &level.mesh.triangles).expect("oracle");
        let agents = agents_for(&mut rng);
        let mut q = Queries::default();
        for p in level.spots.clone() {
            column(&mut rng, &oracle, &level, p, &agents, &[], &mut q);
        }
        // Tangents to the near part of the level's edges only.
        let mut near = level.mesh.clone();
        near.triangles.retain(|t| {
            t.iter()
                .all(|&i| (near.vertices[i as usize][0] - 800.0).abs() < 3000.0 || deep != 0.0)
        });
        let near_level = Level::new(near, Vec::new());
        tangents(&mut rng, &near_level, &agents, 300, &mut q);
        q.caps.retain(|f| f.pos[2] > -100.0);
        hunts(&mut rng, &oracle, &level, &agents, 300, &mut q);
        let t = run(&format!("fixed-point range {k}"), &level, &q, true);
        totals.add(&t);
    }
    totals.finish("just inside the fixed-point range", [100, 100, 100]);
}

/// The comparison catches a wrong answer (so the tests above can fail):
/// the oracle of a level whose floor is 0.02 cm higher than the baked one.
#[test]
fn comparison_detects_a_shifted_floor() {
    let mut b = LevelBuilder::new();
    b.floor([0.0, 400.0], [0.0, 400.0], 0.0, Winding::Up);
    let mesh = b.build();
    let (surface, _) = bake_generated("flat", &mesh);
    let mut shifted = mesh.clone();
    for v in &mut shifted.vertices {
        v[2] += 0.02;
    }
    let oracle = Oracle::new(&shifted.vertices, &shifted.triangles).expect("oracle");
    let q: Vec<FloorQuery> = (0..10)
        .map(|i| FloorQuery::new([100.0 + 20.0 * i as f64, 200.0, 96.0 + 2.15], DEFAULT_FLOOR_DOWN_CM))
        .collect();
    let t = compare_capsule(&surface, &oracle, &q);
    assert!(!t.errors.is_empty(), "{}", t.summary());
}

/// One vertical blocker triangle whose far vertex lies 4.2e6 cm (42 km)
/// from the tile holding the query, with a floor. Every answer must
/// agree with the oracle (or fall back).
fn long_wall() -> (Mesh, [f64; 2], [f64; 2]) {
    let (far, near) = ([-4.2e6, 1600.0 - 60000.0], [1600.0, 1600.0]);
    let mut b = LevelBuilder::new();
    b.floor([0.0, 1600.0], [1200.0, 2000.0], 0.0, Winding::Up);
    b.tri(
        [far[0], far[1], -10.0],
        [near[0], near[1], -10.0],
        [near[0], near[1], 300.0],
    );
    (b.build(), far, near)
}

/// Found in session 13: blocker vertices are stored in `i32` fixed point
/// (1/1024 cm) relative to the tile origin, which holds ±2 097 152 cm, and
/// the bake used to *clamp* a farther coordinate: a wall whose far vertex
/// lay 42 km out was stored leaning the wrong way, 8.6 cm off at the
/// queries, and a capsule 1 cm clear of it swept into it got `Clear` (a
/// false Clear), one overlapping it a `Floor`. Tiling now clips a blocker
/// to `BLOCKER_KEEP_CM` beyond its tile's square (`push_blocker`). The
/// stored vertices must be unclamped and these answers exact, on the file
/// and with its certificates off (the full path alone), and answered.
#[test]
fn blockers_beyond_the_fixed_point_range_are_clipped() {
    let (mesh, far, near) = long_wall();
    let (surface, oracle) = bake_generated("long wall", &mesh);
    let full = Surface::from_bytes(&without_certs(surface.bytes())).expect("open");
    // The stored far vertex: clamped to the i32 range.
    let layout = FileView::parse(surface.bytes()).expect("parse");
    let view = FileView::new(surface.bytes(), &layout).expect("view");
    let tile = view.tile(view.tile_hot(0, 0).expect("tile (0, 0)")).expect("tile");
    let stored: Vec<i32> = tile
        .blockers
        .iter()
        .flat_map(|b| b.v.map(|v| v.map(|c| c.get())))
        .flatten()
        .collect();
    assert!(tile.blockers.len() > 1, "the far wall is clipped into a fan");
    assert!(
        stored.iter().all(|&c| c != i32::MIN && c != i32::MAX),
        "clamped blocker coordinates in tile (0, 0): {stored:?}"
    );
    // The wall's line and its unit normal toward +y.
    let (dx, dy) = (near[0] - far[0], near[1] - far[1]);
    let l = dx.hypot(dy);
    let n = [-dy / l, dx / l];
    let on_wall = |x: f64| [x, near[1] + (x - near[0]) * dy / dx];
    let a = Agent::DEFAULT;
    let mut errors = Vec::new();
    let (mut n_q, mut n_answered) = (0, 0);
    for (s, x) in [&surface, &full]
        .into_iter()
        .flat_map(|s| [800.0, 1000.0, 1200.0].map(|x| (s, x)))
    {
        let w = on_wall(x);
        // 1 cm clear of the wall, moved 5 cm straight at it.
        let p = [w[0] + n[0] * (a.radius_cm + 1.0), w[1] + n[1] * (a.radius_cm + 1.0)];
        let q = SweepQuery::new([p[0], p[1], a.half_height_cm + 2.15], [-5.0 * n[0], -5.0 * n[1]]);
        let truth = oracle.sweep(q.pos, q.delta, agent_shape(a));
        assert!(
            matches!(truth, OracleSweep::Hit { distance, .. } if (distance - 1.0).abs() < 1e-6),
            "{truth:?}"
        );
        assert!(!s.sweep_certified_clear(q.pos, q.delta, a));
        let ours = s.sweep_horizontal(q.pos, q.delta, a);
        match compare_sweep(&q, ours, truth) {
            Err(e) => errors.push(format!("sweep {q:?}: {e}")),
            Ok(answered) => n_answered += usize::from(answered),
        }
        // Overlapping the wall by 3 cm, a floor 2.15 cm below.
        let p = [w[0] + n[0] * (a.radius_cm - 3.0), w[1] + n[1] * (a.radius_cm - 3.0)];
        let f = FloorQuery::new([p[0], p[1], a.half_height_cm + 2.15], DEFAULT_FLOOR_DOWN_CM);
        let truth = oracle.find_floor_capsule(f.pos, agent_shape(a), f.down_cm);
        assert_eq!(truth, OracleFloor::StartOverlap);
        let ours = s.find_floor(f.pos, f.down_cm, a, walksurf::FloorMode::Capsule);
        if let Err(e) = compare_capsule_floor(&f, ours, truth) {
            errors.push(format!("capsule {f:?}: {e}"));
        }
        n_q += 2;
    }
    assert_agree("blocker beyond the fixed-point range", &errors, n_q, "answers");
    assert!(n_answered >= 4, "only {n_answered} of the 6 sweeps answered");
}

/// Found in session 13, the same clamp in z: blocker z is stored in fixed
/// point relative to the tile's `z_origin_cm` (its lowest geometry). A tile
/// whose heights span more than the fixed point holds (here one walkable
/// triangle 3e6 cm below the floor, in the tile's halo) had its wall
/// stored ~9e5 cm too low, and sweeps into it came out `Clear` (oracle:
/// Hit). The bake now refuses such a tile, naming it and the span, rather
/// than store a different triangle.
#[test]
fn a_tile_spanning_more_heights_than_the_fixed_point_holds_is_refused() {
    let mut b = LevelBuilder::new();
    b.floor([0.0, 1000.0], [0.0, 1000.0], 0.0, Winding::Up)
        .tri([2000.0, 0.0, -3.0e6], [2100.0, 0.0, -3.0e6], [2000.0, 100.0, -3.0e6])
        .tri([300.0, 100.0, 0.0], [300.0, 900.0, 0.0], [300.0, 900.0, 300.0]);
    let mesh = b.build();
    let e = walksurf_bake::bake_mesh(&mesh, &walksurf_bake::BakeConfig::default(), 1, &walksurf_bake::Silent)
        .expect_err("a tile spanning 3e6 cm of heights with a wall in it");
    let m = e.to_string();
    assert!(
        m.contains("tile (0, 0)") && m.contains("heights span -3000000 to 300 cm"),
        "{m}"
    );
    // Without the far triangle the same wall bakes, and is hit.
    let mut b = LevelBuilder::new();
    b.floor([0.0, 1000.0], [0.0, 1000.0], 0.0, Winding::Up).tri(
        [300.0, 100.0, 0.0],
        [300.0, 900.0, 0.0],
        [300.0, 900.0, 300.0],
    );
    let (surface, oracle) = bake_generated("shallow tile", &b.build());
    let a = Agent::DEFAULT;
    let q = SweepQuery::new([250.0, 800.0, a.half_height_cm + 2.15], [30.0, 0.0]);
    let truth = oracle.sweep(q.pos, q.delta, agent_shape(a));
    assert!(matches!(truth, OracleSweep::Hit { .. }), "{truth:?}");
    assert_eq!(
        compare_sweep(&q, surface.sweep_horizontal(q.pos, q.delta, a), truth),
        Ok(true)
    );
}
