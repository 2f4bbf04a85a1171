//! The fuzz harnesses, one function per target. Each takes arbitrary bytes
//! and must never panic (or hang, or run out of memory); the checks that
//! `assert!` here are invariants a hostile input must not break.
//!
//! `cli/tests/bad_inputs.rs` includes this file as a module and replays every
//! input in `fuzz/regressions/<target>/` through the same functions, so a
//! crash found once stays fixed in `cargo test`.

use std::path::Path;
use std::sync::OnceLock;
use walksurf::{Agent, FloorMode, FloorOutcome, Surface, SweepOutcome};
use walksurf_bake::{BakeConfig, Silent, UpAxis};
use walksurf_format::{FileView, TILE_SIZE_CM, hash64};

/// `Surface::from_bytes` (and `from_bytes_verified`) on arbitrary bytes,
/// then line-trace and capsule `find_floor` and `sweep_horizontal` queries
/// in and around the tiles the file claims to have.
///
/// The first byte is a mode: bit 0 re-seals the header and section-table
/// checksums after the mutation, so that mutated files get past the
/// checksums to the validation behind them (as a tamperer could).
pub fn surface_from_bytes(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let mut bytes = rest.to_vec();
    if mode & 1 != 0 {
        reseal(&mut bytes);
    }
    let verified = Surface::from_bytes_verified(&bytes);
    let Ok(surface) = Surface::from_bytes(&bytes) else {
        assert!(verified.is_err(), "verified open accepted what the plain open refused");
        return;
    };
    query_surface(&surface, hash64(data));
}

/// Runs a handful of queries derived from `seed` over the file's tiles and
/// checks that every answer is well formed.
pub fn query_surface(surface: &Surface, seed: u64) {
    let mut rng = SplitMix(seed);
    let tiles: Vec<[f64; 3]> = FileView::new(surface.bytes(), surface.layout())
        .map(|v| {
            v.hot
                .iter()
                .take(8)
                .map(|h| {
                    [
                        h.tile_x.get() as f64 * TILE_SIZE_CM,
                        h.tile_y.get() as f64 * TILE_SIZE_CM,
                        h.z_origin_cm.get() as f64,
                    ]
                })
                .collect()
        })
        .unwrap_or_default();
    let mut origins = tiles;
    origins.push([0.0, 0.0, 0.0]);
    for origin in origins {
        for _ in 0..4 {
            let pos = [
                origin[0] + rng.range(-100.0, TILE_SIZE_CM + 100.0),
                origin[1] + rng.range(-100.0, TILE_SIZE_CM + 100.0),
                origin[2] + rng.range(-500.0, 1000.0),
            ];
            let down = rng.range(0.0, 300.0);
            let agent = Agent {
                radius_cm: rng.range(1.0, 60.0),
                half_height_cm: rng.range(60.0, 120.0),
            };
            for mode in [FloorMode::LineTrace, FloorMode::Capsule] {
                check_floor(surface.find_floor(pos, down, agent, mode), pos);
                check_floor(surface.find_floor(pos, down, Agent::DEFAULT, mode), pos);
            }
            let delta = [rng.range(-300.0, 300.0), rng.range(-300.0, 300.0)];
            check_sweep(surface.sweep_horizontal(pos, delta, agent));
        }
    }
    // Far outside every tile, and at the extremes of f64.
    for pos in [
        [1e300, 0.0, 0.0],
        [-1e300, 1e300, 0.0],
        [0.0, 0.0, 1e300],
        [0.0, 0.0, -1e300],
    ] {
        check_floor(
            surface.find_floor(pos, 100.0, Agent::DEFAULT, FloorMode::LineTrace),
            pos,
        );
        check_sweep(surface.sweep_horizontal(pos, [10.0, 0.0], Agent::DEFAULT));
    }
}

fn check_floor(outcome: FloorOutcome, pos: [f64; 3]) {
    if let FloorOutcome::Floor(hit) = outcome {
        let numbers = [hit.floor_dist]
            .into_iter()
            .chain(hit.location)
            .chain(hit.impact_point)
            .chain(hit.normal);
        for v in numbers {
            assert!(v.is_finite(), "non-finite number in a floor answer at {pos:?}: {hit:?}");
        }
    }
}

fn check_sweep(outcome: SweepOutcome) {
    if let SweepOutcome::Hit(hit) = outcome {
        assert!((0.0..=1.0).contains(&hit.time), "sweep time outside [0, 1]: {hit:?}");
    }
}

/// Recomputes the section-table checksum (of whatever table the header's
/// count covers, if it is in bounds) and then the header checksum.
pub fn reseal(bytes: &mut [u8]) {
    let count = bytes
        .get(12..14)
        .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]) as usize);
    if let Some(table) = bytes.get(64..64 + 32 * count) {
        let sum = (hash64(table) as u32).to_le_bytes();
        if let Some(field) = bytes.get_mut(56..60) {
            field.copy_from_slice(&sum);
        }
    }
    if let Some(head) = bytes.get(..60) {
        let sum = (hash64(head) as u32).to_le_bytes();
        if let Some(field) = bytes.get_mut(60..64) {
            field.copy_from_slice(&sum);
        }
    }
}

/// Ingest of arbitrary bytes as glTF, GLB or OBJ (chosen by the first byte)
/// from memory. A small mesh that ingests is then baked, and the baked file
/// must open and answer queries.
///
/// The path's directory does not exist, so a relative external-buffer URI
/// fails to read; an absolute one is read only if it is a regular file.
pub fn ingest(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let ext = match mode % 3 {
        0 => "gltf",
        1 => "glb",
        _ => "obj",
    };
    let path = format!("/nonexistent-walksurf-fuzz/level.{ext}");
    let config = BakeConfig {
        up: if mode & 0x80 != 0 { UpAxis::Z } else { UpAxis::Y },
        metres_per_unit: if mode & 0x40 != 0 { 0.01 } else { 1.0 },
        threads: 1,
        ..BakeConfig::default()
    };
    let Ok((mesh, _report)) = walksurf_bake::stage::ingest::ingest_bytes(Path::new(&path), rest, &config) else {
        return;
    };
    // Baking is linear in the area covered: keep it to a few tiles.
    let extent = mesh
        .vertices
        .iter()
        .fold(0.0f64, |m, v| m.max(v[0].abs()).max(v[1].abs()));
    if mesh.triangles.len() > 256 || extent > 2.0 * TILE_SIZE_CM {
        return;
    }
    let Ok(out) = walksurf_bake::bake_mesh(&mesh, &config, 1, &Silent) else {
        return;
    };
    let surface = match Surface::from_bytes_verified(&out.bytes) {
        Ok(s) => s,
        Err(e) => panic!("a baked file does not open: {e}"),
    };
    query_surface(&surface, hash64(data));
}

/// The `query` command's line protocol on arbitrary lines, against a small
/// baked level: every line gets one JSON object with a `result`.
pub fn query_line(data: &[u8]) {
    let surface = query_surface_fixture();
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for line in text.split('\n') {
        let answer = walksurf_cli::query::answer_line(surface, line);
        assert!(
            answer.get("result").and_then(|r| r.as_str()).is_some(),
            "{line:?} -> {answer}"
        );
        // The answer is printed as one line.
        assert!(!answer.to_string().contains('\n'), "{line:?} -> {answer}");
    }
}

/// A floor (2 m × 2 m at z = 0), a 30 cm step on half of it and a wall, baked
/// once.
pub fn query_surface_fixture() -> &'static Surface {
    static SURFACE: OnceLock<Surface> = OnceLock::new();
    SURFACE.get_or_init(|| {
        let obj = "v 0 0 0\nv 2 0 0\nv 2 0 -2\nv 0 0 -2\n\
                   v 1 0.3 0\nv 2 0.3 0\nv 2 0.3 -1\nv 1 0.3 -1\n\
                   v 0 0 -2\nv 2 0 -2\nv 2 2 -2\nv 0 2 -2\n\
                   f 1 2 3 4\nf 5 6 7 8\nf 9 10 11 12\n";
        let config = BakeConfig {
            threads: 1,
            ..BakeConfig::default()
        };
        let (mesh, _) = walksurf_bake::stage::ingest::ingest_bytes(Path::new("fixture.obj"), obj.as_bytes(), &config)
            .unwrap_or_else(|e| panic!("fixture: {e}"));
        let out = walksurf_bake::bake_mesh(&mesh, &config, 1, &Silent).unwrap_or_else(|e| panic!("fixture: {e}"));
        Surface::from_bytes(&out.bytes).unwrap_or_else(|e| panic!("fixture: {e}"))
    })
}

/// splitmix64: queries derived from the input, the same on every run.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (self.next() >> 11) as f64 / (1u64 << 53) as f64 * (hi - lo)
    }
}
