//! Review of the certificate stage's clipping (`above_part`): only the part
//! of another primitive that may come within the plane's error of the
//! certificate's plane is listed or bounds the clearance. Geometry aimed at
//! it: convex and concave creases between walkable facets (small and large
//! bends), blockers and walkable plates crossing the floor at shallow and
//! steep angles, walls whose tops end just below / at / above the floor,
//! parallel copies a hair above or below, all near the 40 cm cell grid;
//! capsule floors (lifted and at rest), line traces and horizontal sweeps
//! (lifted above rest, crossing creases and crossings) for many radii,
//! every answer against the oracle.
mod common;
use common::*;
use std::f64::consts::TAU;
use walksurf::Surface;
use walksurf_oracle::Oracle;

/// Sutherland–Hodgman: the part of `poly` where `f(p) ≤ 0` (`f` linear).
fn clip(poly: &[[f64; 2]], f: impl Fn([f64; 2]) -> f64) -> Vec<[f64; 2]> {
    let mut out = Vec::new();
    let n = poly.len();
    for i in 0..n {
        let (p, q) = (poly[i], poly[(i + 1) % n]);
        let (fp, fq) = (f(p), f(q));
        if fp <= 0.0 {
            out.push(p);
        }
        if (fp < 0.0 && fq > 0.0) || (fp > 0.0 && fq < 0.0) {
            let t = fp / (fp - fq);
            out.push([p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])]);
        }
    }
    out
}

/// A piecewise-planar terrain `z = min_i P_i` (ridges only: convex creases)
/// or `max_i P_i` (valleys), built region by region.
struct Terrain {
    planes: Vec<[f64; 3]>,
    ridge: bool,
}

impl Terrain {
    fn z(&self, x: f64, y: f64) -> f64 {
        let v = self.planes.iter().map(|p| p[0] * x + p[1] * y + p[2]);
        if self.ridge {
            v.fold(f64::INFINITY, f64::min)
        } else {
            v.fold(f64::NEG_INFINITY, f64::max)
        }
    }

    /// The plane holding the surface at `(x, y)`.
    fn plane_at(&self, x: f64, y: f64) -> [f64; 3] {
        let z = self.z(x, y);
        *self
            .planes
            .iter()
            .min_by(|p, q| {
                let e = |p: &[f64; 3]| (p[0] * x + p[1] * y + p[2] - z).abs();
                e(p).total_cmp(&e(q))
            })
            .unwrap()
    }

    fn build(&self, lb: &mut LevelBuilder, square: [[f64; 2]; 4]) {
        for (i, p) in self.planes.iter().enumerate() {
            let mut poly = square.to_vec();
            for (j, q) in self.planes.iter().enumerate() {
                if i == j || poly.len() < 3 {
                    continue;
                }
                let s = if self.ridge { 1.0 } else { -1.0 };
                poly = clip(&poly, |v| {
                    s * ((p[0] - q[0]) * v[0] + (p[1] - q[1]) * v[1] + (p[2] - q[2]))
                });
            }
            if poly.len() < 3 {
                continue;
            }
            let v: Vec<[f64; 3]> = poly
                .iter()
                .map(|c| [c[0], c[1], p[0] * c[0] + p[1] * c[1] + p[2]])
                .collect();
            for k in 1..v.len() - 1 {
                lb.tri(v[0], v[k], v[k + 1]);
            }
        }
    }
}

/// A point near the 40 cm cell grid (or its 20 cm quarters) half the time.
fn near_grid(rng: &mut Rng, v: f64) -> f64 {
    if rng.next() < 0.5 {
        let step = rng.pick(&[20.0, 40.0]);
        (v / step).round() * step + rng.pick(&[-0.3, -0.01, 0.0, 0.01, 0.3, 2.0, -2.0]) * rng.range(0.5, 1.0)
    } else {
        v
    }
}

/// A sweep of `len` cm in direction `dir` (radians) from the capsule
/// bottom `bottom` over `xy`.
fn sweep_from(xy: [f64; 2], bottom: f64, len: f64, dir: f64, agent: walksurf::Agent) -> SweepQuery {
    SweepQuery {
        pos: [xy[0], xy[1], bottom + agent.half_height_cm],
        delta: [len * dir.cos(), len * dir.sin()],
        agent,
    }
}

#[derive(Default)]
struct Counts {
    tally: Tally,
    /// Sweeps the certificate path answered Clear.
    cert_clear: usize,
}

impl Counts {
    /// Compares every answer with the oracle and adds them up.
    fn run(
        &mut self,
        surface: &Surface,
        oracle: &Oracle,
        (caps, lines, sweeps): (&[FloorQuery], &[FloorQuery], &[SweepQuery]),
        what: &str,
    ) {
        let capsule = compare_capsule(surface, oracle, caps);
        let line = compare_line(surface, oracle, lines);
        let sweep = compare_sweep_tally(surface, oracle, sweeps);
        self.cert_clear += sweeps
            .iter()
            .filter(|q| surface.sweep_certified_clear(q.pos, q.delta, q.agent))
            .count();
        println!(
            "{what}: capsule {} | line {} | sweep {}",
            capsule.summary(),
            line.summary(),
            sweep.summary()
        );
        for e in capsule.errors.iter().chain(&line.errors).chain(&sweep.errors).take(6) {
            println!("WRONG {e}");
        }
        self.tally.merge(&capsule);
        self.tally.merge(&line);
        self.tally.merge(&sweep);
    }

    /// Prints the totals; no disagreement allowed, and the certificate path
    /// must have answered some sweeps (else this tests only the full path).
    fn finish(&self) {
        println!(
            "total: {} | sweeps certified Clear: {}",
            self.tally.summary(),
            self.cert_clear
        );
        self.tally.assert_no_errors("clip review");
        assert!(self.cert_clear > 0);
    }
}

/// Creased terrain with obstacles crossing it.
#[test]
fn creases_with_crossings() {
    let mut c = Counts::default();
    for seed in fuzz_seeds() {
        let mut rng = Rng::seeded(0x5A17_C11B_0E5E_7A11, seed);
        let base = [rng.range(-0.45, 0.45), rng.range(-0.45, 0.45)];
        let ridge = seed % 2 == 0;
        let bend_scale = rng.pick(&[0.0004, 0.004, 0.04, 0.25]);
        let mut planes = Vec::new();
        let mut crease_pts = Vec::new();
        for _ in 0..(3 + (rng.next() * 4.0) as usize) {
            let d = rng.range(0.0, TAU);
            let m = bend_scale * rng.range(0.3, 1.0);
            let g = [base[0] + m * d.cos(), base[1] + m * d.sin()];
            // Equal to the base plane at a point near the grid.
            let (qx, qy) = (rng.range(1000.0, 2200.0), rng.range(1000.0, 2200.0));
            let q = [near_grid(&mut rng, qx), near_grid(&mut rng, qy)];
            let zq = base[0] * q[0] + base[1] * q[1];
            planes.push([g[0], g[1], zq - g[0] * q[0] - g[1] * q[1]]);
            crease_pts.push(q);
        }
        let terrain = Terrain { planes, ridge };
        let mut lb = LevelBuilder::new();
        terrain.build(&mut lb, [[0.0, 0.0], [3200.0, 0.0], [3200.0, 3200.0], [0.0, 3200.0]]);
        // Points on creases: bisect between two points on different planes.
        let mut centres: Vec<([f64; 2], f64)> = Vec::new();
        for _ in 0..60 {
            let p = [rng.range(900.0, 2300.0), rng.range(900.0, 2300.0)];
            let ang = rng.range(0.0, TAU);
            let q = [p[0] + 300.0 * ang.cos(), p[1] + 300.0 * ang.sin()];
            let pl = terrain.plane_at(p[0], p[1]);
            if terrain.plane_at(q[0], q[1]) == pl {
                continue;
            }
            let t = edge(0.0, 1.0, 50, |t| {
                terrain.plane_at(p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])) == pl
            });
            centres.push(([p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])], 0.0));
        }
        for q in &crease_pts {
            centres.push((*q, 0.0));
        }
        let n_obs = knob("CLIP_OBS", 30usize);
        for _ in 0..n_obs {
            let cc = if rng.next() < 0.5 && !centres.is_empty() {
                let (p, _) = centres[(rng.next() * centres.len() as f64) as usize];
                [p[0] + rng.range(-30.0, 30.0), p[1] + rng.range(-30.0, 30.0)]
            } else {
                [rng.range(1000.0, 2200.0), rng.range(1000.0, 2200.0)]
            };
            let cc = [near_grid(&mut rng, cc[0]), near_grid(&mut rng, cc[1])];
            let fz = terrain.z(cc[0], cc[1]);
            let pl = terrain.plane_at(cc[0], cc[1]);
            let s = rng.range(3.0, 50.0);
            let ang = rng.range(0.0, TAU);
            let tri_around = |tilt: [f64; 2], zc: f64| -> [[f64; 3]; 3] {
                std::array::from_fn(|i| {
                    let t = ang + i as f64 * TAU / 3.0;
                    let (dx, dy) = (s * t.cos(), s * t.sin());
                    [cc[0] + dx, cc[1] + dy, zc + tilt[0] * dx + tilt[1] * dy]
                })
            };
            let small = rng.pick(&[0.0005, 0.003, 0.02, 0.1, 0.4]);
            let dd = rng.range(0.0, TAU);
            let near_tilt = [pl[0] + small * dd.cos(), pl[1] + small * dd.sin()];
            let h = rng.pick(&[-0.05, -0.02, -0.012, -0.008, -0.003, 0.0, 0.003, 0.012, 0.5, -0.5]);
            match (rng.next() * 6.0) as usize {
                0 => {
                    // A blocking plate through the floor, tilted any way.
                    lb.blocking_only = true;
                    let tilt = [rng.range(-3.0, 3.0), rng.range(-3.0, 3.0)];
                    let [p, q, r] = tri_around(tilt, fz + rng.range(-5.0, 5.0));
                    lb.tri(p, q, r);
                }
                1 => {
                    // A blocking blade crossing the floor at a shallow angle.
                    lb.blocking_only = true;
                    let [p, q, r] = tri_around(near_tilt, fz + h);
                    lb.tri(p, q, r);
                }
                2 => {
                    // A walkable plate crossing the floor at a shallow angle.
                    lb.blocking_only = false;
                    let [p, q, r] = tri_around(near_tilt, fz + h);
                    lb.tri(p, q, r);
                }
                3 => {
                    // A wall from far below whose top ends near the floor.
                    lb.blocking_only = true;
                    let d = [ang.cos() * s, ang.sin() * s];
                    let (p0, p1) = ([cc[0] - d[0], cc[1] - d[1]], [cc[0] + d[0], cc[1] + d[1]]);
                    let (z0, z1) = (terrain.z(p0[0], p0[1]), terrain.z(p1[0], p1[1]));
                    let top = rng.pick(&[-0.03, -0.015, -0.011, -0.006, 0.0, 0.004, 0.02, 1.0]);
                    let deep = rng.range(1.0, 150.0);
                    lb.wall(p0, p1, [z0 - deep, z1 - deep], [z0 + top, z1 + top]);
                }
                4 => {
                    // A copy of the local facet a hair above or below.
                    lb.blocking_only = rng.next() < 0.5;
                    let [p, q, r] = tri_around(
                        [pl[0], pl[1]],
                        pl[0] * cc[0] + pl[1] * cc[1] + pl[2] + h.clamp(-0.03, 0.03),
                    );
                    lb.tri(p, q, r);
                }
                _ => {
                    // A tilted blocker leaning over the floor: its low edge
                    // under the floor, rising steeply (a leaning wall).
                    lb.blocking_only = true;
                    let lean = rng.range(0.8, 8.0);
                    let tilt = [pl[0] + lean * dd.cos(), pl[1] + lean * dd.sin()];
                    let [p, q, r] = tri_around(tilt, fz + h);
                    lb.tri(p, q, r);
                }
            }
            lb.blocking_only = false;
            centres.push((cc, s));
        }
        let mesh = lb.build();
        let (surface, oracle) = bake_generated("clip_review", &mesh);
        let (mut caps, mut lines, mut sweeps) = (Vec::new(), Vec::new(), Vec::new());
        for &(cc, s) in &centres {
            for _ in 0..knob("CLIP_Q", 24usize) {
                let agent = rng.agent();
                let r = agent.radius_cm;
                let ang = rng.range(0.0, TAU);
                let dist = rng.range(0.0, s + r + 20.0);
                let (x, y) = (
                    near_grid(&mut rng, cc[0] + dist * ang.cos()),
                    near_grid(&mut rng, cc[1] + dist * ang.sin()),
                );
                let Some(rest) = capsule_rest_bottom(&oracle, x, y, terrain.z(x, y) + 40.0, agent) else {
                    continue;
                };
                let lift = rng.pick(&[0.0, 0.001, 0.012, 0.02, 0.3, 2.15, 5.0, 20.0, 40.0]);
                let pos = [x, y, rest + lift + agent.half_height_cm];
                for down in [47.4, 200.0] {
                    caps.push(FloorQuery {
                        pos,
                        down_cm: down,
                        agent,
                    });
                }
                lines.push(FloorQuery {
                    pos: [
                        x,
                        y,
                        terrain.z(x, y) + rng.pick(&[0.0, 0.005, 0.02, 1.0, 10.0]) + agent.half_height_cm,
                    ],
                    down_cm: 47.4,
                    agent,
                });
                // Sweeps from there: toward the centre (across the
                // crossing or crease) or any way, lifted as the capsule is.
                for _ in 0..3 {
                    let dir = if rng.next() < 0.6 {
                        ang + std::f64::consts::PI + rng.range(-0.6, 0.6)
                    } else {
                        rng.range(0.0, TAU)
                    };
                    let len = rng.pick(&[1.0, 5.0, 15.0, 25.0, 39.9, 60.0]) * rng.range(0.5, 1.0);
                    let lift2 = rng.pick(&[0.001, 0.015, 0.05, 0.5, 2.15, 8.0, 30.0]);
                    sweeps.push(sweep_from([x, y], rest + lift2, len, dir, agent));
                }
            }
        }
        let what = format!(
            "seed {seed} {} base ({:.3}, {:.3}) bend {bend_scale}",
            if ridge { "ridges" } else { "valleys" },
            base[0],
            base[1]
        );
        c.run(&surface, &oracle, (&caps, &lines, &sweeps), &what);
    }
    c.finish();
}

/// A ridge with a tiny bend (the facets' difference grows slowly, so the
/// clipped strip along the crease is wide) crossed by lifted sweeps of every
/// radius, and capsules standing on either side, scanned along and across
/// the crease at sub-cell offsets; walls under the far facet reach up to
/// within hairs of the near facet's extension.
#[test]
fn shallow_ridge_scan() {
    let mut c = Counts::default();
    for (i, bend) in [0.0002, 0.001, 0.005, 0.03, 0.2, -0.0002, -0.005, -0.2]
        .into_iter()
        .enumerate()
    {
        let mut rng = Rng::seeded(0x0DDC_0FFE_E0DD_F00D, i as u64);
        let (a, b) = (rng.range(-0.3, 0.3), rng.range(-0.3, 0.3));
        // Crease along the line x = x0 (+ a little skew), near a cell edge.
        let x0 = 1600.0 + rng.pick(&[0.0, 0.01, 10.0, 20.0, 39.99]);
        let skew = rng.pick(&[0.0, 0.05]);
        let terrain = Terrain {
            planes: vec![[a, b, 0.0], [a + bend, b - bend * skew, -bend * (x0 - skew * 1600.0)]],
            ridge: bend < 0.0,
        };
        // (With `bend > 0`: z = max, a valley; else min, a ridge; either
        // way the second facet holds x > crease.)
        let terrain = if bend > 0.0 {
            Terrain {
                planes: terrain.planes,
                ridge: false,
            }
        } else {
            terrain
        };
        let mut lb = LevelBuilder::new();
        terrain.build(&mut lb, [[0.0, 0.0], [3200.0, 0.0], [3200.0, 3200.0], [0.0, 3200.0]]);
        // Walls beyond the crease, under the near facet's extension, tops
        // a hair under or over the far facet.
        lb.blocking_only = true;
        for k in 0..12 {
            let y = 1300.0 + 50.0 * k as f64;
            let x = x0 + skew * (y - 1600.0) + rng.pick(&[3.0, 15.0, 40.0, 80.0, -3.0, -40.0]);
            let top = rng.pick(&[-0.02, -0.011, -0.005, 0.0, 0.005]);
            let (p0, p1) = ([x, y], [x + rng.range(-5.0, 5.0), y + 20.0]);
            let (z0, z1) = (terrain.z(p0[0], p0[1]), terrain.z(p1[0], p1[1]));
            lb.wall(p0, p1, [z0 - 30.0, z1 - 30.0], [z0 + top, z1 + top]);
        }
        lb.blocking_only = false;
        let mesh = lb.build();
        let (surface, oracle) = bake_generated("shallow_ridge", &mesh);
        let (mut caps, mut lines, mut sweeps) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..knob("CLIP_SCAN", 1500usize) {
            let agent = rng.agent();
            let y = rng.range(1250.0, 1950.0);
            let off =
                rng.pick(&[-60.0, -30.0, -10.0, -1.0, -0.05, 0.0, 0.05, 1.0, 10.0, 30.0, 60.0]) * rng.range(0.0, 1.0);
            let x = x0 + skew * (y - 1600.0) + off;
            let Some(rest) = capsule_rest_bottom(&oracle, x, y, terrain.z(x, y) + 40.0, agent) else {
                continue;
            };
            let lift = rng.pick(&[0.0, 0.001, 0.012, 0.3, 2.15, 10.0]);
            let pos = [x, y, rest + lift + agent.half_height_cm];
            caps.push(FloorQuery {
                pos,
                down_cm: 47.4,
                agent,
            });
            lines.push(FloorQuery {
                pos: [
                    x,
                    y,
                    terrain.z(x, y) + rng.pick(&[0.0, 0.005, 1.0]) + agent.half_height_cm,
                ],
                down_cm: 47.4,
                agent,
            });
            let dir = rng.pick(&[0.0, std::f64::consts::PI]) + rng.range(-0.8, 0.8);
            let len = rng.range(1.0, 39.9);
            let lift2 = rng.pick(&[0.001, 0.011, 0.05, 2.15, 8.0]);
            sweeps.push(sweep_from([x, y], rest + lift2, len, dir, agent));
        }
        c.run(
            &surface,
            &oracle,
            (&caps, &lines, &sweeps),
            &format!("bend {bend} skew {skew} x0 {x0}"),
        );
    }
    c.finish();
}

/// A ridge (the far facet falls away by `bend`): walls stand on the far
/// facet and rise to just under the near facet's extension (within hairs of
/// the clipping threshold `z_err + 0.01`, and a little over it); blades and
/// walkable plates cross the near facet's extension there. Capsules on the
/// near facet at rest or lifted, falling or moving across the ridge toward
/// the walls; every radius.
#[test]
fn walls_under_a_ridge_extension() {
    let mut c = Counts::default();
    for seed in fuzz_seeds() {
        let mut rng = Rng::seeded(0x7E57_AB1E_D00D_BEEF, seed);
        let (a, b) = (rng.range(-0.4, 0.4), rng.range(-0.4, 0.4));
        let bend = -rng.pick(&[0.02, 0.1, 0.3, 0.6]);
        let t = rng.range(0.0, TAU);
        let t = if rng.next() < 0.5 {
            (t / (TAU / 4.0)).round() * TAU / 4.0
        } else {
            t
        };
        let dir = [t.cos(), t.sin()];
        let left = [-dir[1], dir[0]];
        let cx = 1600.0 + rng.range(-5.0, 5.0);
        let c0 = [near_grid(&mut rng, cx), near_grid(&mut rng, 1600.0)];
        let across = |x: f64, y: f64| (x - c0[0]) * left[0] + (y - c0[1]) * left[1];
        let near = |x: f64, y: f64| a * x + b * y;
        // Far facet: left of the line, lower by `|bend|·across`.
        let far = [
            a + bend * left[0],
            b + bend * left[1],
            -bend * (c0[0] * left[0] + c0[1] * left[1]),
        ];
        let terrain = Terrain {
            planes: vec![[a, b, 0.0], far],
            ridge: true,
        };
        let mut lb = LevelBuilder::new();
        terrain.build(&mut lb, [[0.0, 0.0], [3200.0, 0.0], [3200.0, 3200.0], [0.0, 3200.0]]);
        let mut centres = Vec::new();
        for _ in 0..knob("CLIP_OBS", 30usize) {
            let s_along = rng.range(-500.0, 500.0);
            let off = rng.pick(&[0.5, 2.0, 6.0, 15.0, 30.0, 45.0]) * rng.range(0.7, 1.0);
            let p = [
                c0[0] + s_along * dir[0] + off * left[0],
                c0[1] + s_along * dir[1] + off * left[1],
            ];
            // Height of the near facet's extension over the far facet here.
            let gap = near(p[0], p[1]) - terrain.z(p[0], p[1]);
            let under = rng.pick(&[0.05, 0.02, 0.015, 0.012, 0.0105, 0.009, 0.005, 0.0, -0.005, -0.3]);
            let len = rng.range(2.0, 40.0);
            let ang = t + rng.pick(&[0.0, 0.0, std::f64::consts::FRAC_PI_2]) + rng.range(-0.3, 0.3);
            let d = [ang.cos() * len / 2.0, ang.sin() * len / 2.0];
            let (p0, p1) = ([p[0] - d[0], p[1] - d[1]], [p[0] + d[0], p[1] + d[1]]);
            match (rng.next() * 3.0) as usize {
                0 => {
                    // A wall on the far facet up to the near extension less `under`.
                    lb.blocking_only = true;
                    let top = |q: [f64; 2]| near(q[0], q[1]) - under;
                    let (z0, z1) = (terrain.z(p0[0], p0[1]), terrain.z(p1[0], p1[1]));
                    lb.wall(p0, p1, [z0 - 10.0, z1 - 10.0], [top(p0), top(p1)]);
                }
                1 => {
                    // A blade lying in the near extension, lowered by `under`,
                    // tilted a little (toward or away from the ridge).
                    lb.blocking_only = rng.next() < 0.7;
                    let tilt = rng.pick(&[0.0, 0.0005, -0.0005, 0.01, -0.01]);
                    let z = |q: [f64; 2]| near(q[0], q[1]) - under + tilt * (across(q[0], q[1]) - off);
                    let w = [-d[1], d[0]];
                    let q2 = [p[0] + w[0], p[1] + w[1]];
                    lb.tri([p0[0], p0[1], z(p0)], [p1[0], p1[1], z(p1)], [q2[0], q2[1], z(q2)]);
                }
                _ => {
                    // A post: a thin vertical triangle up to the extension.
                    lb.blocking_only = true;
                    let top = near(p[0], p[1]) - under;
                    lb.tri(
                        [p[0] - 0.5 * dir[0], p[1] - 0.5 * dir[1], terrain.z(p[0], p[1]) - 5.0],
                        [p[0] + 0.5 * dir[0], p[1] + 0.5 * dir[1], terrain.z(p[0], p[1]) - 5.0],
                        [p[0], p[1], top],
                    );
                }
            }
            lb.blocking_only = false;
            let _ = gap;
            centres.push(p);
        }
        let mesh = lb.build();
        let (surface, oracle) = bake_generated("ridge_walls", &mesh);
        let (mut caps, mut lines, mut sweeps) = (Vec::new(), Vec::new(), Vec::new());
        for p in &centres {
            for _ in 0..knob("CLIP_Q", 24usize) {
                let agent = rng.agent();
                let r = agent.radius_cm;
                // On the near facet (right of the line), within reach.
                let back = rng.range(0.0, r + 10.0);
                let along = rng.range(-20.0, 20.0);
                let x = near_grid(&mut rng, p[0] - (across(p[0], p[1]) + back) * left[0] + along * dir[0]);
                let y = near_grid(&mut rng, p[1] - (across(p[0], p[1]) + back) * left[1] + along * dir[1]);
                let Some(rest) = capsule_rest_bottom(&oracle, x, y, terrain.z(x, y) + 40.0, agent) else {
                    continue;
                };
                let lift = rng.pick(&[0.0, 0.001, 0.005, 0.012, 0.02, 0.3, 2.15]);
                let pos = [x, y, rest + lift + agent.half_height_cm];
                caps.push(FloorQuery {
                    pos,
                    down_cm: rng.pick(&[47.4, 200.0]),
                    agent,
                });
                lines.push(FloorQuery {
                    pos: [
                        x,
                        y,
                        terrain.z(x, y) + rng.pick(&[0.0, 0.005, 0.5]) + agent.half_height_cm,
                    ],
                    down_cm: 47.4,
                    agent,
                });
                for _ in 0..3 {
                    // Toward and over the ridge (and the walls beyond).
                    let dir2 = t + std::f64::consts::FRAC_PI_2 + rng.range(-0.9, 0.9);
                    let len = rng.range(1.0, 39.9);
                    let lift2 = rng.pick(&[0.001, 0.003, 0.012, 0.05, 0.5, 2.15, 10.0]);
                    sweeps.push(sweep_from([x, y], rest + lift2, len, dir2, agent));
                }
            }
        }
        c.run(
            &surface,
            &oracle,
            (&caps, &lines, &sweeps),
            &format!("seed {seed} slope ({a:.3}, {b:.3}) bend {bend}"),
        );
    }
    c.finish();
}
