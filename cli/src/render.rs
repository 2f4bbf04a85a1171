//! `walksurf render`: a top-down SVG of one tile, so a person can look at
//! what the bake did.
//!
//! Coordinates are tile-local cm (the tile square is `[0, 3200]²`) with y
//! flipped so that +y is up; one SVG user unit is one cm. Each layer is a
//! `<g id="…">` group; the legend's entries toggle them (inline script, so
//! only where the viewer runs scripts: a browser opening the file itself).

use crate::inspect::{TileCounts, certified_cells, find_tile, parse_tile, patch_rings, tile_pieces};
use crate::output_path;
use anyhow::{Context, Result};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use walksurf::Surface;
use walksurf_format::{
    BVH_EMPTY, BVH_XY_MARGIN_CM, BVH_XY_STEPS_PER_CM, BvhLine, CELL_SIZE_CM, CERT_CELL_CM, FileView, TILE_SIZE_CM,
    TileView, blocker_flags, from_fixed, patch_flags,
};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A .wsurf file.
    file: PathBuf,
    /// The tile to draw (tile coordinates, e.g. `0,-1`; `walksurf inspect`
    /// prints the tile grid).
    #[arg(long, value_name = "X,Y", value_parser = parse_tile, allow_hyphen_values = true)]
    tile: (i32, i32),
    /// The SVG file to write (refused when it is FILE).
    #[arg(short = 'o', long = "output", value_name = "SVG")]
    output: PathBuf,
    /// Layers to draw, comma-separated. `all` is every layer but the 20 cm
    /// grid, which is drawn only when named.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        value_name = "LAYER,...",
        default_value = "all"
    )]
    layers: Vec<LayerArg>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum LayerArg {
    /// pieces, rings, blockers, bvh and certs.
    All,
    /// Convex walkable pieces, filled, coloured by patch (grey: cut by
    /// headroom).
    Pieces,
    /// Each patch's boundary rings (green: walkable, red dashed: headroom
    /// cut).
    Rings,
    /// Blocker triangles (vertical ones as thick lines).
    Blockers,
    /// Boxes of the piece and blocker BVHs.
    Bvh,
    /// 40 cm cells holding a flat-floor certificate.
    Certs,
    /// The 20 cm grid over the tile square.
    Grid,
}

/// A drawable layer, in drawing order (bottom first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Layer {
    Pieces,
    Rings,
    Certs,
    Grid,
    Blockers,
    Bvh,
}

impl Layer {
    pub fn id(self) -> &'static str {
        match self {
            Layer::Pieces => "pieces",
            Layer::Rings => "rings",
            Layer::Certs => "certs",
            Layer::Grid => "grid",
            Layer::Blockers => "blockers",
            Layer::Bvh => "bvh",
        }
    }
}

/// The layers `args` ask for, each once, in drawing order.
fn resolve_layers(args: &[LayerArg]) -> Vec<Layer> {
    let mut out = Vec::new();
    for a in args {
        match a {
            LayerArg::All => out.extend([Layer::Pieces, Layer::Rings, Layer::Blockers, Layer::Bvh, Layer::Certs]),
            LayerArg::Pieces => out.push(Layer::Pieces),
            LayerArg::Rings => out.push(Layer::Rings),
            LayerArg::Blockers => out.push(Layer::Blockers),
            LayerArg::Bvh => out.push(Layer::Bvh),
            LayerArg::Certs => out.push(Layer::Certs),
            LayerArg::Grid => out.push(Layer::Grid),
        }
    }
    out.sort();
    out.dedup();
    out
}

pub fn run(args: Args) -> Result<ExitCode> {
    // Written in place, it would destroy the baked file while it is mapped.
    output_path::refuse_inputs(
        &args.output,
        [(format!("FILE {}", args.file.display()), args.file.as_path())],
    )?;
    let surface = Surface::open_verified(&args.file)?; // the error names the file
    let view = FileView::new(surface.bytes(), surface.layout()).context("file layout")?;
    let (x, y) = args.tile;
    let tile = find_tile(&view, &args.file, args.tile)?;
    let counts = TileCounts::of(&tile).with_context(|| format!("{}: tile ({x},{y})", args.file.display()))?;
    let layers = resolve_layers(&args.layers);
    let name = args
        .file
        .file_name()
        .map_or_else(|| args.file.display().to_string(), |n| n.to_string_lossy().into_owned());
    let halo = view.params.tile_halo_cm.get() as f64;
    let svg = render_svg(&name, &tile, &counts, halo, &layers)
        .with_context(|| format!("{}: tile ({x},{y})", args.file.display()))?;
    std::fs::write(&args.output, &svg).with_context(|| format!("writing {}", args.output.display()))?;
    outln!(
        "rendered {} tile ({x},{y}) -> {}: {} pieces, {} blockers, {} BVH lines, {} certified cells ({} bytes)",
        args.file.display(),
        args.output.display(),
        counts.pieces,
        counts.blockers,
        counts.piece_bvh_lines + counts.blocker_bvh_lines,
        counts.certified_cells,
        svg.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// A coordinate in cm, to 0.1 cm.
struct N(f64);

impl std::fmt::Display for N {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = (self.0 * 10.0).round();
        if r % 10.0 == 0.0 {
            write!(f, "{}", (r / 10.0) as i64)
        } else {
            write!(f, "{:.1}", r / 10.0)
        }
    }
}

/// SVG y of tile-local y (+y up).
fn sy(y: f64) -> N {
    N(-y)
}

fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// Fill of pieces whose patch the headroom cut removed from the walkable
/// area.
const CUT_FILL: &str = "#9e9e9e";

/// A stable colour for a patch: hues spread by the golden angle.
fn patch_colour(patch: u16) -> String {
    let h = (patch as f64 * 137.507_764) % 360.0;
    let (s, l) = (
        0.55 + 0.15 * ((patch / 7) % 2) as f64,
        0.60 + 0.08 * ((patch / 3) % 2) as f64,
    );
    let c = (1.0 - (2.0 * l - 1.0_f64).abs()) * s;
    let hp = h / 60.0;
    let x = c * (1.0 - (hp % 2.0 - 1.0).abs());
    let (r, g, b) = match hp as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = l - c / 2.0;
    let byte = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    format!("#{:02x}{:02x}{:02x}", byte(r), byte(g), byte(b))
}

/// De-quantised XY box of a BVH node: `[x0, y0, x1, y1]` tile-local cm.
fn node_box(min: [u16; 2], max: [u16; 2]) -> [f64; 4] {
    let cm = |q: u16| q as f64 / BVH_XY_STEPS_PER_CM - BVH_XY_MARGIN_CM;
    [cm(min[0]), cm(min[1]), cm(max[0]), cm(max[1])]
}

/// Every used node of a BVH: `(box, depth, is_leaf)`, in line order.
fn bvh_nodes(lines: &[BvhLine]) -> Vec<([f64; 4], usize, bool)> {
    let mut depth = vec![0usize; lines.len()];
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let d = depth.get(i).copied().unwrap_or(0);
        for node in &line.nodes {
            let child = node.child.get();
            if child == BVH_EMPTY {
                continue;
            }
            let b = node_box(
                [node.min[0].get(), node.min[1].get()],
                [node.max[0].get(), node.max[1].get()],
            );
            if child >= 0 {
                // Children always follow their parent; anything else is ignored.
                if let Some(slot) = depth.get_mut(child as usize).filter(|_| child as usize > i) {
                    *slot = d + 1;
                }
            }
            out.push((b, d, child < 0));
        }
    }
    out
}

/// The SVG of one tile.
pub fn render_svg(name: &str, tile: &TileView, counts: &TileCounts, halo: f64, layers: &[Layer]) -> Result<String> {
    let t = TILE_SIZE_CM;
    let pieces = tile_pieces(tile)?;
    let piece_nodes = bvh_nodes(tile.piece_bvh);
    let blocker_nodes = bvh_nodes(tile.blocker_bvh);

    // Extent: the tile square plus its halo, grown to the BVH roots (which
    // bound everything stored), within what a BVH box can express.
    let mut ext = [-halo, -halo, t + halo, t + halo];
    for (b, d, _) in piece_nodes.iter().chain(&blocker_nodes) {
        if *d == 0 {
            ext = [ext[0].min(b[0]), ext[1].min(b[1]), ext[2].max(b[2]), ext[3].max(b[3])];
        }
    }
    let (lim_lo, lim_hi) = (-BVH_XY_MARGIN_CM, t + BVH_XY_MARGIN_CM);
    let ext = ext.map(|v| v.clamp(lim_lo, lim_hi));
    let margin = 40.0;
    let header = 400.0;
    let (vx, vw) = (ext[0] - margin, ext[2] - ext[0] + 2.0 * margin);
    let (vy, vh) = (-ext[3] - margin - header, ext[3] - ext[1] + 2.0 * margin + header);
    let width_px = 1400.0;
    let height_px = (width_px * vh / vw).round();

    let mut s = String::with_capacity(256 * 1024);
    let (tx, ty) = counts.tile;
    let origin = tile.origin_cm();
    let name = xml_escape(name);
    // Writing into a String cannot fail: the results are ignored below.
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="{} {} {} {}" width="{}" height="{}" font-family="sans-serif">"#,
        N(vx),
        N(vy),
        N(vw),
        N(vh),
        width_px,
        height_px
    );
    let _ = writeln!(s, "<title>walksurf render: {name} tile ({tx},{ty})</title>");
    let _ = writeln!(
        s,
        "<script type=\"text/ecmascript\"><![CDATA[\nfunction wsToggle(id){{var g=document.getElementById(id);if(!g)return;\
         var hide=g.style.display!=='none';g.style.display=hide?'none':'';\
         var e=document.getElementById('legend-'+id);if(e)e.style.opacity=hide?0.35:1;}}\n]]></script>"
    );
    let _ = writeln!(
        s,
        r##"<rect x="{}" y="{}" width="{}" height="{}" fill="#ffffff"/>"##,
        N(vx),
        N(vy),
        N(vw),
        N(vh)
    );

    for layer in layers {
        match layer {
            Layer::Pieces => {
                let _ = writeln!(
                    s,
                    r##"<g id="pieces" stroke="#303030" stroke-width="1.5" stroke-opacity="0.7" stroke-linejoin="round">"##
                );
                for (i, (h, verts)) in pieces.iter().enumerate() {
                    let patch = h.patch.get();
                    let cut = tile
                        .patches
                        .get(patch as usize)
                        .is_some_and(|r| r.flags.get() & patch_flags::HEADROOM_CUT != 0);
                    let fill = if cut { CUT_FILL.to_owned() } else { patch_colour(patch) };
                    let _ = write!(s, r#"<polygon fill="{fill}" points=""#);
                    let (mut cx, mut cy) = (0.0, 0.0);
                    for (k, v) in verts.iter().enumerate() {
                        let (x, y) = (from_fixed(v.x.get()), from_fixed(v.y.get()));
                        cx += x / verts.len() as f64;
                        cy += y / verts.len() as f64;
                        let _ = write!(s, "{}{},{}", if k == 0 { "" } else { " " }, N(x), sy(y));
                    }
                    let z =
                        h.plane_a.get() as f64 * cx + h.plane_b.get() as f64 * cy + h.plane_c.get() as f64 + origin[2];
                    let _ = writeln!(
                        s,
                        r#""><title>piece {i}: patch {patch}{}, {} vertices, z {} cm at its centre (world), z_err {:.4} cm</title></polygon>"#,
                        if cut { " (headroom cut)" } else { "" },
                        verts.len(),
                        N(z),
                        h.z_err_cm.get()
                    );
                }
                s.push_str("</g>\n");
            }
            Layer::Rings => {
                let (mut walk, mut cut) = (String::new(), String::new());
                for (patch, rings) in patch_rings(&pieces) {
                    let is_cut = tile
                        .patches
                        .get(patch as usize)
                        .is_some_and(|r| r.flags.get() & patch_flags::HEADROOM_CUT != 0);
                    let d = if is_cut { &mut cut } else { &mut walk };
                    for r in rings {
                        for (k, v) in r.vertices.iter().enumerate() {
                            let (x, y) = (from_fixed(v[0]), from_fixed(v[1]));
                            let _ = write!(d, "{}{} {}", if k == 0 { "M" } else { "L" }, N(x), sy(y));
                        }
                        d.push('z');
                    }
                }
                let _ = writeln!(
                    s,
                    r##"<g id="rings" fill="none" stroke-width="4" stroke-linejoin="round"><path d="{walk}" stroke="#0b6b34"/><path d="{cut}" stroke="#c0392b" stroke-dasharray="12 8"/></g>"##
                );
            }
            Layer::Certs => {
                let mut one = String::new();
                let mut more = String::new();
                for (i, j, n) in certified_cells(tile) {
                    let (x, y) = (i as f64 * CERT_CELL_CM, (j + 1) as f64 * CERT_CELL_CM);
                    let d = if n > 1 { &mut more } else { &mut one };
                    let _ = write!(
                        d,
                        "M{} {}h{}v{}h-{}z",
                        N(x),
                        sy(y),
                        N(CERT_CELL_CM),
                        N(CERT_CELL_CM),
                        N(CERT_CELL_CM)
                    );
                }
                let _ = writeln!(
                    s,
                    r##"<g id="certs" fill="#12a150" stroke="#0b6b34" stroke-width="1" stroke-opacity="0.6">"##
                );
                for (d, opacity, what) in [
                    (&one, "0.28", "one certificate"),
                    (&more, "0.5", "two or more certificates (stacked floors)"),
                ] {
                    if !d.is_empty() {
                        let _ = writeln!(
                            s,
                            r#"<path fill-opacity="{opacity}" d="{d}"><title>{what}</title></path>"#
                        );
                    }
                }
                s.push_str("</g>\n");
            }
            Layer::Grid => {
                let _ = writeln!(
                    s,
                    r##"<g id="grid" stroke="#707070" stroke-width="0.6" stroke-opacity="0.45" fill="none">"##
                );
                let mut d = String::new();
                let n = (t / CELL_SIZE_CM).round() as usize;
                for k in 0..=n {
                    let c = k as f64 * CELL_SIZE_CM;
                    let _ = write!(d, "M{} {}V{}M0 {}H{}", N(c), sy(0.0), sy(t), sy(c), N(t));
                }
                let _ = writeln!(s, r#"<path d="{d}"/>"#);
                s.push_str("</g>\n");
            }
            Layer::Blockers => {
                let mut sloped = String::new();
                let mut demoted = String::new();
                let mut vertical = String::new();
                for (i, b) in tile.blockers.iter().enumerate() {
                    let p = b.v.map(|v| (from_fixed(v[0].get()), from_fixed(v[1].get())));
                    let flags = b.flags.get();
                    if flags & blocker_flags::VERTICAL != 0 {
                        // Seen from above a vertical triangle is a segment:
                        // its two vertices farthest apart.
                        let d2 = |a: (f64, f64), b: (f64, f64)| (a.0 - b.0).powi(2) + (a.1 - b.1).powi(2);
                        let (a, c) = [(p[0], p[1]), (p[1], p[2]), (p[2], p[0])]
                            .into_iter()
                            .max_by(|x, y| d2(x.0, x.1).total_cmp(&d2(y.0, y.1)))
                            .unwrap_or((p[0], p[1]));
                        let _ = writeln!(
                            vertical,
                            r#"<line x1="{}" y1="{}" x2="{}" y2="{}"><title>blocker {i} (vertical)</title></line>"#,
                            N(a.0),
                            sy(a.1),
                            N(c.0),
                            sy(c.1)
                        );
                    } else {
                        let (d, what) = if flags & blocker_flags::DEMOTED_WALKABLE != 0 {
                            (&mut demoted, "walkable, kept as a blocker")
                        } else {
                            (&mut sloped, "steep")
                        };
                        let _ = writeln!(
                            d,
                            r#"<path d="M{} {}L{} {}L{} {}Z"><title>blocker {i} ({what})</title></path>"#,
                            N(p[0].0),
                            sy(p[0].1),
                            N(p[1].0),
                            sy(p[1].1),
                            N(p[2].0),
                            sy(p[2].1)
                        );
                    }
                }
                let _ = writeln!(s, r#"<g id="blockers" stroke-linejoin="round" stroke-linecap="round">"#);
                let _ = write!(
                    s,
                    r##"<g id="blockers-steep" fill="#d0402a" fill-opacity="0.10" stroke="#b02818" stroke-width="2">
{sloped}</g>
<g id="blockers-demoted" fill="#f39c12" fill-opacity="0.35" stroke="#c87000" stroke-width="2.5">
{demoted}</g>
<g id="blockers-vertical" stroke="#202020" stroke-width="9">
{vertical}</g>
</g>
"##
                );
            }
            Layer::Bvh => {
                let _ = writeln!(s, r#"<g id="bvh" fill="none">"#);
                for (id, colour, nodes) in [
                    ("bvh-pieces", "#1f5fbf", &piece_nodes),
                    ("bvh-blockers", "#8e44ad", &blocker_nodes),
                ] {
                    // One path per depth (internal nodes, thinner deeper)
                    // and one for the leaves (dashed).
                    let max_depth = nodes.iter().map(|n| n.1).max().unwrap_or(0);
                    let mut by_depth = vec![String::new(); max_depth + 1];
                    let mut leaves = String::new();
                    for (b, d, leaf) in nodes.iter() {
                        let path = if *leaf { &mut leaves } else { &mut by_depth[*d] };
                        let _ = write!(
                            path,
                            "M{} {}h{}v{}h{}z",
                            N(b[0]),
                            sy(b[3]),
                            N(b[2] - b[0]),
                            N(b[3] - b[1]),
                            N(b[0] - b[2])
                        );
                    }
                    let _ = writeln!(s, r#"<g id="{id}" stroke="{colour}">"#);
                    for (d, path) in by_depth.iter().enumerate().filter(|(_, p)| !p.is_empty()) {
                        let w = (5.0 - 1.0 * d as f64).max(1.5);
                        let _ = writeln!(
                            s,
                            r#"<path stroke-width="{}" stroke-opacity="0.6" d="{path}"><title>{id} depth {d}</title></path>"#,
                            N(w)
                        );
                    }
                    if !leaves.is_empty() {
                        let _ = writeln!(
                            s,
                            r#"<path stroke-width="0.8" stroke-opacity="0.4" stroke-dasharray="6 4" d="{leaves}"><title>{id} leaves</title></path>"#
                        );
                    }
                    s.push_str("</g>\n");
                }
                s.push_str("</g>\n");
            }
        }
    }

    // The halo (and anything beyond it) shaded lighter, the tile square
    // outlined dashed, the halo outlined dotted.
    let _ = writeln!(
        s,
        r##"<g id="tile-outline">
<path fill="#ffffff" fill-opacity="0.55" fill-rule="evenodd" d="M{} {}H{}V{}H{}Z M0 {}H{}V{}H0Z"><title>halo: drawn lighter</title></path>
<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#606060" stroke-width="2" stroke-dasharray="4 10"/>
<rect x="0" y="{}" width="{}" height="{}" fill="none" stroke="#000000" stroke-width="5" stroke-dasharray="48 24"/>
<text x="8" y="-10" font-size="34" fill="#000000">(0,0)</text>
<text x="{}" y="{}" font-size="34" fill="#000000" text-anchor="end">({},{})</text>
</g>"##,
        N(vx),
        N(vy + header),
        N(vx + vw),
        N(vy + vh),
        N(vx),
        sy(0.0),
        N(t),
        sy(t),
        N(-halo),
        sy(t + halo),
        N(t + 2.0 * halo),
        N(t + 2.0 * halo),
        sy(t),
        N(t),
        N(t),
        N(t - 8.0),
        N(-t + 38.0),
        N(t),
        N(t)
    );

    // Header: title, frame, legend, scale bar.
    let (hx, hy) = (vx + margin, vy);
    let _ = writeln!(s, r##"<g id="header" fill="#000000">"##);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" font-size="64" font-weight="bold">{name} · tile ({tx},{ty})</text>"#,
        N(hx),
        N(hy + 80.0)
    );
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" font-size="36">{} patches · {} pieces ({} vertices) · {} blockers ({} vertical, {} demoted walkable) · {}+{} BVH lines · {} certificates in {} cells · {} bytes</text>"#,
        N(hx),
        N(hy + 135.0),
        counts.patches,
        counts.pieces,
        counts.piece_vertices,
        counts.blockers,
        counts.vertical_blockers,
        counts.demoted_walkable_blockers,
        counts.piece_bvh_lines,
        counts.blocker_bvh_lines,
        counts.certificates,
        counts.certified_cells,
        counts.blob_bytes
    );
    let _ = writeln!(
        s,
        r##"<text x="{}" y="{}" font-size="30" fill="#404040">top-down, tile-local cm, +y up; origin = world ({}, {}, {}) cm; halo {} cm drawn lighter outside the dashed tile square; click a legend entry to show or hide its layer</text>"##,
        N(hx),
        N(hy + 180.0),
        N(origin[0]),
        N(origin[1]),
        N(origin[2]),
        N(halo)
    );
    // Scale bar: 5 m.
    let bar_x = vx + vw - margin - 500.0;
    let _ = writeln!(
        s,
        r##"<g id="scale"><path d="M{} {}h500M{} {}v24M{} {}v24" stroke="#000000" stroke-width="4" fill="none"/><text x="{}" y="{}" font-size="30" text-anchor="middle">5 m</text></g>"##,
        N(bar_x),
        N(hy + 60.0),
        N(bar_x),
        N(hy + 48.0),
        N(bar_x + 500.0),
        N(hy + 48.0),
        N(bar_x + 250.0),
        N(hy + 40.0)
    );
    let col_w = (vw - 2.0 * margin) / 2.0;
    for (k, layer) in layers.iter().enumerate() {
        let x = hx + (k % 2) as f64 * col_w;
        let y = hy + 230.0 + (k / 2) as f64 * 56.0;
        let id = layer.id();
        let (swatch, label) = match layer {
            Layer::Pieces => (
                format!(
                    r##"<rect x="{}" y="{}" width="14" height="40" fill="{}"/><rect x="{}" y="{}" width="14" height="40" fill="{}"/><rect x="{}" y="{}" width="14" height="40" fill="{}"/>"##,
                    N(x),
                    N(y - 32.0),
                    patch_colour(0),
                    N(x + 14.0),
                    N(y - 32.0),
                    patch_colour(1),
                    N(x + 28.0),
                    N(y - 32.0),
                    patch_colour(2)
                ),
                format!(
                    "pieces: {} convex, filled, coloured by patch (grey: cut by headroom)",
                    counts.pieces
                ),
            ),
            Layer::Blockers => (
                format!(
                    r##"<path d="M{} {}l18 -36l18 36z" fill="#d0402a" fill-opacity="0.1" stroke="#b02818" stroke-width="3"/><path d="M{} {}l0 -40" stroke="#202020" stroke-width="9"/>"##,
                    N(x),
                    N(y + 6.0),
                    N(x + 44.0),
                    N(y + 6.0)
                ),
                format!(
                    "blockers: {} triangles (red steep, orange demoted walkable, thick black vertical)",
                    counts.blockers
                ),
            ),
            Layer::Bvh => (
                format!(
                    r##"<rect x="{}" y="{}" width="20" height="36" fill="none" stroke="#1f5fbf" stroke-width="4"/><rect x="{}" y="{}" width="20" height="36" fill="none" stroke="#8e44ad" stroke-width="4"/>"##,
                    N(x),
                    N(y - 30.0),
                    N(x + 24.0),
                    N(y - 30.0)
                ),
                format!(
                    "BVH boxes: pieces (blue, {} lines), blockers (purple, {} lines); leaves dashed",
                    counts.piece_bvh_lines, counts.blocker_bvh_lines
                ),
            ),
            Layer::Rings => (
                format!(
                    r##"<path d="M{} {}h44M{} {}h44" stroke="#0b6b34" stroke-width="4"/><path d="M{} {}h44" stroke="#c0392b" stroke-width="4" stroke-dasharray="12 8"/>"##,
                    N(x),
                    N(y - 26.0),
                    N(x),
                    N(y - 16.0),
                    N(x),
                    N(y - 4.0)
                ),
                format!(
                    "rings: {} ({} holes); red dashed: headroom cut ({} patches)",
                    counts.rings, counts.holes, counts.cut_patches
                ),
            ),
            Layer::Certs => (
                format!(
                    r##"<rect x="{}" y="{}" width="44" height="40" fill="#12a150" fill-opacity="0.4"/>"##,
                    N(x),
                    N(y - 32.0)
                ),
                format!(
                    "certified 40 cm cells: {} ({} certificates; darker: two or more)",
                    counts.certified_cells, counts.certificates
                ),
            ),
            Layer::Grid => (
                format!(
                    r##"<path d="M{} {}h44M{} {}h44M{} {}v40M{} {}v40" stroke="#707070" stroke-width="2" fill="none"/>"##,
                    N(x),
                    N(y - 22.0),
                    N(x),
                    N(y - 2.0),
                    N(x + 14.0),
                    N(y - 32.0),
                    N(x + 34.0),
                    N(y - 32.0)
                ),
                "20 cm grid over the tile square".to_string(),
            ),
        };
        let _ = writeln!(
            s,
            r#"<g id="legend-{id}" class="legend-entry" data-layer="{id}" onclick="wsToggle('{id}')" cursor="pointer">{swatch}<text x="{}" y="{}" font-size="34">{}</text></g>"#,
            N(x + 60.0),
            N(y),
            xml_escape(&label)
        );
    }
    s.push_str("</g>\n</svg>\n");
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_short() {
        assert_eq!(N(3200.0).to_string(), "3200");
        assert_eq!(N(-0.04).to_string(), "0");
        assert_eq!(N(12.345).to_string(), "12.3");
        assert_eq!(N(-7.25).to_string(), "-7.3");
    }

    #[test]
    fn bvh_boxes_dequantise() {
        assert_eq!(node_box([0, 7168], [16, 58368]), [-448.0, 0.0, -447.0, 3200.0]);
    }

    #[test]
    fn patch_colours_are_stable_hex() {
        assert_eq!(patch_colour(5), patch_colour(5));
        assert_ne!(patch_colour(0), patch_colour(1));
        for p in 0..50 {
            let c = patch_colour(p);
            assert!(c.len() == 7 && c.starts_with('#'), "{c}");
        }
    }

    #[test]
    fn grid_only_when_named() {
        assert!(!resolve_layers(&[LayerArg::All]).contains(&Layer::Grid));
        assert_eq!(
            resolve_layers(&[LayerArg::Grid, LayerArg::Pieces]),
            vec![Layer::Pieces, Layer::Grid]
        );
        assert_eq!(resolve_layers(&[LayerArg::All, LayerArg::Pieces]).len(), 5);
    }
}
