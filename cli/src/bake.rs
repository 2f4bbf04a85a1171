//! `walksurf bake`.

use crate::output_path;
use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use walksurf_bake::{BakeConfig, BakeError, MAX_THREADS, NotReusable, Reporter, UpAxis};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Level mesh: .glb, .gltf or .obj.
    input: PathBuf,
    /// Output .wsurf file. Refused when it is INPUT, the --config file or a
    /// file a glTF INPUT names.
    #[arg(short, long)]
    output: PathBuf,
    #[command(flatten)]
    ingest: IngestArgs,
    /// Worker threads, 1 to 1024 (default: one per core). The output is the
    /// same for any thread count.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=MAX_THREADS as u64))]
    threads: Option<u64>,
    /// Bake every tile. By default, when OUTPUT exists and was baked with the
    /// same settings, only tiles whose input changed are baked and the others
    /// are copied from it (the bytes are the same either way).
    #[arg(long)]
    full: bool,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
    /// No progress, no summary.
    #[arg(short, long)]
    quiet: bool,
}

/// Options that decide how the input is read (shared with `validate`).
#[derive(clap::Args, Debug, Default, Clone)]
pub struct IngestArgs {
    /// TOML file with bake settings (keys of BakeConfig: metres_per_unit, up,
    /// scene, exclude, max_agent_radius_cm, …). Flags override it.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Input units in metres per unit (default 1: glTF metres).
    #[arg(long, value_name = "METRES_PER_UNIT")]
    pub scale: Option<f64>,
    /// Input up axis (default y: glTF convention).
    #[arg(long, value_parser = ["y", "z"])]
    pub up: Option<String>,
    /// glTF scene index (default: the file's default scene); an error for
    /// an OBJ INPUT.
    #[arg(long)]
    pub scene: Option<usize>,
    /// Node-name glob to drop from collision (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
}

impl IngestArgs {
    /// The config for reading `input`: `base`, then the TOML file, then the
    /// flags. A limit the TOML file breaks (and the flags do not mend) is
    /// the file's error, naming it; one a flag breaks is left to the bake,
    /// whose error names the level.
    pub fn apply(&self, mut config: BakeConfig, input: &Path) -> Result<BakeConfig> {
        let mut from_file = None;
        if let Some(path) = &self.config {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            config = toml::from_str(&text).with_context(|| format!("{}: invalid bake config", path.display()))?;
            from_file = Some((path, config.validate()));
        }
        let is_obj = input.extension().is_some_and(|e| e.eq_ignore_ascii_case("obj"));
        if let (Some(scene), true) = (self.scene, is_obj) {
            bail!(
                "{}: --scene {scene}: an OBJ has no scenes (--scene is for glTF)",
                input.display()
            );
        }
        if let (Some((path, _)), Some(scene), None, true) = (&from_file, config.scene, self.scene, is_obj) {
            bail!(
                "{}: scene = {scene}, but INPUT {} is an OBJ, which has no scenes (scene is for glTF)",
                path.display(),
                input.display()
            );
        }
        if let Some(s) = self.scale {
            config.metres_per_unit = s;
        }
        if let Some(up) = &self.up {
            config.up = if up == "z" { UpAxis::Z } else { UpAxis::Y };
        }
        if self.scene.is_some() {
            config.scene = self.scene;
        }
        config.exclude.extend(self.exclude.iter().cloned());
        if let (Some((path, Err(e))), Err(_)) = (from_file, config.validate()) {
            bail!("{}: invalid bake config: {e}", path.display());
        }
        Ok(config)
    }
}

/// indicatif on a terminal; nothing otherwise.
struct Progress {
    bar: Option<ProgressBar>,
}

impl Reporter for Progress {
    fn stage(&self, name: &'static str, total: u64) {
        if let Some(bar) = &self.bar {
            bar.set_length(total);
            bar.set_position(0);
            bar.set_message(name);
        }
    }
    fn advance(&self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(n);
        }
    }
}

pub fn run(args: Args) -> Result<ExitCode> {
    let mut config = args.ingest.apply(BakeConfig::default(), &args.input)?;
    if let Some(t) = args.threads {
        config.threads = usize::try_from(t).unwrap_or(MAX_THREADS);
    }
    // Before the bake: a bad OUTPUT is found at once, and OUTPUT never
    // replaces what the bake reads.
    let inputs = walksurf_bake::input_files(&args.input);
    let named = inputs.iter().enumerate().map(|(i, f)| {
        let what = if i == 0 {
            format!("INPUT {}", f.display())
        } else {
            format!("{}, which INPUT {} names", f.display(), args.input.display())
        };
        (what, f.as_path())
    });
    let toml = args
        .ingest
        .config
        .iter()
        .map(|c| (format!("the --config file {}", c.display()), c.as_path()));
    output_path::refuse_inputs(&args.output, named.chain(toml))?;
    output_path::check_writable_file(&args.output)?;
    let show = !args.quiet && !args.json && std::io::stderr().is_terminal();
    let progress = Progress {
        bar: show.then(|| {
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg:>10} [{bar:30}] {pos}/{len} {elapsed}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar
        }),
    };
    let generation = walksurf_bake::next_generation(&args.output);
    let t = std::time::Instant::now();
    let previous_bytes = if args.full {
        Err(NotReusable::FullRequested)
    } else {
        read_previous(&args.output)
    };
    let previous = previous_bytes.as_ref().map(Vec::as_slice).map_err(Clone::clone);
    let baked = walksurf_bake::bake_file_incremental(&args.input, &config, generation, previous, &progress);
    // Cleared on error too, so that the error stays the only line on stderr.
    if let Some(bar) = &progress.bar {
        bar.finish_and_clear();
    }
    let out = baked.map_err(|e| match e {
        // The errors that do not already name the input.
        BakeError::Config(_) | BakeError::Tile { .. } => {
            anyhow::Error::new(e).context(format!("baking {}", args.input.display()))
        }
        e => e.into(),
    })?;
    // A file without a single floor answers every query with NoFloor or a
    // Fallback: almost certainly the wrong up axis or a walls-only export.
    if out.report.walkable_triangles == 0 {
        anyhow::bail!(
            "{}: no walkable surface: none of its {} triangles faces up within the walkable slope \
             (|normal.z| ≥ {}) without being marked walkable: false (check --up)",
            args.input.display(),
            out.report.triangles,
            config.walkable_normal_z,
        );
    }
    write_output(&args.output, &out.bytes)?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let r = &out.report;
    if args.json {
        let mut v = serde_json::to_value(r)?;
        v["input_path"] = args.input.display().to_string().into();
        v["output_path"] = args.output.display().to_string().into();
        v["total_ms"] = ms.into();
        if let Some(kb) = peak_rss_kb() {
            v["peak_rss_kb"] = kb.into();
        }
        outln!("{v}");
    } else if !args.quiet {
        let how = if r.incremental {
            format!(
                "{} tiles ({} rebaked, {} reused, {} removed)",
                r.tiles, r.rebaked_tiles, r.reused_tiles, r.removed_tiles
            )
        } else {
            format!(
                "{} tiles (full bake: {})",
                r.tiles,
                r.full_bake_reason.as_deref().unwrap_or("requested")
            )
        };
        outln!(
            "baked {} -> {}: {}, {} patches, {} pieces ({} cut by headroom), {} blockers, {} bytes in {:.0} ms \
             ({} of {} triangles walkable, {} degenerate dropped, generation {})",
            args.input.display(),
            args.output.display(),
            how,
            r.patches,
            r.pieces,
            r.cut_pieces,
            r.blockers,
            r.bytes,
            ms,
            r.walkable_triangles,
            r.triangles,
            r.input.degenerate_dropped,
            r.build_generation,
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The process's peak resident set size (VmHWM) in KiB, on Linux.
#[cfg(target_os = "linux")]
fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// Not measured outside Linux.
#[cfg(not(target_os = "linux"))]
fn peak_rss_kb() -> Option<u64> {
    None
}

/// The previous output's bytes, or why there are none to reuse. Never an
/// error: whatever is wrong with the previous output, the bake is a full one.
fn read_previous(path: &Path) -> Result<Vec<u8>, NotReusable> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(NotReusable::NoPrevious),
        Err(e) => Err(NotReusable::Unreadable(e.to_string())),
    }
}

fn write_output(path: &Path, bytes: &[u8]) -> Result<()> {
    walksurf_bake::write_atomic(path, bytes).with_context(|| format!("writing {}", path.display()))
}
