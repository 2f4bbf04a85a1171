//! `walksurf bake` over an existing output: incremental rebakes, `--full`,
//! determinism across thread counts, and the previous file surviving a
//! failed or killed bake.

mod common;
use common::*;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;
use walksurf_format::zerocopy::{FromBytes, IntoBytes};
use walksurf_format::{FileView, Header, seal_header};

const TEMP_PREFIX: &str = "walksurf-cli-inc";

/// `walksurf bake INPUT -o OUTPUT --json EXTRA…`: the report.
fn bake_json(dir: &TempDir, input: &Path, output: &Path, extra: &[&str]) -> Value {
    let mut args = vec![
        "bake",
        input.to_str().expect("utf-8 path"),
        "-o",
        output.to_str().expect("utf-8 path"),
        "--json",
    ];
    args.extend_from_slice(extra);
    let out = walksurf(dir, &args);
    assert!(
        out.status.success(),
        "{args:?}: exit {:?}\nstderr: {}",
        out.status,
        text(&out.stderr)
    );
    serde_json::from_str(text(&out.stdout).trim()).expect("one JSON object")
}

/// The file's bytes with the build generation set to 0.
fn without_generation(path: &Path) -> Vec<u8> {
    let mut bytes = std::fs::read(path).expect("read baked file");
    let (mut h, _) = Header::read_from_prefix(&bytes).expect("header");
    h.build_generation.set(0);
    seal_header(&mut h);
    bytes[..64].copy_from_slice(h.as_bytes());
    bytes
}

/// The dungeon as OBJ text followed by one box (`o crate`, 1 m, centred at
/// `(x, z)` metres in OBJ coordinates, Y up, resting on y = 0).
fn dungeon_with_crate(x: f64, z: f64) -> String {
    let mut obj = std::fs::read_to_string(DUNGEON).expect("read the dungeon");
    let base = obj.lines().filter(|l| l.starts_with("v ")).count();
    obj.push_str("\no crate\n");
    for (dx, dy, dz) in [
        (-0.5, 0.0, -0.5),
        (0.5, 0.0, -0.5),
        (0.5, 0.0, 0.5),
        (-0.5, 0.0, 0.5),
        (-0.5, 1.0, -0.5),
        (0.5, 1.0, -0.5),
        (0.5, 1.0, 0.5),
        (-0.5, 1.0, 0.5),
    ] {
        obj.push_str(&format!("v {} {} {}\n", x + dx, dy, z + dz));
    }
    for q in [
        [1, 2, 3, 4],
        [5, 8, 7, 6],
        [1, 5, 6, 2],
        [2, 6, 7, 3],
        [3, 7, 8, 4],
        [4, 8, 5, 1],
    ] {
        let q = q.map(|i| i + base);
        obj.push_str(&format!("f {} {} {} {}\n", q[0], q[1], q[2], q[3]));
    }
    obj
}

#[test]
fn rebaking_an_unchanged_level_reuses_every_tile() {
    let dir = TempDir::new(TEMP_PREFIX, "unchanged");
    let out = dir.join("dungeon.wsurf");
    let first = bake_json(&dir, Path::new(DUNGEON), &out, &[]);
    assert_eq!(first["incremental"], false, "{first}");
    assert_eq!(first["full_bake_reason"], "no previous output", "{first}");
    assert_eq!(u64_field(&first, "rebaked_tiles"), u64_field(&first, "tiles"));
    let full_bytes = without_generation(&out);

    let second = bake_json(&dir, Path::new(DUNGEON), &out, &[]);
    assert_eq!(second["incremental"], true, "{second}");
    assert_eq!(second["full_bake_reason"], Value::Null, "{second}");
    assert_eq!(u64_field(&second, "rebaked_tiles"), 0, "{second}");
    assert_eq!(
        u64_field(&second, "reused_tiles"),
        u64_field(&first, "tiles"),
        "{second}"
    );
    assert_eq!(u64_field(&second, "removed_tiles"), 0, "{second}");
    assert_eq!(u64_field(&second, "build_generation"), 2, "{second}");
    assert!(
        without_generation(&out) == full_bytes,
        "an incremental rebake changed bytes"
    );

    let third = bake_json(&dir, Path::new(DUNGEON), &out, &["--full"]);
    assert_eq!(third["incremental"], false, "{third}");
    assert!(
        third["full_bake_reason"].as_str().unwrap_or("").contains("full"),
        "{third}"
    );
    assert_eq!(u64_field(&third, "build_generation"), 3, "{third}");
    assert!(without_generation(&out) == full_bytes, "--full baked other bytes");
    assert_eq!(dir.files(), ["dungeon.wsurf"]);
}

#[test]
fn moving_a_node_rebakes_its_tiles_and_matches_a_full_bake() {
    let dir = TempDir::new(TEMP_PREFIX, "moved");
    let input = dir.join("level.obj");
    let out = dir.join("level.wsurf");
    std::fs::write(&input, dungeon_with_crate(5.0, -5.0)).unwrap();
    let first = bake_json(&dir, &input, &out, &[]);
    // The crate moves by 1 m inside tile (0, 0) (OBJ z = −5 m is y = 500 cm).
    std::fs::write(&input, dungeon_with_crate(6.0, -5.0)).unwrap();
    let second = bake_json(&dir, &input, &out, &[]);
    assert_eq!(second["incremental"], true, "{second}");
    assert_eq!(u64_field(&second, "rebaked_tiles"), 1, "{second}");
    assert_eq!(
        u64_field(&second, "reused_tiles"),
        u64_field(&first, "tiles") - 1,
        "{second}"
    );
    let full = dir.join("full.wsurf");
    bake_json(&dir, &input, &full, &[]);
    assert!(
        without_generation(&out) == without_generation(&full),
        "incremental and full bakes differ"
    );
}

#[test]
fn a_corrupt_previous_output_means_a_full_bake() {
    let dir = TempDir::new(TEMP_PREFIX, "corrupt");
    let out = dir.join("dungeon.wsurf");
    bake_json(&dir, Path::new(DUNGEON), &out, &[]);
    let good = without_generation(&out);
    let mut bytes = std::fs::read(&out).unwrap();
    let data = FileView::parse(&bytes).expect("parses").data;
    bytes[data.start + data.len() / 2] ^= 0xFF;
    std::fs::write(&out, &bytes).unwrap();
    let v = bake_json(&dir, Path::new(DUNGEON), &out, &[]);
    assert_eq!(v["incremental"], false, "{v}");
    assert!(
        v["full_bake_reason"]
            .as_str()
            .unwrap_or("")
            .contains("not a valid walksurf file"),
        "{v}"
    );
    assert!(without_generation(&out) == good);

    std::fs::write(&out, b"not a walksurf file").unwrap();
    let v = bake_json(&dir, Path::new(DUNGEON), &out, &[]);
    assert_eq!(v["incremental"], false, "{v}");
    assert_eq!(u64_field(&v, "build_generation"), 1, "{v}");

    // Other settings: a full bake, not a reuse of tiles baked for another agent.
    let v = bake_json(&dir, Path::new(DUNGEON), &out, &["--scale", "0.5"]);
    assert_eq!(v["incremental"], false, "{v}");
    assert!(
        v["full_bake_reason"]
            .as_str()
            .unwrap_or("")
            .contains("other parameters"),
        "{v}"
    );
}

#[test]
fn the_summary_line_says_what_was_reused() {
    let dir = TempDir::new(TEMP_PREFIX, "summary");
    let out = dir.join("dungeon.wsurf");
    let args = ["bake", DUNGEON, "-o", out.to_str().unwrap()];
    let first = text(&walksurf(&dir, &args).stdout);
    assert!(first.contains("full bake: no previous output"), "{first}");
    let second = text(&walksurf(&dir, &args).stdout);
    assert!(second.contains("0 rebaked") && second.contains("reused"), "{second}");
    assert_eq!(second.lines().count(), 1, "{second}");
}

#[test]
fn a_failed_bake_leaves_the_previous_output_and_no_temporary_file() {
    let dir = TempDir::new(TEMP_PREFIX, "failed");
    let out = dir.join("dungeon.wsurf");
    bake_json(&dir, Path::new(DUNGEON), &out, &[]);
    let before = std::fs::read(&out).unwrap();
    let bad = dir.join("bad.obj");
    std::fs::write(&bad, "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 9\n").unwrap();
    let files = dir.files();
    let result = walksurf(&dir, &["bake", bad.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(!result.status.success());
    assert!(
        std::fs::read(&out).unwrap() == before,
        "the failed bake changed the output"
    );
    assert_eq!(dir.files(), files, "the failed bake left files behind");
}

/// A flat-ish terrain of `n × n` quads, 0.5 m apart, as OBJ (Y up).
fn terrain_obj(n: usize, height: f64) -> String {
    use std::fmt::Write;
    let mut obj = String::with_capacity(n * n * 60);
    for j in 0..=n {
        for i in 0..=n {
            let y = height + 0.3 * (i as f64 * 0.7).sin() * (j as f64 * 0.3).cos();
            let _ = writeln!(obj, "v {} {y} {}", i as f64 * 0.5, -(j as f64) * 0.5);
        }
    }
    for j in 0..n {
        for i in 0..n {
            let a = j * (n + 1) + i + 1;
            let (b, c) = (a + 1, a + n + 1);
            let _ = writeln!(obj, "f {a} {b} {}\nf {a} {} {c}", c + 1, c + 1);
        }
    }
    obj
}

#[test]
fn a_killed_bake_leaves_the_previous_output_intact() {
    let dir = TempDir::new(TEMP_PREFIX, "killed");
    let input = dir.join("terrain.obj");
    let out = dir.join("terrain.wsurf");
    std::fs::write(&input, terrain_obj(400, 0.0)).unwrap();
    let t = Instant::now();
    bake_json(&dir, &input, &out, &["--threads", "1"]);
    let full_time = t.elapsed();
    let before = std::fs::read(&out).unwrap();
    // Another level, so that a bake that did finish would show.
    std::fs::write(&input, terrain_obj(400, 1.0)).unwrap();
    let mut killed_mid_run = false;
    for divisor in [3, 6, 12, 24] {
        let mut child = Command::new(BIN)
            .args(["bake", input.to_str().unwrap(), "-o", out.to_str().unwrap()])
            .args(["--threads", "1", "--full", "-q"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn walksurf");
        std::thread::sleep(full_time / divisor);
        let finished = child.try_wait().expect("poll the bake").is_some();
        child.kill().ok();
        child.wait().expect("reap the bake");
        if !finished {
            eprintln!(
                "killed after {:?} (a full bake took {full_time:?})",
                full_time / divisor
            );
            killed_mid_run = true;
            break;
        }
        // It finished before the kill: start again from the old file.
        std::fs::write(&out, &before).unwrap();
    }
    assert!(killed_mid_run, "every bake finished within {full_time:?}");
    let after = std::fs::read(&out).expect("the output still exists");
    assert!(after == before, "the killed bake changed the output");
    let layout = FileView::parse(&after).expect("the output parses");
    FileView::verify_checksums(&after, &layout).expect("the output's checksums hold");
    // Only a bake killed while writing leaves its temporary file.
    for f in dir.files() {
        assert!(
            ["terrain.obj", "terrain.wsurf"].contains(&f.as_str()) || f.starts_with(".terrain.wsurf.tmp-"),
            "unexpected file {f}"
        );
    }
    // The next bake is unaffected.
    let v = bake_json(&dir, &input, &out, &[]);
    assert_eq!(v["incremental"], true, "{v}");
}

/// `CI=true` makes a missing shared-levels folder a failure, not a skip.
fn shared_level(name: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/levels")
        .join(name);
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{} is missing",
        path.display()
    );
    eprintln!("skipping: {} not found", path.display());
    None
}

#[test]
fn shared_levels_bake_the_same_bytes_on_1_and_2_threads() {
    // Two levels of different sources and sizes; scripts/determinism checks all.
    for name in ["recast_nav_test.obj", "navcat_proto-level.glb"] {
        let Some(level) = shared_level(name) else { continue };
        let dir = TempDir::new(TEMP_PREFIX, "threads");
        let one = dir.join("one.wsurf");
        let two = dir.join("two.wsurf");
        bake_json(&dir, &level, &one, &["--threads", "1"]);
        bake_json(&dir, &level, &two, &["--threads", "2"]);
        assert!(
            std::fs::read(&one).unwrap() == std::fs::read(&two).unwrap(),
            "{name}: --threads 1 and --threads 2 baked different bytes"
        );
    }
}

#[test]
fn bake_help_mentions_full() {
    let dir = TempDir::new(TEMP_PREFIX, "help");
    let out = walksurf(&dir, &["bake", "--help"]);
    assert!(text(&out.stdout).contains("--full"), "{}", text(&out.stdout));
}
