//! Hot reload: reader threads query a baked file while the main thread
//! rebakes and replaces it (`walksurf_bake::write_atomic`: temporary file,
//! rename) several times, alternating two levels — a flat floor at z = 0
//! (odd generations) and one at z = 100 (even generations).
//!
//! Every answer must be right for the generation of the `Surface` it came
//! from, whether that `Surface` was opened before or after a replacement:
//! the rename gives the path a new inode, and a mapped old file stays valid
//! and unchanged. (Rewriting a mapped file in place would break this; never
//! do that.) Unix only: Windows cannot replace a file that is mapped.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use walksurf::{Agent, FloorMode, FloorOutcome, Surface};
use walksurf_bake::{BakeConfig, Mesh, Silent, bake_mesh, write_atomic};
use walksurf_oracle::corpus::Rng;

/// Half the side of the square floor. [Units: cm]
const HALF_SIDE_CM: f64 = 1000.0;
/// Capsule centre height of every query; above both floors. [Units: cm]
const QUERY_Z_CM: f64 = 400.0;
/// How far below the capsule bottom a query looks: reaches both floors.
const DOWN_CM: f64 = 500.0;
/// Generations baked after the first.
const REPLACEMENTS: u64 = 8;
/// A reader reopens the file after this many queries.
const REOPEN_EVERY: usize = 300;

/// The floor height of a generation's level.
fn floor_z(generation: u64) -> f64 {
    if generation % 2 == 1 { 0.0 } else { 100.0 }
}

/// A square floor (two triangles) at `z`, Z up, cm.
fn floor_mesh(z: f64) -> Mesh {
    let h = HALF_SIDE_CM;
    Mesh {
        vertices: vec![[-h, -h, z], [h, -h, z], [h, h, z], [-h, h, z]],
        triangles: vec![[0, 1, 2], [0, 2, 3]],
        walkable_allowed: vec![true, true],
    }
}

fn bake_generation(path: &Path, generation: u64) {
    let out = bake_mesh(
        &floor_mesh(floor_z(generation)),
        &BakeConfig::default(),
        generation,
        &Silent,
    )
    .expect("bake a floor");
    write_atomic(path, &out.bytes).expect("replace the file");
}

/// What one reader saw.
#[derive(Debug, Default)]
struct Seen {
    queries: usize,
    floors: usize,
    generations: Vec<u64>,
    errors: Vec<String>,
}

/// Queries `surface` once at a random point well inside the floor; checks
/// the answer against the surface's generation.
fn check_one(surface: &Surface, rng: &mut Rng, seen: &mut Seen) {
    let inner = HALF_SIDE_CM - 100.0;
    let pos = [
        (2.0 * rng.next_f64() - 1.0) * inner,
        (2.0 * rng.next_f64() - 1.0) * inner,
        QUERY_Z_CM,
    ];
    let generation = surface.generation();
    let want = floor_z(generation);
    seen.queries += 1;
    match surface.find_floor(pos, DOWN_CM, Agent::DEFAULT, FloorMode::LineTrace) {
        FloorOutcome::Floor(hit) => {
            seen.floors += 1;
            let bottom = QUERY_Z_CM - Agent::DEFAULT.half_height_cm;
            let ok = (hit.impact_point[2] - want).abs() <= 0.01 && (hit.floor_dist - (bottom - want)).abs() <= 0.01;
            if !ok && seen.errors.len() < 10 {
                seen.errors.push(format!(
                    "generation {generation}: floor at z {} (floor_dist {}) at {pos:?}, expected z {want}",
                    hit.impact_point[2], hit.floor_dist
                ));
            }
        }
        FloorOutcome::NoFloor => seen
            .errors
            .push(format!("generation {generation}: no floor at {pos:?}")),
        // Declining is allowed by the contract; counted below.
        FloorOutcome::Fallback(_) => {}
    }
}

fn temp_file(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("walksurf-hot-reload-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

#[test]
fn readers_stay_correct_while_the_file_is_replaced() {
    let path = temp_file("level.wsurf");
    bake_generation(&path, 1);
    let first = Surface::open(&path).expect("open generation 1");
    assert_eq!(first.generation(), 1);

    let stop = Arc::new(AtomicBool::new(false));
    let all_seen = Arc::new(Mutex::new(Vec::new()));
    let mut readers = Vec::new();
    for r in 0..3u64 {
        let (path, stop, all_seen) = (path.clone(), stop.clone(), all_seen.clone());
        readers.push(std::thread::spawn(move || {
            let mut rng = Rng::new(0x5EED + r);
            let mut seen = Seen::default();
            let mut surface = Surface::open(&path).expect("open");
            seen.generations.push(surface.generation());
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                check_one(&surface, &mut rng, &mut seen);
                n += 1;
                if n % REOPEN_EVERY == 0 {
                    // The path always names a complete file: never an error.
                    surface = Surface::open(&path).unwrap_or_else(|e| panic!("reopen: {e}"));
                    if seen.generations.last() != Some(&surface.generation()) {
                        seen.generations.push(surface.generation());
                    }
                }
            }
            all_seen.lock().unwrap().push(seen);
        }));
    }

    // Meanwhile: rebake and replace, alternating the levels.
    for generation in 2..=REPLACEMENTS + 1 {
        std::thread::sleep(Duration::from_millis(25));
        bake_generation(&path, generation);
    }
    // Let the readers open the last generation too.
    std::thread::sleep(Duration::from_millis(30));
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        r.join().expect("a reader panicked");
    }

    // The surface opened first still answers for generation 1, although its
    // file was replaced eight times.
    let mut seen_first = Seen::default();
    let mut rng = Rng::new(1);
    for _ in 0..200 {
        check_one(&first, &mut rng, &mut seen_first);
    }
    let last = Surface::open(&path).expect("open the last generation");
    assert_eq!(last.generation(), REPLACEMENTS + 1);

    let all = all_seen.lock().unwrap();
    let mut generations: Vec<u64> = all.iter().flat_map(|s| s.generations.clone()).collect();
    generations.sort_unstable();
    generations.dedup();
    for s in all.iter().chain([&seen_first]) {
        assert!(s.errors.is_empty(), "wrong answers: {:#?}", s.errors);
        assert!(
            s.floors * 10 >= s.queries * 9,
            "only {} of {} queries over a flat floor answered",
            s.floors,
            s.queries
        );
    }
    assert!(
        generations.len() >= 3,
        "the readers saw generations {generations:?} only: the test did not exercise reloading"
    );
    let queries: usize = all.iter().map(|s| s.queries).sum();
    eprintln!("{queries} queries over generations {generations:?}");
    let dir = path.parent().expect("temp dir").to_path_buf();
    drop((first, last));
    let _ = std::fs::remove_dir_all(dir);
}
