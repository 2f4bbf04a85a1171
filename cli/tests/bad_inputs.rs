//! Hostile input through the real binary: every level in `testdata/bad/`
//! (written by `scripts/make-bad-levels`) is refused by `bake` with one
//! `error:` line naming the file and the place in it, without a panic and
//! without touching the output; corrupt or too-new `.wsurf` files are refused
//! by `inspect` and `query` the same way; and queries the runtime must not
//! answer get a `fallback` (or an `error` line), never a crash.

mod common;
use common::*;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use walksurf_format::zerocopy::{FromBytes, IntoBytes};

const TEMP_PREFIX: &str = "walksurf-bad";
const BAD_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/bad");

/// Each bad level and what its error line must say besides the file's path.
/// Written from what is wrong with the file (see `scripts/make-bad-levels`),
/// not copied from the program's output.
const GOLDEN: &[(&str, &[&str])] = &[
    // The GLB header declares the untruncated length; the file is 24 bytes
    // shorter (596).
    ("truncated.glb", &["GLB is truncated", "the file has 596"]),
    // Three lines of JSON, then the end of the file inside `"scenes": [{`.
    ("bad-json.gltf", &["invalid glTF", "line 4"]),
    ("missing-buffer.gltf", &["buffer 0", "missing-buffer.bin"]),
    // 4 positions (48 bytes) + 6 u16 indices (12 bytes) = 60, declared 4096.
    ("short-buffer.gltf", &["buffer 0", "60 bytes", "4096"]),
    // 400 VEC3 floats over a 48-byte view.
    (
        "accessor-out-of-range.gltf",
        &["node \"floor\" primitive 0", "accessor 0", "400 elements", "48 bytes"],
    ),
    (
        "no-accessors.gltf",
        &["mesh 0 primitive 0", "POSITION accessor 0 does not exist"],
    ),
    (
        "index-out-of-range.gltf",
        &["node \"floor\" primitive 0", "index 7 out of range (4 vertices)"],
    ),
    ("nan-position.gltf", &["node \"floor\" primitive 0", "vertex 1", "NaN"]),
    ("inf-position.gltf", &["node \"floor\" primitive 0", "vertex 2", "inf"]),
    // x = 2e6 m = 2e8 cm.
    (
        "beyond-range.gltf",
        &[
            "node \"floor\" primitive 0",
            "vertex 2",
            "200000000",
            "beyond the format's range",
        ],
    ),
    // One POINTS and one LINES primitive.
    ("points-lines-only.gltf", &["no triangles", "(2) are points or lines"]),
    ("empty-scene.gltf", &["scene 0 has no nodes"]),
    // Four vertical quads = 8 triangles, none walkable.
    ("no-walkable.obj", &["no walkable surface", "8 triangles"]),
    // `f 1 3 9` on line 7, with 4 vertices.
    ("bad-face.obj", &["line 7", "index out of bounds"]),
];

/// A non-zero exit, nothing on stdout, exactly one `error:` line on stderr
/// containing every `needles`, and no panic.
fn assert_one_error_line(what: &str, out: &Output, needles: &[&str]) {
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{what} succeeded");
    assert!(!stderr.contains("panicked"), "{what} panicked: {stderr}");
    assert_eq!(text(&out.stdout), "", "{what} wrote to stdout");
    assert_eq!(stderr.lines().count(), 1, "{what}: stderr is not one line: {stderr}");
    assert!(stderr.starts_with("error: "), "{what}: {stderr}");
    for needle in needles {
        assert!(
            stderr.contains(needle),
            "{what}: {stderr:?} does not mention {needle:?}"
        );
    }
}

#[test]
fn every_bad_level_is_refused_with_its_message_and_no_output() {
    let dir = TempDir::new(TEMP_PREFIX, "levels");
    let out_path = dir.join("out.wsurf");
    let out_arg = out_path.to_str().expect("utf-8 path");
    let previous = b"an existing output, which a failed bake must leave alone".to_vec();
    for (name, needles) in GOLDEN {
        let input = Path::new(BAD_DIR).join(name);
        let input_arg = input.to_str().expect("utf-8 path");
        let mut all = vec![input_arg];
        all.extend_from_slice(needles);
        // Without an output, then over an existing one.
        for existing in [false, true] {
            if existing {
                std::fs::write(&out_path, &previous).expect("write the previous output");
            }
            let (out, _) = walksurf_piped(&dir, &["bake", input_arg, "-o", out_arg], b"");
            assert_one_error_line(&format!("bake {name}"), &out, &all);
            if existing {
                assert_eq!(dir.files(), ["out.wsurf"], "bake {name} left files behind");
                let now = std::fs::read(&out_path).expect("the previous output");
                assert!(now == previous, "bake {name} changed the existing output");
                std::fs::remove_file(&out_path).expect("remove the previous output");
            } else {
                assert_eq!(dir.files(), Vec::<String>::new(), "bake {name} wrote files");
            }
        }
    }
}

/// A new file in `testdata/bad/` needs its row in `GOLDEN`.
#[test]
fn every_file_in_testdata_bad_has_a_golden_message() {
    let mut files: Vec<String> = std::fs::read_dir(BAD_DIR)
        .expect("testdata/bad exists (scripts/make-bad-levels writes it)")
        .map(|e| e.expect("dir entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n != "README.md")
        .collect();
    files.sort();
    let mut golden: Vec<String> = GOLDEN.iter().map(|(n, _)| (*n).to_owned()).collect();
    golden.sort();
    assert_eq!(files, golden);
}

// ------------------------------------------------------------------ .wsurf

/// A 1 m × 1 m floor at z = 0 (OBJ, Y up, metres), baked into `dir`.
fn bake_floor(dir: &TempDir) -> PathBuf {
    let obj = dir.join("floor.obj");
    std::fs::write(&obj, "v 0 0 0\nv 1 0 0\nv 1 0 -1\nv 0 0 -1\nf 1 2 3 4\n").expect("write floor.obj");
    let out = dir.join("floor.wsurf");
    let (run, _) = walksurf_piped(
        dir,
        &[
            "bake",
            obj.to_str().expect("utf-8"),
            "-o",
            out.to_str().expect("utf-8"),
            "-q",
        ],
        b"",
    );
    assert!(run.status.success(), "bake floor.obj: {}", text(&run.stderr));
    out
}

#[test]
fn corrupt_and_too_new_files_are_refused_by_inspect_and_query() {
    let dir = TempDir::new(TEMP_PREFIX, "wsurf");
    let good = std::fs::read(bake_floor(&dir)).expect("read floor.wsurf");
    let mut too_new = good.clone();
    let (mut header, _) = walksurf_format::Header::read_from_prefix(&good).expect("header");
    header.format_major.set(walksurf_format::FORMAT_MAJOR + 1);
    walksurf_format::seal_header(&mut header);
    too_new[..64].copy_from_slice(header.as_bytes());
    let mut flipped_header = good.clone();
    flipped_header[16] ^= 1; // tile_size_cm: the header checksum catches it
    let too_new_needles = [
        format!("version {}", walksurf_format::FORMAT_MAJOR + 1),
        format!("supports {}", walksurf_format::FORMAT_MAJOR),
    ];
    let too_new_needles: Vec<&str> = too_new_needles.iter().map(String::as_str).collect();
    let cases: [(&str, Vec<u8>, &[&str]); 5] = [
        ("empty.wsurf", Vec::new(), &["truncated"]),
        (
            "text.wsurf",
            b"not a walksurf file at all, just some text".to_vec(),
            &["bad magic"],
        ),
        ("truncated.wsurf", good[..good.len() - 64].to_vec(), &["truncated"]),
        ("too-new.wsurf", too_new, &too_new_needles),
        ("header.wsurf", flipped_header, &["header checksum"]),
    ];
    for (name, bytes, needles) in cases {
        let path = dir.join(name);
        std::fs::write(&path, &bytes).expect("write the bad file");
        let arg = path.to_str().expect("utf-8");
        let mut all = vec![arg];
        all.extend_from_slice(needles);
        for command in [&["inspect", arg][..], &["inspect", arg, "--json"], &["query", arg]] {
            let line = br#"{"op":"find_floor","pos":[30,60,97],"mode":"line"}"#;
            let (out, _) = walksurf_piped(&dir, command, line);
            assert_one_error_line(&format!("{command:?} on {name}"), &out, &all);
        }
        assert!(
            std::fs::read(&path).expect("the bad file") == bytes,
            "{name} was modified"
        );
    }
}

// ------------------------------------------------------------------ queries

/// Queries the runtime must decline, each with the answer it must give: a
/// `fallback` with its reason, or an `error` line for what JSON cannot carry.
/// The floor is at z = 0 over x, y in [0, 100] cm (split along its diagonal x = y, where the answer is undecided); the default agent
/// (R 42, H 96) stands on it at z = 96.
const BAD_QUERIES: &[(&str, &str)] = &[
    // JSON has no NaN or infinity: 1e999 overflows f64 and serde_json
    // refuses it, so a non-finite number can only arrive as a parse error.
    (
        r#"{"op":"find_floor","pos":[30,60,1e999],"mode":"line"}"#,
        "error:number out of range",
    ),
    (r#"{"op":"find_floor","pos":[30,60,"NaN"],"mode":"line"}"#, "error:pos"),
    (
        r#"{"op":"find_floor","pos":[30,60,96],"mode":"line","radius":-1}"#,
        "invalid_input",
    ),
    (
        r#"{"op":"find_floor","pos":[30,60,96],"mode":"line","radius":0}"#,
        "invalid_input",
    ),
    (
        r#"{"op":"find_floor","pos":[30,60,96],"mode":"line","radius":50,"half_height":40}"#,
        "invalid_input",
    ),
    (
        r#"{"op":"find_floor","pos":[30,60,96],"mode":"line","down":-1}"#,
        "invalid_input",
    ),
    (r#"{"op":"find_floor","pos":[30,60,96],"radius":-1}"#, "invalid_input"),
    // Beyond any tile index an i32 can hold.
    (
        r#"{"op":"find_floor","pos":[1e300,50,96],"mode":"line"}"#,
        "outside_coverage",
    ),
    (
        r#"{"op":"sweep","pos":[30,60,96],"delta":[10,0],"radius":-4}"#,
        "invalid_input",
    ),
    (
        r#"{"op":"sweep","pos":[30,60,96],"delta":[10,0],"radius":42,"half_height":41}"#,
        "invalid_input",
    ),
    // The bake supports sweeps up to 256 cm.
    (r#"{"op":"sweep","pos":[30,60,96],"delta":[1e6,0]}"#, "budget_exceeded"),
    (
        r#"{"op":"sweep","pos":[30,60,96],"delta":[1e308,1e308]}"#,
        "budget_exceeded",
    ),
    (
        r#"{"op":"sweep","pos":[30,60,96],"delta":[200,200]}"#,
        "budget_exceeded",
    ),
];

fn query(dir: &TempDir, file: &Path, lines: &[&str]) -> Vec<Value> {
    let mut input = lines.join("\n").into_bytes();
    input.push(b'\n');
    let (out, _) = walksurf_piped(dir, &["query", file.to_str().expect("utf-8")], input);
    assert!(out.status.success(), "query failed: {}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    let answers: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?} is not JSON: {e}")))
        .collect();
    assert_eq!(answers.len(), lines.len(), "one answer per line");
    answers
}

#[test]
fn invalid_queries_fall_back_or_get_an_error_line() {
    let dir = TempDir::new(TEMP_PREFIX, "queries");
    let file = bake_floor(&dir);
    // Each bad query between two good ones: the stream carries on.
    let good = r#"{"op":"find_floor","pos":[30,60,97],"mode":"line"}"#;
    let mut lines = vec![good];
    for (q, _) in BAD_QUERIES {
        lines.push(q);
        lines.push(good);
    }
    let answers = query(&dir, &file, &lines);
    for (i, (q, expected)) in BAD_QUERIES.iter().enumerate() {
        let a = &answers[2 * i + 1];
        match expected.strip_prefix("error:") {
            Some(needle) => {
                assert_eq!(a["result"], "error", "{q} -> {a}");
                let message = a["message"].as_str().unwrap_or_default();
                assert!(message.contains(needle), "{q} -> {a}: expected {needle:?}");
            }
            None => {
                assert_eq!(a["result"], "fallback", "{q} -> {a}");
                assert_eq!(a["reason"], *expected, "{q} -> {a}");
            }
        }
    }
    for (i, a) in answers.iter().enumerate().step_by(2) {
        assert_eq!(a["result"], "floor", "good query at line {} -> {a}", i + 1);
    }
}

// ------------------------------------------------------------------ fuzz

/// The fuzz harnesses (`fuzz/src/lib.rs`), compiled into this test so that
/// every input the fuzzer ever crashed on is replayed by `cargo test`.
#[path = "../../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod fuzz;

const REGRESSIONS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz/regressions");

#[test]
fn fuzz_regressions_replay_without_panicking() {
    type Harness = fn(&[u8]);
    let targets: [(&str, Harness); 3] = [
        ("surface_from_bytes", fuzz::surface_from_bytes),
        ("ingest", fuzz::ingest),
        ("query_line", fuzz::query_line),
    ];
    let mut replayed = 0;
    for (target, run) in targets {
        let dir = Path::new(REGRESSIONS).join(target);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("dir entry").path();
            let data = std::fs::read(&path).expect("read a regression input");
            // A panic here names the input in the test output.
            eprintln!("replaying {}", path.display());
            run(&data);
            replayed += 1;
        }
    }
    assert!(replayed > 0, "no inputs under {REGRESSIONS}");
}

/// The harnesses on their seeds: a baked file answers, and the query fixture
/// bakes (a harness that fails on valid input finds nothing).
#[test]
fn fuzz_harnesses_accept_valid_input() {
    let fixture = fuzz::query_surface_fixture();
    fuzz::query_surface(fixture, 1);
    let mut bytes = vec![0u8];
    bytes.extend_from_slice(fixture.bytes());
    fuzz::surface_from_bytes(&bytes);
    bytes[0] = 1; // re-sealed: the checksums are already right
    fuzz::surface_from_bytes(&bytes);
    fuzz::query_line(br#"{"op":"find_floor","pos":[50,50,97],"mode":"line"}"#);
    let answer = walksurf_cli::query::answer_line(fixture, r#"{"op":"find_floor","pos":[30,60,97],"mode":"line"}"#);
    assert_eq!(answer["result"], "floor", "{answer}");
    let mut obj = vec![2u8];
    obj.extend_from_slice(b"v 0 0 0\nv 1 0 0\nv 1 0 -1\nv 0 0 -1\nf 1 2 3 4\n");
    fuzz::ingest(&obj);
}

/// An agent larger than the file was baked for (R 42, H 96 by default): the
/// data cannot answer for it, so capsule queries and sweeps fall back with
/// `budget_exceeded`. (Line-trace mode probes one vertical line and does not
/// depend on the agent's size.)
#[test]
fn oversized_agents_exceed_the_budget() {
    let dir = TempDir::new(TEMP_PREFIX, "oversized");
    let file = bake_floor(&dir);
    let lines = [
        r#"{"op":"find_floor","pos":[30,60,500],"radius":400,"half_height":500}"#,
        r#"{"op":"find_floor","pos":[30,60,500],"mode":"capsule","radius":43,"half_height":96}"#,
        r#"{"op":"sweep","pos":[30,60,500],"delta":[10,0],"radius":400,"half_height":500}"#,
    ];
    for (q, a) in lines.iter().zip(query(&dir, &file, &lines)) {
        assert_eq!(a["result"], "fallback", "{q} -> {a}");
        assert_eq!(a["reason"], "budget_exceeded", "{q} -> {a}");
    }
}
