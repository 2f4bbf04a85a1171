//! Helpers shared by the CLI integration tests: a temporary directory per
//! test, running the real `walksurf` binary, and reading its output. Each test
//! binary uses a subset, hence the `allow(dead_code)`.

#![allow(dead_code)]

use serde_json::Value;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

pub const BIN: &str = env!("CARGO_BIN_EXE_walksurf");
pub const DUNGEON: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/dungeon.obj");

/// A fresh directory under the system temp dir, removed on drop unless the
/// test failed (so that a failure can be looked at).
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// `{prefix}-{name}-{pid}-{n}` under the system temp dir; `prefix` tells
    /// the test binaries' directories apart.
    pub fn new(prefix: &str, name: &str) -> TempDir {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("{prefix}-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    pub fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.join(name);
        std::fs::write(&path, bytes).expect("write fixture");
        path
    }

    /// Names of the files in the directory, sorted.
    pub fn files(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.0)
            .expect("read temp dir")
            .map(|e| e.expect("dir entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// Runs `walksurf args…` in the test's own working directory with an empty
/// stdin.
pub fn walksurf_here(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run walksurf")
}

/// Runs `walksurf args…` in `dir` with an empty stdin.
pub fn walksurf(dir: &TempDir, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(&dir.0)
        .stdin(Stdio::null())
        .output()
        .expect("run walksurf")
}

/// Runs `walksurf args…` in `dir` with `input` on stdin (written from a thread
/// so that a full stdout pipe cannot deadlock the test). Returns the output
/// and the result of writing stdin: a command that exits without reading it
/// makes that fail.
pub fn walksurf_piped(dir: &TempDir, args: &[&str], input: impl Into<Vec<u8>>) -> (Output, std::io::Result<()>) {
    let input = input.into();
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(&dir.0)
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run walksurf");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().expect("wait for walksurf");
    let written = writer.join().expect("stdin writer");
    (out, written)
}

/// [`walksurf_piped`], asserting that all of `input` was written.
pub fn walksurf_stdin(dir: &TempDir, args: &[&str], input: impl Into<Vec<u8>>) -> Output {
    let (out, written) = walksurf_piped(dir, args, input);
    written.expect("write stdin");
    out
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Asserts success and returns stdout.
pub fn ok_stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Bakes the dungeon into `dir/name` and returns its path.
pub fn bake_dungeon(dir: &TempDir, name: &str, extra: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let mut args = vec!["bake", DUNGEON, "-o", out.to_str().expect("utf-8 path"), "-q"];
    args.extend_from_slice(extra);
    ok_stdout(&walksurf(dir, &args));
    out
}

pub fn u64_field(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("\"{key}\" is not an unsigned integer in {v}"))
}
