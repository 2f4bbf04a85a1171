//! `walksurf inspect`.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use walksurf::Surface;
use walksurf_bake::stage::contour::{Ring, rings};
use walksurf_format::{CERT_CELLS, FileView, PieceHeader, TileView, VertexFixed, blocker_flags, patch_flags, section};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A .wsurf file.
    file: PathBuf,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    /// Print the counts of one tile instead (tile coordinates, e.g. `0,-1`).
    #[arg(long, value_name = "X,Y", value_parser = parse_tile, allow_hyphen_values = true)]
    tile: Option<(i32, i32)>,
}

/// Parses `--tile X,Y`: two integers separated by a comma.
pub fn parse_tile(s: &str) -> Result<(i32, i32), String> {
    let bad = || format!("expected tile coordinates X,Y (two integers, e.g. 0,-1), got '{s}'");
    let (x, y) = s.split_once(',').ok_or_else(bad)?;
    let x = x.trim().parse::<i32>().map_err(|_| bad())?;
    let y = y.trim().parse::<i32>().map_err(|_| bad())?;
    Ok((x, y))
}

/// Tile `(x, y)` of `view`, or an error naming the file and the tile (and
/// the tile range the file covers).
pub fn find_tile<'a>(view: &FileView<'a>, file: &Path, (x, y): (i32, i32)) -> Result<TileView<'a>> {
    let Some(hot) = view.tile_hot(x, y) else {
        let ih = view.index_header;
        let (x0, y0) = (ih.min_tile_x.get() as i64, ih.min_tile_y.get() as i64);
        let (x1, y1) = (x0 + ih.tiles_x.get() as i64 - 1, y0 + ih.tiles_y.get() as i64 - 1);
        bail!(
            "{}: no tile ({x},{y}) in this file (its {} tiles lie within x {x0}..={x1}, y {y0}..={y1})",
            file.display(),
            view.hot.len()
        );
    };
    view.tile(hot)
        .with_context(|| format!("{}: tile ({x},{y}): blob out of bounds", file.display()))
}

/// Every piece of a tile, in record order.
pub fn tile_pieces<'a>(tile: &TileView<'a>) -> Result<Vec<(&'a PieceHeader, &'a [VertexFixed])>> {
    let mut out = Vec::with_capacity(tile.hot.piece_count.get() as usize);
    let mut word = 0usize;
    while word * 4 < tile.pieces.len() {
        let Some((h, v)) = u32::try_from(word).ok().and_then(|w| tile.piece(w)) else {
            bail!("malformed piece record at byte {} of the piece region", word * 4);
        };
        word += (size_of::<PieceHeader>() + size_of_val(v)) / 4;
        out.push((h, v));
    }
    if out.len() != tile.hot.piece_count.get() as usize {
        bail!(
            "piece region holds {} records, the tile record says {}",
            out.len(),
            tile.hot.piece_count.get()
        );
    }
    Ok(out)
}

/// What one tile holds.
#[derive(Clone, Debug, PartialEq)]
pub struct TileCounts {
    pub tile: (i32, i32),
    pub patches: u32,
    pub pieces: usize,
    pub piece_vertices: usize,
    pub blockers: usize,
    /// Blockers with [`blocker_flags::VERTICAL`].
    pub vertical_blockers: usize,
    /// Blockers with [`blocker_flags::DEMOTED_WALKABLE`].
    pub demoted_walkable_blockers: usize,
    /// Blockers with [`blocker_flags::HIDDEN`] (under the walkable surface;
    /// capsule queries skip them).
    pub hidden_blockers: usize,
    pub piece_bvh_lines: u32,
    pub blocker_bvh_lines: u32,
    /// Certificates, a cell's each (cells × floors).
    pub certificates: usize,
    /// Certificate records stored (cells with equal lists share them).
    pub certificate_records: usize,
    /// Certificate cells (of `CERT_CELLS²`) holding at least one certificate.
    pub certified_cells: usize,
    pub max_piece_z_err_cm: f64,
    /// Patches and pieces the headroom cut removed from the walkable area.
    pub cut_patches: usize,
    pub cut_pieces: usize,
    /// Boundary loops of the patches (outer, holes).
    pub rings: usize,
    pub holes: usize,
    /// Largest recorded deviation of a piece vertex from the true edge, and
    /// of a headroom-cut edge from where headroom ends. [Units: cm]
    pub max_edge_dev_cm: f64,
    pub max_cut_dev_cm: f64,
    pub blob_bytes: u32,
    pub z_origin_cm: i32,
    pub z_quant_cm: f32,
}

impl TileCounts {
    pub fn of(tile: &TileView) -> Result<TileCounts> {
        let pieces = tile_pieces(tile)?;
        let hot = tile.hot;
        let flagged = |bit: u32| tile.blockers.iter().filter(|b| b.flags.get() & bit != 0).count();
        let is_cut = |p: u16| {
            tile.patches
                .get(p as usize)
                .is_some_and(|r| r.flags.get() & patch_flags::HEADROOM_CUT != 0)
        };
        let rings = patch_rings(&pieces);
        let dev =
            |f: fn(&walksurf_format::PatchRecord) -> f32| tile.patches.iter().map(|r| f(r) as f64).fold(0.0, f64::max);
        Ok(TileCounts {
            tile: (hot.tile_x.get(), hot.tile_y.get()),
            patches: hot.patch_count.get(),
            pieces: pieces.len(),
            piece_vertices: pieces.iter().map(|(_, v)| v.len()).sum(),
            blockers: tile.blockers.len(),
            vertical_blockers: flagged(blocker_flags::VERTICAL),
            demoted_walkable_blockers: flagged(blocker_flags::DEMOTED_WALKABLE),
            hidden_blockers: flagged(blocker_flags::HIDDEN),
            piece_bvh_lines: hot.piece_lines.get(),
            blocker_bvh_lines: hot.blocker_lines.get(),
            certificates: certified_cells(tile).map(|(_, _, n)| n).sum(),
            certificate_records: tile.certs.len(),
            certified_cells: certified_cells(tile).count(),
            max_piece_z_err_cm: pieces.iter().map(|(h, _)| h.z_err_cm.get() as f64).fold(0.0, f64::max),
            cut_patches: (0..tile.patches.len()).filter(|&p| is_cut(p as u16)).count(),
            cut_pieces: pieces.iter().filter(|(h, _)| is_cut(h.patch.get())).count(),
            rings: rings.iter().map(|(_, r)| r.len()).sum(),
            holes: rings.iter().flat_map(|(_, r)| r).filter(|r| r.area2 < 0).count(),
            max_edge_dev_cm: dev(|r| r.edge_dev_cm.get()),
            max_cut_dev_cm: dev(|r| r.cut_dev_cm.get()),
            blob_bytes: hot.blob_len.get(),
            z_origin_cm: hot.z_origin_cm.get(),
            z_quant_cm: hot.z_quant_cm.get(),
        })
    }

    pub fn to_json(&self, file: &Path) -> serde_json::Value {
        serde_json::json!({
            "file": file.display().to_string(),
            "tile": [self.tile.0, self.tile.1],
            "patches": self.patches,
            "pieces": self.pieces,
            "piece_vertices": self.piece_vertices,
            "blockers": self.blockers,
            "vertical_blockers": self.vertical_blockers,
            "demoted_walkable_blockers": self.demoted_walkable_blockers,
            "hidden_blockers": self.hidden_blockers,
            "piece_bvh_lines": self.piece_bvh_lines,
            "blocker_bvh_lines": self.blocker_bvh_lines,
            "bvh_lines": self.piece_bvh_lines + self.blocker_bvh_lines,
            "certificates": self.certificates,
            "certificate_records": self.certificate_records,
            "certified_cells": self.certified_cells,
            "max_piece_z_err_cm": self.max_piece_z_err_cm,
            "cut_patches": self.cut_patches,
            "cut_pieces": self.cut_pieces,
            "rings": self.rings,
            "holes": self.holes,
            "max_edge_dev_cm": self.max_edge_dev_cm,
            "max_cut_dev_cm": self.max_cut_dev_cm,
            "blob_bytes": self.blob_bytes,
            "z_origin_cm": self.z_origin_cm,
            "z_quant_cm": self.z_quant_cm,
        })
    }
}

/// Each patch's rings (boundary loops of its pieces, fixed point), by
/// patch index.
pub fn patch_rings(pieces: &[(&PieceHeader, &[VertexFixed])]) -> Vec<(u16, Vec<Ring>)> {
    let mut by_patch: std::collections::BTreeMap<u16, Vec<Vec<[i32; 2]>>> = std::collections::BTreeMap::new();
    for (h, v) in pieces {
        by_patch
            .entry(h.patch.get())
            .or_default()
            .push(v.iter().map(|p| [p.x.get(), p.y.get()]).collect());
    }
    by_patch
        .into_iter()
        .map(|(p, polys)| {
            let refs: Vec<&Vec<[i32; 2]>> = polys.iter().collect();
            (p, rings(&refs))
        })
        .collect()
}

/// Certificate cells `(i, j)` (40 cm each, tile frame) holding at least one
/// certificate, with their count.
pub fn certified_cells<'a>(tile: &TileView<'a>) -> impl Iterator<Item = (usize, usize, usize)> + 'a {
    let tile = *tile;
    (0..CERT_CELLS * CERT_CELLS).filter_map(move |c| {
        let (i, j) = (c % CERT_CELLS, c / CERT_CELLS);
        let n = tile.certs_in_cell(i, j).len();
        (n > 0).then_some((i, j, n))
    })
}

fn run_tile(args: &Args, view: &FileView, xy: (i32, i32)) -> Result<ExitCode> {
    let tile = find_tile(view, &args.file, xy)?;
    let counts = TileCounts::of(&tile).with_context(|| format!("{}: tile ({},{})", args.file.display(), xy.0, xy.1))?;
    let v = counts.to_json(&args.file);
    if args.json {
        outln!("{v}");
    } else {
        outln!("{} tile ({},{})", args.file.display(), xy.0, xy.1);
        for key in [
            "patches",
            "cut_patches",
            "pieces",
            "cut_pieces",
            "piece_vertices",
            "rings",
            "holes",
            "max_piece_z_err_cm",
            "max_edge_dev_cm",
            "max_cut_dev_cm",
            "blockers",
            "vertical_blockers",
            "demoted_walkable_blockers",
            "hidden_blockers",
            "piece_bvh_lines",
            "blocker_bvh_lines",
            "bvh_lines",
            "certificates",
            "certificate_records",
            "certified_cells",
            "blob_bytes",
            "z_origin_cm",
            "z_quant_cm",
        ] {
            outln!("  {key:<26} {}", v[key]);
        }
    }
    Ok(ExitCode::SUCCESS)
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
    if let Some(xy) = args.tile {
        return run_tile(&args, &view, xy);
    }
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
        outln!("{v}");
    } else {
        outln!("{}", args.file.display());
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
            outln!("  {key:<18} {}", v[key]);
        }
        outln!("  {:<18} {}", "params", v["params"]);
        outln!("  {:<18} {}", "tile_grid", v["tile_grid"]);
        outln!("  sections:");
        for s in &sections {
            outln!(
                "    {:<12} offset {:>10} length {:>10}",
                s["kind"].as_str().unwrap_or("?"),
                s["offset"],
                s["length"]
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
