//! Capsule `find_floor` and `sweep_horizontal` against parry3d (f32) on
//! three shared levels, in the same run, on the same queries.
//!
//! Levels (`../shared/levels`, PROVENANCE.md): `recast_dungeon.obj`,
//! `navcat_lowpoly__fps__tdm__game__map_by_resoforge.glb` and
//! `navcat_tower-big.glb` (node `navmesh` excluded). When the folder is
//! absent the bench says so and uses `testdata/dungeon.obj` instead.
//!
//! Each level is baked in-process with the default settings (plus its
//! documented exclusions) and the oracle's ground corpus (seed 1, 2000
//! queries: a capsule hovering 2.15 cm over walkable ground) is drawn from
//! it. On those queries:
//!
//! * capsule `find_floor` (down 47.4 cm, agent R 42 H 96): walksurf without
//!   and with a [`QueryCache`], and a parry3d f32 capsule cast down;
//! * `sweep_horizontal` by 16.67 cm and by 33.33 cm (the corpus direction):
//!   walksurf, and a parry3d f32 capsule cast sideways.
//!
//! Every query kind also gets a **net** row: walksurf, and parry for each
//! query walksurf answers with `Fallback` — what a caller using
//! `find_floor_or` / `sweep_horizontal_or` pays — measured, and computed as
//! `(walksurf time + fallbacks × parry time) / n`.
//!
//! The batch is grouped by tile (an agent's consecutive queries stay in its
//! tile, which is what the `QueryCache` is for); every peer answers the
//! same batch in the same order. parry's `TriMesh` holds the same triangles
//! as the bake, in f32 around their bounding-box centre.
//!
//! Untimed, every answer is also checked against the exact oracle: the
//! largest error of walksurf's answers, and how many of parry's are off by
//! more than 0.05 cm (f32 and GJK tolerances) — speed is only half of it.
//!
//! After criterion, a timed loop (median of several passes over the batch)
//! prints ns/query, the ratio parry / peer, and the answered share, as
//! Markdown tables: absolute times on shared machines are noise, ratios
//! measured in the same run much less so.
//!
//! `cargo bench -p walksurf-runtime --bench shared_levels -- --quick`

mod common;

use common::{Accuracy, Answer, OFF_CM, Parry, SEED, agent_shape, bbox, cm, ground_corpus, ns_per_query, to_local};
use criterion::{BenchmarkId, Criterion, Throughput, black_box};
use parry3d::math::Point;
use parry3d::shape::TriMesh;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use walksurf::{Agent, DEFAULT_FLOOR_DOWN_CM, FloorMode, QueryCache, Surface};
use walksurf_bake::{BakeConfig, Silent};
use walksurf_oracle::Oracle;

/// The levels: file, glTF scene, excluded node globs (PROVENANCE.md).
const LEVELS: &[(&str, Option<usize>, &[&str])] = &[
    ("recast_dungeon.obj", None, &[]),
    ("navcat_lowpoly__fps__tdm__game__map_by_resoforge.glb", None, &[]),
    // Node "navmesh" is a reference navmesh, not collision.
    ("navcat_tower-big.glb", None, &["navmesh"]),
];
const BUNDLED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/dungeon.obj");
const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/levels");

/// Horizontal sweep lengths: one and two 60 Hz frames at 1000 cm/s.
const SWEEPS_CM: [f64; 2] = [16.67, 33.33];
/// Timed passes over the batch per peer (median taken): at least this
/// many, for at least this long (shorter with `--quick`).
const PASSES: usize = 7;
const PASS_TIME: Duration = Duration::from_millis(400);
const QUICK_PASSES: usize = 5;
const QUICK_PASS_TIME: Duration = Duration::from_millis(150);
const AGENT: Agent = Agent::DEFAULT;

/// One level, baked, with parry's copy of it and the query batch.
struct Level {
    name: String,
    triangles: usize,
    tiles: usize,
    surface: Surface,
    /// The exact reference, to say who is right when the two differ.
    oracle: Oracle,
    parry: Parry,
    /// Query capsule centres, world cm, and the same in parry's f32 frame.
    world: Vec<[f64; 3]>,
    local: Vec<Point<f32>>,
    /// Unit horizontal directions of the corpus steps.
    dirs: Vec<[f64; 2]>,
}

impl Level {
    fn new(path: &Path, scene: Option<usize>, exclude: &[&str]) -> Level {
        let t = Instant::now();
        let name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let config = BakeConfig {
            scene,
            exclude: exclude.iter().map(|&g| g.to_owned()).collect(),
            ..BakeConfig::default()
        };
        let (mesh, _) =
            walksurf_bake::stage::ingest::ingest(path, &config).unwrap_or_else(|e| panic!("{name}: ingest: {e}"));
        let baked =
            walksurf_bake::bake_mesh(&mesh, &config, 1, &Silent).unwrap_or_else(|e| panic!("{name}: bake: {e}"));
        let surface = Surface::from_bytes(&baked.bytes).unwrap_or_else(|e| panic!("{name}: open: {e}"));
        let oracle = Oracle::new(&mesh.vertices, &mesh.triangles).unwrap_or_else(|e| panic!("{name}: oracle: {e:?}"));
        // Grouped by tile, corpus order within a tile.
        let mut ground = ground_corpus(&name, &oracle, &mesh, config.walkable_normal_z);
        let tile = |p: &[f64; 3]| {
            let t = walksurf_format::TILE_SIZE_CM;
            ((p[1] / t).floor() as i64, (p[0] / t).floor() as i64)
        };
        ground.sort_by_key(|q| tile(&q.pos));
        let world: Vec<[f64; 3]> = ground.iter().map(|q| q.pos).collect();
        let dirs = ground
            .iter()
            .map(|q| {
                let l = (q.delta_xy[0] * q.delta_xy[0] + q.delta_xy[1] * q.delta_xy[1]).sqrt();
                [q.delta_xy[0] / l, q.delta_xy[1] / l]
            })
            .collect();

        // f32 parry wants coordinates near the origin: the bbox centre.
        let (lo, hi) = bbox(&mesh.vertices);
        let centre: [f64; 3] = std::array::from_fn(|k| 0.5 * (lo[k] + hi[k]));
        let to_local = |p: &[f64; 3]| to_local(centre, p);
        let trimesh = TriMesh::new(mesh.vertices.iter().map(to_local).collect(), mesh.triangles.clone());
        let local = world.iter().map(to_local).collect();
        eprintln!(
            "setup: {name}: {} triangles, {} tiles, {} bytes baked, {} ground queries, {:.1} s",
            mesh.triangles.len(),
            surface.tile_count(),
            baked.bytes.len(),
            world.len(),
            t.elapsed().as_secs_f64()
        );
        Level {
            name,
            triangles: mesh.triangles.len(),
            tiles: surface.tile_count(),
            surface,
            oracle,
            parry: Parry::new(trimesh, AGENT),
            world,
            local,
            dirs,
        }
    }

    fn n(&self) -> usize {
        self.world.len()
    }
}

/// The levels to run: the shared ones, or the bundled dungeon.
fn levels() -> Vec<Level> {
    let dir = PathBuf::from(SHARED);
    if !dir.is_dir() {
        eprintln!(
            "notice: {} is absent; benchmarking testdata/dungeon.obj instead of the shared levels",
            dir.display()
        );
        return vec![Level::new(Path::new(BUNDLED), None, &[])];
    }
    LEVELS
        .iter()
        .map(|&(file, scene, exclude)| Level::new(&dir.join(file), scene, exclude))
        .collect()
}

/// A query kind: capsule `find_floor`, or a sweep of some length.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Floor,
    Sweep(f64),
}

impl Kind {
    fn all() -> Vec<Kind> {
        std::iter::once(Kind::Floor).chain(SWEEPS_CM.map(Kind::Sweep)).collect()
    }

    fn title(self) -> String {
        match self {
            Kind::Floor => format!("capsule find_floor, down {DEFAULT_FLOOR_DOWN_CM} cm"),
            Kind::Sweep(len) => format!("sweep_horizontal {len} cm"),
        }
    }

    fn id(self) -> String {
        match self {
            Kind::Floor => "capsule_find_floor".to_owned(),
            Kind::Sweep(len) => format!("sweep_{len}cm"),
        }
    }
}

/// Who answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Peer {
    Walksurf,
    /// With one `QueryCache` over the batch (capsule `find_floor` only:
    /// sweeps only count in it).
    WalksurfCached,
    Parry,
    /// walksurf, and parry for each of its Fallbacks.
    Net,
}

impl Peer {
    fn for_kind(kind: Kind) -> &'static [Peer] {
        match kind {
            Kind::Floor => &[Peer::Walksurf, Peer::WalksurfCached, Peer::Parry, Peer::Net],
            Kind::Sweep(_) => &[Peer::Walksurf, Peer::Parry, Peer::Net],
        }
    }

    fn name(self) -> &'static str {
        match self {
            Peer::Walksurf => "walksurf",
            Peer::WalksurfCached => "walksurf + QueryCache",
            Peer::Parry => "parry3d f32 capsule cast",
            Peer::Net => "net: walksurf, Fallbacks redone by parry",
        }
    }

    fn id(self) -> &'static str {
        match self {
            Peer::Walksurf => "walksurf",
            Peer::WalksurfCached => "walksurf_cached",
            Peer::Parry => "parry3d",
            Peer::Net => "net",
        }
    }
}

/// walksurf's answer to query `i`.
#[inline]
fn walksurf(lv: &Level, kind: Kind, i: usize, cache: Option<&mut QueryCache>) -> Answer {
    match kind {
        Kind::Floor => {
            let (pos, down) = (lv.world[i], DEFAULT_FLOOR_DOWN_CM);
            let o = match cache {
                Some(c) => lv.surface.find_floor_cached(c, pos, down, AGENT, FloorMode::Capsule),
                None => lv.surface.find_floor(pos, down, AGENT, FloorMode::Capsule),
            };
            Answer::from(black_box(o))
        }
        Kind::Sweep(len) => {
            let d = [lv.dirs[i][0] * len, lv.dirs[i][1] * len];
            let o = match cache {
                Some(c) => lv.surface.sweep_horizontal_cached(c, lv.world[i], d, AGENT),
                None => lv.surface.sweep_horizontal(lv.world[i], d, AGENT),
            };
            Answer::from(black_box(o))
        }
    }
}

/// parry's answer to query `i`: the capsule cast down, or sideways.
#[inline]
fn parry(lv: &Level, kind: Kind, i: usize) -> Answer {
    match kind {
        Kind::Floor => lv.parry.floor(lv.local[i]),
        Kind::Sweep(len) => lv.parry.sweep(lv.local[i], [lv.dirs[i][0] * len, lv.dirs[i][1] * len]),
    }
}

/// The exact oracle's answer to query `i` (`Fallback` for a start overlap,
/// which the ground corpus excludes).
fn oracle(lv: &Level, kind: Kind, i: usize) -> Answer {
    let agent = agent_shape(AGENT);
    match kind {
        Kind::Floor => lv
            .oracle
            .find_floor_capsule(lv.world[i], agent, DEFAULT_FLOOR_DOWN_CM)
            .into(),
        Kind::Sweep(len) => {
            let d = [lv.dirs[i][0] * len, lv.dirs[i][1] * len];
            lv.oracle.sweep(lv.world[i], d, agent).into()
        }
    }
}

/// The whole batch; returns how many answers were Fallbacks (so that the
/// work is used).
fn batch(lv: &Level, kind: Kind, peer: Peer) -> usize {
    let mut cache = QueryCache::new();
    let mut fallbacks = 0;
    for i in 0..lv.n() {
        let i = black_box(i);
        let a = match peer {
            Peer::Walksurf => walksurf(lv, kind, i, None),
            Peer::WalksurfCached => walksurf(lv, kind, i, Some(&mut cache)),
            Peer::Parry => parry(lv, kind, i),
            Peer::Net => match walksurf(lv, kind, i, None) {
                Answer::Fallback => parry(lv, kind, i),
                a => a,
            },
        };
        fallbacks += usize::from(a == Answer::Fallback);
    }
    fallbacks
}

fn bench(c: &mut Criterion, levels: &[Level]) {
    for lv in levels {
        for kind in Kind::all() {
            let mut group = c.benchmark_group(format!("{}/{}", kind.id(), lv.name));
            group.throughput(Throughput::Elements(lv.n() as u64));
            group.sample_size(10);
            group.warm_up_time(Duration::from_millis(300));
            group.measurement_time(Duration::from_secs(2));
            for &peer in Peer::for_kind(kind) {
                group.bench_with_input(BenchmarkId::new(peer.id(), lv.n()), lv, |b, lv| {
                    b.iter(|| batch(black_box(lv), kind, peer))
                });
            }
            group.finish();
        }
    }
}

/// One row of the summary.
struct Row {
    level: String,
    kind: Kind,
    walksurf_ns: f64,
    cached_ns: Option<f64>,
    parry_ns: f64,
    net_ns: f64,
    /// `(walksurf time + fallbacks × parry time) / n`.
    net_formula_ns: f64,
    acc: Accuracy,
}

fn measure(lv: &Level, kind: Kind, quick: bool) -> Row {
    // Answers first (untimed): the answered share and, against the exact
    // oracle, how right each peer is.
    let mut acc = Accuracy::default();
    for i in 0..lv.n() {
        acc.add(oracle(lv, kind, i), walksurf(lv, kind, i, None), parry(lv, kind, i));
    }
    // Median of timed passes over the batch.
    let (passes, time) = if quick {
        (QUICK_PASSES, QUICK_PASS_TIME)
    } else {
        (PASSES, PASS_TIME)
    };
    let ns = |peer| ns_per_query(lv.n(), passes, time, || batch(black_box(lv), kind, peer));
    let walksurf_ns = ns(Peer::Walksurf);
    let cached_ns = (kind == Kind::Floor).then(|| ns(Peer::WalksurfCached));
    let parry_ns = ns(Peer::Parry);
    let net_ns = ns(Peer::Net);
    Row {
        level: lv.name.clone(),
        kind,
        walksurf_ns,
        cached_ns,
        parry_ns,
        net_ns,
        net_formula_ns: walksurf_ns + acc.fallbacks as f64 * parry_ns / lv.n() as f64,
        acc,
    }
}

fn summary(levels: &[Level], quick: bool) {
    let mut rows = Vec::new();
    for lv in levels {
        println!();
        println!(
            "{}: {} triangles, {} tiles, {} ground queries (seed {SEED}), agent R {} H {}",
            lv.name,
            lv.triangles,
            lv.tiles,
            lv.n(),
            AGENT.radius_cm,
            AGENT.half_height_cm
        );
        for kind in Kind::all() {
            let r = measure(lv, kind, quick);
            println!("  {}", kind.title());
            println!(
                "    {:<42} {:>9} {:>11} {:>9}",
                "peer", "ns/query", "parry/this", "answered"
            );
            let line = |name: &str, ns: f64, answered: f64| {
                println!("    {name:<42} {ns:>9.0} {:>11.2} {answered:>8.2}%", r.parry_ns / ns);
            };
            line(Peer::Walksurf.name(), r.walksurf_ns, r.acc.answered_pct());
            if let Some(c) = r.cached_ns {
                line(Peer::WalksurfCached.name(), c, r.acc.answered_pct());
            }
            line(Peer::Parry.name(), r.parry_ns, 100.0);
            line(Peer::Net.name(), r.net_ns, 100.0);
            println!(
                "    net by formula (walksurf + fallbacks × parry) / n: {:.0} ns = {:.3}× parry",
                r.net_formula_ns,
                r.net_formula_ns / r.parry_ns
            );
            println!(
                "    against the exact oracle: walksurf answers within {}; parry off by > {OFF_CM} cm on {} of {} (max {})",
                cm(r.acc.walksurf_max_err),
                r.acc.parry_off,
                r.acc.n,
                cm(r.acc.parry_max_err)
            );
            rows.push(r);
        }
    }
    println!();
    println!("Markdown (ns/query; ratios are parry / walksurf and net / parry):");
    println!();
    println!(
        "| level | query | walksurf | + cache | parry3d f32 | parry / walksurf | answered | net measured | net formula | net / parry |"
    );
    println!("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|");
    let mut fidelity = Vec::new();
    for r in &rows {
        let query = match r.kind {
            Kind::Floor => "capsule find_floor".to_owned(),
            Kind::Sweep(len) => format!("sweep {len} cm"),
        };
        println!(
            "| {} | {query} | {:.0} | {} | {:.0} | {:.1}× | {:.2}% | {:.0} | {:.0} | {:.3} |",
            short_name(&r.level),
            r.walksurf_ns,
            r.cached_ns.map_or_else(|| "–".to_owned(), |c| format!("{c:.0}")),
            r.parry_ns,
            r.parry_ns / r.walksurf_ns,
            r.acc.answered_pct(),
            r.net_ns,
            r.net_formula_ns,
            r.net_ns / r.parry_ns
        );
        fidelity.push(format!("| {} | {query} | {} |", short_name(&r.level), r.acc.cells()));
    }
    println!();
    println!("Against the exact oracle (same queries):");
    println!();
    println!("| level | query | walksurf max error | parry off by > {OFF_CM} cm | parry max error |");
    println!("|---|---|--:|--:|--:|");
    for line in fidelity {
        println!("{line}");
    }
}

fn short_name(level: &str) -> &str {
    match level {
        "navcat_lowpoly__fps__tdm__game__map_by_resoforge.glb" => "navcat_lowpoly_fps",
        other => other,
    }
}

fn main() {
    let levels = levels();
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c, &levels);
    c.final_summary();
    // `cargo bench` passes --bench; `cargo test --benches` does not, and
    // only checks that the benches run.
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--bench") {
        summary(&levels, args.iter().any(|a| a == "--quick"));
    }
}
