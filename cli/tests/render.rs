//! `walksurf render` and `walksurf inspect --tile` on a real bake of the
//! bundled dungeon, through the real binary.

mod common;
use common::*;

use serde_json::Value;
use std::path::Path;
use std::process::Output;

const TEMP_PREFIX: &str = "walksurf-render";
const DEFAULT_LAYERS: [&str; 4] = ["pieces", "blockers", "bvh", "certs"];

/// Asserts exit status 2 with one line on stderr and returns it.
fn error_line(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(2), "stderr: {}", text(&out.stderr));
    let err = text(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
    err
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn json(out: &Output) -> Value {
    serde_json::from_str(ok_stdout(out).trim()).expect("stdout is one JSON object")
}

/// Every tile of the file: `(x, y)` with its `inspect --tile --json` counts.
fn tiles(file: &Path) -> Vec<((i32, i32), Value)> {
    let v = json(&walksurf_here(&["inspect", s(file), "--json"]));
    let g = &v["tile_grid"];
    let at = |k: &str, i: usize| g[k][i].as_i64().expect("tile grid") as i32;
    let mut out = Vec::new();
    for y in at("min", 1)..at("min", 1) + at("size", 1) {
        for x in at("min", 0)..at("min", 0) + at("size", 0) {
            let r = walksurf_here(&["inspect", s(file), "--tile", &format!("{x},{y}"), "--json"]);
            if r.status.success() {
                out.push(((x, y), json(&r)));
            } else {
                assert!(text(&r.stderr).contains("no tile"), "{}", text(&r.stderr));
            }
        }
    }
    assert_eq!(
        out.len() as u64,
        v["tiles"].as_u64().expect("tiles"),
        "every tile found"
    );
    out
}

/// The tile with the most pieces.
fn busiest_tile(file: &Path) -> ((i32, i32), Value) {
    tiles(file)
        .into_iter()
        .max_by_key(|(_, v)| v["pieces"].as_u64())
        .expect("a tile")
}

fn render(file: &Path, tile: (i32, i32), dir: &TempDir, extra: &[&str]) -> String {
    let out = dir.join("tile.svg");
    let t = format!("{},{}", tile.0, tile.1);
    let mut args = vec!["render", s(file), "--tile", &t, "-o", s(&out)];
    args.extend_from_slice(extra);
    let stdout = ok_stdout(&walksurf_here(&args));
    assert!(stdout.contains("rendered"), "{stdout}");
    std::fs::read_to_string(&out).expect("the SVG was written")
}

/// Checks that every element is closed in order (a small XML well-formedness
/// check: tags, comments, CDATA; no DTD) and returns the element names seen.
fn check_xml(svg: &str) -> Vec<String> {
    let mut stack: Vec<String> = Vec::new();
    let mut names = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find('<') {
        rest = &rest[i..];
        if let Some(r) = rest.strip_prefix("<![CDATA[") {
            let end = r.find("]]>").expect("CDATA closed");
            rest = &r[end + 3..];
            continue;
        }
        if let Some(r) = rest.strip_prefix("<!--") {
            let end = r.find("-->").expect("comment closed");
            rest = &r[end + 3..];
            continue;
        }
        let end = rest.find('>').expect("tag closed");
        let tag = &rest[1..end];
        assert!(!tag.contains('<'), "'<' inside a tag: {tag}");
        rest = &rest[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name.trim()), "mismatched </{name}>");
        } else {
            let name: String = tag.chars().take_while(|c| !c.is_whitespace() && *c != '/').collect();
            assert!(!name.is_empty(), "empty tag");
            // Attribute quotes balance.
            assert_eq!(tag.matches('"').count() % 2, 0, "unbalanced quotes in <{tag}>");
            names.push(name.clone());
            if !tag.ends_with('/') {
                stack.push(name);
            }
        }
    }
    assert!(stack.is_empty(), "unclosed elements: {stack:?}");
    names
}

#[test]
fn render_busiest_tile_draws_every_piece_and_a_legend() {
    let dir = TempDir::new(TEMP_PREFIX, "busiest");
    let file = &bake_dungeon(&dir, "dungeon.wsurf", &[]);
    let (tile, counts) = busiest_tile(file);
    let pieces = counts["pieces"].as_u64().expect("pieces") as usize;
    assert!(pieces > 100, "the dungeon's busiest tile has many pieces: {counts}");
    let svg = render(file, tile, &dir, &[]);

    assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(200)]);
    assert!(svg.trim_end().ends_with("</svg>"));
    let names = check_xml(&svg);
    assert_eq!(
        svg.matches("<g ").count() + svg.matches("<g>").count(),
        svg.matches("</g>").count()
    );
    assert_eq!(svg.matches("<polygon").count(), pieces, "one polygon per piece");
    assert_eq!(names.iter().filter(|n| *n == "polygon").count(), pieces);

    // Title with the file name, tile and counts.
    let title = format!("dungeon.wsurf · tile ({},{})", tile.0, tile.1);
    assert!(svg.contains(&title), "no title {title}");
    assert!(svg.contains(&format!("{pieces} pieces")));
    assert!(svg.contains(&format!("{} blockers", counts["blockers"])));

    // Every default layer: a group and a clickable legend entry; no grid.
    for layer in DEFAULT_LAYERS {
        assert!(svg.contains(&format!("<g id=\"{layer}\"")), "no group {layer}");
        assert!(
            svg.contains(&format!("id=\"legend-{layer}\"")),
            "no legend entry {layer}"
        );
        assert!(
            svg.contains(&format!("onclick=\"wsToggle('{layer}')\"")),
            "legend {layer} not clickable"
        );
    }
    assert!(svg.contains("function wsToggle"));
    assert!(!svg.contains("id=\"grid\""), "the grid is drawn only when asked");
    assert!(!svg.contains("id=\"legend-grid\""));

    // Vertical blockers as lines, the others as triangles.
    let vertical = counts["vertical_blockers"].as_u64().expect("vertical") as usize;
    let blockers = counts["blockers"].as_u64().expect("blockers") as usize;
    assert_eq!(svg.matches("<line ").count(), vertical);
    assert_eq!(
        svg.matches("(steep)").count() + svg.matches("(walkable, kept").count(),
        blockers - vertical
    );
    // The tile square, dashed.
    assert!(svg.contains(r#"<rect x="0" y="-3200" width="3200" height="3200""#));
}

#[test]
fn render_every_tile_has_one_polygon_per_piece() {
    let dir = TempDir::new(TEMP_PREFIX, "every");
    let file = &bake_dungeon(&dir, "dungeon.wsurf", &[]);
    for (tile, counts) in tiles(file) {
        let svg = render(file, tile, &dir, &[]);
        check_xml(&svg);
        assert_eq!(
            svg.matches("<polygon").count() as u64,
            counts["pieces"].as_u64().expect("pieces"),
            "tile {tile:?}"
        );
    }
}

#[test]
fn render_layers_are_chosen_and_grid_only_when_named() {
    let dir = TempDir::new(TEMP_PREFIX, "layers");
    let file = &bake_dungeon(&dir, "dungeon.wsurf", &[]);
    let (tile, _) = busiest_tile(file);
    let svg = render(file, tile, &dir, &["--layers", "grid,certs"]);
    check_xml(&svg);
    for layer in ["grid", "certs"] {
        assert!(svg.contains(&format!("<g id=\"{layer}\"")), "no group {layer}");
        assert!(svg.contains(&format!("id=\"legend-{layer}\"")), "no legend {layer}");
    }
    for layer in ["pieces", "blockers", "bvh"] {
        assert!(!svg.contains(&format!("<g id=\"{layer}\"")), "unasked group {layer}");
        assert!(
            !svg.contains(&format!("id=\"legend-{layer}\"")),
            "unasked legend {layer}"
        );
    }
    assert_eq!(svg.matches("<polygon").count(), 0);

    let svg = render(file, tile, &dir, &["--layers", "all,grid"]);
    check_xml(&svg);
    for layer in DEFAULT_LAYERS.iter().chain(&["grid"]) {
        assert!(svg.contains(&format!("id=\"legend-{layer}\"")), "no legend {layer}");
    }

    let out = walksurf_here(&[
        "render",
        s(file),
        "--tile",
        "0,0",
        "-o",
        s(&dir.join("x.svg")),
        "--layers",
        "pieces,roofs",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("roofs") && err.contains("possible values"), "{err}");
}

#[test]
fn render_missing_tile_is_one_line_naming_file_and_tile() {
    let dir = TempDir::new(TEMP_PREFIX, "missing");
    let file = &bake_dungeon(&dir, "dungeon.wsurf", &[]);
    let out_svg = dir.join("none.svg");
    let out = walksurf_here(&["render", s(file), "--tile", "40,-7", "-o", s(&out_svg)]);
    let err = error_line(&out);
    assert!(
        err.contains(s(file)) && err.contains("(40,-7)") && err.contains("no tile"),
        "{err}"
    );
    assert!(!out_svg.exists(), "nothing written for a missing tile");

    let out = walksurf_here(&["inspect", s(file), "--tile", "40,-7"]);
    let err = error_line(&out);
    assert!(err.contains(s(file)) && err.contains("(40,-7)"), "{err}");
}

#[test]
fn tile_argument_errors_are_clear() {
    let dir = TempDir::new(TEMP_PREFIX, "badarg");
    let file = &bake_dungeon(&dir, "dungeon.wsurf", &[]);
    let out_svg = dir.join("x.svg");
    for bad in ["1", "a,b", "1,2,3", "1.5,2", ""] {
        let out = walksurf_here(&["render", s(file), "--tile", bad, "-o", s(&out_svg)]);
        assert_eq!(out.status.code(), Some(2), "--tile {bad:?}");
        let err = text(&out.stderr);
        assert!(err.contains("expected tile coordinates X,Y"), "--tile {bad:?}: {err}");
        let out = walksurf_here(&["inspect", s(file), "--tile", bad]);
        assert_eq!(out.status.code(), Some(2), "inspect --tile {bad:?}");
    }
    assert!(!out_svg.exists());
    // Negative coordinates need no `=`.
    let out = walksurf_here(&["inspect", s(file), "--tile", "-1,-1", "--json"]);
    assert_eq!(json(&out)["tile"], serde_json::json!([-1, -1]));
    // --tile is required.
    let out = walksurf_here(&["render", s(file), "-o", s(&out_svg)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--tile"));
}

#[test]
fn inspect_tile_counts_add_up_to_the_file() {
    let dir = TempDir::new(TEMP_PREFIX, "inspect");
    let file = &bake_dungeon(&dir, "dungeon.wsurf", &[]);
    let whole = json(&walksurf_here(&["inspect", s(file), "--json"]));
    let tiles = tiles(file);
    let sum = |key: &str| tiles.iter().map(|(_, v)| v[key].as_u64().expect(key)).sum::<u64>();
    assert_eq!(sum("pieces"), whole["pieces"].as_u64().expect("pieces"));
    assert_eq!(sum("blockers"), whole["blockers"].as_u64().expect("blockers"));
    assert_eq!(sum("patches"), whole["patches"].as_u64().expect("patches"));
    assert_eq!(sum("bvh_lines"), whole["bvh_lines"].as_u64().expect("bvh_lines"));
    for ((x, y), v) in &tiles {
        let n = |key: &str| v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"));
        assert_eq!(v["tile"], serde_json::json!([x, y]));
        assert!(n("piece_vertices") >= 3 * n("pieces"), "{v}");
        assert!(n("piece_vertices") <= 32 * n("pieces"), "{v}");
        assert!(
            n("vertical_blockers") + n("demoted_walkable_blockers") <= n("blockers"),
            "{v}"
        );
        // (A demoted walkable triangle may hide others, never be hidden.)
        assert!(
            n("hidden_blockers") + n("demoted_walkable_blockers") <= n("blockers"),
            "{v}"
        );
        assert_eq!(n("bvh_lines"), n("piece_bvh_lines") + n("blocker_bvh_lines"));
        assert!(
            n("certified_cells") <= n("certificates") && n("certified_cells") <= 80 * 80,
            "{v}"
        );
        assert!(n("blob_bytes") >= 64 * n("bvh_lines") + 40 * n("blockers"), "{v}");
        let z_err = v["max_piece_z_err_cm"].as_f64().expect("z_err");
        assert!((0.0..0.01).contains(&z_err), "{v}");
    }
    // The dungeon has stairs (vertical risers, some hidden under their
    // nosings) and flat floors (certificates).
    assert!(sum("vertical_blockers") > 0 && sum("hidden_blockers") > 0 && sum("certified_cells") > 0);

    // Text form: the same counts, one per line.
    let ((x, y), v) = &tiles[0];
    let out = ok_stdout(&walksurf_here(&["inspect", s(file), "--tile", &format!("{x},{y}")]));
    assert!(out.starts_with(&format!("{} tile ({x},{y})", s(file))), "{out}");
    for key in [
        "pieces",
        "piece_vertices",
        "vertical_blockers",
        "hidden_blockers",
        "certified_cells",
        "blob_bytes",
    ] {
        assert!(
            out.lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == [key, &v[key].to_string()]),
            "{key} missing in {out}"
        );
    }
}
