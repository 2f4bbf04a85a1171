//! Integration tests of the real `walksurf` binary: exit codes, what goes to
//! stdout and stderr, and which files exist afterwards. Each test works in its
//! own temporary directory, removed when the test passes.

mod common;
use common::*;

use serde_json::Value;
use std::path::Path;

const TEMP_PREFIX: &str = "walksurf-cli";
const DEMO_GLB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/character_controller_demo.glb");

/// Parses the single line of `stdout` as a JSON object.
fn one_json_object(stdout: &str) -> Value {
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "expected one line of JSON, got: {stdout}");
    let v: Value = serde_json::from_str(lines[0]).expect("stdout is JSON");
    assert!(v.is_object(), "not a JSON object: {v}");
    v
}

fn inspect_json(dir: &TempDir, file: &Path) -> Value {
    let out = walksurf(dir, &["inspect", file.to_str().expect("utf-8 path"), "--json"]);
    one_json_object(&ok_stdout(&out))
}

// ------------------------------------------------------------------ bake

#[test]
fn bake_prints_one_summary_line_naming_input_and_output() {
    let dir = TempDir::new(TEMP_PREFIX, "bake-summary");
    let out_path = dir.join("dungeon.wsurf");
    let out = walksurf(&dir, &["bake", DUNGEON, "-o", out_path.to_str().unwrap()]);
    let stdout = ok_stdout(&out);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "summary: {stdout}");
    assert!(lines[0].contains(DUNGEON), "summary does not name the input: {stdout}");
    assert!(
        lines[0].contains(out_path.to_str().unwrap()),
        "summary does not name the output: {stdout}"
    );
    // stderr is not a terminal: no progress bar.
    assert_eq!(text(&out.stderr), "");
    assert!(std::fs::metadata(&out_path).expect("output exists").len() > 0);
    // Nothing but the output is left in the directory (no temporary file).
    assert_eq!(dir.files(), ["dungeon.wsurf"]);
}

#[test]
fn bake_json_reports_counts_and_the_file_size() {
    let dir = TempDir::new(TEMP_PREFIX, "bake-json");
    let out_path = dir.join("dungeon.wsurf");
    let out = walksurf(&dir, &["bake", DUNGEON, "-o", out_path.to_str().unwrap(), "--json"]);
    let v = one_json_object(&ok_stdout(&out));
    assert!(u64_field(&v, "tiles") > 0, "{v}");
    assert!(u64_field(&v, "pieces") > 0, "{v}");
    assert!(u64_field(&v, "triangles") > 0, "{v}");
    let stages = v["ms"].as_array().expect("\"ms\" lists the stage timings");
    assert!(!stages.is_empty(), "{v}");
    assert!(v["total_ms"].as_f64().is_some_and(|ms| ms >= 0.0), "{v}");
    let size = std::fs::metadata(&out_path).expect("output exists").len();
    assert_eq!(u64_field(&v, "bytes"), size, "\"bytes\" is not the file size");
    assert_eq!(
        u64_field(&v, "build_generation"),
        1,
        "a new file starts at generation 1"
    );
}

#[test]
fn bake_quiet_prints_nothing() {
    let dir = TempDir::new(TEMP_PREFIX, "bake-quiet");
    let out_path = dir.join("dungeon.wsurf");
    let out = walksurf(&dir, &["bake", DUNGEON, "-o", out_path.to_str().unwrap(), "-q"]);
    assert_eq!(ok_stdout(&out), "");
    assert_eq!(text(&out.stderr), "");
    assert!(out_path.exists());
}

#[test]
fn bake_bytes_do_not_depend_on_the_thread_count() {
    let dir = TempDir::new(TEMP_PREFIX, "bake-threads");
    // Two fresh files: both have build generation 1.
    let one = bake_dungeon(&dir, "one.wsurf", &["--threads", "1"]);
    let two = bake_dungeon(&dir, "two.wsurf", &["--threads", "2"]);
    let (one, two) = (std::fs::read(one).unwrap(), std::fs::read(two).unwrap());
    assert!(one == two, "--threads 1 and --threads 2 baked different bytes");
}

#[test]
fn rebaking_the_same_output_increases_the_build_generation() {
    let dir = TempDir::new(TEMP_PREFIX, "bake-generation");
    let path = bake_dungeon(&dir, "dungeon.wsurf", &[]);
    let first = u64_field(&inspect_json(&dir, &path), "build_generation");
    bake_dungeon(&dir, "dungeon.wsurf", &[]);
    let second = u64_field(&inspect_json(&dir, &path), "build_generation");
    assert!(second > first, "generation {first} then {second}");
    assert_eq!(dir.files(), ["dungeon.wsurf"]);
}

// ------------------------------------------------------------------ inspect

#[test]
fn inspect_json_reports_version_counts_and_sections() {
    let dir = TempDir::new(TEMP_PREFIX, "inspect-json");
    let path = bake_dungeon(&dir, "dungeon.wsurf", &[]);
    let v = inspect_json(&dir, &path);
    let version = format!("{}.{}", walksurf_format::FORMAT_MAJOR, walksurf_format::FORMAT_MINOR);
    assert_eq!(v["format_version"], version.as_str(), "{v}");
    assert!(u64_field(&v, "tiles") > 0, "{v}");
    assert!(u64_field(&v, "pieces") > 0, "{v}");
    assert_eq!(u64_field(&v, "bytes"), std::fs::metadata(&path).unwrap().len());
    let kinds: Vec<&str> = v["sections"]
        .as_array()
        .expect("\"sections\" is an array")
        .iter()
        .map(|s| s["kind"].as_str().expect("section kind"))
        .collect();
    for kind in ["bake_params", "tile_index", "tile_hot", "tile_data"] {
        assert!(kinds.contains(&kind), "section {kind} missing from {kinds:?}");
    }
}

#[test]
fn inspect_prints_the_file_name() {
    let dir = TempDir::new(TEMP_PREFIX, "inspect-plain");
    let path = bake_dungeon(&dir, "dungeon.wsurf", &[]);
    let stdout = ok_stdout(&walksurf(&dir, &["inspect", path.to_str().unwrap()]));
    assert_eq!(stdout.lines().next(), Some(path.to_str().unwrap()), "{stdout}");
    assert!(stdout.contains("format_version"), "{stdout}");
}

// ------------------------------------------------------------------ query

/// Runs `query` over `lines` and returns one parsed JSON value per output
/// line, after checking that there is exactly one per input line.
fn query(dir: &TempDir, file: &Path, input: Vec<u8>) -> Vec<Value> {
    let n_in = input.split(|&b| b == b'\n').count() - usize::from(input.ends_with(b"\n"));
    let out = walksurf_stdin(dir, &["query", file.to_str().unwrap()], input);
    let stdout = ok_stdout(&out);
    assert_eq!(text(&out.stderr), "");
    let answers: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("output line {l:?} is not JSON: {e}")))
        .collect();
    assert_eq!(answers.len(), n_in, "one line out per line in:\n{stdout}");
    answers
}

/// Floor queries on a grid over the dungeon from high above, looking far
/// down: the first `floor` answer, as (query position, impact z).
fn find_a_floor(dir: &TempDir, file: &Path) -> ([f64; 3], f64) {
    let mut grid = Vec::new();
    let mut input = String::new();
    for x in (-2000..5000).step_by(500) {
        for y in (-1000..9000).step_by(500) {
            let pos = [x as f64, y as f64, 5000.0];
            input += &format!("{{\"op\":\"find_floor\",\"pos\":{pos:?},\"down\":10000,\"mode\":\"line\"}}\n");
            grid.push(pos);
        }
    }
    let answers = query(dir, file, input.into_bytes());
    for a in &answers {
        let r = a["result"].as_str().expect("result");
        assert!(["floor", "no_floor", "fallback"].contains(&r), "{a}");
    }
    let (pos, hit) = grid
        .iter()
        .zip(&answers)
        .find(|(_, a)| a["result"] == "floor")
        .expect("no floor anywhere on a 500 cm grid over the dungeon");
    let z = hit["impact_point"][2].as_f64().expect("impact_point");
    assert!(hit["normal"][2].as_f64().expect("normal") > 0.0, "{hit}");
    (*pos, z)
}

#[test]
fn query_answers_each_line_in_order_and_reports_malformed_ones() {
    let dir = TempDir::new(TEMP_PREFIX, "query");
    let path = bake_dungeon(&dir, "dungeon.wsurf", &[]);
    let (far, floor_z) = find_a_floor(&dir, &path);
    // 1 cm above the floor found from far above, with the default `down`.
    let near = [far[0], far[1], floor_z + 96.0 + 1.0];
    let mut input = Vec::new();
    for line in [
        format!(r#"{{"op":"find_floor","pos":{far:?},"down":10000,"mode":"line"}}"#),
        "this is not JSON".to_owned(),
        r#"{"op":"jump","pos":[0,0,0]}"#.to_owned(),
        r#"{"op":"find_floor","mode":"line"}"#.to_owned(),
        format!(r#"{{"op":"sweep","pos":{near:?},"delta":[10,0]}}"#),
        format!(r#"{{"op":"find_floor","pos":{near:?},"mode":"line"}}"#),
        String::new(),
        r#"{"op":"find_floor","pos":[1,2],"mode":"line"}"#.to_owned(),
        format!(r#"{{"op":"find_floor","pos":{near:?}}}"#),
    ] {
        input.extend_from_slice(line.as_bytes());
        input.push(b'\n');
    }
    // Not UTF-8, then a last line without a newline.
    input.extend_from_slice(b"{\"op\":\xff}\n");
    input.extend_from_slice(b"[]");
    let a = query(&dir, &path, input);
    let error = |v: &Value, needle: &str| {
        assert_eq!(v["result"], "error", "{v}");
        let message = v["message"].as_str().unwrap_or_else(|| panic!("no message: {v}"));
        assert!(
            message.contains(needle),
            "message {message:?} should mention {needle:?}"
        );
    };
    assert_eq!(a[0]["result"], "floor", "{}", a[0]);
    error(&a[1], "JSON");
    error(&a[2], "jump");
    error(&a[3], "pos");
    assert!(
        ["clear", "hit", "fallback"].contains(&a[4]["result"].as_str().unwrap_or("")),
        "{}",
        a[4]
    );
    assert_eq!(a[5]["result"], "floor", "{}", a[5]);
    let floor_dist = a[5]["floor_dist"].as_f64().expect("floor_dist");
    assert!((floor_dist - 1.0).abs() < 0.01, "floor_dist {floor_dist}, expected 1");
    error(&a[6], "JSON");
    error(&a[7], "pos");
    // Capsule mode is a valid query (this runtime falls back on it).
    assert!(
        ["floor", "no_floor", "fallback"].contains(&a[8]["result"].as_str().unwrap_or("")),
        "{}",
        a[8]
    );
    error(&a[9], "UTF-8");
    assert_eq!(a[10]["result"], "error", "{}", a[10]);
}

#[test]
fn query_with_empty_stdin_prints_nothing() {
    let dir = TempDir::new(TEMP_PREFIX, "query-empty");
    let path = bake_dungeon(&dir, "dungeon.wsurf", &[]);
    let out = walksurf_stdin(&dir, &["query", path.to_str().unwrap()], Vec::new());
    assert_eq!(ok_stdout(&out), "");
    assert_eq!(text(&out.stderr), "");
}

// ------------------------------------------------------------------ validate

#[test]
fn validate_json_reports_zero_errors() {
    let dir = TempDir::new(TEMP_PREFIX, "validate");
    let path = bake_dungeon(&dir, "dungeon.wsurf", &[]);
    let out = walksurf(
        &dir,
        &[
            "validate",
            DUNGEON,
            path.to_str().unwrap(),
            "--samples",
            "200",
            "--json",
        ],
    );
    let v = one_json_object(&ok_stdout(&out));
    let ground = &v["find_floor_line"]["ground"];
    for key in [
        "n",
        "answered_pct",
        "errors",
        "false_clear",
        "max_err_cm",
        "p99_err_cm",
        "ns_per_query",
        "oracle_ns_per_query",
    ] {
        assert!(ground[key].is_number(), "find_floor_line.ground.{key} missing: {v}");
    }
    assert!(u64_field(ground, "n") > 0, "{v}");
    assert_eq!(u64_field(ground, "errors"), 0, "{v}");
    assert_eq!(u64_field(ground, "false_clear"), 0, "{v}");
}

// ------------------------------------------------------------------ bad inputs

/// Runs a bake that must fail, twice: with no output file, then over an
/// existing one. Each time: a non-zero exit, nothing on stdout, one `error:`
/// line on stderr containing every `names`, no panic, no new file, and the
/// existing output byte-identical.
fn assert_bake_fails(dir: &TempDir, args: &[&str], names: &[&str]) {
    let out_path = dir.join("out.wsurf");
    let mut full = vec!["bake"];
    full.extend_from_slice(args);
    full.extend_from_slice(&["-o", out_path.to_str().unwrap()]);
    let before = dir.files();
    let previous = b"previous output, must survive a failed bake".to_vec();
    for existing in [None, Some(&previous)] {
        if let Some(bytes) = existing {
            std::fs::write(&out_path, bytes).unwrap();
        }
        let out = walksurf(dir, &full);
        let stderr = text(&out.stderr);
        assert!(!out.status.success(), "{full:?} succeeded");
        assert!(!stderr.contains("panicked"), "{full:?} panicked: {stderr}");
        assert_eq!(text(&out.stdout), "", "{full:?} wrote to stdout");
        assert_eq!(stderr.lines().count(), 1, "{full:?}: stderr is not one line: {stderr}");
        assert!(stderr.starts_with("error: "), "{full:?}: {stderr}");
        for name in names {
            assert!(stderr.contains(name), "{full:?}: {stderr:?} does not mention {name:?}");
        }
        match existing {
            None => {
                assert!(!out_path.exists(), "{full:?} created the output");
                assert_eq!(dir.files(), before, "{full:?} left files behind");
            }
            Some(bytes) => assert_eq!(&std::fs::read(&out_path).unwrap(), bytes, "{full:?} changed the output"),
        }
    }
    std::fs::remove_file(&out_path).unwrap();
}

#[test]
fn bake_fails_cleanly_on_a_missing_input() {
    let dir = TempDir::new(TEMP_PREFIX, "bad-missing");
    let input = dir.join("no-such-level.obj");
    assert_bake_fails(&dir, &[input.to_str().unwrap()], &["no-such-level.obj"]);
}

#[test]
fn bake_fails_cleanly_on_an_unknown_extension() {
    let dir = TempDir::new(TEMP_PREFIX, "bad-ext");
    let input = dir.write("level.txt", "v 0 0 0\n");
    assert_bake_fails(&dir, &[input.to_str().unwrap()], &["level.txt"]);
}

#[test]
fn bake_fails_cleanly_on_an_obj_face_index_out_of_range() {
    let dir = TempDir::new(TEMP_PREFIX, "bad-face");
    let input = dir.write("face.obj", "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 9\n");
    assert_bake_fails(&dir, &[input.to_str().unwrap()], &["face.obj", "line 4"]);
}

#[test]
fn bake_fails_cleanly_on_nan_obj_vertices() {
    let dir = TempDir::new(TEMP_PREFIX, "bad-nan");
    // Only NaN vertices, used by a face.
    let input = dir.write("nan.obj", "v nan 0 0\nv nan 0 0\nv nan 0 0\nf 1 2 3\n");
    assert_bake_fails(&dir, &[input.to_str().unwrap()], &["nan.obj", "line 1", "NaN"]);
    // Only NaN vertices and no face: nothing to bake.
    let input = dir.write("nan-only.obj", "v nan 0 0\n");
    assert_bake_fails(&dir, &[input.to_str().unwrap()], &["nan-only.obj"]);
    // The line of the bad vertex, also when faces use vertices out of file
    // order (tobj renumbers them) and in a second group.
    let input = dir.write("order.obj", "v 0 0 0\nv 1 0 0\nv nan 0 0\nf 3 1 2\n");
    assert_bake_fails(&dir, &[input.to_str().unwrap()], &["order.obj", "line 3"]);
    let input = dir.write(
        "groups.obj",
        "v 0 0 0\nv 1 0 0\nv 0 0 1\nv 0 inf 1\nf 1 2 3\ng second\nf 4 1 2\n",
    );
    assert_bake_fails(&dir, &[input.to_str().unwrap()], &["groups.obj", "line 4"]);
}

#[test]
fn bake_fails_cleanly_on_a_truncated_glb() {
    let dir = TempDir::new(TEMP_PREFIX, "bad-glb");
    let bytes = std::fs::read(DEMO_GLB).expect("read the demo GLB");
    let input = dir.write("truncated.glb", &bytes[..100]);
    assert_bake_fails(&dir, &[input.to_str().unwrap()], &["truncated.glb"]);
}

#[test]
fn bake_fails_cleanly_on_gltf_with_invalid_json() {
    let dir = TempDir::new(TEMP_PREFIX, "bad-gltf");
    let input = dir.write("broken.gltf", "{\"asset\": {\"version\": \"2.0\"},\n  \"scenes\": [\n");
    assert_bake_fails(&dir, &[input.to_str().unwrap()], &["broken.gltf"]);
}

#[test]
fn bake_fails_cleanly_on_an_unknown_config_key() {
    let dir = TempDir::new(TEMP_PREFIX, "bad-config");
    let config = dir.write("bake.toml", "metres_per_unit = 0.01\nwalkable_slope = 45\n");
    assert_bake_fails(
        &dir,
        &[DUNGEON, "--config", config.to_str().unwrap()],
        &["bake.toml", "walkable_slope"],
    );
}

#[test]
fn bake_fails_cleanly_on_a_zero_scale() {
    let dir = TempDir::new(TEMP_PREFIX, "bad-scale");
    assert_bake_fails(&dir, &[DUNGEON, "--scale", "0"], &[DUNGEON, "scale"]);
}

// ------------------------------------------------------------------ help

#[test]
fn every_subcommand_has_help_naming_its_arguments() {
    let dir = TempDir::new(TEMP_PREFIX, "help");
    for (command, words) in [
        (
            "bake",
            &[
                "INPUT",
                "--output",
                "--config",
                "--scale",
                "--up",
                "--scene",
                "--exclude",
                "--threads",
                "--json",
                "--quiet",
            ][..],
        ),
        ("inspect", &["FILE", "--json"][..]),
        ("query", &["FILE"][..]),
        (
            "validate",
            &["INPUT", "FILE", "--samples", "--seed", "--json", "--scale", "--up"][..],
        ),
    ] {
        let stdout = ok_stdout(&walksurf(&dir, &[command, "--help"]));
        for word in words {
            assert!(
                stdout.contains(word),
                "`walksurf {command} --help` does not mention {word}:\n{stdout}"
            );
        }
    }
}
