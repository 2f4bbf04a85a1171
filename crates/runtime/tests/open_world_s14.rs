//! Open-world review (session 14) of format 2.2's certificate region —
//! cells whose lists are byte-identical share one stored list, and a tile
//! whose every cell of the certificate rectangle has the same entry stores
//! that one entry (`tile_flags::CERT_LISTS_UNIFORM`) — and of the bake's
//! seam search looking only near each tile's square and halo
//! (`rough_seams`' `within` box, edges bucketed column by column). Every
//! answer against the exact oracle (a Fallback always agrees), on
//! generated open-world levels spanning several 3200 cm tiles at the
//! origin, at negative tile coordinates and 1e5–1e6 cm out:
//!
//! * grounds, flat or gently tilted: one or two huge triangles; a grid of
//!   small welded triangles; a patchwork of coarse cells (up to 6400 cm,
//!   their edges crossing tiles) and subdivided ones, whose T-junction
//!   vertices step 0–0.01 cm off the coarse edge and whose slits of
//!   unwelded vertices part by 1e-4–0.008 cm (seams, found only near a
//!   tile); holes over a lower floor or over nothing;
//! * obstacles (boxes, thin walls, curbs 1–30 cm, tables and slabs at
//!   100–200 cm, ramps) anywhere, on tile lines and corners, on
//!   certificate-cell (40 cm) and quarter (20 cm) lines, and kept away from
//!   some tiles so that those stay uniform while their neighbours are not;
//! * queries: capsule and line `find_floor` standing 0–10 cm above the
//!   ground and falling from up to 250 cm, sweeps of 1–256 cm in random
//!   directions, across tile lines, along and across the seams, into
//!   obstacles; the common agents and thin ones (R 0.05–5 cm); on the
//!   Fast path and, for every other level, the Reference one.
//!
//! Each uniform tile is also checked to be used: sweeps over its interior
//! are certified (so a reader that indexed a uniform region per cell, which
//! only loses certificates, fails here too).
//!
//! Every disagreement with the oracle fails.
//!
//! Found by this fuzz, and fixed: a seam (T-junction or unwelded
//! vertices) inside a flat group was merged into one convex piece, where
//! `find_floor`'s full path (which predates format 2.2) could not see it.
//! The bake now keeps the triangles along a group's seams exact, as
//! blockers, instead of merging them into pieces; the repros
//! `stepped_t_junction_inside_one_piece` and
//! `sub_quantum_crack_inside_one_piece` at the end guard it.
//!
//! Knobs: `OW14_SEEDS` (levels per fuzz test, 24), `OW14_FIRST` (first
//! seed, 0), `WALKSURF_TEST_SCALE` (query points per level).
mod common;
use common::*;
use std::f64::consts::TAU;
use walksurf::{Agent, DEFAULT_FLOOR_DOWN_CM, PrecisionPath, Surface};
use walksurf_bake::Mesh;
use walksurf_format::{FileView, tile_flags};
use walksurf_oracle::Oracle;

const TILE: f64 = 3200.0;
const CELL: f64 = 40.0;
const QUARTER: f64 = 20.0;

/// The agents asked: the capsule tests' three, the largest radius, and
/// thin ones.
const AGENTS: [Agent; 7] = [
    CAPSULE_AGENTS[0],
    CAPSULE_AGENTS[1],
    CAPSULE_AGENTS[2],
    Agent {
        radius_cm: 41.999,
        half_height_cm: 96.0,
    },
    Agent {
        radius_cm: 0.05,
        half_height_cm: 40.0,
    },
    Agent {
        radius_cm: 1.0,
        half_height_cm: 96.0,
    },
    Agent {
        radius_cm: 5.0,
        half_height_cm: 12.0,
    },
];

/// Capsule-bottom heights above rest for a standing agent. [Units: cm]
const STAND: [f64; 9] = [0.0, 0.0005, 0.004, 0.011, 0.3, 1.0, 2.15, 5.0, 9.99];
/// … and for a falling one. [Units: cm]
const FALL: [f64; 7] = [30.0, 47.39, 47.41, 100.0, 150.0, 199.99, 250.0];
/// Heights above rest a sweep starts at. [Units: cm]
const SWEEP_LIFT: [f64; 7] = [0.0005, 0.004, 0.011, 0.5, 2.15, 10.0, 30.0];
/// Sweep lengths (besides random ones in 1–256). [Units: cm]
const SWEEP_LEN: [f64; 12] = [
    1.0, 2.0, 5.0, 16.67, 19.99, 39.99, 40.0, 40.01, 80.0, 128.0, 200.0, 256.0,
];
/// Offsets from a line (tile, cell, quarter, seam) a point is put at. [Units: cm]
const NEAR: [f64; 17] = [
    -50.0, -42.0, -41.999, -20.0, -1.0, -0.01, -1e-4, -1e-7, 0.0, 1e-7, 1e-4, 0.01, 1.0, 20.0, 41.999, 42.0, 50.0,
];
/// Tiny offsets off a grid line. [Units: cm]
const HAIR: [f64; 7] = [0.0, 1e-9, -1e-9, 1e-6, -1e-6, 1e-3, -1e-3];

/// The ground plane `z = a·(x − o.x) + b·(y − o.y) + c` (world cm).
#[derive(Clone, Copy, Debug)]
struct Ground {
    o: [f64; 2],
    a: f64,
    b: f64,
    c: f64,
}

impl Ground {
    fn z(&self, x: f64, y: f64) -> f64 {
        self.a * (x - self.o[0]) + self.b * (y - self.o[1]) + self.c
    }
    fn p(&self, x: f64, y: f64) -> [f64; 3] {
        [x, y, self.z(x, y)]
    }
    /// Capsule bottom where a sphere of radius `r` rests on the plane with
    /// its centre over `(x, y)`.
    fn rest_bottom(&self, x: f64, y: f64, r: f64) -> f64 {
        self.z(x, y) + r * ((1.0 + self.a * self.a + self.b * self.b).sqrt() - 1.0)
    }
    fn slope(&self) -> f64 {
        self.a.hypot(self.b)
    }
    /// Lowest and highest height over the box `c ± s`.
    fn range(&self, c: [f64; 2], s: [f64; 2]) -> (f64, f64) {
        let zs =
            [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]].map(|[u, v]| self.z(c[0] + u * s[0], c[1] + v * s[1]));
        (
            zs.iter().copied().fold(f64::INFINITY, f64::min),
            zs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        )
    }
}

/// A generated open-world level and where to look.
struct Level {
    name: String,
    mesh: Mesh,
    g: Ground,
    /// The ground's extent (world XY).
    lo: [f64; 2],
    hi: [f64; 2],
    /// Obstacle centres and other features.
    spots: Vec<[f64; 2]>,
    /// Where ground triangles meet without sharing their vertices
    /// (T-junctions, slits): the segment's ends.
    seams: Vec<[[f64; 2]; 2]>,
    /// Holes in the ground (XY boxes).
    holes: Vec<([f64; 2], [f64; 2])>,
    /// Cracks between ground triangles: a point on one side, the
    /// direction across, the width there.
    cracks: Vec<([f64; 2], [f64; 2], f64)>,
    /// Tiles kept free of obstacles (and their margin).
    quiet: Vec<(i32, i32)>,
    what: Vec<String>,
}

impl Level {
    /// A level named `name` on ground `g` over `[lo, hi]`, with nothing in
    /// it yet.
    fn empty(name: String, g: Ground, lo: [f64; 2], hi: [f64; 2]) -> Level {
        Level {
            name,
            mesh: Mesh::default(),
            g,
            lo,
            hi,
            spots: Vec::new(),
            seams: Vec::new(),
            holes: Vec::new(),
            cracks: Vec::new(),
            quiet: Vec::new(),
            what: Vec::new(),
        }
    }

    /// Its tiles, extent and slope, for a failure's description.
    fn extent_note(&self, corner: [i32; 2], n: [usize; 2]) -> String {
        format!(
            "tiles {corner:?} + {n:?}, ground [{:.2}, {:.2}] x [{:.2}, {:.2}], slope ({:.4}, {:.4})",
            self.lo[0], self.hi[0], self.lo[1], self.hi[1], self.g.a, self.g.b
        )
    }

    fn tiles(&self) -> ([i32; 2], [i32; 2]) {
        let t = |v: f64| (v / TILE).floor() as i32;
        ([t(self.lo[0]), t(self.lo[1])], [t(self.hi[0]), t(self.hi[1])])
    }
}

/// Where a level lies: its tile corner (some far out, some negative).
const CORNERS: [(i32, i32); 9] = [
    (0, 0),
    (-1, -1),
    (-4, 2),
    (31, -33),
    (-32, 30),
    (-63, -64),
    (312, 312),
    (-314, -313),
    (300, -320),
];

/// Picks the level's tile span and ground extent: `nx × ny` tiles from a
/// corner of [`CORNERS`], the ground reaching 300 cm beyond them, ending
/// on the tile lines or a hair or 200 cm inside.
fn extent(rng: &mut Rng, seed: u64, n: [usize; 2]) -> ([i32; 2], [f64; 2], [f64; 2]) {
    let (cx, cy) = CORNERS[seed as usize % CORNERS.len()];
    let margin = |rng: &mut Rng| rng.pick(&[300.0, 300.0, 0.0, -0.37, -200.0, 61.3, 20.0, -30.0, 45.0, -8.5]);
    let lo = [cx as f64 * TILE - margin(rng), cy as f64 * TILE - margin(rng)];
    let hi = [
        (cx + n[0] as i32) as f64 * TILE + margin(rng),
        (cy + n[1] as i32) as f64 * TILE + margin(rng),
    ];
    ([cx, cy], lo, hi)
}

/// The tiles wholly inside the ground (with 100 cm to spare), about half
/// of them (at least one when there is any) kept quiet: no obstacle within
/// 100 cm of their square.
fn pick_quiet(rng: &mut Rng, lo: [f64; 2], hi: [f64; 2]) -> Vec<(i32, i32)> {
    let t = |v: f64| (v / TILE).floor() as i32;
    let mut inside = Vec::new();
    for ty in t(lo[1])..=t(hi[1]) {
        for tx in t(lo[0])..=t(hi[0]) {
            let (x0, y0) = (tx as f64 * TILE, ty as f64 * TILE);
            if x0 - 100.0 >= lo[0] && y0 - 100.0 >= lo[1] && x0 + TILE + 100.0 <= hi[0] && y0 + TILE + 100.0 <= hi[1] {
                inside.push((tx, ty));
            }
        }
    }
    let mut quiet: Vec<(i32, i32)> = inside.iter().copied().filter(|_| rng.next() < 0.5).collect();
    if quiet.is_empty()
        && let Some(&t) = inside.first()
    {
        quiet.push(t);
    }
    quiet
}

// ---------------------------------------------------------------------------
// Grounds.

/// Two triangles over `[lo, hi]`; with a hole, eight welded ones around
/// it (no T-junction).
fn two_triangles(lb: &mut LevelBuilder, g: &Ground, lo: [f64; 2], hi: [f64; 2], hole: Option<([f64; 2], [f64; 2])>) {
    let p = |x: f64, y: f64| g.p(x, y);
    match hole {
        None => {
            lb.quad(
                [p(lo[0], lo[1]), p(hi[0], lo[1]), p(hi[0], hi[1]), p(lo[0], hi[1])],
                Winding::Up,
            );
        }
        Some((h0, h1)) => {
            lb.quad(
                [p(lo[0], lo[1]), p(hi[0], lo[1]), p(h1[0], h0[1]), p(h0[0], h0[1])],
                Winding::Up,
            );
            lb.quad(
                [p(hi[0], lo[1]), p(hi[0], hi[1]), p(h1[0], h1[1]), p(h1[0], h0[1])],
                Winding::Up,
            );
            lb.quad(
                [p(hi[0], hi[1]), p(lo[0], hi[1]), p(h0[0], h1[1]), p(h1[0], h1[1])],
                Winding::Up,
            );
            lb.quad(
                [p(lo[0], hi[1]), p(lo[0], lo[1]), p(h0[0], h0[1]), p(h0[0], h1[1])],
                Winding::Up,
            );
        }
    }
}

/// The quad `q` (in order around its boundary), wound to face up.
fn up_quad(lb: &mut LevelBuilder, q: [[f64; 3]; 4]) {
    let area: f64 = (0..4)
        .map(|i| {
            let (a, b) = (q[i], q[(i + 1) % 4]);
            let (a, b) = ([a[0] - q[0][0], a[1] - q[0][1]], [b[0] - q[0][0], b[1] - q[0][1]]);
            a[0] * b[1] - a[1] * b[0]
        })
        .sum();
    if area >= 0.0 {
        lb.quad(q, Winding::Up);
    } else {
        lb.quad([q[3], q[2], q[1], q[0]], Winding::Up);
    }
}

/// One triangle covering `[lo, hi]` (its hypotenuse far beyond, across
/// many tiles).
fn one_triangle(lb: &mut LevelBuilder, g: &Ground, lo: [f64; 2], hi: [f64; 2]) {
    let (w, h) = (hi[0] - lo[0], hi[1] - lo[1]);
    lb.tri(
        g.p(lo[0], lo[1]),
        g.p(lo[0] + 2.0 * w + 1.0, lo[1]),
        g.p(lo[0], lo[1] + 2.0 * h + 1.0),
    );
}

/// A grid of `s`-sized quads over `[lo, hi]`, each split along a random
/// diagonal, welded; a few cells left out (holes, some over a lower floor).
fn grid(rng: &mut Rng, lb: &mut LevelBuilder, g: &Ground, lo: [f64; 2], hi: [f64; 2], s: f64, level: &mut Level) {
    let n = [0, 1].map(|k| (((hi[k] - lo[k]) / s).ceil() as usize).max(1));
    let at = |k: usize, i: usize| lo[k] + (hi[k] - lo[k]) * i as f64 / n[k] as f64;
    let mut holes = 0;
    for j in 0..n[1] {
        for i in 0..n[0] {
            let (x0, x1, y0, y1) = (at(0, i), at(0, i + 1), at(1, j), at(1, j + 1));
            if (holes == 0 && i == n[0] / 2 && j == n[1] / 3) || rng.next() < 0.004 {
                holes += 1;
                level.holes.push(([x0, y0], [x1, y1]));
                if rng.next() < 0.5 {
                    let drop = rng.pick(&[0.5, 30.0, 150.0]);
                    let (zl, _) = g.range([0.5 * (x0 + x1), 0.5 * (y0 + y1)], [0.5 * (x1 - x0), 0.5 * (y1 - y0)]);
                    lb.floor([x0 - 5.0, x1 + 5.0], [y0 - 5.0, y1 + 5.0], zl - drop, Winding::Up);
                }
                continue;
            }
            let (a, b, c, d) = (g.p(x0, y0), g.p(x1, y0), g.p(x1, y1), g.p(x0, y1));
            if rng.next() < 0.5 {
                lb.quad([a, b, c, d], Winding::Up);
            } else {
                lb.quad([b, c, d, a], Winding::Up);
            }
        }
    }
    level.what.push(format!("grid {s} cm, {holes} holes"));
}

/// A patchwork over `[lo, …)`: coarse `s`-sized cells, each one quad or
/// split into `k × k` (k of 2, 4, 8). Where a finer cell meets a coarser
/// one its extra vertices lie on the coarse edge (T-junctions), stepped
/// vertically by one of `steps` and moved across the edge by one of
/// `across` (away from the coarse cell: a crack; toward it: an overlap).
/// Along some coarse edges a subdivided cell's vertices are not welded to
/// its neighbour's (moved across the edge and up: a slit). Strips of
/// quads around the outside, whose inner vertices are every vertex of the
/// cells beside them, weld the border cells into one flat group (cells of
/// different subdivision share no edge of their own): their T-junctions
/// and slits are then seams of that group, which the bake must find near
/// each tile (a coarse edge is up to 6400 cm long). Returns the ground's
/// extent.
fn patchwork(
    rng: &mut Rng,
    lb: &mut LevelBuilder,
    g: &Ground,
    lo: [f64; 2],
    hi: [f64; 2],
    s: f64,
    level: &mut Level,
) -> ([f64; 2], [f64; 2]) {
    const U: i64 = 8; // finest steps per coarse cell
    let n = [0, 1].map(|k| (((hi[k] - lo[k]) / s).ceil() as i64).max(1));
    let u = s / U as f64;
    let kmax = ((s / 200.0) as i64).clamp(1, U);
    let ks: Vec<i64> = [1, 1, 2, 4, 8].into_iter().filter(|&k| k <= kmax).collect();
    let k_of: Vec<i64> = (0..n[0] * n[1]).map(|_| rng.pick(&ks)).collect();
    let k = |ci: i64, cj: i64| -> Option<i64> {
        (ci >= 0 && cj >= 0 && ci < n[0] && cj < n[1]).then(|| k_of[(cj * n[0] + ci) as usize])
    };
    let steps: Vec<f64> = rng
        .pick(&[
            &[0.0][..],
            &[0.001],
            &[-0.0015],
            &[0.005],
            &[0.01],
            &[0.0, 0.001, -0.001, 0.0019, 0.005, -0.01],
        ])
        .to_vec();
    let acrosses: Vec<f64> = rng
        .pick(&[
            &[0.0][..],
            &[0.0],
            &[1e-4],
            &[0.003],
            &[-0.003],
            &[0.0, 1e-4, -1e-4, 0.003, 0.008],
        ])
        .to_vec();
    let seed_bits = (rng.next() * 1e9) as i64;
    let hash = |x: i64, y: i64, salt: i64| {
        ((x.wrapping_mul(0x9E37_79B9) ^ y.wrapping_mul(0x85EB_CA6B) ^ seed_bits ^ salt) >> 3).unsigned_abs() as usize
    };
    // Whether coarse cell (ci, cj), whose closed square holds (X, Y), has
    // a vertex there (no cell: as if it had).
    let has = |ci: i64, cj: i64, x: i64, y: i64| match k(ci, cj) {
        None => true,
        Some(kk) => {
            let step = U / kk;
            (x - ci * U) % step == 0 && (y - cj * U) % step == 0
        }
    };
    // A T-junction vertex (a cell on whose edge it lies lacks it): the
    // direction away from that cell.
    let t_dir = |x: i64, y: i64| -> Option<[f64; 2]> {
        let (ci, cj) = (x.div_euclid(U), y.div_euclid(U));
        for (a, b) in [(ci, cj), (ci - 1, cj), (ci, cj - 1), (ci - 1, cj - 1)] {
            let inside = (a * U..=(a + 1) * U).contains(&x) && (b * U..=(b + 1) * U).contains(&y);
            if inside && !has(a, b, x, y) {
                return Some(if x == a * U {
                    [-1.0, 0.0]
                } else if x == (a + 1) * U {
                    [1.0, 0.0]
                } else if y == b * U {
                    [0.0, -1.0]
                } else {
                    [0.0, 1.0]
                });
            }
        }
        None
    };
    let t_across = |x: i64, y: i64| acrosses[hash(x, y, 7) % acrosses.len()];
    // Slits: coarse edges (vertical: the cell's left edge, horizontal: its
    // bottom edge) along which that cell's vertices are moved.
    let mut slits: Vec<(i64, i64, bool, [f64; 2])> = Vec::new();
    for cj in 0..n[1] {
        for ci in 0..n[0] {
            let kk = k(ci, cj).unwrap_or(1);
            if kk < 2 || rng.next() > 0.3 {
                continue;
            }
            let vertical = rng.next() < 0.5;
            if (vertical && ci == 0) || (!vertical && cj == 0) {
                continue;
            }
            let across = rng.pick(&[0.0, 1e-4, -1e-4, 0.003, 0.003, -0.003, 0.008]);
            let up = rng.pick(&[0.0, 0.0, 0.0005, -0.001, 0.0015, 0.005]);
            slits.push((ci, cj, vertical, [across, up]));
        }
    }
    let xy = |x: i64, y: i64| [lo[0] + x as f64 * u, lo[1] + y as f64 * u];
    let on_slit = |&(si, sj, vertical, _): &(i64, i64, bool, [f64; 2]), x: i64, y: i64| {
        if vertical {
            x == si * U && y > sj * U && y < (sj + 1) * U
        } else {
            y == sj * U && x > si * U && x < (si + 1) * U
        }
    };
    let vertex = |ci: i64, cj: i64, x: i64, y: i64| -> [f64; 3] {
        let [mut px, mut py] = xy(x, y);
        let mut dz = 0.0;
        if let Some(d) = t_dir(x, y) {
            dz += steps[hash(x, y, 0) % steps.len()];
            px += t_across(x, y) * d[0];
            py += t_across(x, y) * d[1];
        }
        for sl in slits.iter().filter(|sl| (sl.0, sl.1) == (ci, cj) && on_slit(sl, x, y)) {
            let [across, up] = sl.3;
            if sl.2 {
                px += across;
            } else {
                py += across;
            }
            dz += up;
        }
        [px, py, g.z(px, py) + dz]
    };
    let mut holes = 0;
    for cj in 0..n[1] {
        for ci in 0..n[0] {
            let kk = k(ci, cj).unwrap_or(1);
            let step = U / kk;
            for b in 0..kk {
                for a in 0..kk {
                    let (x0, y0) = (ci * U + a * step, cj * U + b * step);
                    let (x1, y1) = (x0 + step, y0 + step);
                    if kk >= 2 && rng.next() < 0.01 {
                        holes += 1;
                        let (p0, p1) = (xy(x0, y0), xy(x1, y1));
                        level.holes.push((p0, p1));
                        if rng.next() < 0.5 {
                            let c = [0.5 * (p0[0] + p1[0]), 0.5 * (p0[1] + p1[1])];
                            let (zl, _) = g.range(c, [0.5 * (p1[0] - p0[0]); 2]);
                            lb.floor(
                                [p0[0] - 3.0, p1[0] + 3.0],
                                [p0[1] - 3.0, p1[1] + 3.0],
                                zl - 40.0,
                                Winding::Up,
                            );
                        }
                        continue;
                    }
                    // The sub-cell's own corners (a neighbour's extra
                    // vertices on its edges make the T-junctions).
                    let q = [
                        vertex(ci, cj, x0, y0),
                        vertex(ci, cj, x1, y0),
                        vertex(ci, cj, x1, y1),
                        vertex(ci, cj, x0, y1),
                    ];
                    if rng.next() < 0.5 {
                        lb.quad(q, Winding::Up);
                    } else {
                        lb.quad([q[1], q[2], q[3], q[0]], Winding::Up);
                    }
                }
            }
        }
    }
    // The connecting strips, `w` wide, around the outside.
    let w = if rng.next() < 0.8 {
        rng.pick(&[0.5, 30.0, 400.0])
    } else {
        0.0
    };
    let (x_end, y_end) = (n[0] * U, n[1] * U);
    if w > 0.0 {
        // The breaks along one side: every vertex the cells beside it have.
        let breaks = |horizontal: bool, line: i64| -> Vec<i64> {
            let (cells, other) = if horizontal { (n[0], n[1]) } else { (n[1], n[0]) };
            let c_other = if line == 0 { 0 } else { other - 1 };
            let mut v: Vec<i64> = (0..cells)
                .flat_map(|c| {
                    let kk = if horizontal { k(c, c_other) } else { k(c_other, c) }.unwrap_or(1);
                    (0..=kk).map(move |a| c * U + a * (U / kk))
                })
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        let ([x0, y0], [x1, y1]) = (xy(0, 0), xy(x_end, y_end));
        let p = |x: f64, y: f64| g.p(x, y);
        // (Boundary vertices carry no offset: `vertex` of any cell.)
        let at = |x: i64, y: i64| vertex(-1, -1, x, y);
        for (horizontal, line, out) in [
            (true, 0, y0 - w),
            (true, y_end, y1 + w),
            (false, 0, x0 - w),
            (false, x_end, x1 + w),
        ] {
            for pair in breaks(horizontal, line).windows(2) {
                let (a, b) = (pair[0], pair[1]);
                let q = if horizontal {
                    let (pa, pb) = (at(a, line), at(b, line));
                    [pa, pb, p(pb[0], out), p(pa[0], out)]
                } else {
                    let (pa, pb) = (at(line, a), at(line, b));
                    [pa, pb, p(out, pb[1]), p(out, pa[1])]
                };
                up_quad(lb, q);
            }
        }
        for (cx, cy, ox, oy) in [
            (x0, y0, x0 - w, y0 - w),
            (x1, y0, x1 + w, y0 - w),
            (x1, y1, x1 + w, y1 + w),
            (x0, y1, x0 - w, y1 + w),
        ] {
            up_quad(lb, [p(cx, cy), p(ox, cy), p(ox, oy), p(cx, oy)]);
        }
    }
    // The seams and cracks, for the queries: coarse edges between cells
    // of different subdivision, the slits, and where the moved vertices
    // open a crack.
    for cj in 0..n[1] {
        for ci in 0..n[0] {
            let kk = k(ci, cj).unwrap_or(1);
            if k(ci - 1, cj).is_some_and(|kl| kl != kk) {
                level.seams.push([xy(ci * U, cj * U), xy(ci * U, (cj + 1) * U)]);
            }
            if k(ci, cj - 1).is_some_and(|kb| kb != kk) {
                level.seams.push([xy(ci * U, cj * U), xy((ci + 1) * U, cj * U)]);
            }
        }
    }
    for y in 0..=y_end {
        for x in 0..=x_end {
            if let Some(d) = t_dir(x, y)
                && t_across(x, y) > 0.0
            {
                level.cracks.push((xy(x, y), d, t_across(x, y)));
            }
        }
    }
    for sl in &slits {
        let &(ci, cj, vertical, [across, _]) = sl;
        level.seams.push(if vertical {
            [xy(ci * U, cj * U), xy(ci * U, (cj + 1) * U)]
        } else {
            [xy(ci * U, cj * U), xy((ci + 1) * U, cj * U)]
        });
        if across > 0.0 {
            let step = U / k(ci, cj).unwrap_or(1);
            for t in (step..U).step_by(step as usize) {
                let (x, y) = if vertical {
                    (ci * U, cj * U + t)
                } else {
                    (ci * U + t, cj * U)
                };
                level
                    .cracks
                    .push((xy(x, y), if vertical { [1.0, 0.0] } else { [0.0, 1.0] }, across));
            }
        }
    }
    level.what.push(format!(
        "patchwork {s} cm (k {:?}), steps {steps:?}, T across {acrosses:?}, strips {w} cm, {} slits {:?}, {holes} holes, {} cracks",
        k_of,
        slits.len(),
        slits.iter().map(|s| s.3).collect::<Vec<_>>(),
        level.cracks.len()
    ));
    let (a, b) = (xy(0, 0), xy(x_end, y_end));
    ([a[0] - w, a[1] - w], [b[0] + w, b[1] + w])
}

// ---------------------------------------------------------------------------
// Obstacles.

/// One obstacle: its kind, centre, half sizes, height and angle.
#[derive(Clone, Copy, Debug)]
struct Obs {
    kind: usize,
    c: [f64; 2],
    s: [f64; 2],
    h: f64,
    ang: f64,
}

impl Obs {
    fn random(rng: &mut Rng, c: [f64; 2]) -> Obs {
        let kind = (rng.next() * 7.0) as usize;
        let axis = rng.next() < 0.5;
        let ang = if axis {
            rng.pick(&[0.0, TAU / 4.0])
        } else {
            rng.range(0.0, TAU)
        };
        let (s, h) = match kind {
            // A box, any height.
            0 => (
                [rng.range(3.0, 150.0), rng.range(3.0, 150.0)],
                rng.pick(&[1.0, 3.0, 10.0, 30.0, 60.0, 120.0, 250.0]),
            ),
            // A thin wall.
            1 => ([rng.range(10.0, 300.0), 0.0], rng.range(40.0, 300.0)),
            // A curb (a two-sided vertical strip).
            2 => (
                [rng.range(10.0, 300.0), 0.0],
                rng.pick(&[1.0, 2.0, 5.0, 10.0, 20.0, 30.0]) * rng.range(0.9, 1.0),
            ),
            // A low long box.
            3 => ([rng.range(20.0, 300.0), rng.range(2.0, 15.0)], rng.range(1.0, 30.0)),
            // A table at 100–200 cm.
            4 => (
                [rng.range(30.0, 150.0), rng.range(30.0, 150.0)],
                rng.range(100.0, 200.0),
            ),
            // A floating slab (an overhang) at 100–200 cm.
            5 => (
                [rng.range(20.0, 200.0), rng.range(20.0, 200.0)],
                rng.range(100.0, 200.0),
            ),
            // A ramp along x.
            _ => ([rng.range(80.0, 300.0), rng.range(50.0, 200.0)], rng.range(10.0, 120.0)),
        };
        Obs { kind, c, s, h, ang }
    }

    /// A radius about the centre holding the obstacle's footprint.
    fn reach(&self) -> f64 {
        self.s[0].hypot(self.s[1]) + 1.0
    }

    fn build(&self, lb: &mut LevelBuilder, g: &Ground) -> String {
        let [cx, cy] = self.c;
        let [sx, sy] = self.s;
        let (zl, zh) = g.range(self.c, self.s);
        match self.kind {
            0 | 3 => {
                lb.cuboid([cx - sx, cy - sy, zl - 1.0], [cx + sx, cy + sy, zh + self.h]);
                format!("box {:.0}x{:.0}x{:.1}", 2.0 * sx, 2.0 * sy, self.h)
            }
            1 | 2 => {
                let d = [self.ang.cos() * sx, self.ang.sin() * sx];
                let (p0, p1) = ([cx - d[0], cy - d[1]], [cx + d[0], cy + d[1]]);
                let (z0, z1) = (g.z(p0[0], p0[1]), g.z(p1[0], p1[1]));
                lb.wall(p0, p1, [z0 - 1.0, z1 - 1.0], [z0 + self.h, z1 + self.h]);
                format!("wall {:.0} h {:.1}", 2.0 * sx, self.h)
            }
            4 | 5 => {
                let top = zh + self.h;
                let thick = if self.kind == 4 { 4.0 } else { 3.0 + sx.min(sy) * 0.05 };
                lb.cuboid([cx - sx, cy - sy, top - thick], [cx + sx, cy + sy, top]);
                if self.kind == 4 {
                    for (u, v) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                        let (lx, ly) = (cx + u * (sx - 2.0), cy + v * (sy - 2.0));
                        let (ll, _) = g.range([lx, ly], [1.5, 1.5]);
                        lb.cuboid([lx - 1.5, ly - 1.5, ll - 1.0], [lx + 1.5, ly + 1.5, top - thick]);
                    }
                }
                format!("{} at {:.0}", if self.kind == 4 { "table" } else { "slab" }, self.h)
            }
            _ => {
                let rise = self.h.min(0.5 * 2.0 * sx);
                let z0 = zl - 0.5;
                lb.ramp_x([cx - sx, cx + sx], [cy - sy, cy + sy], [z0, zh + rise]);
                format!("ramp {:.0} up {:.0}", 2.0 * sx, rise)
            }
        }
    }
}

/// A centre for an obstacle in tile `t`: anywhere, on (or a few cm off) a
/// tile line or corner, on a certificate cell line or a quarter line.
fn obstacle_centre(rng: &mut Rng, t: (i32, i32)) -> [f64; 2] {
    let (x0, y0) = (t.0 as f64 * TILE, t.1 as f64 * TILE);
    let mut c = [x0 + rng.range(0.0, TILE), y0 + rng.range(0.0, TILE)];
    let k = (rng.next() * 2.0) as usize;
    match (rng.next() * 6.0) as usize {
        0 | 1 => {}
        2 => {
            let edge = if rng.next() < 0.5 { 0.0 } else { TILE };
            c[k] = [x0, y0][k] + edge + rng.pick(&NEAR);
        }
        3 => {
            c = [x0 + rng.pick(&[0.0, TILE]), y0 + rng.pick(&[0.0, TILE])];
            c[0] += rng.pick(&NEAR);
            c[1] += rng.pick(&NEAR);
        }
        4 => c[k] = (c[k] / CELL).round() * CELL + rng.pick(&HAIR),
        _ => c[k] = ((c[k] / CELL).floor() * CELL + QUARTER) + rng.pick(&HAIR),
    }
    c
}

/// Obstacles over the level's tiles but the quiet ones (none within 100 cm
/// of a quiet tile's square), `per_tile` of them on average.
fn scatter(rng: &mut Rng, lb: &mut LevelBuilder, level: &mut Level, per_tile: f64) {
    let ([tx0, ty0], [tx1, ty1]) = level.tiles();
    let quiet = level.quiet.clone();
    let near_quiet = |c: [f64; 2], r: f64| {
        quiet.iter().any(|&(tx, ty)| {
            let (x0, y0) = (tx as f64 * TILE - r - 100.0, ty as f64 * TILE - r - 100.0);
            c[0] > x0 && c[1] > y0 && c[0] < x0 + TILE + 2.0 * (r + 100.0) && c[1] < y0 + TILE + 2.0 * (r + 100.0)
        })
    };
    let mut kinds = [0usize; 7];
    for ty in ty0..=ty1 {
        for tx in tx0..=tx1 {
            if quiet.contains(&(tx, ty)) {
                continue;
            }
            let n = (per_tile * rng.range(0.5, 1.5)).round() as usize;
            for _ in 0..n {
                for _ in 0..20 {
                    let c = obstacle_centre(rng, (tx, ty));
                    let o = Obs::random(rng, c);
                    let inside = c[0] > level.lo[0] && c[1] > level.lo[1] && c[0] < level.hi[0] && c[1] < level.hi[1];
                    if !inside || near_quiet(c, o.reach()) {
                        continue;
                    }
                    o.build(lb, &level.g);
                    kinds[o.kind] += 1;
                    level.spots.push(c);
                    // Its corners and ends too.
                    let d = [o.ang.cos() * o.s[0], o.ang.sin() * o.s[0]];
                    level.spots.push([c[0] + d[0], c[1] + d[1]]);
                    level.spots.push([c[0] - o.s[0], c[1] - o.s[1]]);
                    break;
                }
            }
        }
    }
    level.what.push(format!(
        "obstacles: {} boxes, {} walls, {} curbs, {} low boxes, {} tables, {} slabs, {} ramps",
        kinds[0], kinds[1], kinds[2], kinds[3], kinds[4], kinds[5], kinds[6]
    ));
}

// ---------------------------------------------------------------------------
// Levels.

/// The slope of a level: flat, gently tilted, or tilted up to 0.3.
fn pick_ground(rng: &mut Rng, corner: [i32; 2]) -> Ground {
    let (a, b) = match (rng.next() * 4.0) as usize {
        0 => (0.0, 0.0),
        1 => (rng.range(-0.01, 0.01), rng.range(-0.01, 0.01)),
        2 => (rng.range(-0.08, 0.08), rng.range(-0.08, 0.08)),
        _ => (rng.range(-0.3, 0.3), rng.range(-0.2, 0.2)),
    };
    Ground {
        o: [corner[0] as f64 * TILE, corner[1] as f64 * TILE],
        a,
        b,
        c: rng.pick(&[0.0, 17.3, -250.0, 1200.0]),
    }
}

/// Open ground of one or two huge triangles or a grid of small ones, with
/// scattered obstacles and holes.
fn open_level(seed: u64) -> Level {
    let mut rng = Rng::seeded(0x5EED_0014_0000_0001, seed);
    let kind = seed % 4;
    let n = match kind {
        // (Small triangles: fewer tiles.)
        2 => [3, 2],
        _ => [rng.pick(&[2, 3, 4]), rng.pick(&[2, 3])],
    };
    let (corner, lo, hi) = extent(&mut rng, seed, n);
    let g = pick_ground(&mut rng, corner);
    let mut level = Level::empty(format!("open {seed}"), g, lo, hi);
    level.what.push(level.extent_note(corner, n));
    level.quiet = pick_quiet(&mut rng, lo, hi);
    let mut lb = LevelBuilder::new();
    match kind {
        0 | 3 => {
            // Two triangles, or eight around a hole (in a busy tile, on a
            // tile or cell line).
            let hole = if kind == 3 {
                let busy: Vec<(i32, i32)> = (0..n[0] as i32)
                    .flat_map(|i| (0..n[1] as i32).map(move |j| (corner[0] + i, corner[1] + j)))
                    .filter(|t| !level.quiet.contains(t))
                    .collect();
                busy.first().map(|&(tx, ty)| {
                    let x = tx as f64 * TILE + rng.pick(&[0.0, 40.0, 1600.0, 3180.0]);
                    let y = ty as f64 * TILE + rng.pick(&[300.0, 1620.0, 3200.0]);
                    let (w, h) = (rng.pick(&[0.03, 5.0, 60.0, 300.0]), rng.pick(&[0.05, 40.0, 120.0]));
                    ([x, y], [x + w, y + h])
                })
            } else {
                None
            };
            let hole = hole.filter(|(h0, h1)| h0[0] > lo[0] && h0[1] > lo[1] && h1[0] < hi[0] && h1[1] < hi[1]);
            two_triangles(&mut lb, &g, lo, hi, hole);
            if let Some(h) = hole {
                level.holes.push(h);
                if rng.next() < 0.6 {
                    let (zl, _) = g.range(
                        [0.5 * (h.0[0] + h.1[0]), 0.5 * (h.0[1] + h.1[1])],
                        [h.1[0] - h.0[0], h.1[1] - h.0[1]],
                    );
                    lb.floor(
                        [h.0[0] - 20.0, h.1[0] + 20.0],
                        [h.0[1] - 20.0, h.1[1] + 20.0],
                        zl - 30.0,
                        Winding::Up,
                    );
                }
            }
            level.what.push(format!("two triangles, hole {hole:?}"));
        }
        1 => {
            one_triangle(&mut lb, &g, lo, hi);
            level.what.push("one triangle".into());
        }
        _ => {
            let s = rng.pick(&[200.0, 400.0, 800.0]);
            grid(&mut rng, &mut lb, &g, lo, hi, s, &mut level);
        }
    }
    // (A grid's holes must not be in a quiet tile's reach either: it only
    // costs uniformity there, which is not asserted per tile.)
    scatter(&mut rng, &mut lb, &mut level, 7.0);
    level.mesh = lb.build();
    level
}

/// A patchwork ground (T-junctions with steps, slits of unwelded
/// vertices, long coarse edges, holes) with scattered obstacles.
fn seam_level(seed: u64) -> Level {
    let mut rng = Rng::seeded(0x5EED_0014_0000_0002, seed);
    let s = rng.pick(&[1600.0, 3200.0, 6400.0]);
    let n = [rng.pick(&[2, 3]), rng.pick(&[2, 3])];
    let (corner, lo, hi) = extent(&mut rng, seed.wrapping_add(3), n);
    let g = pick_ground(&mut rng, corner);
    let mut level = Level::empty(format!("seams {seed}"), g, lo, hi);
    let mut lb = LevelBuilder::new();
    (level.lo, level.hi) = patchwork(&mut rng, &mut lb, &g, lo, hi, s, &mut level);
    level.what.insert(0, level.extent_note(corner, n));
    level.quiet = pick_quiet(&mut rng, level.lo, level.hi);
    scatter(&mut rng, &mut lb, &mut level, 4.0);
    level.mesh = lb.build();
    level
}

// ---------------------------------------------------------------------------
// Queries.

#[derive(Default)]
struct Queries {
    caps: Vec<FloorQuery>,
    lines: Vec<FloorQuery>,
    sweeps: Vec<SweepQuery>,
}

/// Where a point came from (its sweeps' directions depend on it).
#[derive(Clone, Copy)]
enum Near {
    Anywhere,
    /// A line through the point along this direction (radians): sweeps
    /// across and along it.
    Line(f64),
    /// A feature at this point: sweeps toward it.
    Spot([f64; 2]),
}

/// Queries at `xy` for one agent: capsule floors standing and falling,
/// line traces, sweeps.
fn queries_at(rng: &mut Rng, level: &Level, xy: [f64; 2], near: Near, agent: Agent, q: &mut Queries) {
    let [x, y] = xy;
    let g = &level.g;
    let hh = agent.half_height_cm;
    let rest = g.rest_bottom(x, y, agent.radius_cm);
    for (lift, down) in [
        (
            rng.pick(&STAND),
            rng.pick(&[DEFAULT_FLOOR_DOWN_CM, DEFAULT_FLOOR_DOWN_CM, 10.0, 0.0]),
        ),
        (rng.pick(&FALL), rng.pick(&[200.0, DEFAULT_FLOOR_DOWN_CM, 260.0])),
    ] {
        q.caps.push(FloorQuery {
            pos: [x, y, rest + lift + hh],
            down_cm: down,
            agent,
        });
    }
    for lift in [rng.pick(&STAND), rng.pick(&FALL)] {
        q.lines.push(FloorQuery {
            pos: [x, y, g.z(x, y) + lift + hh],
            down_cm: rng.pick(&[0.0, 10.0, DEFAULT_FLOOR_DOWN_CM, 200.0, 300.0]),
            agent,
        });
    }
    for _ in 0..3 {
        let dir = match near {
            Near::Anywhere => rng.range(0.0, TAU),
            Near::Line(along) => {
                let any = rng.range(-1.2, 1.2);
                along
                    + rng.pick(&[TAU / 4.0, -TAU / 4.0, 0.0, TAU / 2.0])
                    + rng.pick(&[0.0, 0.0, 1e-6, -1e-3, 0.3, any])
            }
            Near::Spot(s) => {
                let any = rng.range(-1.0, 1.0);
                (s[1] - y).atan2(s[0] - x) + rng.pick(&[0.0, 0.0, 0.05, -0.2, any])
            }
        };
        let len = if rng.next() < 0.6 {
            rng.pick(&SWEEP_LEN)
        } else {
            rng.range(1.0, 256.0)
        };
        q.sweeps.push(SweepQuery {
            pos: [x, y, rest + rng.pick(&SWEEP_LIFT) + hh],
            delta: [len * dir.cos(), len * dir.sin()],
            agent,
        });
    }
}

/// A point on the segment `[p, q]` (anywhere, or at an end), moved across
/// it by one of [`NEAR`] (or the agent's radius ± a hair, or so that a
/// sphere of radius `r` resting on the ground `g` touches it a little
/// beside the segment).
fn near_segment(rng: &mut Rng, [p, q]: [[f64; 2]; 2], r: f64, g: &Ground) -> ([f64; 2], f64) {
    let any = [rng.next(), rng.next()];
    let t = rng.pick(&[any[0], any[1], 0.0, 1.0, 0.5]);
    let (dx, dy) = (q[0] - p[0], q[1] - p[1]);
    let l = dx.hypot(dy).max(1e-300);
    let (nx, ny) = (-dy / l, dx / l);
    let off = match (rng.next() * 10.0) as usize {
        0..=2 => (r + rng.pick(&[-1e-3, 0.0, 1e-3, 0.01])) * rng.pick(&[1.0, -1.0]),
        3..=5 => {
            // The sphere's lowest point (shifted up the slope from the
            // axis) at `s` from the segment: within √(2·r·h) of a step h
            // it meets the step's edge before the plane.
            let s = rng.pick(&[1e-3, 0.01, 0.03, 0.1, 0.3]) * (r / 42.0).sqrt() * rng.pick(&[1.0, -1.0]);
            let root = (1.0 + g.a * g.a + g.b * g.b).sqrt();
            s - r * (g.a * nx + g.b * ny) / root
        }
        _ => rng.pick(&NEAR) * rng.pick(&[1.0, 0.1, 0.01]),
    };
    ([p[0] + t * dx + off * nx, p[1] + t * dy + off * ny], dy.atan2(dx))
}

/// Every query of a level: `n` points of each source (anywhere; near tile
/// lines and corners; on cell and quarter lines; near obstacles; along
/// seams; at holes), one agent each.
fn level_queries(rng: &mut Rng, level: &Level, n: usize) -> Queries {
    let mut q = Queries::default();
    let (lo, hi) = (level.lo, level.hi);
    let ([tx0, ty0], [tx1, ty1]) = level.tiles();
    let inside =
        |p: [f64; 2]| p[0] >= lo[0] - 100.0 && p[1] >= lo[1] - 100.0 && p[0] <= hi[0] + 100.0 && p[1] <= hi[1] + 100.0;
    let push = |rng: &mut Rng, p: [f64; 2], near: Near, q: &mut Queries| {
        if inside(p) {
            let agent = rng.pick(&AGENTS);
            queries_at(rng, level, p, near, agent, q);
        }
    };
    for _ in 0..n {
        // Anywhere over the ground (and a little beyond it).
        let p = [
            rng.range(lo[0] - 60.0, hi[0] + 60.0),
            rng.range(lo[1] - 60.0, hi[1] + 60.0),
        ];
        push(rng, p, Near::Anywhere, &mut q);
        // In a quiet tile.
        if let Some(&(tx, ty)) = level.quiet.get((rng.next() * level.quiet.len() as f64) as usize) {
            let p = [
                tx as f64 * TILE + rng.range(0.0, TILE),
                ty as f64 * TILE + rng.range(0.0, TILE),
            ];
            push(rng, p, Near::Anywhere, &mut q);
        }
        // Near a tile line (crossing it) or corner.
        let tx = tx0 + (rng.next() * (tx1 - tx0 + 2) as f64) as i32;
        let ty = ty0 + (rng.next() * (ty1 - ty0 + 2) as f64) as i32;
        let (x, y) = (tx as f64 * TILE, ty as f64 * TILE);
        let along = rng.range(0.0, TILE);
        let (d0, d1) = (rng.pick(&NEAR), rng.pick(&NEAR));
        let (p, near) = match (rng.next() * 3.0) as usize {
            0 => ([x + d0, y + along], Near::Line(TAU / 4.0)),
            1 => ([x + along, y + d0], Near::Line(0.0)),
            _ => ([x + d0, y + d1], Near::Line(rng.pick(&[0.0, TAU / 4.0, TAU / 8.0]))),
        };
        push(rng, p, near, &mut q);
        // On a certificate cell or quarter line.
        let mut p = [rng.range(lo[0], hi[0]), rng.range(lo[1], hi[1])];
        let k = (rng.next() * 2.0) as usize;
        let grid = rng.pick(&[CELL, QUARTER]);
        p[k] = (p[k] / grid).round() * grid + rng.pick(&HAIR);
        if rng.next() < 0.3 {
            p[1 - k] = (p[1 - k] / grid).round() * grid + rng.pick(&HAIR);
        }
        push(rng, p, Near::Line(if k == 0 { TAU / 4.0 } else { 0.0 }), &mut q);
        // Near an obstacle.
        if let Some(&s) = level.spots.get((rng.next() * level.spots.len() as f64) as usize) {
            let (ang, d) = (rng.range(0.0, TAU), rng.range(0.0, 90.0));
            let p = [s[0] + d * ang.cos(), s[1] + d * ang.sin()];
            push(rng, p, Near::Spot(s), &mut q);
        }
        // Along a seam (twice as often: their cracks are narrow).
        for _ in 0..2 {
            if let Some(&seg) = level.seams.get((rng.next() * level.seams.len() as f64) as usize) {
                let agent = rng.pick(&AGENTS);
                let (p, along) = near_segment(rng, seg, agent.radius_cm, &level.g);
                if inside(p) {
                    queries_at(rng, level, p, Near::Line(along), agent, &mut q);
                }
            }
        }
        // In a crack (where it is widest, a little along), or a hair
        // beside it: line traces and thin agents fall in.
        for _ in 0..2 {
            if let Some(&(base, d, width)) = level.cracks.get((rng.next() * level.cracks.len() as f64) as usize) {
                let frac = rng.pick(&[0.05, 0.5, 0.5, 0.95, -0.5, 1.5]);
                let along = rng.pick(&[0.0, 0.0, 1e-3, -0.01, 1.0]);
                let p = [
                    base[0] + d[0] * width * frac - d[1] * along,
                    base[1] + d[1] * width * frac + d[0] * along,
                ];
                let agent = rng.pick(&[AGENTS[4], AGENTS[5], AGENTS[6], AGENTS[0], AGENTS[2]]);
                queries_at(rng, level, p, Near::Line(d[1].atan2(d[0]) + TAU / 4.0), agent, &mut q);
            }
        }
        // At a hole: inside it, on its edges, one radius out.
        if let Some(&(h0, h1)) = level.holes.get((rng.next() * level.holes.len() as f64) as usize) {
            let corners = [h0, [h1[0], h0[1]], h1, [h0[0], h1[1]]];
            let e = (rng.next() * 4.0) as usize % 4;
            let agent = rng.pick(&AGENTS);
            let (p, along) = if rng.next() < 0.3 {
                ([rng.range(h0[0], h1[0]), rng.range(h0[1], h1[1])], 0.0)
            } else {
                near_segment(rng, [corners[e], corners[(e + 1) % 4]], agent.radius_cm, &level.g)
            };
            queries_at(rng, level, p, Near::Line(along), agent, &mut q);
        }
    }
    q
}

// ---------------------------------------------------------------------------
// Running.

/// A uniform tile: its coordinates and its certificate rectangle (cells).
type UniformTile = ((i32, i32), [usize; 4]);

/// The level's tiles: `(uniform tiles with a non-empty list, tiles with
/// shared lists, all tiles)`, and the uniform ones.
fn tile_census(surface: &Surface) -> ([usize; 3], Vec<UniformTile>) {
    let view = FileView::new(surface.bytes(), surface.layout()).expect("view");
    let mut counts = [0; 3];
    let mut uniform = Vec::new();
    for hot in view.hot {
        counts[2] += 1;
        let flags = hot.flags.get();
        if flags & tile_flags::HAS_CERT_LISTS != 0 {
            counts[1] += 1;
        }
        if flags & tile_flags::CERT_LISTS_UNIFORM != 0 {
            let tile = view.tile(hot).expect("tile view");
            assert_eq!(
                tile.cert_cells.len(),
                2,
                "a uniform tile stores one entry and the count"
            );
            assert!(flags & tile_flags::HAS_CERT_LISTS != 0, "uniform without shared lists");
            let ix = tile.cert_index;
            let rect = [ix.x0.get(), ix.y0.get(), ix.w.get(), ix.h.get()].map(usize::from);
            if !tile.certs.is_empty() && rect[2] * rect[3] > 0 {
                counts[0] += 1;
                uniform.push(((hot.tile_x.get(), hot.tile_y.get()), rect));
            }
        }
    }
    (counts, uniform)
}

/// Sweeps over each uniform tile's certificate rectangle (50 cm inside
/// it, and inside the ground), short enough and high enough above the
/// ground that the plane's certificate proves them `Clear`:
/// `(certified, asked)`, and the first few that were not.
fn uniform_certified(
    rng: &mut Rng,
    surface: &Surface,
    level: &Level,
    uniform: &[UniformTile],
    n: usize,
) -> (usize, usize, Vec<String>) {
    let (mut ok, mut asked, mut missed) = (0, 0, Vec::new());
    let slope = level.g.slope();
    for &((tx, ty), [i0, j0, w, h]) in uniform {
        let lo = [
            (tx as f64 * TILE + i0 as f64 * CELL + 50.0).max(level.lo[0] + 50.0),
            (ty as f64 * TILE + j0 as f64 * CELL + 50.0).max(level.lo[1] + 50.0),
        ];
        let hi = [
            (tx as f64 * TILE + (i0 + w) as f64 * CELL - 50.0).min(level.hi[0] - 50.0),
            (ty as f64 * TILE + (j0 + h) as f64 * CELL - 50.0).min(level.hi[1] - 50.0),
        ];
        if lo[0] >= hi[0] || lo[1] >= hi[1] {
            continue;
        }
        for _ in 0..n {
            let agent = rng.pick(&[
                CAPSULE_AGENTS[0],
                CAPSULE_AGENTS[1],
                CAPSULE_AGENTS[2],
                AGENTS[4],
                AGENTS[5],
            ]);
            let (x, y) = (rng.range(lo[0], hi[0]), rng.range(lo[1], hi[1]));
            let len = rng.range(0.5, 30.0);
            let lift = 10.0;
            if lift - slope * len < 1.0 {
                continue;
            }
            let dir = rng.range(0.0, TAU);
            let pos = [
                x,
                y,
                level.g.rest_bottom(x, y, agent.radius_cm) + lift + agent.half_height_cm,
            ];
            let delta = [len * dir.cos(), len * dir.sin()];
            asked += 1;
            if surface.sweep_certified_clear(pos, delta, agent) {
                ok += 1;
            } else if missed.len() < 4 {
                missed.push(format!(
                    "tile ({tx}, {ty}) rect {:?}: sweep pos {pos:?} delta {delta:?} R {} not certified",
                    [i0, j0, w, h],
                    agent.radius_cm
                ));
            }
        }
    }
    (ok, asked, missed)
}

/// Every query on `surface` (its certificates and full path) against the
/// oracle.
fn ask_all(surface: &Surface, oracle: &Oracle, q: &Queries) -> [Tally; 3] {
    use walksurf::FloorMode;
    let mut out: [Tally; 3] = Default::default();
    for f in &q.caps {
        let shape = agent_shape(f.agent);
        let ours = surface.find_floor(f.pos, f.down_cm, f.agent, FloorMode::Capsule);
        let truth = oracle.find_floor_capsule(f.pos, shape, f.down_cm);
        let t = &mut out[0];
        t.count(ours);
        t.judge(compare_capsule_floor(f, ours, truth), |why| {
            format!(
                "capsule pos {:?} down {} agent (R {}, H {}); oracle {truth:?}: {why}",
                f.pos, f.down_cm, f.agent.radius_cm, f.agent.half_height_cm
            )
        });
    }
    for f in &q.lines {
        let hh = f.agent.half_height_cm;
        let ours = surface.find_floor(f.pos, f.down_cm, f.agent, FloorMode::LineTrace);
        let truth = oracle.find_floor_line(f.pos, hh, f.down_cm);
        let t = &mut out[1];
        t.count(ours);
        t.judge(compare_floor(ours, truth), |why| {
            format!("line pos {:?} down {} H {hh}: {why}", f.pos, f.down_cm)
        });
    }
    for w in &q.sweeps {
        let shape = agent_shape(w.agent);
        let ours = surface.sweep_horizontal(w.pos, w.delta, w.agent);
        let truth = oracle.sweep(w.pos, w.delta, shape);
        let t = &mut out[2];
        t.n += 1;
        match ours {
            walksurf::SweepOutcome::Fallback(r) => *t.fallbacks.entry(r.as_str()).or_default() += 1,
            walksurf::SweepOutcome::Hit(_) => t.floors += 1,
            walksurf::SweepOutcome::Clear => {}
        }
        t.judge(compare_sweep(w, ours, truth), |why| {
            format!(
                "sweep pos {:?} delta {:?} agent (R {}, H {}); oracle {truth:?}: {why}",
                w.pos, w.delta, w.agent.radius_cm, w.agent.half_height_cm
            )
        });
    }
    out
}

/// What one level gave.
#[derive(Default)]
struct Outcome {
    /// Capsule, line, sweep.
    t: [Tally; 3],
    uniform_tiles: usize,
    certified: usize,
    certified_asked: usize,
}

/// Bakes `level`, asks every query (on the Fast path, and on the
/// Reference one too when `reference`), checks its uniform tiles are used;
/// prints a summary.
fn run(level: &Level, q: &Queries, reference: bool, rng: &mut Rng) -> Outcome {
    let (mut surface, oracle) = bake_generated(&level.name, &level.mesh);
    let ([uniform, shared, tiles], uniform_at) = tile_census(&surface);
    let mut out = Outcome {
        uniform_tiles: uniform,
        ..Outcome::default()
    };
    let fast = ask_all(&surface, &oracle, q);
    let (ok, asked, missed) = uniform_certified(rng, &surface, level, &uniform_at, scaled(60));
    out.certified = ok;
    out.certified_asked = asked;
    println!(
        "{} [{}]\n  tiles {tiles}: {shared} with shared lists, {uniform} uniform {uniform_at:?} (quiet {:?}); uniform rectangles' sweeps certified {ok} of {asked}\n  capsule {}\n  line    {}\n  sweep   {}",
        level.name,
        level.what.join("; "),
        level.quiet,
        fast[0].summary(),
        fast[1].summary(),
        fast[2].summary()
    );
    for m in &missed {
        println!("  NOT CERTIFIED {m}");
    }
    let report = |tag: &str, judged: &[Tally; 3], out: &mut Outcome| {
        for e in judged.iter().flat_map(|t| t.errors.iter()).take(8) {
            println!("  WRONG{tag} {e}");
        }
        for (o, t) in out.t.iter_mut().zip(judged) {
            o.merge(t);
        }
    };
    report("", &fast, &mut out);
    if reference {
        surface.set_precision_path(PrecisionPath::Reference);
        let r = ask_all(&surface, &oracle, q);
        println!(
            "  reference: errors {} / {} / {} (answered {:.2} / {:.2} / {:.2} %)",
            r[0].errors.len(),
            r[1].errors.len(),
            r[2].errors.len(),
            r[0].answered_pct(),
            r[1].answered_pct(),
            r[2].answered_pct()
        );
        report(" (reference)", &r, &mut out);
    }
    out
}

/// Totals over levels.
#[derive(Default)]
struct Totals {
    t: [Tally; 3],
    uniform_tiles: usize,
    certified: usize,
    certified_asked: usize,
}

impl Totals {
    fn add(&mut self, o: &Outcome) {
        for (mine, other) in self.t.iter_mut().zip(&o.t) {
            mine.merge(other);
        }
        self.uniform_tiles += o.uniform_tiles;
        self.certified += o.certified;
        self.certified_asked += o.certified_asked;
    }

    /// Prints the totals; asserts no disagreement, that uniform tiles were
    /// met (`want_uniform`) and all their interior sweeps certified.
    #[track_caller]
    fn finish(&self, what: &str, want_uniform: bool) {
        let names = ["capsule", "line", "sweep"];
        for (t, name) in self.t.iter().zip(names) {
            println!("{what} total {name}: {}", t.summary());
        }
        println!(
            "{what}: {} uniform tiles, their sweeps certified {} of {}",
            self.uniform_tiles, self.certified, self.certified_asked
        );
        for (t, name) in self.t.iter().zip(names) {
            t.assert_no_errors(&format!("{what} ({name})"));
        }
        for (t, name) in self.t.iter().zip(names) {
            assert!(
                t.answered_pct() > 50.0,
                "{what}: {name} answered {:.2} %",
                t.answered_pct()
            );
        }
        if want_uniform {
            assert!(self.uniform_tiles > 0, "{what}: no uniform tile was baked");
            assert!(self.certified_asked > 0, "{what}: no uniform tile's interior was asked");
        }
        assert_eq!(
            self.certified, self.certified_asked,
            "{what}: sweeps over uniform tiles' interiors not certified"
        );
    }
}

fn seeds() -> std::ops::Range<u64> {
    let first = knob("OW14_FIRST", 0);
    first..first + knob("OW14_SEEDS", 24)
}

// ---------------------------------------------------------------------------
// Tests.

/// Open ground of one or two huge triangles or a grid of small ones, flat
/// or tilted, at the origin, at negative tiles and far out, with scattered
/// obstacles (some tiles kept free of them) and holes.
#[test]
fn open_grounds_with_scattered_obstacles() {
    fuzz("open_grounds_with_scattered_obstacles", 1, open_level, true);
}

/// Every seed's level from `make`, its queries (generator stream
/// `stream`), the Reference path on every other one; `uniform`: some tile
/// must be stored uniform.
fn fuzz(name: &str, stream: u64, make: fn(u64) -> Level, uniform: bool) {
    let mut totals = Totals::default();
    for seed in seeds() {
        let level = make(seed);
        let mut rng = Rng::seeded(0x0E0E_0014_0000_0000 | stream, seed);
        let q = level_queries(&mut rng, &level, scaled(400));
        totals.add(&run(&level, &q, seed % 2 == stream % 2, &mut rng));
    }
    totals.finish(name, uniform);
}

/// Patchwork grounds: T-junctions whose vertices step off the coarse edge
/// by up to 0.01 cm, slits of unwelded vertices, coarse edges 1600–6400 cm
/// long crossing tile lines (their seams found only near each tile), holes,
/// with scattered obstacles.
#[test]
fn patchwork_grounds_with_seams() {
    fuzz("patchwork_grounds_with_seams", 2, seam_level, false);
}

/// A deterministic open world far out at negative tiles: a tilted
/// two-triangle ground over 3 × 3 tiles whose middle tile is left empty
/// (it must be stored uniform) while each neighbour has an obstacle near
/// (but beyond the reach of) the shared tile line, on a cell or quarter
/// line; every answer agrees, the middle tile's sweeps are certified, its
/// neighbours are not uniform.
#[test]
fn far_negative_uniform_tile_among_busy_ones() {
    let corner = [-314, -313];
    let (x0, y0) = (corner[0] as f64 * TILE, corner[1] as f64 * TILE);
    let g = Ground {
        o: [x0, y0],
        a: 0.013,
        b: -0.021,
        c: 40.0,
    };
    let (lo, hi) = (
        [x0 - 300.0, y0 - 300.0],
        [x0 + 3.0 * TILE + 300.0, y0 + 3.0 * TILE + 300.0],
    );
    let mut lb = LevelBuilder::new();
    two_triangles(&mut lb, &g, lo, hi, None);
    let mid = (corner[0] + 1, corner[1] + 1);
    let (mx, my) = (mid.0 as f64 * TILE, mid.1 as f64 * TILE);
    let mut spots = Vec::new();
    // West: a thin wall on a cell line, 100 cm out; east: a curb on a
    // quarter line; south: a box; north: a table; a far corner: a ramp.
    let reach = 42.0 + 8.0 + 0.01;
    let west = mx - reach - 60.0;
    let wz = |x: f64, y: f64| g.z(x, y);
    lb.wall(
        [west, my + 400.0],
        [west, my + 1200.0],
        [wz(west, my + 400.0) - 1.0, wz(west, my + 1200.0) - 1.0],
        [wz(west, my + 400.0) + 200.0, wz(west, my + 1200.0) + 200.0],
    );
    spots.push([west, my + 800.0]);
    let east = mx + TILE + reach + 20.0 + 0.5;
    lb.wall(
        [east, my + 2000.0],
        [east, my + 2600.0],
        [wz(east, my + 2000.0) - 1.0, wz(east, my + 2600.0) - 1.0],
        [wz(east, my + 2000.0) + 12.0, wz(east, my + 2600.0) + 12.0],
    );
    spots.push([east, my + 2300.0]);
    let o = Obs {
        kind: 0,
        c: [mx + 1600.0, my - 200.0],
        s: [120.0, 80.0],
        h: 60.0,
        ang: 0.0,
    };
    o.build(&mut lb, &g);
    spots.push(o.c);
    let t = Obs {
        kind: 4,
        c: [mx + 900.0, my + TILE + 240.0],
        s: [90.0, 60.0],
        h: 150.0,
        ang: 0.0,
    };
    t.build(&mut lb, &g);
    spots.push(t.c);
    let r = Obs {
        kind: 6,
        c: [mx + TILE + 400.0, my + TILE + 400.0],
        s: [200.0, 100.0],
        h: 60.0,
        ang: 0.0,
    };
    r.build(&mut lb, &g);
    spots.push(r.c);
    let level = Level {
        mesh: lb.build(),
        spots,
        quiet: vec![mid],
        what: vec![format!("tiles {corner:?} + [3, 3], middle {mid:?} empty")],
        ..Level::empty("far negative uniform".into(), g, lo, hi)
    };
    let baked = walksurf_bake::bake_mesh(
        &level.mesh,
        &walksurf_bake::BakeConfig::default(),
        1,
        &walksurf_bake::Silent,
    )
    .expect("bake");
    let layout = FileView::parse(&baked.bytes).expect("parse");
    let view = FileView::new(&baked.bytes, &layout).expect("view");
    let uniform = |x: i32, y: i32| {
        let hot = view.tile_hot(x, y).expect("tile");
        hot.flags.get() & tile_flags::CERT_LISTS_UNIFORM != 0
    };
    assert!(uniform(mid.0, mid.1), "the empty middle tile stores one entry");
    // (The east one, beside a curb 12 cm high on the tilted plane, has no
    // certificate in its first four columns and the same list in every
    // other cell: uniform too, its rectangle not starting at its corner.)
    for (dx, dy) in [(-1, 0), (0, -1), (0, 1)] {
        assert!(
            !uniform(mid.0 + dx, mid.1 + dy),
            "neighbour ({dx}, {dy}) has an obstacle"
        );
    }
    let mut rng = Rng::seeded(0x0E0E_0014_0000_0003, 0);
    let q = level_queries(&mut rng, &level, scaled(300));
    let mut totals = Totals::default();
    totals.add(&run(&level, &q, true, &mut rng));
    totals.finish("far_negative_uniform_tile_among_busy_ones", true);
}

/// A slit along x = 1600 (a line of the seam search's 200 cm buckets),
/// at the origin and ~1e6 cm out: the right half's vertices on it (not its
/// corners) moved 0.003 cm across it (an overlap or a gap) and 0.0015 cm
/// up or down, the halves welded to a strip below (one flat group). Capsules
/// whose lowest point is up to 0.4 cm beside it, line traces, and sweeps
/// toward it from 0.01 cm above the ground: every answer agrees.
#[test]
fn slit_on_a_bucket_line() {
    let mut total = Tally::default();
    for (o, across, up) in [
        ([0.0, 0.0, 0.0], -0.003, 0.0015),
        ([-1001600.0, 998400.0, 50.0], -0.003, 0.0015),
        ([0.0, 0.0, 0.0], 0.003, 0.0015),
        ([0.0, 0.0, 0.0], -0.003, -0.0015),
    ] {
        let mut lb = LevelBuilder::with_offset(o);
        let q = 400.0;
        for j in 0..4 {
            for i in 0..8 {
                let (x0, y0) = (i as f64 * q, j as f64 * q);
                let c = |x: f64, y: f64| {
                    if i >= 4 && x == 1600.0 && y > 0.0 && y < 1600.0 {
                        [x + across, y, up]
                    } else {
                        [x, y, 0.0]
                    }
                };
                lb.quad(
                    [c(x0, y0), c(x0 + q, y0), c(x0 + q, y0 + q), c(x0, y0 + q)],
                    Winding::Up,
                );
            }
            lb.floor(
                [j as f64 * 2.0 * q, (j + 1) as f64 * 2.0 * q],
                [-400.0, 0.0],
                0.0,
                Winding::Up,
            );
        }
        let (surface, oracle) = bake_generated("slit", &lb.build());
        let (mut caps, mut lines, mut sweeps) = (Vec::new(), Vec::new(), Vec::new());
        for agent in [Agent::DEFAULT, AGENTS[5], CAPSULE_AGENTS[2]] {
            let r = agent.radius_cm;
            for k in 0..40 {
                let s = (0.005 + 0.01 * k as f64) * (r / 42.0).sqrt();
                for y in [500.0, 700.0, 800.0, 900.0, 1100.0] {
                    for side in [-1.0, 1.0] {
                        let x = 1600.0 + across.min(0.0) + side * s + if side > 0.0 { across.max(0.0) } else { 0.0 };
                        let pos = [o[0] + x, o[1] + y, o[2] + 5.0 + agent.half_height_cm];
                        caps.push(FloorQuery {
                            pos,
                            down_cm: DEFAULT_FLOOR_DOWN_CM,
                            agent,
                        });
                        lines.push(FloorQuery {
                            pos,
                            down_cm: DEFAULT_FLOOR_DOWN_CM,
                            agent,
                        });
                        sweeps.push(SweepQuery {
                            pos: [pos[0], pos[1], o[2] + 0.01 + agent.half_height_cm],
                            delta: [-side * 3.0, 0.5],
                            agent,
                        });
                    }
                }
            }
        }
        let c = compare_capsule(&surface, &oracle, &caps);
        let l = compare_line(&surface, &oracle, &lines);
        let w = compare_sweep_tally(&surface, &oracle, &sweeps);
        println!(
            "slit at {o:?}, across {across}, up {up}: capsule {} | line {} | sweep {}",
            c.summary(),
            l.summary(),
            w.summary()
        );
        for t in [&c, &l, &w] {
            total.merge(t);
        }
    }
    total.assert_no_errors("slit_on_a_bucket_line");
}

// ---------------------------------------------------------------------------
// The seam bug (found by this review, now fixed; it predated format 2.2
// and the near-tile seam search: the same answers at eb64a22).
//
// A flat group whose triangles meet at a T-junction (or at vertices that
// were not welded) is one surface to the merge. `merge_convex` in
// `walksurf_bake::stage::tiling::build_tile_hashed` used to join all its
// clipped triangles into convex pieces without regard to the group's
// seams (`rough_seams`), so a seam could lie INSIDE a piece, where the
// bake's clearing of interior-edge bits did nothing; certificates kept
// away from it (treating it as a wall, correctly), but the full path of
// `find_floor` (`find_floor_capsule`: a face contact `Side::Inside` a
// piece is pushed with the plane's normal and `PIECE_NORMAL_ERR`, its
// edges not read; `find_floor_line`: a point `Side::Inside` is on the
// plane) assumes the surface inside a piece is the plane within `z_err`:
// * where the two sides step by h (here 0.0005–0.0015 cm, within the
//   coplanar tolerance 0.002; 1e-4 cm, the f32 rounding of metre-scale
//   coordinates, was enough for the default agent), a sphere whose lowest
//   point lies within √(2·R·h) of the seam touches the higher side's edge
//   first: the true normal leans by up to √(2h/R) (0.0085 for R = 42,
//   h = 0.0015), the runtime answered the plane's normal;
// * where they part by less than the fixed-point step (1/1024 cm; here
//   1e-4, and 1e-6 too, against the 1e-7 the bake treats as continuous),
//   the pieces' edges rounded onto one line and were merged: a line trace
//   into the crack answered the ground, where the oracle finds nothing (or
//   the floor below).
//
// The fix: `rough_seams` returns `Seams { quads, triangles }`, and the
// triangles along a seam are stored exact, as blockers, instead of being
// merged into pieces. The two tests below guard it.

/// A coarse quad `[0, 800]²` beside four quads of `[800, 1600] × [0, 800]`
/// whose vertex `(800, 400)` on the shared edge (a T-junction) is moved by
/// `(dx, 0, dz)`, all welded to a strip below them (one flat group; the
/// bake used to merge it into one piece).
fn t_junction_level(dx: f64, dz: f64) -> Mesh {
    let mut lb = LevelBuilder::new();
    lb.floor([0.0, 800.0], [0.0, 800.0], 0.0, Winding::Up);
    let m = [800.0 + dx, 400.0, dz];
    for (x0, y0) in [(800.0, 0.0), (1200.0, 0.0), (800.0, 400.0), (1200.0, 400.0)] {
        let c = |x: f64, y: f64| if (x, y) == (800.0, 400.0) { m } else { [x, y, 0.0] };
        lb.quad(
            [
                c(x0, y0),
                c(x0 + 400.0, y0),
                c(x0 + 400.0, y0 + 400.0),
                c(x0, y0 + 400.0),
            ],
            Winding::Up,
        );
    }
    for (x0, x1) in [(0.0, 800.0), (800.0, 1200.0), (1200.0, 1600.0)] {
        lb.floor([x0, x1], [-400.0, 0.0], 0.0, Winding::Up);
    }
    lb.build()
}

/// The default agent standing 5 cm over flat ground, 0.045 cm beside a
/// T-junction whose vertex is 0.0015 cm low: it lands on the coarse quad's
/// edge (normal x 0.00107, oracle). Before the fix the runtime said the
/// plane's normal (0, 0, 1) (about 150 of 180 such queries, and as many
/// for R = 1 and steps of 0.0005–0.001 cm; a step of 1e-4 cm: half of
/// 200); now the seam's triangles are exact blockers and every answer
/// agrees.
#[test]
fn stepped_t_junction_inside_one_piece() {
    let (surface, oracle) = bake_generated("stepped T-junction", &t_junction_level(0.0, -0.0015));
    let mut queries = Vec::new();
    for agent in [Agent::DEFAULT, AGENTS[5]] {
        for i in 0..60 {
            let s = 0.005 * i as f64 * agent.radius_cm / 42.0;
            for dy in [0.0, 5.0, 50.0] {
                queries.push(FloorQuery {
                    pos: [800.0 + s, 400.0 + dy, 5.0 + agent.half_height_cm],
                    down_cm: DEFAULT_FLOOR_DOWN_CM,
                    agent,
                });
            }
        }
    }
    // (The smallest that failed: pos [800.045, 400, 101], R 42, H 96,
    // down 47.4.)
    let t = compare_capsule(&surface, &oracle, &queries);
    println!("stepped T-junction: {}", t.summary());
    t.assert_no_errors("stepped_t_junction_inside_one_piece");
}

/// A line trace 5 cm over flat ground into a crack 1e-4 cm wide at a
/// T-junction (the vertex moved away from the coarse quad): the oracle
/// finds nothing below. Before the fix the runtime found the ground
/// (floor_dist 5); now the seam's triangles are exact blockers and every
/// answer agrees.
#[test]
fn sub_quantum_crack_inside_one_piece() {
    let (surface, oracle) = bake_generated("crack", &t_junction_level(1e-4, 0.0));
    // (The smallest that failed: pos [800.00005, 400, 101], H 96,
    // down 47.4.)
    let queries: Vec<FloorQuery> = (0..20)
        .flat_map(|i| {
            let x = 800.0 + 1e-4 * (i as f64 + 0.5) / 20.0;
            [0.0, 5.0, 50.0].map(|dy| FloorQuery::new([x, 400.0 + dy, 5.0 + 96.0], DEFAULT_FLOOR_DOWN_CM))
        })
        .collect();
    let t = compare_line(&surface, &oracle, &queries);
    println!("crack: {}", t.summary());
    t.assert_no_errors("sub_quantum_crack_inside_one_piece");
}
