//! Warm vs cold queries, and `Surface::open`, on a generated level of at
//! least 200 MiB (issue 7, item 4).
//!
//! The level: copies of `testdata/dungeon.obj` on an n × n grid in X/Y,
//! 200 cm apart, as one mesh, baked in-process with the default settings on
//! every core. n is picked from the size of one copy's bake so that the
//! file is ≥ 200 MiB (n grows until it is). The file is cached under
//! `target/walksurf-bench/` (its name has n, `TILE_PIPELINE_VERSION` and a
//! hash of the one-copy bake, so a changed pipeline bakes a new one) and
//! baked only when missing. Under `cargo test --benches` (no `--bench`) a
//! 2 × 2 grid is used instead, to keep that check fast.
//!
//! Measured, after criterion:
//!
//! * **open**: `Surface::open` (mmap and validation of the header, sections,
//!   tile index and hot records; no tile data, no checksum), the median of
//!   many opens, with the minor page faults of one open (Linux:
//!   `/proc/self/stat`) to show how little of the file it touches; and
//!   `Surface::open_verified` (checksums every section) twice, for contrast.
//! * **queries**: the oracle's ground corpus (seed 1, 2000 queries) is drawn
//!   on one copy of the dungeon. *warm*: those queries in the centre copy,
//!   grouped by tile, repeated. *shuffled*: the same queries in a random
//!   order (one copy still fits in the caches: the cost of the order
//!   alone). *cold*: 50 000 draws of (random corpus query, random copy)
//!   from a seeded generator, so consecutive queries land in random tiles across
//!   the whole file: the working set is far beyond the CPU caches (and the
//!   TLB). "Cold" means CPU-cache-cold: the file is in the OS page cache
//!   (the bake wrote it, `open_verified` read it) and the mapping's page
//!   tables are filled after the first pass. *first touch*: one pass over
//!   the cold batch right after a fresh `open`, pages faulting into the new
//!   mapping as queries first touch them (minor faults; the file is not
//!   evicted from the page cache — that would need root).
//!   Query kinds: capsule `find_floor` (down 47.4 cm, agent R 42 H 96),
//!   line-trace `find_floor`, `sweep_horizontal` by 33.33 cm in the corpus
//!   step's direction; against parry3d f32 on one `TriMesh` of the whole
//!   level (in f32 around its bounding-box centre): a capsule cast down or
//!   sideways as in `shared_levels.rs`, a ray cast down as in
//!   `find_floor.rs`.
//!
//! Untimed, every answer is checked against the exact oracle of one copy
//! (the copies are 200 cm apart, further than any query reaches, so a
//! shifted query's exact answer is the unshifted one's).
//!
//! `cargo bench -p walksurf-runtime --bench cold -- --quick`

mod common;

use common::{Accuracy, Answer, OFF_CM, Parry, agent_shape, bbox, ground_corpus, ns_per_query, to_local};
use criterion::{BenchmarkId, Criterion, black_box};
use parry3d::math::{Point, Vector};
use parry3d::query::{Ray, RayCast};
use parry3d::shape::TriMesh;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use walksurf::{Agent, DEFAULT_FLOOR_DOWN_CM, FloorMode, Surface};
use walksurf_bake::stage::ingest::Mesh;
use walksurf_bake::stage::tiling::TILE_PIPELINE_VERSION;
use walksurf_bake::{BakeConfig, Silent};
use walksurf_oracle::Oracle;
use walksurf_oracle::corpus::Rng;

const DUNGEON: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/dungeon.obj");
const WORKSPACE_TARGET: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../target");

/// Smallest file wanted under `cargo bench`. [Units: bytes]
const TARGET_BYTES: usize = 200 << 20;
/// Grid side under `cargo test --benches`.
const TEST_GRID: usize = 2;
/// Slack on the per-copy size when picking the grid.
const SIZE_MARGIN: f64 = 1.03;
/// Free space between neighbouring copies. [Units: cm]
const GAP_CM: f64 = 200.0;

/// Cold batch: draws of (corpus query, copy), and their seed.
const COLD_QUERIES: usize = 50_000;
const COLD_SEED: u64 = 0x5EED_C01D;
/// Horizontal sweep: two 60 Hz frames at 1000 cm/s.
const SWEEP_CM: f64 = 33.33;
/// The line trace's window starts this far above the capsule bottom.
const LINE_ABOVE_CM: f64 = 2.0;

/// Timed passes (median taken): warm, at least this many for at least this
/// long; cold, this many (a pass is 50 000 queries already).
const WARM_PASSES: usize = 7;
const WARM_PASS_TIME: Duration = Duration::from_millis(400);
const QUICK_WARM_PASSES: usize = 5;
const QUICK_WARM_PASS_TIME: Duration = Duration::from_millis(150);
const COLD_PASSES: usize = 5;
const QUICK_COLD_PASSES: usize = 3;
/// The memory-latency probe: a random cycle through this many bytes (about
/// the level's size), and how many of its dependent loads are timed.
const CHASE_BYTES: usize = 256 << 20;
const CHASE_LOADS: usize = 2_000_000;

/// `Surface::open` timings: at least this many, for at least this long.
const OPENS: usize = 200;
const OPEN_TIME: Duration = Duration::from_millis(500);

const AGENT: Agent = Agent::DEFAULT;

/// FNV-1a, 64 bits: names the cache file after the one-copy bake.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xCBF2_9CE4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

/// Minor page faults of this process so far (Linux; `None` elsewhere).
fn minor_faults() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name: state ppid pgrp session tty_nr tpgid
    // flags minflt …
    stat.rsplit_once(')')?.1.split_whitespace().nth(7)?.parse().ok()
}

/// This process's resident set, KiB (Linux; `None` elsewhere).
fn rss_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// `grid × grid` copies of `one`, `pitch` apart; copy `c` is at
/// `offsets[c]` from `one`.
fn replicate(one: &Mesh, grid: usize, pitch: [f64; 2]) -> (Mesh, Vec<[f64; 3]>) {
    let offsets: Vec<[f64; 3]> = (0..grid * grid)
        .map(|c| [(c % grid) as f64 * pitch[0], (c / grid) as f64 * pitch[1], 0.0])
        .collect();
    let n = offsets.len();
    let mut mesh = Mesh {
        vertices: Vec::with_capacity(one.vertices.len() * n),
        triangles: Vec::with_capacity(one.triangles.len() * n),
        walkable_allowed: Vec::with_capacity(one.walkable_allowed.len() * n),
    };
    for o in &offsets {
        let base = u32::try_from(mesh.vertices.len()).expect("generated level: more than 2^32 vertices");
        mesh.vertices
            .extend(one.vertices.iter().map(|v| [v[0] + o[0], v[1] + o[1], v[2] + o[2]]));
        mesh.triangles.extend(one.triangles.iter().map(|t| t.map(|i| i + base)));
        mesh.walkable_allowed.extend_from_slice(&one.walkable_allowed);
    }
    (mesh, offsets)
}

/// Where the generated files go.
fn cache_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| PathBuf::from(WORKSPACE_TARGET), PathBuf::from)
        .join("walksurf-bench")
}

/// The generated level: the file, the single copy's oracle, parry's mesh.
struct Level {
    path: PathBuf,
    grid: usize,
    file_bytes: usize,
    triangles: usize,
    /// Size of the level's bounding box in X and Y. [Units: m]
    extent_m: [f64; 2],
    one_copy_bytes: usize,
    /// Seconds the bake of the whole level took (`None`: cached file).
    bake_s: Option<f64>,
    parry_build_s: f64,
    /// Resident set growth while building parry's `TriMesh`, KiB.
    parry_rss_kib: Option<u64>,
    surface: Surface,
    /// The exact reference for one copy (copy-local coordinates).
    oracle: Oracle,
    parry: Parry,
    /// parry's frame: world minus this, in f32.
    centre: [f64; 3],
    offsets: Vec<[f64; 3]>,
    /// The corpus (one copy, copy-local) and its unit step directions.
    corpus: Vec<[f64; 3]>,
    dirs: Vec<[f64; 2]>,
}

impl Level {
    fn new(full_size: bool) -> Level {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let config = BakeConfig {
            threads,
            ..BakeConfig::default()
        };
        let (one, _) = walksurf_bake::stage::ingest::ingest(Path::new(DUNGEON), &config)
            .unwrap_or_else(|e| panic!("{DUNGEON}: ingest: {e}"));
        let t = Instant::now();
        let one_baked =
            walksurf_bake::bake_mesh(&one, &config, 1, &Silent).unwrap_or_else(|e| panic!("one dungeon: bake: {e}"));
        let one_copy_bytes = one_baked.bytes.len();
        eprintln!(
            "setup: one dungeon: {} triangles, {one_copy_bytes} bytes baked in {:.2} s",
            one.triangles.len(),
            t.elapsed().as_secs_f64()
        );
        let key = fnv1a(&one_baked.bytes);
        drop(one_baked);

        let (lo, hi) = bbox(&one.vertices);
        let pitch = [hi[0] - lo[0] + GAP_CM, hi[1] - lo[1] + GAP_CM];
        let mut grid = if full_size {
            ((TARGET_BYTES as f64 * SIZE_MARGIN / one_copy_bytes as f64)
                .sqrt()
                .ceil() as usize)
                .max(1)
        } else {
            TEST_GRID
        };
        let dir = cache_dir();
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
        let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
        let name = |g: usize| format!("cold-{g}x{g}-v{TILE_PIPELINE_VERSION}-{key:016x}.wsurf");
        let min_bytes = if full_size { TARGET_BYTES } else { 0 };

        // A cached file of this grid (or of a grown one), if it opens.
        let cached = (grid..grid + 3).find(|&g| {
            let p = dir.join(name(g));
            std::fs::metadata(&p).is_ok_and(|m| m.len() as usize >= min_bytes) && Surface::open(&p).is_ok()
        });
        let mut bake_s = None;
        let (mesh, offsets) = if let Some(g) = cached {
            grid = g;
            eprintln!("setup: reusing {}", dir.join(name(g)).display());
            replicate(&one, grid, pitch)
        } else {
            loop {
                let (mesh, offsets) = replicate(&one, grid, pitch);
                eprintln!(
                    "setup: baking {grid}×{grid} dungeons ({} triangles) on {threads} threads…",
                    mesh.triangles.len()
                );
                let t = Instant::now();
                let baked = walksurf_bake::bake_mesh(&mesh, &config, 1, &Silent)
                    .unwrap_or_else(|e| panic!("{grid}×{grid} dungeons: bake: {e}"));
                let secs = t.elapsed().as_secs_f64();
                eprintln!("setup: baked {} bytes in {secs:.1} s", baked.bytes.len());
                if baked.bytes.len() < min_bytes {
                    grid += 1;
                    continue;
                }
                let path = dir.join(name(grid));
                let tmp = path.with_extension("wsurf.tmp");
                std::fs::write(&tmp, &baked.bytes).unwrap_or_else(|e| panic!("writing {}: {e}", tmp.display()));
                std::fs::rename(&tmp, &path).unwrap_or_else(|e| panic!("renaming to {}: {e}", path.display()));
                // Levels of an older pipeline (and their leftovers) are dead weight.
                let current = format!("{key:016x}");
                for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                    let n = entry.file_name().to_string_lossy().into_owned();
                    if n.starts_with("cold-") && !n.contains(&current) {
                        let _ = std::fs::remove_file(entry.path());
                    }
                }
                bake_s = Some(secs);
                break (mesh, offsets);
            }
        };
        let path = dir.join(name(grid));
        let surface = Surface::open(&path).unwrap_or_else(|e| panic!("open: {e}"));
        let file_bytes = surface.bytes().len();

        let oracle =
            Oracle::new(&one.vertices, &one.triangles).unwrap_or_else(|e| panic!("one dungeon: oracle: {e:?}"));
        let ground = ground_corpus("one dungeon", &oracle, &one, config.walkable_normal_z);
        let corpus = ground.iter().map(|q| q.pos).collect();
        let dirs = ground
            .iter()
            .map(|q| {
                let l = q.delta_xy[0].hypot(q.delta_xy[1]);
                [q.delta_xy[0] / l, q.delta_xy[1] / l]
            })
            .collect();

        // f32 parry wants coordinates near the origin: the bbox centre.
        let (lo, hi) = bbox(&mesh.vertices);
        let centre: [f64; 3] = std::array::from_fn(|k| 0.5 * (lo[k] + hi[k]));
        let rss = rss_kib("VmRSS:");
        let t = Instant::now();
        let local = mesh.vertices.iter().map(|p| to_local(centre, p)).collect();
        let trimesh = TriMesh::new(local, mesh.triangles.clone());
        let parry_build_s = t.elapsed().as_secs_f64();
        let parry_rss_kib = rss.zip(rss_kib("VmRSS:")).map(|(a, b)| b.saturating_sub(a));
        eprintln!(
            "setup: {grid}×{grid} dungeons, {} triangles, {} tiles, {file_bytes} bytes; parry TriMesh in {parry_build_s:.1} s",
            mesh.triangles.len(),
            surface.tile_count(),
        );
        Level {
            path,
            grid,
            file_bytes,
            triangles: mesh.triangles.len(),
            extent_m: [(hi[0] - lo[0]) / 100.0, (hi[1] - lo[1]) / 100.0],
            one_copy_bytes,
            bake_s,
            parry_build_s,
            parry_rss_kib,
            surface,
            oracle,
            parry: Parry::new(trimesh, AGENT),
            centre,
            offsets,
            corpus,
            dirs,
        }
    }
}

/// A batch of queries: corpus queries placed in copies.
struct Batch {
    name: &'static str,
    /// World capsule centres, the same in parry's frame, step directions,
    /// and the corpus query each one is (for the oracle's answer).
    world: Vec<[f64; 3]>,
    local: Vec<Point<f32>>,
    dirs: Vec<[f64; 2]>,
    source: Vec<usize>,
}

impl Batch {
    fn new(name: &'static str, lv: &Level, picks: impl Iterator<Item = (usize, usize)>) -> Batch {
        let mut b = Batch {
            name,
            world: Vec::new(),
            local: Vec::new(),
            dirs: Vec::new(),
            source: Vec::new(),
        };
        for (q, c) in picks {
            let (p, o) = (lv.corpus[q], lv.offsets[c]);
            let w = [p[0] + o[0], p[1] + o[1], p[2] + o[2]];
            b.world.push(w);
            b.local.push(to_local(lv.centre, &w));
            b.dirs.push(lv.dirs[q]);
            b.source.push(q);
        }
        b
    }

    /// The corpus in the centre copy, grouped by tile (corpus order within
    /// a tile), as an agent's consecutive queries are.
    fn warm(lv: &Level) -> Batch {
        let c = (lv.grid / 2) * lv.grid + lv.grid / 2;
        let tile = |q: &usize| {
            let t = walksurf_format::TILE_SIZE_CM;
            let (p, o) = (lv.corpus[*q], lv.offsets[c]);
            (((p[1] + o[1]) / t).floor() as i64, ((p[0] + o[0]) / t).floor() as i64)
        };
        let mut order: Vec<usize> = (0..lv.corpus.len()).collect();
        order.sort_by_key(tile);
        Batch::new("warm", lv, order.into_iter().map(|q| (q, c)))
    }

    /// The same queries as [`Batch::warm`] in a random order: one copy's
    /// data (~1 MiB) fits in the caches, but consecutive queries are in
    /// unrelated places. Separates the cost of the order from that of the
    /// 200 MiB working set.
    fn shuffled(lv: &Level) -> Batch {
        let c = (lv.grid / 2) * lv.grid + lv.grid / 2;
        let mut rng = Rng::new(COLD_SEED ^ 1);
        let mut order: Vec<usize> = (0..lv.corpus.len()).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
        Batch::new("shuffled", lv, order.into_iter().map(|q| (q, c)))
    }

    /// Random corpus queries in random copies.
    fn cold(lv: &Level) -> Batch {
        let mut rng = Rng::new(COLD_SEED);
        let (m, copies) = (lv.corpus.len(), lv.offsets.len());
        Batch::new("cold", lv, (0..COLD_QUERIES).map(|_| (rng.below(m), rng.below(copies))))
    }

    fn n(&self) -> usize {
        self.world.len()
    }
}

/// A query kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    CapsuleFloor,
    LineFloor,
    Sweep,
}

impl Kind {
    const ALL: [Kind; 3] = [Kind::CapsuleFloor, Kind::LineFloor, Kind::Sweep];

    fn name(self) -> String {
        match self {
            Kind::CapsuleFloor => "capsule find_floor".to_owned(),
            Kind::LineFloor => "line-trace find_floor".to_owned(),
            Kind::Sweep => format!("sweep {SWEEP_CM} cm"),
        }
    }

    fn id(self) -> &'static str {
        match self {
            Kind::CapsuleFloor => "capsule_find_floor",
            Kind::LineFloor => "line_find_floor",
            Kind::Sweep => "sweep_33cm",
        }
    }

    fn parry_name(self) -> &'static str {
        match self {
            Kind::LineFloor => "parry3d f32 ray cast",
            _ => "parry3d f32 capsule cast",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Peer {
    Walksurf,
    Parry,
}

impl Peer {
    fn id(self) -> &'static str {
        match self {
            Peer::Walksurf => "walksurf",
            Peer::Parry => "parry3d",
        }
    }
}

#[inline]
fn walksurf(surface: &Surface, b: &Batch, kind: Kind, i: usize) -> Answer {
    let pos = b.world[i];
    let floor = |mode| Answer::from(black_box(surface.find_floor(pos, DEFAULT_FLOOR_DOWN_CM, AGENT, mode)));
    match kind {
        Kind::CapsuleFloor => floor(FloorMode::Capsule),
        Kind::LineFloor => floor(FloorMode::LineTrace),
        Kind::Sweep => {
            let d = [b.dirs[i][0] * SWEEP_CM, b.dirs[i][1] * SWEEP_CM];
            Answer::from(black_box(surface.sweep_horizontal(pos, d, AGENT)))
        }
    }
}

#[inline]
fn parry(lv: &Level, b: &Batch, kind: Kind, i: usize) -> Answer {
    let p = b.local[i];
    match kind {
        Kind::LineFloor => {
            let h = AGENT.half_height_cm as f32;
            let ray = Ray::new(Point::new(p.x, p.y, p.z - h + LINE_ABOVE_CM as f32), -Vector::z());
            let max = (DEFAULT_FLOOR_DOWN_CM + LINE_ABOVE_CM) as f32;
            match black_box(lv.parry.trimesh.cast_local_ray_and_get_normal(&ray, max, true)) {
                Some(hit) => Answer::At(hit.time_of_impact as f64 - LINE_ABOVE_CM),
                None => Answer::Nothing,
            }
        }
        Kind::CapsuleFloor => lv.parry.floor(p),
        Kind::Sweep => lv.parry.sweep(p, [b.dirs[i][0] * SWEEP_CM, b.dirs[i][1] * SWEEP_CM]),
    }
}

/// The exact answer to corpus query `q` in its own copy.
fn oracle(lv: &Level, kind: Kind, q: usize) -> Answer {
    let agent = agent_shape(AGENT);
    let pos = lv.corpus[q];
    match kind {
        Kind::CapsuleFloor => lv.oracle.find_floor_capsule(pos, agent, DEFAULT_FLOOR_DOWN_CM).into(),
        Kind::LineFloor => lv
            .oracle
            .find_floor_line(pos, AGENT.half_height_cm, DEFAULT_FLOOR_DOWN_CM)
            .into(),
        Kind::Sweep => {
            let d = [lv.dirs[q][0] * SWEEP_CM, lv.dirs[q][1] * SWEEP_CM];
            lv.oracle.sweep(pos, d, agent).into()
        }
    }
}

/// The whole batch; returns the number of Fallbacks (so the work is used).
fn batch(lv: &Level, surface: &Surface, b: &Batch, kind: Kind, peer: Peer) -> usize {
    let mut fallbacks = 0;
    for i in 0..b.n() {
        let i = black_box(i);
        let a = match peer {
            Peer::Walksurf => walksurf(surface, b, kind, i),
            Peer::Parry => parry(lv, b, kind, i),
        };
        fallbacks += usize::from(a == Answer::Fallback);
    }
    fallbacks
}

fn bench(c: &mut Criterion, lv: &Level, batches: &[Batch]) {
    for kind in Kind::ALL {
        let mut group = c.benchmark_group(format!("cold/{}", kind.id()));
        group.sample_size(10);
        group.warm_up_time(Duration::from_millis(200));
        group.measurement_time(Duration::from_secs(1));
        for b in batches {
            for peer in [Peer::Walksurf, Peer::Parry] {
                // One query per iteration, walking the batch cyclically.
                let mut i = 0;
                group.bench_function(BenchmarkId::new(peer.id(), b.name), |bench| {
                    bench.iter(|| {
                        i = if i + 1 == b.n() { 0 } else { i + 1 };
                        match peer {
                            Peer::Walksurf => walksurf(&lv.surface, b, kind, black_box(i)),
                            Peer::Parry => parry(lv, b, kind, black_box(i)),
                        }
                    })
                });
            }
        }
        group.finish();
    }
}

/// `Surface::open` timings.
struct OpenTimes {
    opens: usize,
    median_us: f64,
    p10_us: f64,
    p90_us: f64,
    /// Minor page faults of one open (after many: steady state).
    faults: Option<u64>,
    verified_ms: [f64; 2],
}

fn time_open(path: &Path) -> OpenTimes {
    let mut verified_ms = [0.0; 2];
    for v in &mut verified_ms {
        let t = Instant::now();
        let s = Surface::open_verified(path).unwrap_or_else(|e| panic!("open_verified: {e}"));
        *v = t.elapsed().as_secs_f64() * 1e3;
        black_box(s);
    }
    let mut us = Vec::new();
    let start = Instant::now();
    while us.len() < OPENS || start.elapsed() < OPEN_TIME {
        let t = Instant::now();
        let s = Surface::open(black_box(path)).unwrap_or_else(|e| panic!("open: {e}"));
        us.push(t.elapsed().as_secs_f64() * 1e6);
        drop(black_box(s));
    }
    let before = minor_faults();
    let s = Surface::open(path).unwrap_or_else(|e| panic!("open: {e}"));
    let faults = before.zip(minor_faults()).map(|(a, b)| b.saturating_sub(a));
    drop(black_box(s));
    us.sort_by(f64::total_cmp);
    let at = |f: f64| us[((us.len() - 1) as f64 * f) as usize];
    OpenTimes {
        opens: us.len(),
        median_us: at(0.5),
        p10_us: at(0.1),
        p90_us: at(0.9),
        faults,
        verified_ms,
    }
}

/// One pass over `b` right after a fresh `open`: ns/query and the minor
/// page faults of the pass.
fn first_touch(lv: &Level, b: &Batch, kind: Kind) -> (f64, Option<u64>) {
    let surface = Surface::open(&lv.path).unwrap_or_else(|e| panic!("open: {e}"));
    let before = minor_faults();
    let t = Instant::now();
    black_box(batch(lv, &surface, b, kind, Peer::Walksurf));
    let ns = t.elapsed().as_nanos() as f64 / b.n() as f64;
    let faults = before.zip(minor_faults()).map(|(a, f)| f.saturating_sub(a));
    (ns, faults)
}

/// One row of the query table.
struct Row {
    batch: &'static str,
    kind: Kind,
    walksurf_ns: f64,
    parry_ns: f64,
    acc: Accuracy,
}

fn measure(lv: &Level, b: &Batch, kind: Kind, truth: &[Answer], quick: bool) -> Row {
    let mut acc = Accuracy::default();
    for i in 0..b.n() {
        acc.add(
            truth[b.source[i]],
            walksurf(&lv.surface, b, kind, i),
            parry(lv, b, kind, i),
        );
    }
    let (passes, time) = match (b.name, quick) {
        ("cold", false) => (COLD_PASSES, Duration::ZERO),
        ("cold", true) => (QUICK_COLD_PASSES, Duration::ZERO),
        (_, false) => (WARM_PASSES, WARM_PASS_TIME),
        (_, true) => (QUICK_WARM_PASSES, QUICK_WARM_PASS_TIME),
    };
    // Median ns per query over timed passes.
    let ns = |peer| ns_per_query(b.n(), passes, time, || batch(lv, &lv.surface, black_box(b), kind, peer));
    Row {
        batch: b.name,
        kind,
        walksurf_ns: ns(Peer::Walksurf),
        parry_ns: ns(Peer::Parry),
        acc,
    }
}

/// This machine's latency of one dependent load from a random cache line
/// of [`CHASE_BYTES`] (page walk included), in ns: the unit a cold query
/// pays per serial miss. A random cyclic permutation of the lines
/// (Sattolo), each holding the index of the next; the best of three
/// chases.
fn load_latency_ns() -> f64 {
    let lines = CHASE_BYTES / 64;
    let mut next: Vec<u32> = (0..lines as u32).collect();
    let mut rng = Rng::new(COLD_SEED ^ 2);
    for i in (1..lines).rev() {
        next.swap(i, rng.below(i));
    }
    let mut mem = vec![[0u64; 8]; lines];
    for (line, &n) in mem.iter_mut().zip(&next) {
        line[0] = u64::from(n);
    }
    drop(next);
    (0..3)
        .map(|_| {
            let mut at = 0usize;
            let t = Instant::now();
            for _ in 0..CHASE_LOADS {
                at = mem[at][0] as usize;
            }
            black_box(at);
            t.elapsed().as_nanos() as f64 / CHASE_LOADS as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn summary(lv: &Level, batches: &[Batch], quick: bool) {
    let open = time_open(&lv.path);
    let mib = |b: usize| b as f64 / f64::from(1 << 20);
    println!();
    println!(
        "Generated level: {g}×{g} = {} copies of testdata/dungeon.obj ({:.2} MiB baked alone), {GAP_CM} cm apart, {:.0} × {:.0} m, {} triangles, {} tiles, {} bytes = {:.1} MiB ({})",
        lv.offsets.len(),
        mib(lv.one_copy_bytes),
        lv.extent_m[0],
        lv.extent_m[1],
        lv.triangles,
        lv.surface.tile_count(),
        lv.file_bytes,
        mib(lv.file_bytes),
        lv.path.display(),
        g = lv.grid,
    );
    match lv.bake_s {
        Some(s) => println!("  baked in this run in {s:.1} s"),
        None => println!("  cached file reused (baked by an earlier run)"),
    }
    println!(
        "  parry3d TriMesh of the whole level: built in {:.1} s{}",
        lv.parry_build_s,
        lv.parry_rss_kib
            .map_or_else(String::new, |k| format!(", resident set +{:.0} MiB", k as f64 / 1024.0))
    );
    println!();
    println!("Open ({} opens of the mapped file):", open.opens);
    println!();
    println!("| call | time | notes |");
    println!("|---|--:|---|");
    println!(
        "| `Surface::open` (mmap + header/sections/tile index/hot records, no checksum) | {:.1} µs median (p10 {:.1}, p90 {:.1}) | {} |",
        open.median_us,
        open.p10_us,
        open.p90_us,
        open.faults.map_or_else(
            || "minor faults not measured (no /proc)".to_owned(),
            |f| format!("{f} minor page faults per open")
        )
    );
    println!(
        "| `Surface::open_verified` (checksums every section) | {:.1} ms, then {:.1} ms | first call may include reading the file from disk |",
        open.verified_ms[0], open.verified_ms[1]
    );

    let layout = lv.surface.layout();
    println!();
    println!(
        "`open` reads the header, the section table, the bake parameters, the tile index ({:.1} KiB) and the hot records ({:.1} KiB, 64 B per tile); the tile data section ({:.1} MiB) is not read.",
        layout.index.len() as f64 / 1024.0,
        layout.hot.len() as f64 / 1024.0,
        mib(layout.data.len())
    );

    let cold = batches.iter().find(|b| b.name == "cold").expect("the cold batch");
    println!();
    println!(
        "First touch: one pass over the cold batch ({} queries) right after a fresh `Surface::open` (file in the OS page cache, new mapping: pages fault in):",
        cold.n()
    );
    println!();
    println!("| query | walksurf ns/query | minor page faults in the pass |");
    println!("|---|--:|--:|");
    for kind in Kind::ALL {
        let (ns, faults) = first_touch(lv, cold, kind);
        println!(
            "| {} | {ns:.0} | {} |",
            kind.name(),
            faults.map_or_else(|| "–".to_owned(), |f| f.to_string())
        );
    }

    let mut rows = Vec::new();
    for kind in Kind::ALL {
        let truth: Vec<Answer> = (0..lv.corpus.len()).map(|q| oracle(lv, kind, q)).collect();
        for b in batches {
            rows.push(measure(lv, b, kind, &truth, quick));
        }
    }
    println!();
    println!(
        "Queries (ns/query, median of timed passes). warm: the {} ground queries of the centre copy grouped by tile, repeated; cold: {} random (query, copy) draws over all {} copies, consecutive queries in random tiles — CPU-cache-cold, the file being in the OS page cache. Agent R {} H {}.",
        lv.corpus.len(),
        COLD_QUERIES,
        lv.offsets.len(),
        AGENT.radius_cm,
        AGENT.half_height_cm
    );
    println!();
    println!("| batch | query | walksurf | parry3d f32 | parry peer | parry / walksurf | answered |");
    println!("|---|---|--:|--:|---|--:|--:|");
    for r in &rows {
        println!(
            "| {} | {} | {:.0} | {:.0} | {} | {:.1}× | {:.2}% |",
            r.batch,
            r.kind.name(),
            r.walksurf_ns,
            r.parry_ns,
            r.kind.parry_name(),
            r.parry_ns / r.walksurf_ns,
            r.acc.answered_pct()
        );
    }
    println!();
    println!("Against the exact oracle (of one copy; the same queries):");
    println!();
    println!("| batch | query | walksurf max error | parry off by > {OFF_CM} cm | parry max error |");
    println!("|---|---|--:|--:|--:|");
    for r in &rows {
        println!("| {} | {} | {} |", r.batch, r.kind.name(), r.acc.cells());
    }
    let cold_floor = rows
        .iter()
        .find(|r| r.batch == "cold" && r.kind == Kind::CapsuleFloor)
        .map_or(f64::NAN, |r| r.walksurf_ns);
    let latency = load_latency_ns();
    println!();
    println!(
        "Memory latency in this run: one dependent load from a random line of {} MiB takes {latency:.0} ns; a cold query's time in those units:",
        CHASE_BYTES >> 20
    );
    println!();
    println!("| query | cold walksurf | in dependent loads | cold parry3d f32 | in dependent loads |");
    println!("|---|--:|--:|--:|--:|");
    for r in rows.iter().filter(|r| r.batch == "cold") {
        println!(
            "| {} | {:.0} ns | {:.1} | {:.0} ns | {:.1} |",
            r.kind.name(),
            r.walksurf_ns,
            r.walksurf_ns / latency,
            r.parry_ns,
            r.parry_ns / latency
        );
    }
    println!();
    println!(
        "Issue 7 targets: cold capsule find_floor ≤ 1 µs: {:.0} ns, {}; open in microseconds reading no tile data: {:.1} µs, {}.",
        cold_floor,
        if cold_floor <= 1000.0 { "met" } else { "NOT met" },
        open.median_us,
        if open.median_us < 1000.0 { "met" } else { "NOT met" }
    );
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` does not, and
    // only checks that the bench runs (on a small grid).
    let args: Vec<String> = std::env::args().collect();
    let full = args.iter().any(|a| a == "--bench");
    let lv = Level::new(full);
    let batches = [Batch::warm(&lv), Batch::shuffled(&lv), Batch::cold(&lv)];
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c, &lv, &batches);
    c.final_summary();
    if full {
        summary(&lv, &batches, args.iter().any(|a| a == "--quick"));
    }
}
