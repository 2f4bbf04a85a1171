//! The walksurf bake pipeline: a level mesh → the bytes of a `.wsurf` file.
//!
//! Stages (one module each, in [`stage`]): ingest → classify → tiling (per
//! tile: flat groups, clip to convex pieces, blockers; then the headroom
//! grid and the cut along it, `grid` and `contour`) → layout (with
//! certificates and the patch table). Tiles are
//! independent (tile locality) and baked in parallel with rayon; the output
//! is byte-identical for any thread count.
//!
//! Given the previous output ([`bake_file_incremental`]), tiles whose input
//! hash is unchanged are copied from it verbatim ([`incremental`]): the
//! result is byte-identical to a full bake except for `build_generation`.

pub mod config;
pub mod error;
pub mod geom;
pub mod incremental;
pub mod input_files;
pub mod stage;
pub mod tolerance;

pub use config::{BakeConfig, MAX_THREADS, UpAxis};
pub use error::{BakeError, Location};
pub use incremental::NotReusable;
pub use input_files::input_files;
pub use stage::ingest::{IngestReport, Mesh};

use rayon::prelude::*;
use serde::Serialize;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;
use walksurf_format::{BakeParams, FileWriter};

/// Runs `job` on every index of `order` on the current rayon pool: each
/// worker takes the next index in `order` as it frees up (list
/// scheduling; largest first, the last ones finish together). A job is not
/// a rayon task of its own: a worker waiting inside one job's parallel part
/// helps only with that part's small tasks, never starts another whole job
/// (which, with `par_iter` over tiles, left the largest tile waiting on a
/// second one nested inside it). Results come back in any order.
fn run_in_order<T: Send>(order: &[usize], job: impl Fn(usize) -> T + Sync) -> Vec<(usize, T)> {
    let next = AtomicUsize::new(0);
    let done = Mutex::new(Vec::with_capacity(order.len()));
    rayon::scope(|s| {
        for _ in 0..rayon::current_num_threads().min(order.len()) {
            s.spawn(|_| {
                while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let out = job(i);
                    done.lock().unwrap_or_else(PoisonError::into_inner).push((i, out));
                }
            });
        }
    });
    done.into_inner().unwrap_or_else(PoisonError::into_inner)
}

/// Progress and timing sink (Recast's `rcContext`): indicatif in the CLI,
/// silent in tests.
pub trait Reporter: Sync {
    /// A stage starts; `total` units of work (0 if unknown).
    fn stage(&self, _name: &'static str, _total: u64) {}
    /// `n` more units are done.
    fn advance(&self, _n: u64) {}
    /// Tile `(x, y)` was baked (not reused from the previous output).
    fn tile_baked(&self, _tile: (i32, i32)) {}
}

/// A reporter that reports nothing.
#[derive(Debug, Default)]
pub struct Silent;
impl Reporter for Silent {}

/// What a bake did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct BakeReport {
    pub input: IngestReport,
    pub triangles: usize,
    pub vertices: usize,
    pub walkable_triangles: usize,
    pub collected_triangles: usize,
    pub blocking_triangles: usize,
    pub tiles: usize,
    pub patches: usize,
    pub pieces: usize,
    pub piece_vertices: usize,
    /// Pieces of headroom-cut patches (geometry above leaves a full-height
    /// agent no room to stand; still real floor for every contact).
    pub cut_pieces: usize,
    /// Pieces counted once each: those in their tile's own square (`pieces`
    /// also counts the copies in neighbouring tiles' halos).
    pub square_pieces: usize,
    /// Pieces the headroom cut split along cell lines, over the rebaked
    /// tiles (the file does not record it, so reused tiles do not count).
    pub split_pieces: usize,
    /// Pieces the cut could not split (a part would not stay convex once
    /// rounded): kept whole and cut, over the rebaked tiles.
    pub unsplittable_pieces: usize,
    pub blockers: usize,
    /// Flat-floor certificates (cell × floor) the runtime's fast path uses.
    pub certificates: usize,
    /// Walkable triangles that could not be represented as a piece and
    /// became blockers instead (queries over them fall back), counted per
    /// tile as stored (a triangle reaching far beyond a tile may be stored
    /// as several).
    pub demoted_triangles: usize,
    /// Largest patch fit residual over the rebaked tiles (the file does not
    /// record it, so reused tiles do not count). [Units: cm]
    pub max_patch_residual_cm: f64,
    /// Largest piece z error bound (of reused tiles: as stored, in `f32`).
    /// [Units: cm]
    pub max_piece_z_err_cm: f64,
    pub bytes: usize,
    pub build_generation: u64,
    /// Tiles were taken from the previous output where their input was
    /// unchanged.
    pub incremental: bool,
    /// Why the bake was a full one (`None` when `incremental`).
    pub full_bake_reason: Option<String>,
    /// Tiles baked by this run (every tile of a full bake).
    pub rebaked_tiles: usize,
    /// Tiles copied from the previous output.
    pub reused_tiles: usize,
    /// Tiles of the previous output that no longer exist.
    pub removed_tiles: usize,
    /// Milliseconds per stage.
    pub ms: Vec<(String, f64)>,
}

/// The baked file and its report.
#[derive(Clone, Debug)]
pub struct BakeOutput {
    pub bytes: Vec<u8>,
    pub report: BakeReport,
}

/// Reads `input` and bakes it. `build_generation` goes into the header.
pub fn bake_file(
    input: &Path,
    config: &BakeConfig,
    build_generation: u64,
    reporter: &dyn Reporter,
) -> Result<BakeOutput, BakeError> {
    bake_file_incremental(input, config, build_generation, Err(NotReusable::NoPrevious), reporter)
}

/// Reads `input` and bakes it, reusing the tiles of `previous` (the bytes of
/// the previous output) whose input is unchanged. A `previous` that cannot
/// be reused ([`incremental::PreviousTiles::parse`]) means a full bake; the
/// report says why. The bytes equal a full bake's but for the generation.
pub fn bake_file_incremental(
    input: &Path,
    config: &BakeConfig,
    build_generation: u64,
    previous: Result<&[u8], NotReusable>,
    reporter: &dyn Reporter,
) -> Result<BakeOutput, BakeError> {
    config.validate().map_err(BakeError::Config)?;
    reporter.stage("ingest", 0);
    let t = Instant::now();
    let (mesh, ingest_report) = stage::ingest::ingest(input, config)?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let mut out = bake_mesh_incremental(&mesh, config, build_generation, previous, reporter)?;
    out.report.input = ingest_report;
    out.report.ms.insert(0, ("ingest".into(), ms));
    Ok(out)
}

/// Bakes an already ingested mesh.
pub fn bake_mesh(
    mesh: &Mesh,
    config: &BakeConfig,
    build_generation: u64,
    reporter: &dyn Reporter,
) -> Result<BakeOutput, BakeError> {
    bake_mesh_incremental(mesh, config, build_generation, Err(NotReusable::NoPrevious), reporter)
}

/// [`bake_mesh`], reusing the unchanged tiles of `previous` (see
/// [`bake_file_incremental`]). Tiles are matched by their triangles'
/// positions, so `mesh` must be welded on exact positions (one index per
/// distinct position) as ingest makes it.
pub fn bake_mesh_incremental(
    mesh: &Mesh,
    config: &BakeConfig,
    build_generation: u64,
    previous: Result<&[u8], NotReusable>,
    reporter: &dyn Reporter,
) -> Result<BakeOutput, BakeError> {
    config.validate().map_err(BakeError::Config)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(config.threads)
        .build()
        .map_err(|e| BakeError::Config(format!("cannot start {} threads: {e}", config.threads)))?;
    pool.install(|| bake_in_pool(mesh, config, build_generation, previous, reporter))
}

/// One tile of the new file, baked or reused, with its report numbers.
struct TileOut {
    record: walksurf_format::TileRecordInput,
    stats: stage::layout::TileStats,
    patches: u32,
    residual_cm: f64,
    demoted: usize,
    /// (split, unsplittable) pieces of the headroom cut; 0 for reused tiles.
    cut: (usize, usize),
}

fn bake_in_pool(
    mesh: &Mesh,
    config: &BakeConfig,
    build_generation: u64,
    previous: Result<&[u8], NotReusable>,
    reporter: &dyn Reporter,
) -> Result<BakeOutput, BakeError> {
    let mut report = BakeReport {
        triangles: mesh.triangles.len(),
        vertices: mesh.vertices.len(),
        build_generation,
        ..Default::default()
    };
    let mut timer = Instant::now();
    let mut lap = |name: &str, report: &mut BakeReport| {
        report.ms.push((name.to_owned(), timer.elapsed().as_secs_f64() * 1e3));
        timer = Instant::now();
    };

    reporter.stage("classify", 0);
    let classes = stage::classify::classify(mesh, config);
    report.walkable_triangles = classes.count(stage::classify::TriClass::Walkable);
    report.collected_triangles = classes.count(stage::classify::TriClass::Collected);
    report.blocking_triangles = classes.count(stage::classify::TriClass::Blocking);
    lap("classify", &mut report);

    // Triangles by tile, in input order: a tile's triangles are put in
    // canonical order only when it is built.
    let assigned = stage::tiling::group_tiles(mesh, config);
    lap("group_tiles", &mut report);

    // Per-tile input hashes, and the previous tiles they may reuse.
    let params_hash = config.params_hash();
    let triangle_hashes: Vec<u64> = (0..mesh.triangles.len() as u32)
        .into_par_iter()
        .map(|t| stage::tiling::triangle_hash(mesh, t))
        .collect();
    let hashes: Vec<u64> = assigned
        .par_iter()
        .map(|(key, tris)| {
            stage::tiling::tile_input_hash_with(|t| triangle_hashes[t as usize], params_hash, *key, tris)
        })
        .collect();
    let previous = previous.and_then(|bytes| incremental::PreviousTiles::parse(bytes, params_hash));
    let reuse: Vec<Option<incremental::PreviousTile<'_>>> = match &previous {
        Ok(prev) => assigned
            .iter()
            .zip(&hashes)
            .map(|((key, _), &hash)| prev.reusable(*key, hash))
            .collect(),
        Err(_) => vec![None; assigned.len()],
    };
    match &previous {
        Ok(prev) => {
            report.incremental = true;
            let mut keys: Vec<(i32, i32)> = assigned.iter().map(|(k, _)| *k).collect();
            keys.sort_unstable();
            report.removed_tiles = prev.keys().filter(|k| keys.binary_search(k).is_err()).count();
        }
        Err(why) => report.full_bake_reason = Some(why.to_string()),
    }
    report.reused_tiles = reuse.iter().filter(|r| r.is_some()).count();
    report.rebaked_tiles = assigned.len() - report.reused_tiles;
    lap("tile_hashes", &mut report);

    reporter.stage("tiles", report.rebaked_tiles as u64);
    // Tiles largest first (by triangles), each to the next free worker.
    // The output keeps tile order.
    let mut order: Vec<usize> = (0..assigned.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(assigned[i].1.len()), i));
    let bake_one = |(key, tris): &((i32, i32), Vec<u32>),
                    hash: u64,
                    old: &Option<incremental::PreviousTile<'_>>|
     -> Result<TileOut, BakeError> {
        if let Some(old) = old {
            let stats = old.stats();
            return Ok(TileOut {
                record: old.record(),
                stats,
                patches: old.hot.patch_count.get(),
                residual_cm: 0.0,
                demoted: old.demoted(),
                cut: (0, 0),
            });
        }
        let mut tris = tris.clone();
        stage::tiling::canonical_order(mesh, &mut tris);
        let content = stage::tiling::build_tile_hashed(mesh, &classes, config, hash, *key, &tris);
        let laid = stage::layout::layout_tile(&content);
        reporter.tile_baked(*key);
        reporter.advance(1);
        laid.map(|(record, stats)| TileOut {
            record,
            stats,
            patches: content.patches.len() as u32,
            residual_cm: content.max_residual_cm,
            demoted: content.demoted_triangles,
            cut: (content.split_pieces, content.unsplittable_pieces),
        })
    };
    let mut tiles = run_in_order(&order, |i| bake_one(&assigned[i], hashes[i], &reuse[i]));
    tiles.sort_unstable_by_key(|(i, _)| *i);
    let tiles: Vec<TileOut> = tiles.into_iter().map(|(_, t)| t).collect::<Result<_, _>>()?;
    lap("tiles", &mut report);

    reporter.stage("write", 0);
    let mut records = Vec::with_capacity(tiles.len());
    for t in tiles {
        report.patches += t.patches as usize;
        report.max_patch_residual_cm = report.max_patch_residual_cm.max(t.residual_cm);
        report.demoted_triangles += t.demoted;
        report.split_pieces += t.cut.0;
        report.unsplittable_pieces += t.cut.1;
        report.pieces += t.stats.pieces;
        report.piece_vertices += t.stats.vertices;
        report.cut_pieces += t.stats.cut_pieces;
        report.square_pieces += t.stats.square_pieces;
        report.blockers += t.stats.blockers;
        report.certificates += t.stats.certificates;
        report.max_piece_z_err_cm = report.max_piece_z_err_cm.max(t.stats.max_z_err_cm);
        records.push(t.record);
    }
    report.tiles = records.len();
    check_tile_span(&records)?;

    let input_hash = {
        let mut bytes = Vec::with_capacity(records.len() * 8);
        for r in &records {
            bytes.extend_from_slice(&r.hot.input_hash.get().to_le_bytes());
        }
        walksurf_format::hash64(&bytes)
    };
    let metadata = serde_json::json!({
        "tool": concat!("walksurf ", env!("CARGO_PKG_VERSION")),
        "config": config_for_metadata(config),
        "triangles": report.triangles,
        "walkable_triangles": report.walkable_triangles,
        "tiles": report.tiles,
        "pieces": report.pieces,
    });
    let writer = FileWriter {
        up_axis: match config.up {
            UpAxis::Y => walksurf_format::up_axis::Y,
            UpAxis::Z => walksurf_format::up_axis::Z,
        },
        metres_per_unit: config.metres_per_unit as f32,
        build_generation,
        input_hash,
        params_hash,
        params: bake_params(config),
        tiles: records,
        metadata_json: metadata.to_string(),
    };
    let bytes = writer.to_bytes();
    report.bytes = bytes.len();
    lap("write", &mut report);
    Ok(BakeOutput { bytes, report })
}

/// Most slots the dense tile index may have (64 MiB of index).
const MAX_TILE_SLOTS: u64 = 1 << 24;

fn check_tile_span(records: &[walksurf_format::TileRecordInput]) -> Result<(), BakeError> {
    let (mut lo, mut hi) = ([i64::MAX; 2], [i64::MIN; 2]);
    for r in records {
        let t = [r.hot.tile_x.get() as i64, r.hot.tile_y.get() as i64];
        for k in 0..2 {
            lo[k] = lo[k].min(t[k]);
            hi[k] = hi[k].max(t[k]);
        }
    }
    if records.is_empty() {
        return Ok(());
    }
    let slots = (hi[0] - lo[0] + 1) as u64 * (hi[1] - lo[1] + 1) as u64;
    if slots > MAX_TILE_SLOTS {
        return Err(BakeError::TooLarge(format!(
            "the geometry spans {} × {} tiles of 32 m; the dense tile index allows {MAX_TILE_SLOTS} (check --scale)",
            hi[0] - lo[0] + 1,
            hi[1] - lo[1] + 1
        )));
    }
    Ok(())
}

fn config_for_metadata(config: &BakeConfig) -> BakeConfig {
    BakeConfig {
        threads: 0,
        ..config.clone()
    }
}

/// The runtime's view of the parameters.
pub fn bake_params(config: &BakeConfig) -> BakeParams {
    BakeParams {
        max_agent_radius_cm: (config.max_agent_radius_cm as f32).into(),
        max_agent_half_height_cm: (config.max_agent_half_height_cm as f32).into(),
        walkable_normal_z: (config.walkable_normal_z as f32).into(),
        collected_normal_z: (config.collected_normal_z as f32).into(),
        max_sweep_len_cm: (config.max_sweep_len_cm as f32).into(),
        tile_halo_cm: (config.tile_halo_cm() as f32).into(),
        // The angle flat groups are merged within (a fixed tolerance).
        coplanar_angle_deg: (tolerance::FLAT_NORMAL_TOL_RAD.to_degrees() as f32).into(),
        coplanar_dist_cm: (config.coplanar_dist_cm as f32).into(),
        excluded_inputs: (config.exclude.len() as u32).into(),
        reserved: [0.into(); 7],
    }
}

/// The build generation a new bake of `output` should carry: one more than
/// the existing file's, or 1.
pub fn next_generation(output: &Path) -> u64 {
    let Ok(bytes) = read_prefix(output, 64) else {
        return 1;
    };
    use walksurf_format::zerocopy::FromBytes;
    match walksurf_format::Header::read_from_prefix(&bytes) {
        Ok((h, _)) if h.magic == walksurf_format::MAGIC => h.build_generation.get().saturating_add(1),
        _ => 1,
    }
}

fn read_prefix(path: &Path, n: usize) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut buf = Vec::with_capacity(n);
    std::fs::File::open(path)?.take(n as u64).read_to_end(&mut buf)?;
    Ok(buf)
}

/// Longest prefix of OUTPUT's name the temporary file's name keeps, in bytes
/// (cut back to a char boundary): with `.` and `.tmp-PID-N` the name is at
/// most 61 bytes whatever OUTPUT's, so any name the file system takes for
/// OUTPUT works.
const TEMP_NAME_PREFIX_BYTES: usize = 24;

/// The directory of `path` and a fresh temporary file name in it:
/// `.NAME.tmp-PID-N`, NAME being the first [`TEMP_NAME_PREFIX_BYTES`] of
/// `path`'s name.
fn temp_path(path: &Path) -> (&Path, std::path::PathBuf) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    let mut end = name.len().min(TEMP_NAME_PREFIX_BYTES);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".{}.tmp-{}-{n}", &name[..end], std::process::id()));
    (dir, tmp)
}

/// Writes `bytes` to `path` atomically: a temporary file in the same
/// directory, fsync, rename, then (best effort) fsync of the directory so
/// that the rename itself survives a crash. On any error the previous file
/// is untouched and the temporary file removed. A process killed while
/// writing may leave its temporary file (`.NAME.tmp-PID-N`, NAME cut to 24
/// bytes) behind; the previous file is intact either way.
///
/// Readers that mapped the previous file keep reading it (the rename gives
/// `path` a new inode): never rewrite a baked file in place.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let (dir, tmp) = temp_path(path);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
        return result;
    }
    sync_dir(dir);
    Ok(())
}

/// Checks that [`write_atomic`] can create its temporary file next to
/// `path`, by creating and removing one: a caller can report an unwritable
/// or missing directory before it spends time making the bytes. The rename
/// may still fail later (e.g. `path` is a directory).
pub fn check_writable(path: &Path) -> std::io::Result<()> {
    let (_, tmp) = temp_path(path);
    std::fs::File::create(&tmp)?;
    std::fs::remove_file(&tmp)
}

/// Makes a rename in `dir` durable. Best effort: not every platform or file
/// system can open or sync a directory, and the rename already happened.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

#[cfg(test)]
mod run_in_order_tests {
    use super::run_in_order;
    use std::sync::Mutex;

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap()
    }

    #[test]
    fn every_index_runs_once_and_one_worker_keeps_the_order() {
        let order = [4, 0, 6, 2, 5, 1, 3];
        for threads in [1, 2, 3, 16] {
            let started = Mutex::new(Vec::new());
            let mut out = pool(threads).install(|| {
                run_in_order(&order, |i| {
                    started.lock().unwrap().push(i);
                    i * 10
                })
            });
            out.sort_unstable();
            assert_eq!(
                out,
                (0..7).map(|i| (i, i * 10)).collect::<Vec<_>>(),
                "{threads} threads"
            );
            if threads == 1 {
                assert_eq!(started.into_inner().unwrap(), order);
            }
        }
        assert!(pool(2).install(|| run_in_order(&[], |i| i)).is_empty());
    }

    // A job's own parallel part still spreads over the workers that have run
    // out of jobs: job 1 returns at once, job 0's first task waits (up to
    // 10 s) until a second worker has taken one.
    #[test]
    fn a_jobs_parallel_part_uses_the_idle_workers() {
        use rayon::prelude::*;
        use std::time::{Duration, Instant};
        let seen = pool(2).install(|| {
            run_in_order(&[0, 1], |job| {
                if job == 1 {
                    return 0;
                }
                let ids = Mutex::new(Vec::new());
                let start = Instant::now();
                (0..64).into_par_iter().with_max_len(1).for_each(|_| {
                    let me = rayon::current_thread_index();
                    ids.lock().unwrap().push(me);
                    while start.elapsed() < Duration::from_secs(10) && ids.lock().unwrap().iter().all(|&i| i == me) {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                });
                let mut ids = ids.into_inner().unwrap();
                ids.sort_unstable();
                ids.dedup();
                ids.len()
            })
        });
        let mut seen = seen;
        seen.sort_unstable();
        assert_eq!(seen, [(0, 2), (1, 0)]);
    }
}

#[cfg(test)]
mod write_atomic_tests {
    use super::{TEMP_NAME_PREFIX_BYTES, check_writable, temp_path, write_atomic};
    use std::path::Path;

    // The temporary name keeps at most 24 bytes of OUTPUT's name, cut on a
    // char boundary (a 2-byte 'é' straddles byte 24 here), in OUTPUT's
    // directory.
    #[test]
    fn temp_name_is_short_and_in_the_same_directory() {
        let long = format!("{}é{}.wsurf", "a".repeat(23), "b".repeat(200));
        let out = Path::new("some/dir").join(&long);
        let (dir, tmp) = temp_path(&out);
        assert_eq!(dir, Path::new("some/dir"));
        assert_eq!(tmp.parent(), Some(Path::new("some/dir")));
        let name = tmp.file_name().and_then(|n| n.to_str()).expect("utf-8");
        assert!(name.starts_with(&format!(".{}.tmp-", "a".repeat(23))), "{name}");
        // `.`, the prefix, `.tmp-`, a u32 pid, `-`, a u64 counter.
        assert!(name.len() <= 1 + TEMP_NAME_PREFIX_BYTES + 5 + 10 + 1 + 20, "{name}");
        let (dir, tmp) = temp_path(Path::new("x.wsurf"));
        assert_eq!(dir, Path::new("."));
        assert!(
            tmp.to_string_lossy().starts_with("./.x.wsurf.tmp-"),
            "{}",
            tmp.display()
        );
    }

    // A 250-byte name (NAME_MAX is 255 on common file systems) is written,
    // and nothing else is left in the directory.
    #[test]
    fn a_long_output_name_is_written_and_nothing_left_behind() {
        let dir = std::env::temp_dir().join(format!("walksurf-write-atomic-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let out = dir.join(format!("{}.wsurf", "a".repeat(244)));
        check_writable(&out).expect("writable");
        write_atomic(&out, b"bytes").expect("write");
        assert_eq!(std::fs::read(&out).expect("read"), b"bytes");
        assert_eq!(std::fs::read_dir(&dir).expect("dir").count(), 1);
        // Into a directory: an error, the directory and the dir untouched.
        let sub = dir.join("sub");
        std::fs::create_dir(&sub).expect("mkdir");
        assert!(write_atomic(&sub, b"bytes").is_err());
        assert!(sub.is_dir());
        assert_eq!(std::fs::read_dir(&dir).expect("dir").count(), 2);
        assert!(check_writable(&dir.join("missing").join("x.wsurf")).is_err());
        std::fs::remove_dir_all(&dir).expect("rm");
    }
}

#[cfg(test)]
mod config_tests {
    use super::{BakeConfig, MAX_THREADS};

    // 0 means one per core; more than MAX_THREADS is refused, naming the
    // setting.
    #[test]
    fn threads_are_limited() {
        for ok in [0, 1, MAX_THREADS] {
            let c = BakeConfig {
                threads: ok,
                ..BakeConfig::default()
            };
            assert_eq!(c.validate(), Ok(()), "{ok}");
        }
        let c = BakeConfig {
            threads: MAX_THREADS + 1,
            ..BakeConfig::default()
        };
        assert!(c.validate().is_err_and(|e| e.contains("threads")));
    }
}
