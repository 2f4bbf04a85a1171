//! `walksurf`: bake, inspect, query, validate and render walkable-surface files.

/// `println!` that returns a "writing stdout" error instead of panicking
/// (e.g. on a closed pipe, which `main` then ends quietly).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        anyhow::Context::context(writeln!(std::io::stdout(), $($arg)*), "writing stdout")?
    }};
}

/// `eprintln!` that does not panic when stderr's reader is gone (a pipe
/// closed behind it): there is no one to tell; the exit status still says
/// it.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod bake;
mod inspect;
mod output_path;
mod render;
mod validate;

use clap::{Parser, Subcommand};
use std::process::ExitCode;
use walksurf_cli::query;

/// Bakes the static walkable surface of a level into a compact tiled .wsurf
/// file (bake), shows what is in one (inspect, render), answers floor and
/// sweep queries from it (query) and checks it against an exact capsule
/// sweep (validate).
#[derive(Parser, Debug)]
#[command(name = "walksurf", version, long_about = None, after_help = EXIT_STATUS)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// What the exit codes mean, for every command's help.
const EXIT_STATUS: &str = "Exit status: 0 on success; 1 when validate finds a disagreement; 2 on a usage, \
     input or I/O error (one line on stderr). A closed stdout (`| head`) is not an error: the output \
     stops quietly (exit 0; validate keeps its 0 or 1).";

#[derive(Subcommand, Debug)]
enum Command {
    /// Bake a level (glTF/GLB/OBJ) into a .wsurf file.
    ///
    /// The output is written atomically (temporary file, fsync, rename):
    /// on any error an existing OUTPUT is left untouched.
    Bake(bake::Args),
    /// Print a baked file's header, sections, parameters and counts (or,
    /// with --tile, one tile's counts).
    Inspect(inspect::Args),
    /// Answer queries: JSON lines on stdin, one JSON line out per line in.
    ///
    /// {"op":"find_floor","pos":[x,y,z],"down":d,"radius":r,"half_height":h,"mode":"line"|"capsule"}
    /// {"op":"sweep","pos":[x,y,z],"delta":[dx,dy],"radius":r,"half_height":h}
    Query(query::Args),
    /// Compare a baked file with the exact oracle (parry3d-f64) on a seeded
    /// corpus of queries over the source level.
    ///
    /// Exits 0 when every answer agrees, 1 when any disagrees (an error
    /// beyond the tolerances or a false Clear), 2 when it cannot run (bad
    /// arguments, INPUT or FILE).
    #[command(after_help = EXIT_STATUS)]
    Validate(validate::Args),
    /// Draw one tile as a top-down SVG: pieces, blockers, BVH boxes,
    /// certified cells (and the 20 cm grid when asked), each a layer the
    /// legend toggles.
    Render(render::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Bake(a) => bake::run(a),
        Command::Inspect(a) => inspect::run(a),
        Command::Query(a) => query::run(a),
        Command::Validate(a) => validate::run(a),
        Command::Render(a) => render::run(a),
    };
    match result {
        Ok(code) => code,
        // The reader went away (`| head`): nothing left to say (as ripgrep).
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            errln!("error: {}", format_chain(&e));
            ExitCode::from(2)
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|c| c.downcast_ref::<std::io::Error>())
        .any(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
}

/// One line: the error and its causes, each once.
fn format_chain(e: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in e.chain() {
        let s = cause.to_string();
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
    }
    parts.join(": ").replace('\n', " ")
}
