//! `walksurf`: bake, inspect, query, validate and render walkable-surface files.

mod bake;
mod inspect;
mod render;
mod validate;

use clap::{Parser, Subcommand};
use std::process::ExitCode;
use walksurf_cli::query;

/// Bakes the static walkable surface of a level into a compact tiled file,
/// and checks it against an exact capsule sweep.
#[derive(Parser, Debug)]
#[command(name = "walksurf", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

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
    /// corpus of queries over the source level. Exits 1 on any error.
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
        Err(e) => {
            eprintln!("error: {}", format_chain(&e));
            ExitCode::from(2)
        }
    }
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
