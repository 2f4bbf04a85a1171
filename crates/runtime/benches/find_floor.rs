//! `find_floor` in line-trace mode on the bundled dungeon, against its peers
//! on the same batch of queries: the exact oracle, a parry3d (f32) ray cast
//! down, and a parry3d (f32) capsule shape cast down.
//!
//! The batch is the oracle's ground corpus (seed 1, 2000 queries): capsules
//! hovering on walkable ground, where a controller asks most often. Each
//! criterion iteration answers the whole batch. After criterion, a timed
//! loop (median of several passes) prints ns/query and the ratio
//! peer / walksurf measured in the same run: absolute times on these
//! machines are noise, ratios are not.
//!
//! `cargo bench -p walksurf-runtime --bench find_floor -- --quick`

use criterion::{BenchmarkId, Criterion, Throughput, black_box};
use parry3d::math::{Isometry, Point, Vector};
use parry3d::query::{Ray, RayCast, ShapeCastOptions};
use parry3d::shape::{Capsule, TriMesh};
use std::path::Path;
use std::time::{Duration, Instant};
use walksurf::{Agent, DEFAULT_FLOOR_DOWN_CM, FloorMode, FloorOutcome, Surface};
use walksurf_bake::{BakeConfig, Silent};
use walksurf_oracle::corpus::{CorpusConfig, QueryClass};
use walksurf_oracle::{Oracle, OracleFloor};

const DUNGEON: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/dungeon.obj");
/// Ground queries in the batch.
const QUERIES: usize = 2000;
/// Timed passes over the batch per peer for the summary (median taken):
/// at least this many…
const SUMMARY_PASSES: usize = 7;
/// …and for at least this long.
const SUMMARY_TIME: Duration = Duration::from_millis(500);
/// The line-trace window starts this far above the capsule bottom (the
/// runtime's and the oracle's `LINE_TRACE_ABOVE_CM`).
const LINE_ABOVE_CM: f64 = 2.0;

/// Everything the benches share, built once.
struct Setup {
    surface: Surface,
    oracle: Oracle,
    /// The same triangles as the oracle, f32, relative to their bbox centre.
    trimesh: TriMesh,
    capsule: Capsule,
    agent: Agent,
    /// Query capsule centres, world cm.
    world: Vec<[f64; 3]>,
    /// The same, f32 in the trimesh frame.
    local: Vec<Point<f32>>,
}

impl Setup {
    fn new() -> Setup {
        let t = Instant::now();
        let config = BakeConfig::default();
        let path = Path::new(DUNGEON);
        let baked = walksurf_bake::bake_file(path, &config, 1, &Silent).expect("bake the dungeon");
        let surface = Surface::from_bytes(&baked.bytes).expect("open the baked dungeon");
        let (mesh, _) = walksurf_bake::stage::ingest::ingest(path, &config).expect("ingest the dungeon");
        let oracle = Oracle::new(&mesh.vertices, &mesh.triangles).expect("build the oracle");
        let corpus = walksurf_oracle::corpus::generate(
            &oracle,
            &mesh.vertices,
            &mesh.triangles,
            &CorpusConfig {
                seed: 1,
                ground: QUERIES,
                abnormal: 0,
                ..CorpusConfig::default()
            },
        );
        let world: Vec<[f64; 3]> = corpus
            .iter()
            .filter(|q| q.class == QueryClass::Ground)
            .map(|q| q.pos)
            .collect();
        assert!(!world.is_empty(), "the dungeon gave no ground queries");

        // f32 parry wants coordinates near the origin: the bbox centre, as
        // the oracle does in f64.
        let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
        for v in &mesh.vertices {
            for k in 0..3 {
                lo[k] = lo[k].min(v[k]);
                hi[k] = hi[k].max(v[k]);
            }
        }
        let centre: [f64; 3] = std::array::from_fn(|k| 0.5 * (lo[k] + hi[k]));
        let to_local = |p: &[f64; 3]| {
            Point::new(
                (p[0] - centre[0]) as f32,
                (p[1] - centre[1]) as f32,
                (p[2] - centre[2]) as f32,
            )
        };
        let trimesh = TriMesh::new(mesh.vertices.iter().map(to_local).collect(), mesh.triangles.clone());
        let local = world.iter().map(to_local).collect();
        let agent = Agent::DEFAULT;
        let capsule = Capsule::new_z((agent.half_height_cm - agent.radius_cm) as f32, agent.radius_cm as f32);
        eprintln!(
            "setup: dungeon {} triangles, {} bytes baked, {} ground queries, {:.0} ms",
            mesh.triangles.len(),
            baked.bytes.len(),
            world.len(),
            t.elapsed().as_secs_f64() * 1e3
        );
        Setup {
            surface,
            oracle,
            trimesh,
            capsule,
            agent,
            world,
            local,
        }
    }
}

/// The peers, in table order. Each answers one query (by index into the
/// batch) and returns whether it found something, so that the work cannot be
/// optimised away and the table can show the answers are comparable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Peer {
    Walksurf,
    Oracle,
    ParryRay,
    ParryCapsule,
}

impl Peer {
    const ALL: [Peer; 4] = [Peer::Walksurf, Peer::Oracle, Peer::ParryRay, Peer::ParryCapsule];

    fn name(self) -> &'static str {
        match self {
            Peer::Walksurf => "walksurf line",
            Peer::Oracle => "oracle line (parry3d-f64 BVH, exact)",
            Peer::ParryRay => "parry3d f32 ray cast",
            Peer::ParryCapsule => "parry3d f32 capsule cast",
        }
    }

    fn id(self) -> &'static str {
        match self {
            Peer::Walksurf => "walksurf_line",
            Peer::Oracle => "oracle_line",
            Peer::ParryRay => "parry3d_ray",
            Peer::ParryCapsule => "parry3d_capsule_cast",
        }
    }

    /// 1 when the query found a floor, else 0.
    #[inline]
    fn query(self, s: &Setup, i: usize) -> usize {
        let h = s.agent.half_height_cm;
        match self {
            Peer::Walksurf => {
                let o = s
                    .surface
                    .find_floor(s.world[i], DEFAULT_FLOOR_DOWN_CM, s.agent, FloorMode::LineTrace);
                usize::from(matches!(black_box(o), FloorOutcome::Floor(_)))
            }
            Peer::Oracle => {
                let o = s.oracle.find_floor_line(s.world[i], h, DEFAULT_FLOOR_DOWN_CM);
                usize::from(matches!(black_box(o), OracleFloor::Floor { .. }))
            }
            Peer::ParryRay => {
                let p = s.local[i];
                let origin = Point::new(p.x, p.y, p.z - h as f32 + LINE_ABOVE_CM as f32);
                let ray = Ray::new(origin, -Vector::z());
                let max = (DEFAULT_FLOOR_DOWN_CM + LINE_ABOVE_CM) as f32;
                let hit = s.trimesh.cast_local_ray_and_get_normal(&ray, max, true);
                usize::from(black_box(hit).is_some())
            }
            Peer::ParryCapsule => {
                let p = s.local[i];
                let hit = parry3d::query::cast_shapes(
                    &Isometry::translation(p.x, p.y, p.z),
                    &-Vector::z(),
                    &s.capsule,
                    &Isometry::identity(),
                    &Vector::zeros(),
                    &s.trimesh,
                    ShapeCastOptions {
                        max_time_of_impact: DEFAULT_FLOOR_DOWN_CM as f32,
                        ..ShapeCastOptions::default()
                    },
                );
                usize::from(matches!(black_box(hit), Ok(Some(_))))
            }
        }
    }

    /// The whole batch; returns how many found a floor.
    fn batch(self, s: &Setup) -> usize {
        (0..s.world.len()).map(|i| self.query(s, black_box(i))).sum()
    }
}

fn bench(c: &mut Criterion, s: &Setup) {
    let mut group = c.benchmark_group("find_floor");
    group.throughput(Throughput::Elements(s.world.len() as u64));
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    for peer in Peer::ALL {
        group.bench_with_input(BenchmarkId::new(peer.id(), s.world.len()), s, |b, s| {
            b.iter(|| peer.batch(black_box(s)))
        });
    }
    group.finish();
}

/// Median ns per query over passes over the batch: at least
/// [`SUMMARY_PASSES`], and at least [`SUMMARY_TIME`] of them.
fn ns_per_query(peer: Peer, s: &Setup) -> (f64, usize) {
    let found = peer.batch(s); // warm-up pass
    let start = Instant::now();
    let mut ns = Vec::new();
    while ns.len() < SUMMARY_PASSES || (start.elapsed() < SUMMARY_TIME && ns.len() < 1000) {
        let t = Instant::now();
        black_box(peer.batch(black_box(s)));
        ns.push(t.elapsed().as_nanos() as f64 / s.world.len() as f64);
    }
    ns.sort_by(f64::total_cmp);
    (ns[ns.len() / 2], found)
}

fn summary(s: &Setup) {
    let rows: Vec<(Peer, f64, usize)> = Peer::ALL
        .iter()
        .map(|&p| {
            let (ns, found) = ns_per_query(p, s);
            (p, ns, found)
        })
        .collect();
    let base = rows[0].1;
    println!();
    println!(
        "find_floor on testdata/dungeon.obj, {} ground queries (seed 1), median of >= {} passes",
        s.world.len(),
        SUMMARY_PASSES
    );
    println!(
        "  {:<38} {:>10} {:>14} {:>8}",
        "peer", "ns/query", "peer/walksurf", "floors"
    );
    for (peer, ns, found) in rows {
        println!("  {:<38} {:>10.0} {:>14.2} {:>8}", peer.name(), ns, ns / base, found);
    }
}

fn main() {
    let setup = Setup::new();
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c, &setup);
    c.final_summary();
    // `cargo bench` passes --bench; `cargo test --benches` does not, and
    // only checks that the benches run.
    if std::env::args().any(|a| a == "--bench") {
        summary(&setup);
    }
}
