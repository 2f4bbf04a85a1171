//! `walksurf inspect`.

use anyhow::{Context, Result};
use std::path::PathBuf;
use std::process::ExitCode;
use walksurf::Surface;
use walksurf_format::{FileView, section};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A .wsurf file.
    file: PathBuf,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

fn kind_name(kind: u32) -> &'static str {
    match kind {
        section::BAKE_PARAMS => "bake_params",
        section::TILE_INDEX => "tile_index",
        section::TILE_HOT => "tile_hot",
        section::TILE_DATA => "tile_data",
        section::METADATA => "metadata",
        _ => "unknown",
    }
}

pub fn run(args: Args) -> Result<ExitCode> {
    let surface = Surface::open_verified(&args.file)?; // the error names the file
    let layout = surface.layout();
    let view = FileView::new(surface.bytes(), layout).context("file layout")?;
    let h = &layout.header;
    let p = &layout.params;
    let (mut pieces, mut blockers, mut patches, mut lines) = (0u64, 0u64, 0u64, 0u64);
    for hot in view.hot {
        pieces += hot.piece_count.get() as u64;
        blockers += hot.blocker_count.get() as u64;
        patches += hot.patch_count.get() as u64;
        lines += (hot.piece_lines.get() + hot.blocker_lines.get()) as u64;
    }
    let sections: Vec<serde_json::Value> = layout
        .sections
        .iter()
        .map(|(k, r, sum)| {
            serde_json::json!({"kind": kind_name(*k), "offset": r.start, "length": r.len(), "checksum": format!("{sum:016x}")})
        })
        .collect();
    let metadata: serde_json::Value = view
        .metadata(layout)
        .and_then(|m| serde_json::from_str(m).ok())
        .unwrap_or(serde_json::Value::Null);
    let v = serde_json::json!({
        "file": args.file.display().to_string(),
        "bytes": surface.bytes().len(),
        "format_version": format!("{}.{}", h.format_major.get(), h.format_minor.get()),
        "precision_layout": h.precision_layout.get(),
        "precision_known": layout.precision_known,
        "build_generation": h.build_generation.get(),
        "input_hash": format!("{:016x}", h.input_hash.get()),
        "params_hash": format!("{:016x}", h.params_hash.get()),
        "tile_size_cm": h.tile_size_cm.get(),
        "cell_size_cm": h.cell_size_cm.get(),
        "vertex_steps_per_cm": h.vertex_steps_per_cm.get(),
        "up_axis": if h.up_axis == walksurf_format::up_axis::Z { "z" } else { "y" },
        "metres_per_unit": h.metres_per_unit.get(),
        "params": {
            "max_agent_radius_cm": p.max_agent_radius_cm.get(),
            "max_agent_half_height_cm": p.max_agent_half_height_cm.get(),
            "walkable_normal_z": p.walkable_normal_z.get(),
            "collected_normal_z": p.collected_normal_z.get(),
            "max_sweep_len_cm": p.max_sweep_len_cm.get(),
            "tile_halo_cm": p.tile_halo_cm.get(),
        },
        "tile_grid": {
            "min": [view.index_header.min_tile_x.get(), view.index_header.min_tile_y.get()],
            "size": [view.index_header.tiles_x.get(), view.index_header.tiles_y.get()],
        },
        "tiles": view.hot.len(),
        "patches": patches,
        "pieces": pieces,
        "blockers": blockers,
        "bvh_lines": lines,
        "sections": sections,
        "metadata": metadata,
    });
    if args.json {
        println!("{v}");
    } else {
        println!("{}", args.file.display());
        for key in [
            "bytes",
            "format_version",
            "precision_layout",
            "build_generation",
            "input_hash",
            "params_hash",
            "up_axis",
            "metres_per_unit",
            "tiles",
            "patches",
            "pieces",
            "blockers",
            "bvh_lines",
        ] {
            println!("  {key:<18} {}", v[key]);
        }
        println!("  {:<18} {}", "params", v["params"]);
        println!("  {:<18} {}", "tile_grid", v["tile_grid"]);
        println!("  sections:");
        for s in &sections {
            println!(
                "    {:<12} offset {:>10} length {:>10}",
                s["kind"].as_str().unwrap_or("?"),
                s["offset"],
                s["length"]
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
