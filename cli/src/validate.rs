//! `walksurf validate`: the runtime against the exact oracle on a seeded
//! corpus (DESIGN §7).

use crate::bake::IngestArgs;
use anyhow::Result;
use serde::Serialize;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use walksurf::{Agent, DEFAULT_FLOOR_DOWN_CM, FloorMode, FloorOutcome, Surface, SweepOutcome};
use walksurf_bake::{BakeConfig, BakeError};
use walksurf_oracle::corpus::{CorpusConfig, CorpusQuery, QueryClass};
use walksurf_oracle::{AgentShape, Oracle, OracleFloor, OracleSweep};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The level the file was baked from.
    input: PathBuf,
    /// The baked .wsurf file.
    file: PathBuf,
    /// Queries per class (ground and abnormal), 1 to 1000000.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..=MAX_SAMPLES))]
    samples: u64,
    /// Corpus seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    /// Print the first N disagreements.
    #[arg(long, default_value_t = 5)]
    show_errors: usize,
    /// How to read INPUT; by default the settings recorded in FILE.
    #[command(flatten)]
    ingest: IngestArgs,
}

/// Most queries per class. Every query is kept with its answers: a million
/// takes ~40 s and ~600 MB on testdata/dungeon.obj, ten times that would
/// not fit in many machines' memory.
const MAX_SAMPLES: u64 = 1_000_000;

/// Agreement limits of DESIGN §2.
const MAX_DIST_ERR_CM: f64 = 0.01;
const MAX_NORMAL_ERR: f64 = 1e-3;

#[derive(Clone, Debug, Default, Serialize)]
pub struct ClassStats {
    pub n: usize,
    pub answered: usize,
    pub answered_pct: f64,
    pub errors: usize,
    pub false_clear: usize,
    pub max_err_cm: f64,
    pub p99_err_cm: f64,
    pub ns_per_query: f64,
    pub oracle_ns_per_query: f64,
    /// Fallbacks by reason.
    pub fallbacks: std::collections::BTreeMap<&'static str, usize>,
    #[serde(skip)]
    errs: Vec<f64>,
    #[serde(skip)]
    ns: f64,
    #[serde(skip)]
    oracle_ns: f64,
}

impl ClassStats {
    fn finish(&mut self) {
        self.answered_pct = if self.n == 0 {
            100.0
        } else {
            100.0 * self.answered as f64 / self.n as f64
        };
        self.errs.sort_by(f64::total_cmp);
        self.max_err_cm = self.errs.last().copied().unwrap_or(0.0);
        self.p99_err_cm = if self.errs.is_empty() {
            0.0
        } else {
            self.errs[((self.errs.len() - 1) as f64 * 0.99).round() as usize]
        };
        self.ns_per_query = if self.n == 0 { 0.0 } else { self.ns / self.n as f64 };
        self.oracle_ns_per_query = if self.n == 0 {
            0.0
        } else {
            self.oracle_ns / self.n as f64
        };
    }
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct KindStats {
    pub ground: ClassStats,
    pub abnormal: ClassStats,
}

impl KindStats {
    fn class(&mut self, c: QueryClass) -> &mut ClassStats {
        match c {
            QueryClass::Ground => &mut self.ground,
            QueryClass::Abnormal => &mut self.abnormal,
        }
    }
}

pub fn run(args: Args) -> Result<ExitCode> {
    let surface = Surface::open_verified(&args.file)?; // the error names the file
    let recorded = walksurf_format::FileView::new(surface.bytes(), surface.layout())
        .and_then(|v| v.metadata(surface.layout()))
        .and_then(|m| serde_json::from_str::<serde_json::Value>(m).ok())
        .and_then(|m| serde_json::from_value::<BakeConfig>(m["config"].clone()).ok())
        .unwrap_or_default();
    let config = args.ingest.apply(recorded, &args.input)?;
    // Ingest errors name the input, but for a settings error: add it.
    let (mesh, _) = walksurf_bake::stage::ingest::ingest(&args.input, &config).map_err(|e| match e {
        BakeError::Config(_) => anyhow::Error::new(e).context(format!("reading {}", args.input.display())),
        e => e.into(),
    })?;
    let oracle = Oracle::new(&mesh.vertices, &mesh.triangles)
        .map_err(|e| anyhow::anyhow!("{}: cannot build the oracle: {e:?}", args.input.display()))?;
    let agent_shape = AgentShape::default();
    let agent = Agent {
        radius_cm: agent_shape.radius_cm,
        half_height_cm: agent_shape.half_height_cm,
    };
    let samples = usize::try_from(args.samples).unwrap_or(usize::MAX);
    let corpus_cfg = CorpusConfig {
        seed: args.seed,
        ground: samples,
        abnormal: samples,
        agent: agent_shape,
        walkable_normal_z: config.walkable_normal_z,
        hover_cm: 2.15,
        step_cm: 16.67,
        max_delta_cm: config.max_sweep_len_cm,
    };
    let corpus = walksurf_oracle::corpus::generate(&oracle, &mesh.vertices, &mesh.triangles, &corpus_cfg);
    let walkable_z = surface.bake_params().walkable_normal_z.get() as f64;

    let mut line = KindStats::default();
    let mut capsule = KindStats::default();
    let mut sweep = KindStats::default();
    let mut shown = 0usize;
    let mut report = |kind: &str, q: &CorpusQuery, what: String| {
        if shown < args.show_errors && !args.json {
            errln!("  error [{kind}] pos {:?} delta {:?}: {what}", q.pos, q.delta_xy);
        }
        shown += 1;
    };

    // Each kind is timed as a batch (runtime, then oracle), as a game would
    // call it, so neither side's cache misses are charged to the other.
    let down = DEFAULT_FLOOR_DOWN_CM;
    for (mode, stats, name) in [
        (FloorMode::LineTrace, &mut line, "find_floor_line"),
        (FloorMode::Capsule, &mut capsule, "find_floor_capsule"),
    ] {
        let (ours, ns) = timed(&corpus, |q| surface.find_floor(q.pos, down, agent, mode));
        let (truth, oracle_ns) = timed(&corpus, |q| match mode {
            FloorMode::LineTrace => oracle.find_floor_line(q.pos, agent.half_height_cm, down),
            FloorMode::Capsule => oracle.find_floor_capsule(q.pos, agent_shape, down),
        });
        for (i, q) in corpus.iter().enumerate() {
            let s = stats.class(q.class);
            s.n += 1;
            s.ns += ns[i];
            s.oracle_ns += oracle_ns[i];
            if let Err(what) = compare_floor(ours[i], truth[i], walkable_z, s) {
                s.errors += 1;
                report(name, q, what);
            }
        }
    }
    let (ours, ns) = timed(&corpus, |q| surface.sweep_horizontal(q.pos, q.delta_xy, agent));
    let (truth, oracle_ns) = timed(&corpus, |q| oracle.sweep(q.pos, q.delta_xy, agent_shape));
    for (i, q) in corpus.iter().enumerate() {
        let s = sweep.class(q.class);
        s.n += 1;
        s.ns += ns[i];
        s.oracle_ns += oracle_ns[i];
        if let Err(what) = compare_sweep(ours[i], truth[i], s) {
            s.errors += 1;
            report("sweep", q, what);
        }
    }
    let mut total_errors = 0;
    for k in [&mut line, &mut capsule, &mut sweep] {
        for c in [&mut k.ground, &mut k.abnormal] {
            c.finish();
            total_errors += c.errors + c.false_clear;
        }
    }
    // A closed stdout (`| head`) loses the report, not the verdict.
    if let Err(e) = print_report(&args, &line, &capsule, &sweep)
        && !crate::is_broken_pipe(&e)
    {
        return Err(e);
    }
    Ok(if total_errors == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The report on stdout: one JSON object, or the table.
fn print_report(args: &Args, line: &KindStats, capsule: &KindStats, sweep: &KindStats) -> Result<()> {
    if args.json {
        outln!(
            "{}",
            json!({
                "input": args.input.display().to_string(),
                "file": args.file.display().to_string(),
                "seed": args.seed,
                "find_floor_line": line,
                "find_floor_capsule": capsule,
                "sweep": sweep,
            })
        );
    } else {
        outln!(
            "{} vs {} (seed {})",
            args.file.display(),
            args.input.display(),
            args.seed
        );
        outln!(
            "  {:<20} {:<9} {:>6} {:>9} {:>7} {:>6} {:>9} {:>9} {:>10} {:>10}",
            "query",
            "class",
            "n",
            "answered",
            "errors",
            "f.clr",
            "max_err",
            "p99_err",
            "ns/query",
            "oracle ns"
        );
        for (name, k) in [
            ("find_floor_line", line),
            ("find_floor_capsule", capsule),
            ("sweep", sweep),
        ] {
            for (class, c) in [("ground", &k.ground), ("abnormal", &k.abnormal)] {
                outln!(
                    "  {:<20} {:<9} {:>6} {:>8.1}% {:>7} {:>6} {:>9.5} {:>9.5} {:>10.0} {:>10.0}",
                    name,
                    class,
                    c.n,
                    c.answered_pct,
                    c.errors,
                    c.false_clear,
                    c.max_err_cm,
                    c.p99_err_cm,
                    c.ns_per_query,
                    c.oracle_ns_per_query
                );
            }
        }
        outln!("  fallbacks by reason:");
        for (name, k) in [
            ("find_floor_line", line),
            ("find_floor_capsule", capsule),
            ("sweep", sweep),
        ] {
            for (class, c) in [("ground", &k.ground), ("abnormal", &k.abnormal)] {
                if !c.fallbacks.is_empty() {
                    let list: Vec<String> = c.fallbacks.iter().map(|(r, n)| format!("{r} {n}")).collect();
                    outln!("    {name:<20} {class:<9} {}", list.join(", "));
                }
            }
        }
    }
    Ok(())
}

/// Runs `f` over the corpus; returns the answers and each query's share of
/// the batch time (ns), per class: the batch is timed per class run.
fn timed<T>(corpus: &[CorpusQuery], mut f: impl FnMut(&CorpusQuery) -> T) -> (Vec<T>, Vec<f64>) {
    let mut out = Vec::with_capacity(corpus.len());
    let mut ns = vec![0.0; corpus.len()];
    let mut start = 0;
    while start < corpus.len() {
        // A run of queries of one class, timed as one batch.
        let class = corpus[start].class;
        let end = corpus[start..]
            .iter()
            .position(|q| q.class != class)
            .map_or(corpus.len(), |p| start + p);
        let t = Instant::now();
        for q in &corpus[start..end] {
            out.push(f(q));
        }
        let per = t.elapsed().as_nanos() as f64 / (end - start) as f64;
        ns[start..end].iter_mut().for_each(|v| *v = per);
        start = end;
    }
    (out, ns)
}

fn max_abs_diff(a: [f64; 3], b: [f64; 3]) -> f64 {
    (0..3).map(|k| (a[k] - b[k]).abs()).fold(0.0, f64::max)
}

/// `Ok` when the runtime's answer agrees with the oracle (or fell back).
fn compare_floor(ours: FloorOutcome, truth: OracleFloor, walkable_z: f64, s: &mut ClassStats) -> Result<(), String> {
    match (ours, truth) {
        (FloorOutcome::Fallback(r), _) => {
            *s.fallbacks.entry(r.as_str()).or_default() += 1;
            Ok(())
        }
        (FloorOutcome::NoFloor, OracleFloor::NoFloor) => {
            s.answered += 1;
            Ok(())
        }
        (FloorOutcome::Floor(h), OracleFloor::Floor { floor_dist, normal, .. }) => {
            s.answered += 1;
            let err = (h.floor_dist - floor_dist).abs();
            s.errs.push(err);
            let oracle_walkable = normal[2] >= walkable_z;
            if err > MAX_DIST_ERR_CM {
                Err(format!("floor_dist {} vs oracle {}", h.floor_dist, floor_dist))
            } else if max_abs_diff(h.normal, normal) > MAX_NORMAL_ERR {
                Err(format!("normal {:?} vs oracle {:?}", h.normal, normal))
            } else if h.walkable != oracle_walkable {
                Err(format!("walkable {} vs oracle {}", h.walkable, oracle_walkable))
            } else {
                Ok(())
            }
        }
        (ours, truth) => {
            s.answered += 1;
            Err(format!("{ours:?} vs oracle {truth:?}"))
        }
    }
}

fn compare_sweep(ours: SweepOutcome, truth: OracleSweep, s: &mut ClassStats) -> Result<(), String> {
    match (ours, truth) {
        (SweepOutcome::Fallback(r), _) => {
            *s.fallbacks.entry(r.as_str()).or_default() += 1;
            Ok(())
        }
        (SweepOutcome::Clear, OracleSweep::Clear) => {
            s.answered += 1;
            Ok(())
        }
        (SweepOutcome::Clear, truth) => {
            s.answered += 1;
            s.false_clear += 1;
            Err(format!("FALSE CLEAR: oracle {truth:?}"))
        }
        (SweepOutcome::Hit(h), OracleSweep::Hit { distance, .. }) => {
            s.answered += 1;
            let err = (h.distance - distance).abs();
            s.errs.push(err);
            if err > MAX_DIST_ERR_CM {
                Err(format!("distance {} vs oracle {}", h.distance, distance))
            } else {
                Ok(())
            }
        }
        (ours, truth) => {
            s.answered += 1;
            Err(format!("{ours:?} vs oracle {truth:?}"))
        }
    }
}
