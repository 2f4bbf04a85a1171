//! The two precision paths (issue #3 item 6): `PrecisionPath::Fast` reads
//! each piece's `z_err_cm` slot, `PrecisionPath::Reference` recomputes the
//! bound from the tile's patch record and the piece's vertices. Asserts:
//!
//! * every piece of every tile: the slot is `piece_z_err_cm` of its patch
//!   record, bit for bit (`slots::<level>`, `dungeon_slots_match`);
//! * on the DESIGN §7 corpus (ground and abnormal), `find_floor` (line
//!   trace and capsule, every `down` of [`DOWNS_CM`]) and `sweep_horizontal`
//!   answer bit for bit alike on a Fast and a Reference surface over the
//!   same bytes (`identical::<level>`, `dungeon_paths_decide_identically`);
//! * both checks can fail: a patch record whose `fit_err_cm` was raised (the
//!   file re-sealed, so it still opens verified) fails the slot check and
//!   makes Reference fall back where Fast answers; a slot lowered fails
//!   the slot check and leaves Reference unchanged; a piece whose patch
//!   record is missing makes Reference fall back, never guess.
//!
//! The shared levels (`../shared/levels`) run a CI-sized corpus here
//! (skipped with a notice when the folder is absent, failing when
//! `CI=true`); `shared_levels_full` (`#[ignore]`) runs the full one with
//! every capsule agent and both ground step lengths.

#[macro_use]
mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;
use walksurf::{Agent, FallbackReason, FloorMode, FloorOutcome, PrecisionPath, Surface, SweepOutcome};
use walksurf_bake::{BakeConfig, Mesh};
use walksurf_format::zerocopy::{FromBytes, IntoBytes};
use walksurf_format::{
    FileView, Header, PatchRecord, PieceHeader, SectionEntry, TILE_SIZE_CM, TileView, VERTEX_STEPS_PER_CM, VertexFixed,
    hash64, piece_z_err_cm, seal_header,
};
use walksurf_oracle::Oracle;
use walksurf_oracle::corpus::{CorpusConfig, CorpusQuery, QueryClass, generate};

/// Corpus seed (as `shared_levels.rs`).
const SEED: u64 = 20240601;
/// CI: ground and abnormal corpus queries per level. Each is asked as a
/// line trace and a capsule with every `down`, and swept: 9 comparisons.
const CI_CORPUS: usize = 20_000;
/// The bundled dungeon: ground and abnormal corpus queries.
const DUNGEON_CORPUS: usize = 2_000;
/// `shared_levels_full`: ground and abnormal corpus queries per level and
/// ground step length.
const FULL_CORPUS: usize = 50_000;
/// The ground step lengths of DESIGN §7. [Units: cm]
const STEPS_CM: [f64; 2] = [16.67, 33.33];

// ---------------------------------------------------------------------------
// Comparing the two paths.

/// A Fast and a Reference surface over the same bytes.
struct Pair {
    fast: Surface,
    reference: Surface,
}

fn pair(bytes: &[u8]) -> Pair {
    let fast = Surface::from_bytes(bytes).expect("open (Fast)");
    let mut reference = Surface::from_bytes(bytes).expect("open (Reference)");
    reference.set_precision_path(PrecisionPath::Reference);
    assert_eq!(fast.precision_path(), PrecisionPath::Fast, "Fast is the default");
    assert_eq!(reference.precision_path(), PrecisionPath::Reference);
    Pair { fast, reference }
}

/// Two files read on the same path (`fast` holding `a`, `reference`
/// holding `b`): answers that should not depend on what differs.
fn same_path(path: PrecisionPath, a: &[u8], b: &[u8]) -> Pair {
    let open = |bytes: &[u8]| {
        let mut s = Surface::from_bytes(bytes).expect("open");
        s.set_precision_path(path);
        s
    };
    Pair {
        fast: open(a),
        reference: open(b),
    }
}

/// An outcome with every number as its bits: equal keys are identical
/// outcomes (`-0.0 ≠ 0.0`, a NaN equals itself).
#[derive(Clone, Debug, PartialEq)]
enum Key {
    Floor([u64; 10], bool),
    NoFloor,
    Clear,
    Hit([u64; 14]),
    Fallback(FallbackReason),
}

fn floor_key(o: FloorOutcome) -> Key {
    match o {
        FloorOutcome::Floor(h) => {
            let mut v = [0u64; 10];
            let all = [h.floor_dist]
                .into_iter()
                .chain(h.location)
                .chain(h.impact_point)
                .chain(h.normal);
            for (slot, x) in v.iter_mut().zip(all) {
                *slot = x.to_bits();
            }
            Key::Floor(v, h.walkable)
        }
        FloorOutcome::NoFloor => Key::NoFloor,
        FloorOutcome::Fallback(r) => Key::Fallback(r),
    }
}

fn sweep_key(o: SweepOutcome) -> Key {
    match o {
        SweepOutcome::Hit(h) => {
            let mut v = [0u64; 14];
            let all = [h.time, h.distance]
                .into_iter()
                .chain(h.location)
                .chain(h.impact_point)
                .chain(h.normal)
                .chain(h.impact_normal);
            for (slot, x) in v.iter_mut().zip(all) {
                *slot = x.to_bits();
            }
            Key::Hit(v)
        }
        SweepOutcome::Clear => Key::Clear,
        SweepOutcome::Fallback(r) => Key::Fallback(r),
    }
}

/// One query kind's comparison.
#[derive(Clone, Debug, Default)]
struct Kind {
    n: usize,
    /// Fast answers that were not a Fallback.
    answered: usize,
    /// Queries whose two outcomes differ, described (the first few).
    diffs: Vec<String>,
    ndiff: usize,
    fast_s: f64,
    reference_s: f64,
}

impl Kind {
    fn merge(&mut self, o: &Kind) {
        self.n += o.n;
        self.answered += o.answered;
        self.ndiff += o.ndiff;
        self.fast_s += o.fast_s;
        self.reference_s += o.reference_s;
        let room = 12usize.saturating_sub(self.diffs.len());
        self.diffs.extend(o.diffs.iter().take(room).cloned());
    }

    fn summary(&self) -> String {
        let pct = if self.n == 0 {
            100.0
        } else {
            100.0 * self.answered as f64 / self.n as f64
        };
        let per = |s: f64| if self.n == 0 { 0.0 } else { 1e9 * s / self.n as f64 };
        format!(
            "n {:>7}  Fast answered {pct:>6.2}%  differ {}  ns/query Fast {:>7.0} Reference {:>8.0}",
            self.n,
            self.ndiff,
            per(self.fast_s),
            per(self.reference_s)
        )
    }
}

/// The comparison of one file: line traces, capsules, sweeps.
#[derive(Clone, Debug, Default)]
struct Compared {
    line: Kind,
    capsule: Kind,
    sweep: Kind,
}

impl Compared {
    fn merge(&mut self, o: &Compared) {
        self.line.merge(&o.line);
        self.capsule.merge(&o.capsule);
        self.sweep.merge(&o.sweep);
    }

    fn total(&self) -> usize {
        self.line.n + self.capsule.n + self.sweep.n
    }

    fn ndiff(&self) -> usize {
        self.line.ndiff + self.capsule.ndiff + self.sweep.ndiff
    }

    fn report(&self, what: &str) {
        println!("  {what}");
        println!("    line trace  {}", self.line.summary());
        println!("    capsule     {}", self.capsule.summary());
        println!("    sweep       {}", self.sweep.summary());
    }

    #[track_caller]
    fn assert_identical(&self, what: &str) {
        let shown: Vec<&String> = [&self.line, &self.capsule, &self.sweep]
            .iter()
            .flat_map(|k| k.diffs.iter())
            .take(12)
            .collect();
        assert!(
            self.ndiff() == 0,
            "{what}: {} of {} queries decide differently on the Fast and Reference paths; first ones:\n  {}",
            self.ndiff(),
            self.total(),
            shown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n  ")
        );
    }
}

/// Runs `ask` over `queries` on both surfaces (each path timed over the
/// whole batch) and compares the outcomes.
fn compare_batch<Q: std::fmt::Debug>(pair: &Pair, queries: &[Q], ask: impl Fn(&Surface, &Q) -> Key) -> Kind {
    let t = Instant::now();
    let fast: Vec<Key> = queries.iter().map(|q| ask(&pair.fast, q)).collect();
    let fast_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let reference: Vec<Key> = queries.iter().map(|q| ask(&pair.reference, q)).collect();
    let reference_s = t.elapsed().as_secs_f64();
    let mut k = Kind {
        n: queries.len(),
        fast_s,
        reference_s,
        ..Kind::default()
    };
    for ((q, f), r) in queries.iter().zip(&fast).zip(&reference) {
        if !matches!(f, Key::Fallback(_)) {
            k.answered += 1;
        }
        if f != r {
            k.ndiff += 1;
            if k.diffs.len() < 12 {
                k.diffs.push(format!("{q:?}: Fast {f:?}, Reference {r:?}"));
            }
        }
    }
    k
}

/// Every corpus query on both paths: a line trace and a capsule (each agent
/// of `agents`) with every `down` of [`DOWNS_CM`], and a sweep by the
/// query's delta (each agent).
fn compare_corpus(pair: &Pair, corpus: &[CorpusQuery], agents: &[Agent]) -> Compared {
    let mut floors = Vec::new();
    for q in corpus {
        for down in DOWNS_CM {
            floors.push((q.pos, down));
        }
    }
    let line = compare_batch(pair, &floors, |s, &(pos, down)| {
        floor_key(s.find_floor(pos, down, Agent::DEFAULT, FloorMode::LineTrace))
    });
    let mut c = Compared {
        line,
        ..Compared::default()
    };
    let sweeps: Vec<([f64; 3], [f64; 2])> = corpus.iter().map(|q| (q.pos, q.delta_xy)).collect();
    for &agent in agents {
        let capsule = compare_batch(pair, &floors, |s, &(pos, down)| {
            floor_key(s.find_floor(pos, down, agent, FloorMode::Capsule))
        });
        c.capsule.merge(&capsule);
        let sweep = compare_batch(pair, &sweeps, |s, &(pos, delta)| {
            sweep_key(s.sweep_horizontal(pos, delta, agent))
        });
        c.sweep.merge(&sweep);
    }
    c
}

// ---------------------------------------------------------------------------
// The slots against the patch records.

/// Every piece of a tile: its byte offset in the file, header and vertices.
fn pieces_of<'a>(file: &[u8], tile: &TileView<'a>) -> Vec<(usize, &'a PieceHeader, &'a [VertexFixed])> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < tile.pieces.len() {
        let (h, v) = tile
            .piece((at / 4) as u32)
            .unwrap_or_else(|| panic!("tile {:?}: no piece at byte {at}", tile_xy(tile)));
        out.push((offset_in(file, h.as_bytes()), h, v));
        at += size_of::<PieceHeader>() + std::mem::size_of_val(v);
    }
    assert_eq!(
        out.len(),
        tile.hot.piece_count.get() as usize,
        "tile {:?}: piece count",
        tile_xy(tile)
    );
    out
}

fn tile_xy(tile: &TileView<'_>) -> (i32, i32) {
    (tile.hot.tile_x.get(), tile.hot.tile_y.get())
}

/// Where `part` (a slice of `file`) starts in it.
fn offset_in(file: &[u8], part: &[u8]) -> usize {
    let at = (part.as_ptr() as usize).wrapping_sub(file.as_ptr() as usize);
    assert!(at + part.len() <= file.len(), "not a part of the file");
    at
}

/// The bound the Reference path computes for a piece, or `None` without a
/// patch record.
fn recomputed(tile: &TileView<'_>, h: &PieceHeader, v: &[VertexFixed]) -> Option<f32> {
    let rec = tile.patches.get(h.patch.get() as usize)?;
    Some(piece_z_err_cm(
        [h.plane_a.get(), h.plane_b.get(), h.plane_c.get()],
        [rec.plane_a.get(), rec.plane_b.get(), rec.plane_c.get()],
        rec.fit_err_cm.get(),
        v.iter().map(|p| [p.x.get(), p.y.get()]),
    ))
}

/// What the slot check found.
#[derive(Debug, Default)]
struct Slots {
    tiles: usize,
    patches: usize,
    pieces: usize,
    /// Pieces whose slot is not the recomputed bound (or that have no
    /// patch record), described.
    mismatches: Vec<String>,
}

/// Every piece of every tile of `bytes`: the stored slot against
/// `piece_z_err_cm` of its patch record, bit for bit.
fn check_slots(bytes: &[u8]) -> Slots {
    let layout = FileView::parse(bytes).expect("parse");
    let view = FileView::new(bytes, &layout).expect("view");
    let mut s = Slots::default();
    for hot in view.hot {
        let tile = view.tile(hot).expect("tile");
        s.tiles += 1;
        s.patches += tile.patches.len();
        for (at, h, v) in pieces_of(bytes, &tile) {
            s.pieces += 1;
            let slot = h.z_err_cm.get();
            match recomputed(&tile, h, v) {
                Some(e) if e.to_bits() == slot.to_bits() => {}
                Some(e) => s.mismatches.push(format!(
                    "tile {:?} piece @{at} (patch {}): slot {slot:e}, recomputed {e:e}",
                    tile_xy(&tile),
                    h.patch.get()
                )),
                None => s.mismatches.push(format!(
                    "tile {:?} piece @{at}: patch {} of {} is missing",
                    tile_xy(&tile),
                    h.patch.get(),
                    tile.patches.len()
                )),
            }
        }
    }
    s
}

#[track_caller]
fn assert_slots_match(what: &str, s: &Slots) {
    assert!(s.pieces > 0, "{what}: no pieces");
    assert!(
        s.mismatches.is_empty(),
        "{what}: {} of {} pieces' z_err_cm slots differ from their patch records; first ones:\n  {}",
        s.mismatches.len(),
        s.pieces,
        s.mismatches.iter().take(12).cloned().collect::<Vec<_>>().join("\n  ")
    );
}

// ---------------------------------------------------------------------------
// Levels.

/// A baked level and its corpus.
struct Level {
    bytes: Vec<u8>,
    corpus: Vec<CorpusQuery>,
    /// Bake and corpus time. [Units: s]
    prep_s: f64,
}

fn corpus_config(config: &BakeConfig, n: usize, step_cm: f64, seed: u64) -> CorpusConfig {
    CorpusConfig {
        seed,
        ground: n,
        abnormal: n,
        walkable_normal_z: config.walkable_normal_z,
        max_delta_cm: config.max_sweep_len_cm,
        step_cm,
        ..CorpusConfig::default()
    }
}

/// `bytes` and a corpus of `n` ground (first step length) and `n`
/// abnormal queries on `mesh`.
fn prepare(config: &BakeConfig, mesh: &Mesh, bytes: Vec<u8>, n: usize, start: Instant) -> Level {
    let oracle = Oracle::new(&mesh.vertices, &mesh.triangles).expect("oracle");
    let corpus = generate(
        &oracle,
        &mesh.vertices,
        &mesh.triangles,
        &corpus_config(config, n, STEPS_CM[0], SEED),
    );
    Level {
        bytes,
        corpus,
        prep_s: start.elapsed().as_secs_f64(),
    }
}

/// A shared level baked with its documented settings and its CI corpus,
/// built once per test binary (the `identical` and `slots` tests share it).
fn shared_level(dir: &Path, file: &str) -> Arc<Level> {
    type Slot = Arc<OnceLock<Arc<Level>>>;
    static CACHE: Mutex<BTreeMap<String, Slot>> = Mutex::new(BTreeMap::new());
    let cell = {
        let mut map = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(file.to_owned()).or_default().clone()
    };
    cell.get_or_init(|| {
        let start = Instant::now();
        let (config, mesh, baked) = bake_shared_level(dir, file);
        Arc::new(prepare(&config, &mesh, baked.bytes, scaled(CI_CORPUS), start))
    })
    .clone()
}

/// The bundled dungeon (testdata/dungeon.obj), baked with the defaults.
fn dungeon() -> &'static Level {
    static LEVEL: OnceLock<Level> = OnceLock::new();
    LEVEL.get_or_init(|| {
        let start = Instant::now();
        let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/dungeon.obj"));
        let config = BakeConfig::default();
        let bytes = walksurf_bake::bake_file(path, &config, 1, &walksurf_bake::Silent)
            .expect("bake dungeon")
            .bytes;
        let (mesh, _) = walksurf_bake::stage::ingest::ingest(path, &config).expect("ingest dungeon");
        prepare(&config, &mesh, bytes, DUNGEON_CORPUS, start)
    })
}

fn check_identical(file: &str) {
    let Some(dir) = shared_levels_dir() else { return };
    let lv = shared_level(&dir, file);
    let c = compare_corpus(&pair(&lv.bytes), &lv.corpus, &[Agent::DEFAULT]);
    println!(
        "{file}: {} queries compared, {} differ ({} corpus queries; bake + corpus {:.1} s)",
        c.total(),
        c.ndiff(),
        lv.corpus.len(),
        lv.prep_s
    );
    c.report(file);
    c.assert_identical(file);
    assert!(c.line.answered > 0, "{file}: Fast answered no line trace");
}

fn check_slots_of(file: &str) {
    let Some(dir) = shared_levels_dir() else { return };
    let lv = shared_level(&dir, file);
    let s = check_slots(&lv.bytes);
    println!(
        "{file}: {} pieces checked ({} tiles, {} patch records), {} mismatches",
        s.pieces,
        s.tiles,
        s.patches,
        s.mismatches.len()
    );
    assert_slots_match(file, &s);
}

macro_rules! level_files {
    (; $($name:ident => $file:literal,)*) => {
        /// The levels the per-level tests cover.
        const COVERED: &[&str] = &[$($file,)*];
    };
}

shared_level_list!(level_files!());

/// Fast and Reference decide identically on each shared level's corpus.
mod identical {
    shared_level_list!(per_level!(check_identical));
}

/// Each shared level's slots are its patch records' bounds.
mod slots {
    shared_level_list!(per_level!(check_slots_of));
}

/// The per-level tests cover every shared level (`shared_levels.rs` checks
/// the folder against [`SHARED_LEVELS`]).
#[test]
fn every_shared_level_is_covered() {
    let listed: Vec<&str> = SHARED_LEVELS.iter().map(|l| l.0).collect();
    assert_eq!(COVERED, &listed[..], "add the new level to shared_level_list!");
}

/// Every shared level, the full corpus: 20 000 ground + 20 000 abnormal
/// queries for each ground step length, every capsule agent.
#[test]
#[ignore]
fn shared_levels_full() {
    let Some(dir) = shared_levels_dir() else { return };
    let mut failures = Vec::new();
    let mut all = Compared::default();
    let mut pieces = 0;
    for &(file, _, _) in SHARED_LEVELS {
        let start = Instant::now();
        let (config, mesh, baked) = bake_shared_level(&dir, file);
        let oracle = Oracle::new(&mesh.vertices, &mesh.triangles).expect("oracle");
        let pair = pair(&baked.bytes);
        let mut c = Compared::default();
        for (k, step) in STEPS_CM.into_iter().enumerate() {
            let cfg = corpus_config(&config, scaled(FULL_CORPUS), step, SEED + k as u64);
            let corpus = generate(&oracle, &mesh.vertices, &mesh.triangles, &cfg);
            c.merge(&compare_corpus(&pair, &corpus, &CAPSULE_AGENTS));
        }
        let s = check_slots(&baked.bytes);
        pieces += s.pieces;
        println!(
            "{file}: {} queries compared, {} differ; {} pieces checked, {} mismatches ({:.1} s)",
            c.total(),
            c.ndiff(),
            s.pieces,
            s.mismatches.len(),
            start.elapsed().as_secs_f64()
        );
        c.report(file);
        if c.ndiff() > 0 || !s.mismatches.is_empty() {
            failures.push(format!(
                "{file}: {} differ ({:?}), {} slot mismatches ({:?})",
                c.ndiff(),
                c.line.diffs.iter().chain(&c.capsule.diffs).chain(&c.sweep.diffs).next(),
                s.mismatches.len(),
                s.mismatches.first()
            ));
        }
        all.merge(&c);
    }
    println!("all levels: {} queries compared, {pieces} pieces checked", all.total());
    all.report("all levels");
    assert!(failures.is_empty(), "{failures:#?}");
}

// ---------------------------------------------------------------------------
// The bundled dungeon: always runs, and is what the tampering tests edit.

#[test]
fn dungeon_slots_match() {
    let s = check_slots(&dungeon().bytes);
    println!(
        "dungeon: {} pieces checked ({} tiles, {} patch records)",
        s.pieces, s.tiles, s.patches
    );
    assert!(s.patches > 0, "the bake wrote no patch records");
    assert_slots_match("dungeon", &s);
}

#[test]
fn dungeon_paths_decide_identically() {
    let lv = dungeon();
    let c = compare_corpus(&pair(&lv.bytes), &lv.corpus, &CAPSULE_AGENTS);
    println!("dungeon: {} queries compared, {} differ", c.total(), c.ndiff());
    c.report("dungeon");
    c.assert_identical("dungeon");
    assert!(c.line.answered > 0 && c.capsule.answered > 0 && c.sweep.answered > 0);
}

/// A line-trace floor query over a piece: the query, the piece's byte
/// offset and its patch record's byte offset (in the file).
struct Target {
    pos: [f64; 3],
    down: f64,
    piece_at: usize,
    patch_at: usize,
}

/// The first ground query of the dungeon whose line trace Fast answers with
/// a floor on a piece that holds the query point well inside (and whose
/// tile has a patch record for it).
fn target(lv: &Level) -> Target {
    let fast = Surface::from_bytes(&lv.bytes).expect("open");
    let layout = FileView::parse(&lv.bytes).expect("parse");
    let view = FileView::new(&lv.bytes, &layout).expect("view");
    let down = walksurf::DEFAULT_FLOOR_DOWN_CM;
    for q in lv.corpus.iter().filter(|q| q.class == QueryClass::Ground) {
        let FloorOutcome::Floor(hit) = fast.find_floor(q.pos, down, Agent::DEFAULT, FloorMode::LineTrace) else {
            continue;
        };
        let t = |v: f64| (v / TILE_SIZE_CM).floor() as i32;
        let Some(tile) = view.tile_hot(t(q.pos[0]), t(q.pos[1])).and_then(|h| view.tile(h)) else {
            continue;
        };
        let o = tile.origin_cm();
        let (x, y) = (q.pos[0] - o[0], q.pos[1] - o[1]);
        for (piece_at, h, v) in pieces_of(&lv.bytes, &tile) {
            let z = h.plane_a.get() as f64 * x + h.plane_b.get() as f64 * y + h.plane_c.get() as f64 + o[2];
            if (z - hit.impact_point[2]).abs() > 0.01 || inside_depth(v, x, y) < 1.0 {
                continue;
            }
            let Some(rec) = tile.patches.get(h.patch.get() as usize) else {
                continue;
            };
            return Target {
                pos: q.pos,
                down,
                piece_at,
                patch_at: offset_in(&lv.bytes, rec.as_bytes()),
            };
        }
    }
    panic!("no ground query of the dungeon lands well inside a piece");
}

/// How far (cm) `(x, y)` lies inside the convex polygon (negative outside).
fn inside_depth(v: &[VertexFixed], x: f64, y: f64) -> f64 {
    let p = |i: usize| {
        let q = &v[i % v.len()];
        [
            q.x.get() as f64 / VERTEX_STEPS_PER_CM,
            q.y.get() as f64 / VERTEX_STEPS_PER_CM,
        ]
    };
    let area2: f64 = (0..v.len())
        .map(|i| {
            let (a, b) = (p(i), p(i + 1));
            a[0] * b[1] - a[1] * b[0]
        })
        .sum();
    (0..v.len())
        .map(|i| {
            let (a, b) = (p(i), p(i + 1));
            let (ex, ey) = (b[0] - a[0], b[1] - a[1]);
            area2.signum() * (ex * (y - a[1]) - ey * (x - a[0])) / (ex * ex + ey * ey).sqrt()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Every section checksum, the table checksum and the header re-sealed, so
/// that an edit opens even with `from_bytes_verified`.
fn reseal(bytes: &mut [u8]) {
    let mut h = Header::read_from_prefix(bytes).expect("header").0;
    let n = h.section_count.get() as usize;
    for i in 0..n {
        let at = 64 + 32 * i;
        let e = SectionEntry::read_from_bytes(&bytes[at..at + 32]).expect("section entry");
        let (start, len) = (e.offset.get() as usize, e.length.get() as usize);
        let sum = hash64(&bytes[start..start + len]);
        let e = SectionEntry::mut_from_bytes(&mut bytes[at..at + 32]).expect("section entry");
        e.checksum.set(sum);
    }
    h.section_table_checksum.set(hash64(&bytes[64..64 + 32 * n]) as u32);
    seal_header(&mut h);
    bytes[..64].copy_from_slice(h.as_bytes());
}

/// The dungeon's bytes with `edit` applied and the file re-sealed.
fn tampered(edit: impl FnOnce(&mut [u8])) -> Vec<u8> {
    let mut b = dungeon().bytes.clone();
    edit(&mut b);
    reseal(&mut b);
    Surface::from_bytes_verified(&b).expect("the tampered file opens verified");
    b
}

fn line(s: &Surface, t: &Target) -> FloorOutcome {
    s.find_floor(t.pos, t.down, Agent::DEFAULT, FloorMode::LineTrace)
}

/// A patch record whose plane-fit bound was raised to 1 cm (the file
/// re-sealed): the slot check fails on exactly that patch's pieces; Fast,
/// which reads only the slots, answers as before; Reference falls back
/// with `PrecisionBudget` on the target query (an answer needs a bound
/// under 0.008 cm) and the corpus comparison finds differences.
#[test]
fn raised_fit_err_is_caught() {
    let lv = dungeon();
    let t = target(lv);
    let fit_at = t.patch_at + std::mem::offset_of!(PatchRecord, fit_err_cm);
    let bytes = tampered(|b| b[fit_at..fit_at + 4].copy_from_slice(&1.0f32.to_le_bytes()));

    let s = check_slots(&bytes);
    assert!(!s.mismatches.is_empty(), "the slot check missed a raised fit_err_cm");
    println!(
        "raised fit_err: {} of {} pieces fail the slot check, e.g. {}",
        s.mismatches.len(),
        s.pieces,
        s.mismatches[0]
    );

    let clean = pair(&lv.bytes);
    let p = pair(&bytes);
    assert!(matches!(line(&clean.reference, &t), FloorOutcome::Floor(_)));
    assert_eq!(floor_key(line(&p.fast, &t)), floor_key(line(&clean.fast, &t)));
    assert_eq!(
        line(&p.reference, &t),
        FloorOutcome::Fallback(FallbackReason::PrecisionBudget)
    );

    let c = compare_corpus(&p, &lv.corpus, &[Agent::DEFAULT]);
    c.report("dungeon, one fit_err_cm raised");
    assert!(c.ndiff() > 0, "the path comparison missed a raised fit_err_cm");
    // Fast over the tampered bytes is Fast over the clean ones.
    let fast_clean = compare_corpus(
        &same_path(PrecisionPath::Fast, &lv.bytes, &bytes),
        &lv.corpus,
        &[Agent::DEFAULT],
    );
    fast_clean.assert_identical("Fast over the clean and the tampered bytes");
}

/// A piece's slot lowered to 0 (the file re-sealed): the slot check names
/// that piece; Reference, which never reads the slot, answers as before.
#[test]
fn lowered_slot_is_caught() {
    let lv = dungeon();
    let t = target(lv);
    let slot_at = t.piece_at + std::mem::offset_of!(PieceHeader, z_err_cm);
    let bytes = tampered(|b| b[slot_at..slot_at + 4].copy_from_slice(&0.0f32.to_le_bytes()));

    let s = check_slots(&bytes);
    assert_eq!(s.mismatches.len(), 1, "{:?}", s.mismatches);
    assert!(
        s.mismatches[0].contains(&format!("@{}", t.piece_at)),
        "{}",
        s.mismatches[0]
    );

    let same = compare_corpus(
        &same_path(PrecisionPath::Reference, &lv.bytes, &bytes),
        &lv.corpus,
        &[Agent::DEFAULT],
    );
    same.assert_identical("Reference over the clean and the tampered bytes");
}

/// A piece whose patch index points past its tile's patch table: Reference
/// cannot bound it and falls back with `PrecisionBudget` (no guess); Fast
/// still answers from the slot.
#[test]
fn missing_patch_record_falls_back() {
    let lv = dungeon();
    let t = target(lv);
    let patch_at = t.piece_at + std::mem::offset_of!(PieceHeader, patch);
    let bytes = tampered(|b| b[patch_at..patch_at + 2].copy_from_slice(&u16::MAX.to_le_bytes()));

    let s = check_slots(&bytes);
    assert_eq!(s.mismatches.len(), 1, "{:?}", s.mismatches);
    assert!(s.mismatches[0].contains("missing"), "{}", s.mismatches[0]);

    let p = pair(&bytes);
    assert!(matches!(line(&p.fast, &t), FloorOutcome::Floor(_)));
    assert_eq!(
        line(&p.reference, &t),
        FloorOutcome::Fallback(FallbackReason::PrecisionBudget)
    );
    assert_eq!(
        p.reference
            .find_floor(t.pos, t.down, Agent::DEFAULT, FloorMode::Capsule),
        FloorOutcome::Fallback(FallbackReason::PrecisionBudget)
    );
    // Wherever Reference answers over this file, it answers as over the
    // clean file: a missing record never changes an answer, only declines.
    let clean = pair(&lv.bytes);
    let mut declined = 0;
    for q in &lv.corpus {
        for mode in [FloorMode::LineTrace, FloorMode::Capsule] {
            let r = p.reference.find_floor(q.pos, t.down, Agent::DEFAULT, mode);
            let want = clean.reference.find_floor(q.pos, t.down, Agent::DEFAULT, mode);
            if r == FloorOutcome::Fallback(FallbackReason::PrecisionBudget) && r != want {
                declined += 1;
            } else {
                assert_eq!(floor_key(r), floor_key(want), "{:?} {mode:?}", q.pos);
            }
        }
        let r = p.reference.sweep_horizontal(q.pos, q.delta_xy, Agent::DEFAULT);
        let want = clean.reference.sweep_horizontal(q.pos, q.delta_xy, Agent::DEFAULT);
        if r == SweepOutcome::Fallback(FallbackReason::PrecisionBudget) && r != want {
            declined += 1;
        } else {
            assert_eq!(sweep_key(r), sweep_key(want), "{:?} sweep", q.pos);
        }
    }
    println!("missing patch record: {declined} corpus queries declined by Reference");
    assert!(declined > 0);
}
