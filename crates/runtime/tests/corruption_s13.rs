//! Corruption review (session 13): baked files mutated field by field,
//! flipped, truncated, and hostile query inputs.
//!
//! Two small generated levels (stairs with HIDDEN risers, walls, a table,
//! a floating slab over the floor, a ramp, several tiles, certificates and
//! patch tables) are baked in-process. Each mutated file must open with
//! `Ok` or `Err` (never panic), `from_bytes` and `from_bytes_verified`
//! must agree, and every file that opens is queried: line and capsule
//! `find_floor`, `sweep_horizontal` (plain, cached, `_or`), `warmup`, on
//! both precision paths. Every query runs under `catch_unwind`; every file
//! runs on a worker thread watched with a time budget, so a hang is
//! reported (and skipped) instead of stalling the run. All failures are
//! collected and reported together.
//!
//! Besides panics and hangs, answers must be well formed (finite numbers,
//! unit normals, a hit time in [0, 1]), and a file whose damage is cheap to
//! detect (a NaN written into a float of the tile data, a negative error
//! bound, a z quantisation that is not a power of two ≥ 1/64 cm) must not
//! give an answer that differs from the intact file's.
//!
//! Five failures this found are fixed and now fail the sweeps: a tile
//! count overflow in `sweep_horizontal` for files allowing ~1e13 cm moves,
//! a z quantisation that was no power of two opening (its boxes then
//! inexact), and a certificate with a NaN `clear_z`, a negative z error
//! bound or a wall with a NaN end point being trusted.
mod common;
use common::{LevelBuilder, Winding, floor_hit_is_finite, sweep_hit_is_finite};

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Once, OnceLock, mpsc};
use std::time::{Duration, Instant};
use walksurf::{
    Agent, DEFAULT_FLOOR_DOWN_CM, FallbackReason, FloorMode, FloorOutcome, PrecisionPath, QueryCache, Surface,
    SweepOutcome,
};
use walksurf_bake::{BakeConfig, Mesh, Silent, bake_mesh};
use walksurf_format::zerocopy::{FromBytes, IntoBytes};
use walksurf_format::{BVH_EMPTY, FileLayout, FileView, Header, hash64, seal_header, section, tile_flags};

const TILE: f64 = 3200.0;
/// Longest a mutated file's open and queries may take before it counts as
/// a hang (generous: a file takes milliseconds).
const FILE_BUDGET: Duration = Duration::from_secs(5);

// ---------------------------------------------------------------------------
// Panic capture: a hook that records the location of a panic raised inside
// `catch` (and stays quiet), and defers to the default hook otherwise.

thread_local! {
    static CATCHING: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if CATCHING.with(Cell::get) {
                let msg = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "<non-string panic>".to_owned());
                let at = info
                    .location()
                    .map_or_else(|| "?".to_owned(), |l| format!("{}:{}", l.file(), l.line()));
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{msg} @ {at}")));
            } else {
                default(info);
            }
        }));
    });
}

/// Runs `f`, turning a panic into `Err(message @ file:line)`.
fn catch<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    install_hook();
    let was = CATCHING.with(|c| c.replace(true));
    let r = panic::catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(was));
    r.map_err(|_| {
        LAST_PANIC
            .with(|p| p.borrow_mut().take())
            .unwrap_or_else(|| "<panic>".to_owned())
    })
}

// ---------------------------------------------------------------------------
// Levels.

/// A hall over three tiles in x and two in y: a floor crossing the tile
/// lines, stairs (HIDDEN risers) at the origin and across x = 3200, a
/// table, a thick slab floating over the floor (headroom cut), a wall, a
/// ramp and a shelf.
fn hall() -> Mesh {
    let mut b = LevelBuilder::new();
    b.floor([-700.0, 3900.0], [-400.0, 900.0], 0.0, Winding::Up);
    b.stairs(-150.0, [100.0, 300.0], 0.0, 6, 30.0, 18.0);
    b.stairs(3080.0, [-300.0, -100.0], 0.0, 8, 28.0, 17.0);
    b.cuboid([800.0, 100.0, 0.0], [950.0, 250.0, 75.0]);
    b.cuboid([1200.0, -100.0, 150.0], [1500.0, 300.0, 170.0]);
    b.wall([1800.0, -200.0], [1800.0, 600.0], [0.0, 0.0], [300.0, 300.0]);
    b.ramp_x([2200.0, 2600.0], [0.0, 300.0], [0.0, 80.0]);
    b.cuboid([-500.0, 500.0, 0.0], [-300.0, 800.0, 40.0]);
    b.wall([-650.0, -350.0], [-100.0, -300.0], [0.0, 0.0], [250.0, 180.0]);
    b.build()
}

/// A rotated corner of four tiles far from the origin (negative x, low z):
/// a floor, stairs, a box, a slanted wall.
fn corner() -> Mesh {
    let mut b = LevelBuilder::with_offset([-3.0 * TILE, 5.0 * TILE, -1234.5]);
    let a: f64 = 0.3;
    b.turn = Some([a.cos(), a.sin()]);
    b.floor([-600.0, 600.0], [-600.0, 600.0], 0.0, Winding::Up);
    b.stairs(-100.0, [-250.0, -50.0], 0.0, 5, 32.0, 16.0);
    b.cuboid([150.0, 150.0, 0.0], [300.0, 260.0, 60.0]);
    b.wall([-500.0, 300.0], [200.0, 450.0], [0.0, 0.0], [200.0, 200.0]);
    b.cuboid([-400.0, -500.0, 140.0], [-150.0, -300.0, 160.0]);
    b.build()
}

/// One query.
#[derive(Clone, Copy, Debug)]
enum Q {
    Line {
        pos: [f64; 3],
        down: f64,
        agent: Agent,
    },
    Capsule {
        pos: [f64; 3],
        down: f64,
        agent: Agent,
    },
    Sweep {
        pos: [f64; 3],
        delta: [f64; 2],
        agent: Agent,
    },
    Warmup {
        center: [f64; 3],
        radius: f64,
    },
}

/// One answer.
#[derive(Clone, Copy, Debug, PartialEq)]
enum A {
    Floor(FloorOutcome),
    Sweep(SweepOutcome),
    Warm(usize),
}

struct Level {
    name: &'static str,
    bytes: Vec<u8>,
    layout: FileLayout,
    queries: Vec<Q>,
    /// The intact file's answers on [Fast, Reference], by `ask` with the
    /// query's index as `via`.
    clean: [Vec<A>; 2],
}

/// Deterministic xorshift generator.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.below(v.len())]
    }
}

/// The capsule tests' agents and a thin tall one.
const AGENTS: [Agent; 4] = [
    common::CAPSULE_AGENTS[0],
    common::CAPSULE_AGENTS[1],
    common::CAPSULE_AGENTS[2],
    Agent {
        radius_cm: 5.0,
        half_height_cm: 96.0,
    },
];

/// Queries over and around the level: XY points on a grid over its bounds
/// (and 200 cm beyond), at and beside the tile lines, at heights of its
/// surfaces (floor, steps, table, slab, inside the slab and the table).
fn level_queries(mesh: &Mesh, seed: u64) -> Vec<Q> {
    let (lo, hi) = common::bounds(mesh);
    let mut rng = Rng(seed);
    let z0 = lo[2];
    let heights = [
        -30.0, 0.0, 2.1, 10.0, 20.0, 40.0, 60.0, 77.0, 100.0, 120.0, 155.0, 172.0, 250.0,
    ];
    let downs = [DEFAULT_FLOOR_DOWN_CM, 0.0, 10.0, 200.0, 1000.0];
    let mut xy = Vec::new();
    for _ in 0..90 {
        xy.push([
            rng.range(lo[0] - 200.0, hi[0] + 200.0),
            rng.range(lo[1] - 200.0, hi[1] + 200.0),
        ]);
    }
    // Beside the tile lines inside the level.
    let (tx0, tx1) = ((lo[0] / TILE).ceil() as i64, (hi[0] / TILE).floor() as i64);
    let (ty0, ty1) = ((lo[1] / TILE).ceil() as i64, (hi[1] / TILE).floor() as i64);
    for t in tx0..=tx1 {
        for d in [-0.01, 0.0, 0.01, 30.0, -30.0] {
            xy.push([t as f64 * TILE + d, rng.range(lo[1], hi[1])]);
        }
    }
    for t in ty0..=ty1 {
        for d in [-0.01, 0.0, 0.01, 30.0, -30.0] {
            xy.push([rng.range(lo[0], hi[0]), t as f64 * TILE + d]);
        }
    }
    // Over triangles' vertices (stairs, boxes, walls).
    for _ in 0..40 {
        let v = mesh.vertices[rng.below(mesh.vertices.len())];
        xy.push([v[0] + rng.range(-20.0, 20.0), v[1] + rng.range(-20.0, 20.0)]);
    }
    let mut out = Vec::new();
    for (i, p) in xy.iter().enumerate() {
        let agent = rng.pick(&AGENTS);
        let bottom = z0 + rng.pick(&heights) + rng.range(-1.0, 3.0);
        let pos = [p[0], p[1], bottom + agent.half_height_cm];
        let down = rng.pick(&downs);
        out.push(if i % 2 == 0 {
            Q::Line { pos, down, agent }
        } else {
            Q::Capsule { pos, down, agent }
        });
        if i % 3 == 0 {
            let (agent, down) = (rng.pick(&AGENTS), rng.pick(&downs));
            out.push(Q::Capsule { pos, down, agent });
        }
        if i % 2 == 1 {
            out.push(Q::Line { pos, down, agent });
        }
        // Sweeps: any direction, from a zero move to the longest.
        let len = rng.pick(&[0.0, 0.5, 10.0, 39.0, 41.0, 120.0, 256.0]);
        let ang = rng.range(0.0, std::f64::consts::TAU);
        let agent = rng.pick(&AGENTS);
        let pos = [p[0], p[1], bottom + agent.half_height_cm + rng.pick(&[0.0, 2.15, 30.0])];
        out.push(Q::Sweep {
            pos,
            delta: [len * ang.cos(), len * ang.sin()],
            agent,
        });
        // And one aimed at a vertex (a wall, a step, a box) from beside it,
        // hovering over the floor.
        let v = mesh.vertices[rng.below(mesh.vertices.len())];
        let (c, s) = (ang.cos(), ang.sin());
        let agent = rng.pick(&AGENTS);
        let away = agent.radius_cm + rng.range(5.0, 100.0);
        out.push(Q::Sweep {
            pos: [v[0] + away * c, v[1] + away * s, z0 + 2.15 + agent.half_height_cm],
            delta: [-200.0 * c, -200.0 * s],
            agent,
        });
    }
    for k in 0..4 {
        let p = xy[k * 7];
        out.push(Q::Warmup {
            center: [p[0], p[1], z0 + 50.0],
            radius: [0.0, 100.0, 3300.0, 1e6][k],
        });
    }
    out
}

/// A handful of extreme queries every mutated file also gets (a file may
/// raise the limits they are checked against).
fn extreme_queries() -> Vec<Q> {
    let huge = Agent {
        radius_cm: 6e12,
        half_height_cm: 6e12,
    };
    let big = Agent {
        radius_cm: 1e6,
        half_height_cm: 1e6,
    };
    vec![
        Q::Capsule {
            pos: [0.0, 0.0, 100.0],
            down: 1e30,
            agent: huge,
        },
        Q::Line {
            pos: [10.0, 10.0, 100.0],
            down: 1e300,
            agent: big,
        },
        Q::Sweep {
            pos: [0.0, 0.0, 100.0],
            delta: [0.0, 0.0],
            agent: huge,
        },
        Q::Sweep {
            pos: [-6.5e12, -6.5e12, 0.0],
            delta: [1.3e13, 1.3e13],
            agent: Agent::DEFAULT,
        },
        Q::Sweep {
            pos: [100.0, 100.0, 100.0],
            delta: [3e5, -2e5],
            agent: big,
        },
        Q::Warmup {
            center: [1e15, -1e15, 0.0],
            radius: 1e30,
        },
    ]
}

fn bake(name: &str, mesh: &Mesh) -> Vec<u8> {
    let config = BakeConfig {
        threads: 1,
        ..BakeConfig::default()
    };
    bake_mesh(mesh, &config, 7, &Silent)
        .unwrap_or_else(|e| panic!("{name}: bake: {e}"))
        .bytes
}

fn build_level(name: &'static str, mesh: Mesh, seed: u64) -> Level {
    let bytes = bake(name, &mesh);
    let layout = FileView::parse(&bytes).unwrap_or_else(|e| panic!("{name}: parse: {e}"));
    let queries = level_queries(&mesh, seed);
    let mut s = Surface::from_bytes_verified(&bytes).unwrap_or_else(|e| panic!("{name}: open: {e}"));
    let mut clean: [Vec<A>; 2] = Default::default();
    for (k, path) in [PrecisionPath::Fast, PrecisionPath::Reference].into_iter().enumerate() {
        s.set_precision_path(path);
        let mut cache = QueryCache::new();
        clean[k] = queries
            .iter()
            .enumerate()
            .map(|(i, q)| ask(&s, q, i, &mut cache))
            .collect();
    }
    Level {
        name,
        bytes,
        layout,
        queries,
        clean,
    }
}

fn levels() -> &'static [Level; 2] {
    static LEVELS: OnceLock<[Level; 2]> = OnceLock::new();
    LEVELS.get_or_init(|| {
        [
            build_level("hall", hall(), 0x5EED_0001),
            build_level("corner", corner(), 0x5EED_0002),
        ]
    })
}

// ---------------------------------------------------------------------------
// Asking and judging.

/// Asks `q`; `via` picks the entry point (plain, cached, `_or`).
fn ask(s: &Surface, q: &Q, via: usize, cache: &mut QueryCache) -> A {
    match *q {
        Q::Line { pos, down, agent } | Q::Capsule { pos, down, agent } => {
            let mode = if matches!(q, Q::Line { .. }) {
                FloorMode::LineTrace
            } else {
                FloorMode::Capsule
            };
            A::Floor(match via % 3 {
                0 => s.find_floor(pos, down, agent, mode),
                1 => s.find_floor_cached(cache, pos, down, agent, mode),
                _ => s.find_floor_or(cache, pos, down, agent, mode, FloorOutcome::Fallback),
            })
        }
        Q::Sweep { pos, delta, agent } => A::Sweep(match via % 3 {
            0 => {
                let _ = s.sweep_certified_clear(pos, delta, agent);
                s.sweep_horizontal(pos, delta, agent)
            }
            1 => s.sweep_horizontal_cached(cache, pos, delta, agent),
            _ => s.sweep_horizontal_or(cache, pos, delta, agent, SweepOutcome::Fallback),
        }),
        Q::Warmup { center, radius } => A::Warm(s.warmup(center, radius)),
    }
}

fn unit(v: [f64; 3]) -> bool {
    ((v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt() - 1.0).abs() <= 1e-6
}

/// What is wrong with an answer on its own, if anything.
fn malformed(a: &A) -> Option<String> {
    match a {
        A::Floor(FloorOutcome::Floor(h)) => {
            (!floor_hit_is_finite(h) || !unit(h.normal)).then(|| format!("malformed floor {h:?}"))
        }
        A::Sweep(SweepOutcome::Hit(h)) => {
            let ok = sweep_hit_is_finite(h)
                && (0.0..=1.0).contains(&h.time)
                && h.distance >= 0.0
                && unit(h.normal)
                && unit(h.impact_normal);
            (!ok).then(|| format!("malformed hit {h:?}"))
        }
        _ => None,
    }
}

/// Whether answer `b` (of a damaged file) may stand next to `a` (of the
/// intact one): a Fallback always may; else the same kind, within the
/// contract's tolerances.
fn agrees(a: &A, b: &A) -> bool {
    let near3 = |x: [f64; 3], y: [f64; 3]| (0..3).all(|k| (x[k] - y[k]).abs() <= 2e-3);
    match (a, b) {
        (_, A::Floor(FloorOutcome::Fallback(_)) | A::Sweep(SweepOutcome::Fallback(_)) | A::Warm(_)) => true,
        (A::Floor(FloorOutcome::NoFloor), A::Floor(FloorOutcome::NoFloor)) => true,
        (A::Floor(FloorOutcome::Floor(x)), A::Floor(FloorOutcome::Floor(y))) => {
            (x.floor_dist - y.floor_dist).abs() <= 0.02 && near3(x.normal, y.normal) && x.walkable == y.walkable
        }
        (A::Sweep(SweepOutcome::Clear), A::Sweep(SweepOutcome::Clear)) => true,
        (A::Sweep(SweepOutcome::Hit(x)), A::Sweep(SweepOutcome::Hit(y))) => (x.distance - y.distance).abs() <= 0.02,
        _ => false,
    }
}

/// Whether `q`'s inputs are ones the API must refuse (`InvalidInput`).
fn invalid_input(q: &Q) -> bool {
    let agent_ok = |a: &Agent| {
        a.radius_cm.is_finite() && a.half_height_cm.is_finite() && a.radius_cm > 0.0 && a.half_height_cm >= a.radius_cm
    };
    match q {
        Q::Line { pos, down, agent } | Q::Capsule { pos, down, agent } => {
            !pos.iter().all(|v| v.is_finite()) || !down.is_finite() || *down < 0.0 || !agent_ok(agent)
        }
        Q::Sweep { pos, delta, agent } => !pos.iter().chain(delta).all(|v| v.is_finite()) || !agent_ok(agent),
        Q::Warmup { .. } => false,
    }
}

// ---------------------------------------------------------------------------
// Issues.

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum IssueKind {
    OpenPanic,
    QueryPanic,
    Hang,
    Slow,
    Malformed,
    /// An answer from a file whose damage is cheap to detect that differs
    /// from the intact file's.
    WrongAnswer,
    /// `from_bytes` and `from_bytes_verified` disagree, a truncated file
    /// opens, or an invalid input is not refused.
    Contract,
}

#[derive(Clone, Debug)]
struct Issue {
    kind: IssueKind,
    file: String,
    what: String,
}

/// The damaged field of a file label, with tile and record numbers
/// dropped: `hall / tile[2].z_quant_cm @524 = …` → `hall / tile[].z_quant_cm`.
fn field_of(file: &str) -> String {
    let name = file.split(" @").next().unwrap_or(file);
    let mut out = String::new();
    let mut depth = 0;
    for ch in name.chars() {
        match ch {
            '[' => {
                depth += 1;
                out.push(ch);
            }
            ']' => {
                depth -= 1;
                out.push(ch);
            }
            _ if depth > 0 => {}
            _ => out.push(ch),
        }
    }
    out
}

/// Prints every issue (grouped) and panics if there is any.
#[track_caller]
fn report(what: &str, issues: &[Issue]) {
    let mut groups: BTreeMap<(IssueKind, String), Vec<&Issue>> = BTreeMap::new();
    for i in issues {
        // Group panics by location, wrong answers by the field damaged,
        // other issues by their first words.
        let key = match (i.kind, i.what.rfind(" @ ")) {
            (IssueKind::OpenPanic | IssueKind::QueryPanic, Some(at)) => {
                i.what[at..].split(" | ").next().unwrap_or("").to_owned()
            }
            (IssueKind::WrongAnswer, _) => field_of(&i.file),
            _ => i.what.chars().take(40).collect(),
        };
        groups.entry((i.kind, key)).or_default().push(i);
    }
    for ((kind, key), list) in &groups {
        println!("{what}: {kind:?} ×{} [{key}]", list.len());
        let shown = if *kind == IssueKind::WrongAnswer { 1 } else { 3 };
        let mut values: Vec<&str> = list.iter().filter_map(|i| i.file.split(" = ").nth(1)).collect();
        values.sort_unstable();
        values.dedup();
        if !values.is_empty() {
            println!("    values: {}", values.join(", "));
        }
        for i in list.iter().take(shown) {
            println!("    file: {}\n    what: {}", i.file, i.what);
        }
    }
    assert!(
        issues.is_empty(),
        "{what}: {} issues (first: {:?})",
        issues.len(),
        issues.first()
    );
}

// ---------------------------------------------------------------------------
// Mutations.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reseal {
    /// Bytes as mutated.
    None,
    /// Header checksum only (a mutation of the table checksum field).
    Header,
    /// Section table and header checksums.
    Table,
    /// Every section checksum too: the verified open then validates alike.
    All,
}

#[derive(Clone, Debug)]
struct Mutation {
    label: String,
    edits: Vec<(usize, Vec<u8>)>,
    /// The file cut to (or padded with zeros to) this length.
    resize: Option<usize>,
    reseal: Reseal,
    /// The damage is cheap to detect: no answer may differ from the intact
    /// file's.
    detectable: bool,
    /// The file must be refused.
    must_fail: bool,
    /// Section bytes changed without re-sealing: the verified open must
    /// refuse the file.
    verified_must_fail: bool,
}

impl Mutation {
    fn apply(&self, clean: &[u8]) -> Vec<u8> {
        let mut b = clean.to_vec();
        for (at, bytes) in &self.edits {
            if let Some(dst) = b.get_mut(*at..at + bytes.len()) {
                dst.copy_from_slice(bytes);
            }
        }
        if let Some(n) = self.resize {
            b.resize(n, 0);
        }
        reseal(&mut b, self.reseal);
        b
    }
}

/// Re-seals what `how` says after `bytes` changed (for a table entry
/// pointing out of the file, its checksum is left alone).
fn reseal(bytes: &mut [u8], how: Reseal) {
    if how == Reseal::None || bytes.len() < 64 {
        return;
    }
    let Ok((mut h, _)) = Header::read_from_prefix(bytes) else {
        return;
    };
    let end = 64 + 32 * h.section_count.get() as usize;
    if how == Reseal::All && end <= bytes.len() {
        for e in 0..h.section_count.get() as usize {
            let at = 64 + 32 * e;
            let off = u64::from_le_bytes(bytes[at + 8..at + 16].try_into().unwrap_or([0; 8]));
            let len = u64::from_le_bytes(bytes[at + 16..at + 24].try_into().unwrap_or([0; 8]));
            let range = usize::try_from(off)
                .ok()
                .zip(usize::try_from(len).ok())
                .and_then(|(o, l)| Some(o..o.checked_add(l)?));
            if let Some(sum) = range.and_then(|r| bytes.get(r)).map(hash64) {
                bytes[at + 24..at + 32].copy_from_slice(&sum.to_le_bytes());
            }
        }
    }
    if matches!(how, Reseal::Table | Reseal::All)
        && let Some(table) = bytes.get(64..end)
    {
        h.section_table_checksum.set(hash64(table) as u32);
    }
    seal_header(&mut h);
    bytes[..64].copy_from_slice(h.as_bytes());
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    U8,
    U16,
    U32,
    I32,
    U64,
    F32,
    F64,
}

impl Kind {
    fn width(self) -> usize {
        match self {
            Kind::U8 => 1,
            Kind::U16 => 2,
            Kind::U32 | Kind::I32 | Kind::F32 => 4,
            Kind::U64 | Kind::F64 => 8,
        }
    }
}

/// What a float field holds, for deciding which values are detectably bad.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// Validated at open, or not read by queries, or any value is valid.
    Plain,
    /// A float of the tile data: NaN is detectable.
    Data,
    /// An error bound of the tile data: NaN and negative are detectable.
    Bound,
    /// A tile's z quantisation: a power of two ≥ 1/64 cm (FORMAT.md).
    ZQuant,
}

/// The values a field is set to: `(label, bytes, detectable)`.
fn values(kind: Kind, orig: &[u8], role: Role) -> Vec<(String, Vec<u8>, bool)> {
    let mut out: Vec<(String, Vec<u8>, bool)> = Vec::new();
    match kind {
        Kind::U8 => {
            let o = orig[0];
            for v in [
                0,
                1,
                2,
                3,
                4,
                31,
                32,
                33,
                0x7F,
                0x80,
                0xFE,
                0xFF,
                o.wrapping_add(1),
                o.wrapping_sub(1),
            ] {
                out.push((format!("u8 {v}"), vec![v], false));
            }
        }
        Kind::U16 => {
            let o = u16::from_le_bytes([orig[0], orig[1]]);
            for v in [
                0,
                1,
                2,
                80,
                81,
                0x7FFF,
                0x8000,
                u16::MAX - 1,
                u16::MAX,
                o.wrapping_add(1),
                o.wrapping_sub(1),
            ] {
                out.push((format!("u16 {v}"), v.to_le_bytes().to_vec(), false));
            }
        }
        Kind::U32 => {
            let o = u32::from_le_bytes(orig.try_into().unwrap_or([0; 4]));
            for v in [
                0,
                1,
                2,
                3,
                63,
                64,
                0x7FFF_FFFF,
                0x8000_0000,
                u32::MAX - 1,
                u32::MAX,
                o.wrapping_add(1),
                o.wrapping_sub(1),
                o.wrapping_add(64),
                o.wrapping_sub(64),
                o.wrapping_mul(2),
                o ^ 0xFFFF_0000,
            ] {
                out.push((format!("u32 {v:#x}"), v.to_le_bytes().to_vec(), false));
            }
        }
        Kind::I32 => {
            let o = i32::from_le_bytes(orig.try_into().unwrap_or([0; 4]));
            for v in [
                0,
                1,
                -1,
                i32::MIN,
                i32::MIN + 1,
                i32::MAX,
                i32::MAX - 1,
                o.wrapping_add(1),
                o.wrapping_sub(1),
                o.wrapping_neg(),
                o.wrapping_add(1 << 20),
                o.wrapping_sub(1 << 24),
            ] {
                out.push((format!("i32 {v}"), v.to_le_bytes().to_vec(), false));
            }
        }
        Kind::U64 => {
            let o = u64::from_le_bytes(orig.try_into().unwrap_or([0; 8]));
            for v in [
                0,
                1,
                64,
                u32::MAX as u64,
                1 << 32,
                1 << 63,
                u64::MAX - 1,
                u64::MAX,
                o.wrapping_add(1),
                o.wrapping_sub(1),
                o.wrapping_add(64),
                o.wrapping_sub(64),
                o.wrapping_mul(2),
            ] {
                out.push((format!("u64 {v:#x}"), v.to_le_bytes().to_vec(), false));
            }
        }
        Kind::F32 | Kind::F64 => {
            let o = if kind == Kind::F32 {
                f32::from_le_bytes(orig.try_into().unwrap_or([0; 4])) as f64
            } else {
                f64::from_le_bytes(orig.try_into().unwrap_or([0; 8]))
            };
            let mut vs = vec![
                0.0,
                -0.0,
                1.0,
                -1.0,
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f32::MAX as f64,
                -(f32::MAX as f64),
                f32::MIN_POSITIVE as f64,
                1e-45,
                1e30,
                -1e30,
                2.0 * o,
                -o,
                o + 1.0,
                o - 1.0,
            ];
            if kind == Kind::F64 {
                vs.extend([f64::MAX, -f64::MAX, 1e300]);
            } else {
                vs.push((o as f32).next_up() as f64);
            }
            if role == Role::ZQuant {
                vs.extend([3.0, 0.001, 1.0 / 128.0, 0.75]);
            }
            for v in vs {
                let bytes = if kind == Kind::F32 {
                    (v as f32).to_le_bytes().to_vec()
                } else {
                    v.to_le_bytes().to_vec()
                };
                if bytes == orig {
                    continue;
                }
                let stored = if kind == Kind::F32 { v as f32 as f64 } else { v };
                let detectable = match role {
                    Role::Plain => false,
                    Role::Data => stored.is_nan(),
                    Role::Bound => stored.is_nan() || stored < 0.0,
                    Role::ZQuant => {
                        // (NaN, 0, negative: refused at open anyway.)
                        stored.is_finite() && stored > 0.0 && !(stored >= 1.0 / 64.0 && (stored.log2().fract() == 0.0))
                    }
                };
                out.push((format!("{kind:?} {v:e}"), bytes, detectable));
            }
        }
    }
    out.retain(|(_, b, _)| b != orig);
    out.dedup_by(|a, b| a.1 == b.1);
    out
}

/// One field of the file.
#[derive(Clone, Debug)]
struct Field {
    name: String,
    at: usize,
    kind: Kind,
    role: Role,
    /// Values that matter for this field in particular (a BVH child: its
    /// own line, the line count, a leaf past the records, …).
    extra: Vec<i64>,
}

fn field(name: impl Into<String>, at: usize, kind: Kind, role: Role) -> Field {
    Field {
        name: name.into(),
        at,
        kind,
        role,
        extra: Vec::new(),
    }
}

impl Field {
    fn with(mut self, extra: impl IntoIterator<Item = i64>) -> Field {
        self.extra.extend(extra);
        self
    }
}

/// Mutations setting each field to each of its values.
fn field_mutations(bytes: &[u8], fields: &[Field], reseal: Reseal, must_fail: bool) -> Vec<Mutation> {
    let mut out = Vec::new();
    for f in fields {
        let Some(orig) = bytes.get(f.at..f.at + f.kind.width()) else {
            continue;
        };
        let mut vals = values(f.kind, orig, f.role);
        for &x in &f.extra {
            let b = x.to_le_bytes();
            let v = b[..f.kind.width()].to_vec();
            if v != orig && !vals.iter().any(|(_, w, _)| *w == v) {
                vals.push((format!("{x} (extra)"), v, false));
            }
        }
        for (label, v, detectable) in vals {
            out.push(Mutation {
                label: format!("{} @{} = {label}", f.name, f.at),
                edits: vec![(f.at, v)],
                resize: None,
                reseal,
                detectable,
                must_fail,
                verified_must_fail: false,
            });
        }
    }
    out
}

/// Absolute offset of `p` in `bytes` (the slices come from a view of it).
fn offset_of<T>(bytes: &[u8], p: *const T) -> Option<usize> {
    let (b, p) = (bytes.as_ptr() as usize, p as usize);
    (p >= b && p < b + bytes.len()).then(|| p - b)
}

/// The fields of every structure in the file, by region.
struct Map {
    header: Vec<Field>,
    table: Vec<Field>,
    params: Vec<Field>,
    index: Vec<Field>,
    hot: Vec<Field>,
    bvh: Vec<Field>,
    pieces: Vec<Field>,
    blockers: Vec<Field>,
    certs: Vec<Field>,
    patches: Vec<Field>,
    /// Region boundaries: sections and tile regions.
    boundaries: Vec<usize>,
    /// One field of every record of a kind, over all tiles: name → (kind,
    /// role, offsets).
    arrays: BTreeMap<String, (Kind, Role, Vec<usize>)>,
}

fn map(level: &Level) -> Map {
    let bytes = &level.bytes[..];
    let layout = &level.layout;
    let view = FileView::new(bytes, layout).expect("view");
    use Kind::*;
    use Role::*;
    let header = vec![
        field("magic", 0, U32, Plain),
        field("format_major", 4, U16, Plain),
        field("format_minor", 6, U16, Plain),
        field("precision_layout", 8, U16, Plain),
        field("flags", 10, U16, Plain),
        field("section_count", 12, U16, Plain),
        field("up_axis", 14, U8, Plain),
        field("reserved0", 15, U8, Plain),
        field("tile_size_cm", 16, F32, Plain),
        field("cell_size_cm", 20, F32, Plain),
        field("vertex_steps_per_cm", 24, U32, Plain),
        field("metres_per_unit", 28, F32, Plain),
        field("build_generation", 32, U64, Plain),
        field("input_hash", 40, U64, Plain),
        field("params_hash", 48, U64, Plain),
        field("section_table_checksum", 56, U32, Plain),
        field("header_checksum", 60, U32, Plain),
    ];
    let mut table = Vec::new();
    for e in 0..layout.sections.len() {
        let at = 64 + 32 * e;
        table.push(field(format!("section[{e}].kind"), at, U32, Plain));
        table.push(field(format!("section[{e}].version"), at + 4, U32, Plain));
        table.push(field(format!("section[{e}].offset"), at + 8, U64, Plain));
        table.push(field(format!("section[{e}].length"), at + 16, U64, Plain));
        table.push(field(format!("section[{e}].checksum"), at + 24, U64, Plain));
    }
    let p = layout
        .sections
        .iter()
        .find(|s| s.0 == section::BAKE_PARAMS)
        .expect("params")
        .1
        .start;
    let names = [
        "max_agent_radius_cm",
        "max_agent_half_height_cm",
        "walkable_normal_z",
        "collected_normal_z",
        "max_sweep_len_cm",
        "tile_halo_cm",
        "coplanar_angle_deg",
        "coplanar_dist_cm",
    ];
    let mut params: Vec<Field> = names
        .iter()
        .enumerate()
        .map(|(i, n)| field(*n, p + 4 * i, F32, Plain))
        .collect();
    params.extend((8..16).map(|i| field(format!("params.u32[{i}]"), p + 4 * i, U32, Plain)));
    let ix = layout
        .sections
        .iter()
        .find(|s| s.0 == section::TILE_INDEX)
        .expect("index")
        .1
        .start;
    let mut index = vec![
        field("min_tile_x", ix, I32, Plain),
        field("min_tile_y", ix + 4, I32, Plain),
        field("tiles_x", ix + 8, U32, Plain),
        field("tiles_y", ix + 12, U32, Plain),
    ];
    for s in 0..layout.index.len() / 4 {
        index.push(field(format!("slot[{s}]"), layout.index.start + 4 * s, U32, Plain));
    }
    let mut hot = Vec::new();
    let mut bvh = Vec::new();
    let mut pieces = Vec::new();
    let mut blockers = Vec::new();
    let mut certs = Vec::new();
    let mut patches = Vec::new();
    let mut boundaries: Vec<usize> = layout.sections.iter().flat_map(|s| [s.1.start, s.1.end]).collect();
    boundaries.extend([64, 64 + 32 * layout.sections.len()]);
    let mut arrays: BTreeMap<String, (Kind, Role, Vec<usize>)> = BTreeMap::new();
    let mut arr = |name: &str, kind: Kind, role: Role, at: usize| {
        arrays
            .entry(name.to_owned())
            .or_insert((kind, role, Vec::new()))
            .2
            .push(at);
    };
    for (t, h) in view.hot.iter().enumerate() {
        let at = offset_of(bytes, h).expect("hot in file");
        let hot_fields: [(&str, usize, Kind, Role); 16] = [
            ("tile_x", 0, I32, Plain),
            ("tile_y", 4, I32, Plain),
            ("z_origin_cm", 8, I32, Plain),
            ("z_quant_cm", 12, F32, ZQuant),
            ("blob_offset", 16, U64, Plain),
            ("blob_len", 24, U32, Plain),
            ("piece_lines", 28, U32, Plain),
            ("piece_count", 32, U32, Plain),
            ("pieces_len", 36, U32, Plain),
            ("blocker_lines", 40, U32, Plain),
            ("blocker_count", 44, U32, Plain),
            ("input_hash_lo", 48, U32, Plain),
            ("input_hash_hi", 52, U32, Plain),
            ("patch_count", 56, U32, Plain),
            ("flags", 60, U32, Plain),
            ("flags_b0", 60, U8, Plain),
        ];
        let tile = view.tile(h).expect("tile");
        let flags = h.flags.get() as i64;
        for (n, o, k, r) in hot_fields {
            let extra: Vec<i64> = match n {
                "flags" => vec![flags ^ 1, flags ^ 2, 3],
                "patch_count" => vec![2 * tile.patches.len() as i64, h.patch_count.get() as i64 + 1],
                "blob_len" => vec![h.blob_len.get() as i64 + 48, h.blob_len.get() as i64 - 48],
                _ => vec![],
            };
            hot.push(field(format!("tile[{t}].{n}"), at + o, k, r).with(extra));
        }
        // BVH lines: every node's box and child.
        let (words, nb) = ((tile.pieces.len() / 4) as i64, tile.blockers.len() as i64);
        for (which, lines) in [("piece_bvh", tile.piece_bvh), ("blocker_bvh", tile.blocker_bvh)] {
            let items = if which == "piece_bvh" { words } else { nb };
            if let Some(o) = lines.first().and_then(|l| offset_of(bytes, l)) {
                boundaries.push(o);
                boundaries.push(o + 64 * lines.len());
            }
            for (li, line) in lines.iter().enumerate() {
                let lo = offset_of(bytes, line).expect("line in file");
                for (ni, node) in line.nodes.iter().enumerate() {
                    let no = lo + 16 * ni;
                    let n = format!("tile[{t}].{which}[{li}].node[{ni}]");
                    let (l, nl) = (li as i64, lines.len() as i64);
                    // Its own line, the one before, the next, the last, one
                    // past it; the first leaf, the last, one past it.
                    let child_extra = [l, l - 1, l + 1, nl - 1, nl, !0, !(items - 1), !items, !(items + 6)];
                    if node.child.get() == BVH_EMPTY && ni > 0 {
                        // An unused slot: its child only (made used).
                        bvh.push(field(format!("{n}.child"), no + 12, I32, Plain).with(child_extra));
                        continue;
                    }
                    for k in 0..3 {
                        bvh.push(field(format!("{n}.min[{k}]"), no + 2 * k, U16, Plain));
                        bvh.push(field(format!("{n}.max[{k}]"), no + 6 + 2 * k, U16, Plain));
                        arr(&format!("{which}.node.min[{k}]"), U16, Plain, no + 2 * k);
                        arr(&format!("{which}.node.max[{k}]"), U16, Plain, no + 6 + 2 * k);
                    }
                    bvh.push(field(format!("{n}.child"), no + 12, I32, Plain).with(child_extra));
                }
            }
        }
        // Pieces: every leaf's record header and some vertices.
        let mut words: Vec<u32> = tile
            .piece_bvh
            .iter()
            .flat_map(|l| l.nodes.iter())
            .map(|n| n.child.get())
            .filter(|&c| c < 0 && c != BVH_EMPTY)
            .map(|c| !c as u32)
            .collect();
        words.sort_unstable();
        words.dedup();
        for w in words {
            let Some((ph, verts)) = tile.piece(w) else { continue };
            let po = offset_of(bytes, ph).expect("piece in file");
            let n = format!("tile[{t}].piece@w{w}");
            pieces.extend([
                field(format!("{n}.patch"), po, U16, Plain)
                    .with([tile.patches.len() as i64, tile.patches.len() as i64 - 1]),
                field(format!("{n}.vertex_count"), po + 2, U8, Plain),
                field(format!("{n}.flags"), po + 3, U8, Plain),
                field(format!("{n}.plane_a"), po + 4, F32, Data),
                field(format!("{n}.plane_b"), po + 8, F32, Data),
                field(format!("{n}.plane_c"), po + 12, F32, Data),
                field(format!("{n}.z_err_cm"), po + 16, F32, Bound),
                field(format!("{n}.interior_edges"), po + 20, U32, Plain),
            ]);
            for (f, o, k, r) in [
                ("patch", 0, U16, Plain),
                ("vertex_count", 2, U8, Plain),
                ("flags", 3, U8, Plain),
                ("plane_a", 4, F32, Data),
                ("plane_b", 8, F32, Data),
                ("plane_c", 12, F32, Data),
                ("z_err_cm", 16, F32, Bound),
                ("interior_edges", 20, U32, Plain),
            ] {
                arr(&format!("piece.{f}"), k, r, po + o);
            }
            let nv = verts.len();
            for v in [0, 1, nv - 1] {
                pieces.push(field(format!("{n}.v[{v}].x"), po + 24 + 8 * v, I32, Plain));
                pieces.push(field(format!("{n}.v[{v}].y"), po + 28 + 8 * v, I32, Plain));
            }
        }
        if let Some(o) = offset_of(bytes, tile.pieces.as_ptr()) {
            boundaries.extend([o, o + tile.pieces.len()]);
        }
        // Blockers: every vertex coordinate and the flags (HIDDEN first).
        for (bi, b) in tile.blockers.iter().enumerate() {
            let bo = offset_of(bytes, b).expect("blocker in file");
            let n = format!("tile[{t}].blocker[{bi}]");
            let bf = b.flags.get() as i64;
            arr("blocker.flags", U32, Plain, bo + 36);
            arr("blocker.v[0][2]", I32, Plain, bo + 8);
            blockers.push(field(format!("{n}.flags"), bo + 36, U32, Plain).with([bf ^ 4, 4, 6, 7]));
            blockers.push(field(format!("{n}.flags_b0"), bo + 36, U8, Plain));
            // Every coordinate of the first blockers, one vertex of the rest.
            let coords = if bi < 6 { 0..9 } else { (bi % 3) * 3..(bi % 3) * 3 + 3 };
            for c in coords {
                blockers.push(field(format!("{n}.v[{}][{}]", c / 3, c % 3), bo + 4 * c, I32, Plain));
            }
        }
        if let Some(o) = tile.blockers.first().and_then(|b| offset_of(bytes, b)) {
            boundaries.extend([o, o + 40 * tile.blockers.len()]);
        }
        // The certificate region: index header, cell entries, records, walls.
        if h.flags.get() & tile_flags::HAS_CERT_LISTS != 0
            && let Some(oo) = offset_of(bytes, tile.cert_cells.as_ptr())
        {
            let ho = oo - 8;
            boundaries.extend([ho, oo]);
            for (k, n) in ["x0", "y0", "w", "h"].iter().enumerate() {
                certs.push(field(format!("tile[{t}].cert_index.{n}"), ho + 2 * k, U16, Plain));
            }
            let no = tile.cert_cells.len();
            for k in [0, 1, no / 3, no / 2, no - 2, no - 1] {
                let nc = tile.certs.len() as i64;
                // (Past the records, and the longest list from the first.)
                let values = [nc, nc + 1, (1 << 24) | nc, 255 << 24];
                certs.push(field(format!("tile[{t}].cert_cells[{k}]"), oo + 4 * k, U32, Plain).with(values));
            }
            let nc = tile.certs.len();
            let nw = tile.cert_walls.len() as i64;
            for (ci, c) in tile.certs.iter().enumerate() {
                // Every field of a spread of records.
                if !(ci < 3 || ci % 17 == 0 || ci + 1 == nc) {
                    continue;
                }
                let co = offset_of(bytes, c).expect("cert in file");
                let n = format!("tile[{t}].cert[{ci}]");
                if ci == 0 {
                    for (ci, _) in tile.certs.iter().enumerate() {
                        let co = co + 28 * ci;
                        for (f, o, k, r) in [
                            ("a", 0, F32, Data),
                            ("b", 4, F32, Data),
                            ("k", 8, F32, Data),
                            ("z_err_cm", 12, F32, Bound),
                            ("clear_z", 16, F32, Data),
                            ("walls", 20, U32, Plain),
                            ("cover", 24, U32, Plain),
                        ] {
                            arr(&format!("cert.{f}"), k, r, co + o);
                        }
                    }
                }
                certs.extend([
                    field(format!("{n}.a"), co, F32, Data),
                    field(format!("{n}.b"), co + 4, F32, Data),
                    field(format!("{n}.k"), co + 8, F32, Data),
                    field(format!("{n}.z_err_cm"), co + 12, F32, Bound),
                    field(format!("{n}.clear_z"), co + 16, F32, Data),
                    field(format!("{n}.walls"), co + 20, U32, Plain).with([
                        nw,
                        (nw - 1) | 2 << 16,
                        0xFFFF | 0xFFFF << 16,
                        1 << 16 | nw,
                    ]),
                    field(format!("{n}.walls_count"), co + 22, U16, Plain),
                    field(format!("{n}.cover"), co + 24, U32, Plain),
                ]);
            }
            if let Some(o) = tile.certs.first().and_then(|c| offset_of(bytes, c)) {
                boundaries.extend([o, o + 28 * nc]);
            }
            for w in tile.cert_walls {
                let wo = offset_of(bytes, w).expect("wall in file");
                for (k, (f, r)) in [("x0", Data), ("y1", Data), ("err_cm", Bound), ("rise_cm", Data)]
                    .into_iter()
                    .enumerate()
                {
                    arr(&format!("cert_wall.{f}"), F32, r, wo + [0, 12, 16, 20][k]);
                }
            }
            for (wi, w) in tile.cert_walls.iter().enumerate().take(6) {
                let wo = offset_of(bytes, w).expect("wall in file");
                let n = format!("tile[{t}].cert_wall[{wi}]");
                for (k, (f, r)) in [
                    ("x0", Data),
                    ("y0", Data),
                    ("x1", Data),
                    ("y1", Data),
                    ("err_cm", Bound),
                    ("rise_cm", Data),
                ]
                .into_iter()
                .enumerate()
                {
                    certs.push(field(format!("{n}.{f}"), wo + 4 * k, F32, r));
                }
            }
        }
        // The patch table.
        for (pi, pr) in tile.patches.iter().enumerate() {
            let po = offset_of(bytes, pr).expect("patch in file");
            if pi == 0 {
                boundaries.push(po);
            }
            let n = format!("tile[{t}].patch[{pi}]");
            arr("patch.plane_c", F64, Data, po + 16);
            arr("patch.fit_err_cm", F32, Bound, po + 24);
            arr("patch.flags", U32, Plain, po + 36);
            patches.extend([
                field(format!("{n}.plane_a"), po, F64, Data),
                field(format!("{n}.plane_b"), po + 8, F64, Data),
                field(format!("{n}.plane_c"), po + 16, F64, Data),
                field(format!("{n}.fit_err_cm"), po + 24, F32, Bound),
                field(format!("{n}.edge_dev_cm"), po + 28, F32, Bound),
                field(format!("{n}.cut_dev_cm"), po + 32, F32, Bound),
                field(format!("{n}.flags"), po + 36, U32, Plain),
            ]);
        }
        let blob = layout.data.start + h.blob_offset.get() as usize;
        boundaries.extend([blob, blob + h.blob_len.get() as usize]);
    }
    boundaries.sort_unstable();
    boundaries.dedup();
    Map {
        header,
        table,
        params,
        index,
        hot,
        bvh,
        pieces,
        blockers,
        certs,
        patches,
        boundaries,
        arrays,
    }
}

/// `muts` thinned to about `max` (seeded): every detectable one kept, a
/// random choice of the rest.
fn thin(muts: Vec<Mutation>, max: usize, seed: u64) -> Vec<Mutation> {
    let (mut out, rest): (Vec<_>, Vec<_>) = muts.into_iter().partition(|m| m.detectable);
    let room = max.saturating_sub(out.len());
    if rest.len() <= room {
        out.extend(rest);
        return out;
    }
    let mut rng = Rng(seed | 1);
    let p = room as f64 / rest.len() as f64;
    out.extend(rest.into_iter().filter(|_| rng.unit() < p));
    out
}

// ---------------------------------------------------------------------------
// Running one mutated file.

#[derive(Default)]
struct FileOutcome {
    opened: bool,
    queries: usize,
    /// Answers that were not a Fallback.
    answered: usize,
    /// Answers that differ from the intact file's (any mutation).
    differed: usize,
    issues: Vec<Issue>,
}

/// Opens `bytes` both ways and, if that works, asks every query of the
/// level (Reference: every other one) and the extreme ones.
fn probe(level: &Level, m: &Mutation, bytes: &[u8]) -> FileOutcome {
    let mut out = FileOutcome::default();
    let file = format!("{} / {}", level.name, m.label);
    let issue = |kind, what: String| Issue {
        kind,
        file: file.clone(),
        what,
    };
    let plain = match catch(|| Surface::from_bytes(bytes)) {
        Ok(r) => r,
        Err(p) => {
            out.issues.push(issue(IssueKind::OpenPanic, format!("from_bytes: {p}")));
            return out;
        }
    };
    let verified = match catch(|| Surface::from_bytes_verified(bytes).map(|_| ())) {
        Ok(r) => r,
        Err(p) => {
            out.issues
                .push(issue(IssueKind::OpenPanic, format!("from_bytes_verified: {p}")));
            Ok(())
        }
    };
    match (&plain, &verified) {
        (Err(a), Err(b)) if a != b => out.issues.push(issue(
            IssueKind::Contract,
            format!("opens disagree: from_bytes {a:?}, verified {b:?}"),
        )),
        (Err(a), Ok(())) => out.issues.push(issue(
            IssueKind::Contract,
            format!("verified open accepts what from_bytes refuses: {a:?}"),
        )),
        (Ok(_), Err(b)) if m.reseal == Reseal::All => out.issues.push(issue(
            IssueKind::Contract,
            format!("fully resealed, yet the verified open refuses: {b:?}"),
        )),
        (_, Ok(())) if m.verified_must_fail => out.issues.push(issue(
            IssueKind::Contract,
            "the verified open accepts changed section bytes".into(),
        )),
        _ => {}
    }
    let Ok(mut s) = plain else {
        return out;
    };
    if m.must_fail {
        out.issues
            .push(issue(IssueKind::Contract, "a file that must be refused opened".into()));
    }
    out.opened = true;
    let extreme = extreme_queries();
    for (k, path) in [PrecisionPath::Fast, PrecisionPath::Reference].into_iter().enumerate() {
        s.set_precision_path(path);
        let mut cache = QueryCache::new();
        // A cache last used on the intact file (same generation).
        if let Ok(intact) = Surface::from_bytes(&level.bytes)
            && let Some(q) = level.queries.first()
        {
            let _ = ask(&intact, q, 1, &mut cache);
        }
        for (i, q) in level.queries.iter().enumerate() {
            if k == 1 && i % 2 == 1 {
                continue;
            }
            out.queries += 1;
            match catch(|| ask(&s, q, i, &mut cache)) {
                Err(p) => out.issues.push(issue(
                    IssueKind::QueryPanic,
                    format!("{p} | {path:?} via {} {q:?}", i % 3),
                )),
                Ok(a) => {
                    if let Some(why) = malformed(&a) {
                        out.issues.push(issue(IssueKind::Malformed, format!("{why} for {q:?}")));
                    }
                    if !matches!(
                        a,
                        A::Floor(FloorOutcome::Fallback(_)) | A::Sweep(SweepOutcome::Fallback(_)) | A::Warm(_)
                    ) {
                        out.answered += 1;
                    }
                    let clean = &level.clean[k][i];
                    if !agrees(clean, &a) {
                        out.differed += 1;
                        if m.detectable {
                            out.issues.push(issue(
                                IssueKind::WrongAnswer,
                                format!("{path:?} {q:?}: intact {clean:?}, damaged {a:?}"),
                            ));
                        }
                    }
                }
            }
        }
        for (i, q) in extreme.iter().enumerate() {
            out.queries += 1;
            match catch(|| ask(&s, q, i, &mut cache)) {
                Err(p) => out.issues.push(issue(
                    IssueKind::QueryPanic,
                    format!("{p} | {path:?} via {} {q:?}", i % 3),
                )),
                Ok(a) => {
                    if let Some(why) = malformed(&a) {
                        out.issues.push(issue(IssueKind::Malformed, format!("{why} for {q:?}")));
                    }
                }
            }
        }
    }
    out
}

/// Totals over a batch of mutated files.
#[derive(Default, Debug)]
struct Totals {
    files: usize,
    opened: usize,
    queries: usize,
    answered: usize,
    differed: usize,
    /// Opened files of which some answer differed from the intact file's.
    files_differed: usize,
    slowest: Duration,
}

enum Msg {
    Start(usize),
    Done(usize, FileOutcome, Duration),
}

/// Runs every mutation of `level` on worker threads (one at a time), each
/// file within [`FILE_BUDGET`]; a file that overruns is reported as a hang
/// and the rest continue on a new worker.
fn run_mutations(level: &'static Level, muts: Vec<Mutation>, issues: &mut Vec<Issue>) -> Totals {
    let muts = Arc::new(muts);
    let n = muts.len();
    let mut totals = Totals {
        files: n,
        ..Totals::default()
    };
    let mut next = 0;
    while next < n {
        let (tx, rx) = mpsc::channel();
        let list = Arc::clone(&muts);
        let from = next;
        std::thread::Builder::new()
            .name(format!("corruption-{}-{from}", level.name))
            .spawn(move || {
                for (i, m) in list.iter().enumerate().skip(from) {
                    if tx.send(Msg::Start(i)).is_err() {
                        return;
                    }
                    let t = Instant::now();
                    let bytes = m.apply(&level.bytes);
                    let o = probe(level, m, &bytes);
                    if tx.send(Msg::Done(i, o, t.elapsed())).is_err() {
                        return;
                    }
                }
            })
            .expect("spawn worker");
        let mut current = from;
        loop {
            match rx.recv_timeout(FILE_BUDGET) {
                Ok(Msg::Start(i)) => current = i,
                Ok(Msg::Done(i, o, dt)) => {
                    next = i + 1;
                    totals.opened += o.opened as usize;
                    totals.queries += o.queries;
                    totals.answered += o.answered;
                    totals.differed += o.differed;
                    totals.files_differed += (o.differed > 0) as usize;
                    totals.slowest = totals.slowest.max(dt);
                    if dt > FILE_BUDGET / 5 {
                        issues.push(Issue {
                            kind: IssueKind::Slow,
                            file: format!("{} / {}", level.name, muts[i].label),
                            what: format!("took {dt:?}"),
                        });
                    }
                    issues.extend(o.issues);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    issues.push(Issue {
                        kind: IssueKind::Hang,
                        file: format!("{} / {}", level.name, muts[current].label),
                        what: format!("no answer within {FILE_BUDGET:?} (worker left running)"),
                    });
                    next = current + 1;
                    break;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    if next < n {
                        issues.push(Issue {
                            kind: IssueKind::QueryPanic,
                            file: format!("{} / {}", level.name, muts[current].label),
                            what: "worker died outside catch_unwind".into(),
                        });
                        next = current + 1;
                    }
                    break;
                }
            }
        }
    }
    totals
}

fn print_totals(what: &str, t: &Totals) {
    println!(
        "{what}: {} files, {} opened, {} queries ({} answered), {} answers in {} files differ from the intact file's, slowest file {:?}",
        t.files, t.opened, t.queries, t.answered, t.differed, t.files_differed, t.slowest
    );
}

// ---------------------------------------------------------------------------
// The tests.

/// The levels bake, open verified, and their queries reach floors, hits,
/// misses and both precision paths: the mutation tests are not vacuous.
#[test]
fn levels_are_rich_enough() {
    for level in levels() {
        let view = FileView::new(&level.bytes, &level.layout).expect("view");
        let tiles = view.hot.len();
        let (mut certs, mut patches, mut hidden, mut blockers, mut pieces) = (0, 0, 0, 0, 0);
        for h in view.hot {
            let t = view.tile(h).expect("tile");
            certs += t.certs.len();
            patches += t.patches.len();
            blockers += t.blockers.len();
            pieces += h.piece_count.get() as usize;
            hidden += t
                .blockers
                .iter()
                .filter(|b| b.flags.get() & walksurf_format::blocker_flags::HIDDEN != 0)
                .count();
        }
        let count = |k: usize, f: fn(&A) -> bool| level.clean[k].iter().filter(|a| f(a)).count();
        let floors = count(0, |a| matches!(a, A::Floor(FloorOutcome::Floor(_))));
        let none = count(0, |a| matches!(a, A::Floor(FloorOutcome::NoFloor)));
        let hits = count(0, |a| matches!(a, A::Sweep(SweepOutcome::Hit(_))));
        let clears = count(0, |a| matches!(a, A::Sweep(SweepOutcome::Clear)));
        let ref_floors = count(1, |a| matches!(a, A::Floor(FloorOutcome::Floor(_))));
        println!(
            "{}: {} bytes, {tiles} tiles, {pieces} pieces, {blockers} blockers ({hidden} hidden), {certs} certs, \
             {patches} patches; {} queries: {floors} floors, {none} no floor, {hits} hits, {clears} clears; \
             Reference {ref_floors} floors",
            level.name,
            level.bytes.len(),
            level.queries.len()
        );
        assert!(tiles >= 4, "{}: {tiles} tiles", level.name);
        assert!(certs > 0 && patches > 0 && hidden > 0, "{}", level.name);
        assert!(
            floors >= 30 && none >= 5 && hits >= 10 && clears >= 10,
            "{}",
            level.name
        );
        assert!(ref_floors >= 30, "{}", level.name);
    }
}

/// Runs `muts(level, map)` on both levels; reports and checks the totals.
fn sweep_mutations(what: &str, min_opened: usize, muts: impl Fn(&Level, &Map) -> Vec<Mutation>) {
    let t = Instant::now();
    let mut issues = Vec::new();
    let mut all = Totals::default();
    for level in levels() {
        let m = map(level);
        let list = muts(level, &m);
        let totals = run_mutations(level, list, &mut issues);
        print_totals(&format!("{what} [{}]", level.name), &totals);
        all.files += totals.files;
        all.opened += totals.opened;
        all.queries += totals.queries;
        all.answered += totals.answered;
    }
    println!("{what}: {:?} in all", t.elapsed());
    report(what, &issues);
    assert!(
        all.opened >= min_opened && all.answered > 0,
        "{what}: only {} of {} mutated files opened ({} answers)",
        all.opened,
        all.files,
        all.answered
    );
}

/// Every field of the header, section table, parameters, tile index and
/// hot records, set to each of its values (re-sealed so that validation,
/// not a checksum, decides).
#[test]
fn dense_part_fields() {
    sweep_mutations("dense part", 200, |level, m| {
        let b = &level.bytes[..];
        let mut out = Vec::new();
        for f in &m.header {
            let reseal = match f.name.as_str() {
                "header_checksum" => Reseal::None,
                "section_table_checksum" => Reseal::Header,
                _ => Reseal::Table,
            };
            out.extend(field_mutations(b, std::slice::from_ref(f), reseal, false));
        }
        out.extend(field_mutations(b, &m.table, Reseal::Table, false));
        out.extend(field_mutations(b, &m.params, Reseal::All, false));
        out.extend(field_mutations(b, &m.index, Reseal::All, false));
        out.extend(field_mutations(b, &m.hot, Reseal::All, false));
        // Not re-sealed: a checksum refuses every one.
        let mut unsealed = field_mutations(b, &m.header, Reseal::None, true);
        unsealed.extend(field_mutations(b, &m.table, Reseal::None, true));
        out.extend(thin(unsealed, 400, 3));
        out
    });
}

/// `level`'s bytes with bake parameter `i` (of the eight `f32`s) set to
/// `v`, every checksum re-sealed: a file that validates.
fn with_param(level: &Level, i: usize, v: f32) -> Vec<u8> {
    let p = level
        .layout
        .sections
        .iter()
        .find(|s| s.0 == section::BAKE_PARAMS)
        .expect("params")
        .1
        .start;
    Mutation {
        label: format!("param {i} = {v}"),
        edits: vec![(p + 4 * i, v.to_le_bytes().to_vec())],
        resize: None,
        reseal: Reseal::All,
        detectable: false,
        must_fail: false,
        verified_must_fail: false,
    }
    .apply(&level.bytes)
}

/// Every BVH line's boxes and children, and every piece record's header
/// and some vertices, of every tile (thinned).
#[test]
fn tile_bvh_and_piece_fields() {
    sweep_mutations("bvh+pieces", 5000, |level, m| {
        let b = &level.bytes[..];
        let mut out = thin(field_mutations(b, &m.bvh, Reseal::All, false), 5000, 11);
        out.extend(thin(field_mutations(b, &m.pieces, Reseal::All, false), 4500, 12));
        out
    });
}

/// Every blocker's flags and coordinates, the certificate region (index
/// rectangle, offsets, records, walls) and the patch table (thinned).
#[test]
fn tile_blocker_cert_patch_fields() {
    sweep_mutations("blockers+certs+patches", 5000, |level, m| {
        let b = &level.bytes[..];
        let mut out = thin(field_mutations(b, &m.blockers, Reseal::All, false), 2500, 21);
        out.extend(thin(field_mutations(b, &m.certs, Reseal::All, false), 5000, 22));
        out.extend(thin(field_mutations(b, &m.patches, Reseal::All, false), 1500, 23));
        out
    });
}

/// One field of every record of a kind (every certificate's `clear_z`,
/// every piece's `z_err_cm`, every blocker's flags, every BVH node's box,
/// …) set at once to each of its values.
#[test]
fn whole_array_fields() {
    sweep_mutations("whole arrays", 300, |level, m| {
        let b = &level.bytes[..];
        let mut out = Vec::new();
        for (name, (kind, role, at)) in &m.arrays {
            let Some(orig) = at.first().and_then(|&o| b.get(o..o + kind.width())) else {
                continue;
            };
            for (label, v, detectable) in values(*kind, orig, *role) {
                out.push(Mutation {
                    label: format!("every {name} ({}) = {label}", at.len()),
                    edits: at.iter().map(|&o| (o, v.clone())).collect(),
                    resize: None,
                    reseal: Reseal::All,
                    detectable,
                    must_fail: false,
                    verified_must_fail: false,
                });
            }
        }
        out
    });
}

/// Truncations at (and one byte beside) every section and tile region
/// boundary, re-sealed or not, and a padded file: all refused. Seeded byte
/// flips and overwritten runs in the tile data (not re-sealed: the
/// verified open refuses them, the plain one must answer safely), flips
/// anywhere with every checksum re-sealed, and flips in the dense part.
#[test]
fn flips_and_truncations() {
    sweep_mutations("flips+truncations", 2000, |level, m| {
        let b = &level.bytes[..];
        let len = b.len();
        let data = level.layout.data.clone();
        let mut rng = Rng(0xF11B_0000 ^ len as u64);
        let mut out = Vec::new();
        let base = |label: String| Mutation {
            label,
            edits: Vec::new(),
            resize: None,
            reseal: Reseal::None,
            detectable: false,
            must_fail: false,
            verified_must_fail: false,
        };
        let mut cuts: Vec<usize> = m
            .boundaries
            .iter()
            .flat_map(|&x| [x.saturating_sub(1), x, x + 1])
            .collect();
        cuts.extend([0, 1, 4, 63, 64, 65, len - 64, len - 1]);
        cuts.sort_unstable();
        cuts.dedup();
        for n in cuts.into_iter().filter(|&n| n < len) {
            for reseal in [Reseal::None, Reseal::Table] {
                out.push(Mutation {
                    resize: Some(n),
                    reseal,
                    must_fail: true,
                    ..base(format!("truncated to {n} ({reseal:?})"))
                });
            }
        }
        for extra in [1, 63, 64, 4096] {
            out.push(Mutation {
                resize: Some(len + extra),
                reseal: Reseal::All,
                must_fail: true,
                ..base(format!("padded by {extra}"))
            });
        }
        let flip = |rng: &mut Rng, range: std::ops::Range<usize>, n: usize| -> Vec<(usize, Vec<u8>)> {
            let mut edits: Vec<(usize, Vec<u8>)> = Vec::new();
            for _ in 0..n {
                let at = range.start + rng.below(range.len());
                let orig = edits.iter().rev().find(|e| e.0 == at).map_or(b[at], |e| e.1[0]);
                edits.push((at, vec![orig ^ (1 + rng.below(255)) as u8]));
            }
            edits
        };
        for i in 0..2500 {
            let n = 1 + rng.below(4);
            let edits = flip(&mut rng, data.clone(), n);
            let changed = edits.iter().any(|(at, v)| b[*at] != v[0]) || edits.len() > 1;
            out.push(Mutation {
                edits,
                verified_must_fail: changed,
                ..base(format!("tile data flip #{i}"))
            });
        }
        for i in 0..400 {
            let at = data.start + rng.below(data.len());
            let run: Vec<u8> = (0..1 + rng.below(64)).map(|_| rng.next() as u8).collect();
            let run: Vec<u8> = run.into_iter().take(data.end - at).collect();
            out.push(Mutation {
                edits: vec![(at, run)],
                ..base(format!("tile data run #{i} @{at}"))
            });
        }
        for i in 0..600 {
            out.push(Mutation {
                edits: {
                    let n = 1 + rng.below(3);
                    flip(&mut rng, 0..len, n)
                },
                reseal: Reseal::All,
                ..base(format!("resealed flip #{i}"))
            });
        }
        for i in 0..300 {
            out.push(Mutation {
                edits: {
                    let n = 1 + rng.below(2);
                    flip(&mut rng, 64..data.start, n)
                },
                reseal: Reseal::Table,
                ..base(format!("dense part flip #{i}"))
            });
        }
        // (Edits that undo each other leave the file intact.)
        out.retain(|m| m.resize.is_some() || m.apply(b) != b);
        out
    });
}

// ---------------------------------------------------------------------------
// Hostile query inputs.

const HOSTILE_COORDS: [f64; 14] = [
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::MAX,
    -f64::MAX,
    1e300,
    // Around the last tile coordinate `i32` holds (× 3200 cm).
    6.871_947_670_4e12,
    6.871_947_670_3e12,
    -6.871_947_673_6e12,
    -6.871_947_670_4e12,
    5e-324,
    -0.0,
    -1e-300,
    3_199.999_999_999_999_5,
];

fn hostile_agents() -> Vec<Agent> {
    let a = |radius_cm: f64, half_height_cm: f64| Agent {
        radius_cm,
        half_height_cm,
    };
    vec![
        Agent::DEFAULT,
        a(0.0, 96.0),
        a(-0.0, 96.0),
        a(-1.0, 96.0),
        a(f64::NAN, 96.0),
        a(42.0, f64::NAN),
        a(f64::INFINITY, f64::INFINITY),
        a(42.0, f64::INFINITY),
        a(42.0, 41.999),
        a(42.0, 42.0),
        a(1e-300, 96.0),
        a(5e-324, 5e-324),
        a(42.000_001, 96.0),
        a(1e6, 1e6),
        a(6e12, 6e12),
        a(20.0, 1e300),
        a(f64::MAX, f64::MAX),
    ]
}

const HOSTILE_DOWNS: [f64; 12] = [
    0.0,
    -0.0,
    -1.0,
    -1e-300,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    1e-300,
    DEFAULT_FLOOR_DOWN_CM,
    1e6,
    1e300,
    f64::MAX,
];

fn hostile_deltas() -> Vec<[f64; 2]> {
    vec![
        [0.0, 0.0],
        [-0.0, -0.0],
        [f64::NAN, 0.0],
        [0.0, f64::INFINITY],
        [f64::NEG_INFINITY, f64::NEG_INFINITY],
        [1e-300, 0.0],
        [5e-324, -5e-324],
        [256.0, 0.0],
        [256.000_001, 0.0],
        [181.0, 181.0],
        [-40.0, 0.000_001],
        [1e155, 1e155],
        [1e300, -1e300],
        [f64::MAX, 0.0],
        [3200.0, 3200.0],
        [1.3e13, 1.3e13],
    ]
}

/// Hostile queries around `level`: positions with hostile coordinates
/// (one axis at a time, the others over the level), hostile agents,
/// downs and deltas, every entry point, both precision paths.
fn hostile_queries(level: &Level) -> Vec<Q> {
    let mut anchors: Vec<[f64; 3]> = level
        .queries
        .iter()
        .filter_map(|q| match q {
            Q::Line { pos, .. } => Some(*pos),
            _ => None,
        })
        .step_by(12)
        .take(6)
        .collect();
    anchors.push([0.0, 0.0, 0.0]);
    let mut positions = anchors.clone();
    for (i, &v) in HOSTILE_COORDS.iter().enumerate() {
        let p = anchors[i % anchors.len()];
        for axis in 0..3 {
            let mut q = p;
            q[axis] = v;
            positions.push(q);
        }
        positions.push([v, v, p[2]]);
    }
    let agents = hostile_agents();
    let deltas = hostile_deltas();
    let mut out = Vec::new();
    let mut rng = Rng(0x4057_11E5);
    for (pi, &pos) in positions.iter().enumerate() {
        for (ai, &agent) in agents.iter().enumerate() {
            // Every agent at every position, downs and deltas rotating.
            let down = HOSTILE_DOWNS[(pi + ai) % HOSTILE_DOWNS.len()];
            out.push(Q::Line { pos, down, agent });
            let down = HOSTILE_DOWNS[(pi * 7 + ai * 3) % HOSTILE_DOWNS.len()];
            out.push(Q::Capsule { pos, down, agent });
            let delta = deltas[(pi + 5 * ai) % deltas.len()];
            out.push(Q::Sweep { pos, delta, agent });
            let delta = deltas[rng.below(deltas.len())];
            out.push(Q::Sweep { pos, delta, agent });
        }
        for &down in &HOSTILE_DOWNS {
            out.push(Q::Line {
                pos,
                down,
                agent: Agent::DEFAULT,
            });
            out.push(Q::Capsule {
                pos,
                down,
                agent: Agent::DEFAULT,
            });
        }
        for &delta in &deltas {
            out.push(Q::Sweep {
                pos,
                delta,
                agent: Agent::DEFAULT,
            });
        }
        for radius in [
            0.0,
            -0.0,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            1e-300,
            100.0,
            3200.0,
            1e9,
            f64::MAX,
        ] {
            out.push(Q::Warmup { center: pos, radius });
        }
    }
    out
}

/// Asks every hostile query of `level` on `s`: no panic, a well-formed
/// answer, and inputs the API refuses refused as `InvalidInput`.
fn ask_hostile(level: &Level, s: &mut Surface, file: &str, issues: &mut Vec<Issue>) -> usize {
    let queries = hostile_queries(level);
    let mut asked = 0;
    for path in [PrecisionPath::Fast, PrecisionPath::Reference] {
        s.set_precision_path(path);
        let mut cache = QueryCache::new();
        let t = Instant::now();
        for (i, q) in queries.iter().enumerate() {
            asked += 1;
            let issue = |kind, what: String| Issue {
                kind,
                file: file.to_owned(),
                what,
            };
            match catch(|| ask(s, q, i, &mut cache)) {
                Err(p) => issues.push(issue(
                    IssueKind::QueryPanic,
                    format!("{p} | {path:?} via {} {q:?}", i % 3),
                )),
                Ok(a) => {
                    if let Some(why) = malformed(&a) {
                        issues.push(issue(IssueKind::Malformed, format!("{why} for {q:?}")));
                    }
                    let refused = matches!(
                        a,
                        A::Floor(FloorOutcome::Fallback(FallbackReason::InvalidInput))
                            | A::Sweep(SweepOutcome::Fallback(FallbackReason::InvalidInput))
                    );
                    if invalid_input(q) && !refused {
                        issues.push(issue(
                            IssueKind::Contract,
                            format!("invalid input answered {a:?}: {q:?}"),
                        ));
                    }
                    if let (Q::Warmup { center, radius }, A::Warm(n)) = (q, a)
                        && n > 0
                        && !(center.iter().all(|v| v.is_finite()) && radius.is_finite() && *radius >= 0.0)
                    {
                        issues.push(issue(IssueKind::Contract, format!("warmup touched {n} tiles: {q:?}")));
                    }
                }
            }
        }
        if t.elapsed() > FILE_BUDGET {
            issues.push(Issue {
                kind: IssueKind::Slow,
                file: file.to_owned(),
                what: format!("{} hostile queries took {:?}", queries.len(), t.elapsed()),
            });
        }
    }
    asked
}

/// NaN, infinite and huge positions and moves, negative, zero, NaN and
/// huge radii, half-heights and downs, on the intact files.
#[test]
fn hostile_queries_on_intact_files() {
    let mut issues = Vec::new();
    let mut asked = 0;
    for level in levels() {
        let mut s = Surface::from_bytes_verified(&level.bytes).expect("intact file opens");
        asked += ask_hostile(level, &mut s, &format!("{} (intact)", level.name), &mut issues);
    }
    println!("hostile queries on intact files: {asked} asked");
    report("hostile/intact", &issues);
    assert!(asked > 10_000, "{asked}");
}

/// The same hostile queries on files whose parameters are raised to
/// extremes: the largest agent radius and half-height, the longest sweep,
/// the halo, the walkable normal (those a bake could not have written do
/// not open).
#[test]
fn hostile_queries_on_extreme_parameters() {
    let mut issues = Vec::new();
    let mut asked = 0;
    let mut opened = 0;
    for level in levels() {
        for (i, name) in [
            (0, "max_agent_radius_cm"),
            (1, "max_agent_half_height_cm"),
            (2, "walkable_normal_z"),
            (4, "max_sweep_len_cm"),
            (5, "tile_halo_cm"),
        ] {
            for v in [f32::MAX, 1e30, 1e13, 5e12, 1e-30, f32::MIN_POSITIVE, 448.0, 2.0] {
                let bytes = with_param(level, i, v);
                let Ok(mut s) = Surface::from_bytes_verified(&bytes) else {
                    continue;
                };
                opened += 1;
                let file = format!("{} / {name} = {v:e}", level.name);
                asked += ask_hostile(level, &mut s, &file, &mut issues);
            }
        }
    }
    println!("hostile queries on extreme parameters: {opened} files, {asked} asked");
    report("hostile/extreme parameters", &issues);
    // (Of 80 files, those whose parameters the bake could have written open.)
    assert!(opened >= 30 && asked > 100_000, "{opened} files, {asked} queries");
}
