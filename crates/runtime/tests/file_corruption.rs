//! A baked level (testdata/dungeon.obj), cut short, corrupted and
//! version-skewed: the runtime refuses what it cannot trust with an `Err`,
//! and whatever it opens it queries without panicking.
//!
//! `from_bytes` validates the header, section table, parameters, tile index
//! and hot records, but reads no tile data; `from_bytes_verified` also
//! checksums every section. So a flipped byte in the tile data opens with
//! `from_bytes` and must then be answered (or declined) safely.

use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use walksurf::{
    Agent, DEFAULT_FLOOR_DOWN_CM, FallbackReason, FloorMode, FloorOutcome, FormatError, OpenError, Surface,
};
use walksurf_format::zerocopy::{FromBytes, IntoBytes};
use walksurf_format::{FileLayout, FileView, Header, hash64, seal_header, section};
use walksurf_oracle::corpus::Rng;

/// One line-trace query: capsule centre and `down`.
type Query = ([f64; 3], f64);

struct Fixture {
    bytes: Vec<u8>,
    layout: FileLayout,
    /// Spread over the level bounds (and a little beyond), plus queries just
    /// above walkable triangles so that pieces are reached.
    queries: Vec<Query>,
}

const H: f64 = Agent::DEFAULT.half_height_cm;

fn dungeon_path() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/dungeon.obj")).to_path_buf()
}

/// The baked dungeon and its queries, built once per test binary.
fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let config = walksurf_bake::BakeConfig::default();
        let bytes = walksurf_bake::bake_file(&dungeon_path(), &config, 1, &walksurf_bake::Silent)
            .expect("bake dungeon")
            .bytes;
        let layout = FileView::parse(&bytes).expect("baked file parses");
        let (mesh, _) = walksurf_bake::stage::ingest::ingest(&dungeon_path(), &config).expect("ingest dungeon");
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for v in &mesh.vertices {
            for k in 0..3 {
                lo[k] = lo[k].min(v[k]);
                hi[k] = hi[k].max(v[k]);
            }
        }
        let mut rng = Rng::new(0x5EED_F11E);
        let mut queries = Vec::new();
        for _ in 0..100 {
            let pos = [
                rng.range(lo[0] - 200.0, hi[0] + 200.0),
                rng.range(lo[1] - 200.0, hi[1] + 200.0),
                rng.range(lo[2] - 50.0, hi[2] + 250.0) + H,
            ];
            let down = [DEFAULT_FLOOR_DOWN_CM, 0.0, 200.0, hi[2] - lo[2] + 500.0][rng.below(4)];
            queries.push((pos, down));
        }
        // Just above a random point of a random walkable-looking triangle.
        let mut placed = 0;
        while placed < 100 {
            let t = mesh.triangles[rng.below(mesh.triangles.len())].map(|i| mesh.vertices[i as usize]);
            let (e1, e2) = (sub(t[1], t[0]), sub(t[2], t[0]));
            let n = [
                e1[1] * e2[2] - e1[2] * e2[1],
                e1[2] * e2[0] - e1[0] * e2[2],
                e1[0] * e2[1] - e1[1] * e2[0],
            ];
            let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
            if !(len > 0.0 && n[2] / len > 0.75) {
                continue;
            }
            let (mut a, mut b) = (rng.range(0.0, 1.0), rng.range(0.0, 1.0));
            if a + b > 1.0 {
                (a, b) = (1.0 - a, 1.0 - b);
            }
            let p: [f64; 3] = std::array::from_fn(|k| t[0][k] + a * e1[k] + b * e2[k]);
            queries.push(([p[0], p[1], p[2] + H + 1.0], DEFAULT_FLOOR_DOWN_CM));
            placed += 1;
        }
        Fixture { bytes, layout, queries }
    })
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn query(s: &Surface, (pos, down): Query) -> FloorOutcome {
    s.find_floor(pos, down, Agent::DEFAULT, FloorMode::LineTrace)
}

/// Runs every fixture query; each outcome is one of the three variants and
/// a floor has finite numbers. Returns the outcomes.
fn query_all(s: &Surface) -> Vec<FloorOutcome> {
    fixture()
        .queries
        .iter()
        .map(|&q| {
            let o = query(s, q);
            match o {
                FloorOutcome::Floor(hit) => {
                    let numbers = [hit.floor_dist]
                        .into_iter()
                        .chain(hit.location)
                        .chain(hit.impact_point)
                        .chain(hit.normal);
                    for v in numbers {
                        assert!(v.is_finite(), "non-finite floor {hit:?} for {q:?}");
                    }
                }
                FloorOutcome::NoFloor | FloorOutcome::Fallback(_) => {}
            }
            o
        })
        .collect()
}

fn header(bytes: &[u8]) -> Header {
    Header::read_from_prefix(bytes).expect("header").0
}

/// `bytes` with the header replaced by `edit(header)`, re-sealed.
fn with_header(bytes: &[u8], edit: impl FnOnce(&mut Header)) -> Vec<u8> {
    let mut b = bytes.to_vec();
    let mut h = header(&b);
    edit(&mut h);
    seal_header(&mut h);
    b[..64].copy_from_slice(h.as_bytes());
    b
}

#[test]
fn fixture_opens_and_answers() {
    let f = fixture();
    let s = Surface::from_bytes_verified(&f.bytes).expect("baked file opens verified");
    assert!(s.precision_known());
    assert!(s.tile_count() > 0);
    let outcomes = query_all(&s);
    let floors = outcomes.iter().filter(|o| matches!(o, FloorOutcome::Floor(_))).count();
    let none = outcomes.iter().filter(|o| matches!(o, FloorOutcome::NoFloor)).count();
    // The corruption tests below are only as good as the paths the queries
    // reach: make sure they find floors and miss too.
    assert!(
        floors >= 20,
        "only {floors} of {} queries found a floor",
        outcomes.len()
    );
    assert!(none >= 20, "only {none} of {} queries found no floor", outcomes.len());
}

/// Every prefix of the dense part (header, table, parameters, tile index,
/// hot records) and a stride through the tile data and metadata is refused.
/// Cutting only the padding after the last section is refused too: the file
/// length must be the last section's end rounded up to 64.
#[test]
fn every_truncated_prefix_is_an_err() {
    let f = fixture();
    let len = f.bytes.len();
    let sections_end = f.layout.sections.iter().map(|s| s.1.end).max().expect("sections");
    let dense_end = f.layout.data.start;
    assert!(dense_end < sections_end && sections_end <= len);
    let mut longer = f.bytes.clone();
    longer.push(0);
    assert!(Surface::from_bytes(&longer).is_err(), "appended bytes must be refused");
    let mut lengths: Vec<usize> = (0..dense_end).collect();
    lengths.extend((dense_end..len).step_by(251));
    for (_, r, _) in &f.layout.sections {
        lengths.extend([r.start.saturating_sub(1), r.start, r.start + 1, r.end.saturating_sub(1)]);
    }
    lengths.extend([sections_end - 1, len - 1]);
    lengths.retain(|&l| l < len);
    for l in lengths {
        let r = Surface::from_bytes(&f.bytes[..l]);
        assert!(r.is_err(), "a prefix of {l} of {len} bytes opened");
    }
    assert_eq!(
        Surface::from_bytes(&f.bytes[..63]).err(),
        Some(FormatError::Truncated("header"))
    );
}

#[test]
fn every_header_byte_is_checked() {
    let f = fixture();
    for i in 0..64 {
        let mut b = f.bytes.clone();
        b[i] ^= 0xFF;
        let err = Surface::from_bytes(&b).expect_err("corrupt header opened");
        let ok = match i {
            0..4 => err == FormatError::BadMagic,
            4..6 => matches!(
                err,
                FormatError::UnsupportedVersion {
                    supported: walksurf_format::FORMAT_MAJOR,
                    ..
                }
            ),
            _ => err == FormatError::HeaderChecksum,
        };
        assert!(ok, "header byte {i}: {err:?}");
    }
}

#[test]
fn every_section_table_byte_is_checked() {
    let f = fixture();
    let n = header(&f.bytes).section_count.get() as usize;
    assert!(n >= 4);
    for i in 64..64 + 32 * n {
        let mut b = f.bytes.clone();
        b[i] ^= 0xFF;
        assert_eq!(
            Surface::from_bytes(&b).err(),
            Some(FormatError::SectionTableChecksum),
            "table byte {i}"
        );
    }
}

/// Seeded byte flips inside each section. Verified opens refuse every one;
/// unverified opens either refuse or answer queries without panicking.
#[test]
fn random_flips_inside_each_section() {
    let f = fixture();
    let mut rng = Rng::new(0xF11B_5EC7);
    let mut opened_unverified = 0;
    let mut differed = 0;
    let clean = query_all(&Surface::from_bytes(&f.bytes).expect("clean"));
    for (kind, range, _) in &f.layout.sections {
        if range.is_empty() {
            continue;
        }
        for trial in 0..300 {
            let mut b = f.bytes.clone();
            for _ in 0..1 + rng.below(4) {
                let at = range.start + rng.below(range.len());
                b[at] ^= 1 + rng.below(255) as u8;
            }
            if b == f.bytes {
                continue; // two flips of one byte cancelled out
            }
            let verified = Surface::from_bytes_verified(&b).expect_err("verified open of a corrupt section");
            match Surface::from_bytes(&b) {
                Ok(s) => {
                    // Validation passed, so only the checksum can refuse it.
                    assert_eq!(
                        verified,
                        FormatError::SectionChecksum { kind: *kind },
                        "kind {kind} trial {trial}"
                    );
                    opened_unverified += 1;
                    if query_all(&s) != clean {
                        differed += 1;
                    }
                }
                Err(e) => {
                    assert_eq!(verified, e, "kind {kind} trial {trial}: both opens validate alike");
                    assert!(
                        matches!(*kind, section::BAKE_PARAMS | section::TILE_INDEX | section::TILE_HOT),
                        "kind {kind} is not validated at open, yet refused: {e:?}"
                    );
                }
            }
        }
    }
    // Flips in tile data open unverified; some of them must change answers
    // (or the queries do not reach the corrupted bytes at all).
    assert!(opened_unverified >= 600, "{opened_unverified}");
    assert!(differed > 0, "no flip changed any answer");
}

#[test]
fn version_skew() {
    let f = fixture();
    let major = walksurf_format::FORMAT_MAJOR;
    let b = with_header(&f.bytes, |h| h.format_major.set(major + 1));
    let err = Surface::from_bytes(&b).expect_err("next major opened");
    assert_eq!(
        err,
        FormatError::UnsupportedVersion {
            found: major + 1,
            supported: major
        }
    );
    let msg = err.to_string();
    let (found, supported) = (format!("{}.x", major + 1), format!("{major}.x"));
    assert!(msg.contains(&found) && msg.contains(&supported), "{msg}");

    // A minor version bump still opens and answers the same.
    let clean = Surface::from_bytes(&f.bytes).expect("clean");
    let minor = Surface::from_bytes_verified(&with_header(&f.bytes, |h| h.format_minor.set(7))).expect("minor 7");
    assert_eq!(query_all(&minor), query_all(&clean));

    // An unknown precision layout opens, and a query that found a floor on
    // the original declines with PrecisionBudget.
    let b = with_header(&f.bytes, |h| h.precision_layout.set(99));
    let s = Surface::from_bytes_verified(&b).expect("unknown precision layout opens");
    assert!(!s.precision_known());
    let mut floors = 0;
    for &q in &f.queries {
        if let FloorOutcome::Floor(_) = query(&clean, q) {
            floors += 1;
            assert_eq!(
                query(&s, q),
                FloorOutcome::Fallback(FallbackReason::PrecisionBudget),
                "{q:?}"
            );
        }
    }
    assert!(floors > 0, "no query found a floor on the original file");
}

/// Deletes the file when dropped (also when the test fails).
struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn temp_file(tag: &str, bytes: &[u8]) -> TempFile {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let path = std::env::temp_dir().join(format!(
        "walksurf-file-corruption-{tag}-{}-{nanos}.wsurf",
        std::process::id()
    ));
    std::fs::write(&path, bytes).expect("write temp file");
    TempFile(path)
}

#[test]
fn open_from_disk_matches_from_bytes() {
    let f = fixture();
    let file = temp_file("valid", &f.bytes);
    let from_bytes = query_all(&Surface::from_bytes(&f.bytes).expect("from_bytes"));
    let mapped = Surface::open(&file.0).expect("open");
    let verified = Surface::open_verified(&file.0).expect("open_verified");
    assert_eq!(mapped.bytes(), &f.bytes[..]);
    assert_eq!(query_all(&mapped), from_bytes);
    assert_eq!(query_all(&verified), from_bytes);
    assert_eq!(mapped.generation(), 1);

    // A corrupt tile data byte: open maps it, open_verified refuses it.
    let mut b = f.bytes.clone();
    b[f.layout.data.start + f.layout.data.len() / 2] ^= 0x10;
    let corrupt = temp_file("corrupt-data", &b);
    Surface::open(&corrupt.0).expect("unverified open of corrupt tile data");
    match Surface::open_verified(&corrupt.0) {
        Err(OpenError::Format { path, source }) => {
            assert_eq!(
                source,
                FormatError::SectionChecksum {
                    kind: section::TILE_DATA
                }
            );
            assert!(path.contains("corrupt-data"), "{path}");
        }
        other => panic!("open_verified of corrupt tile data: {other:?}"),
    }

    // A corrupt header, and a missing file.
    let mut b = f.bytes.clone();
    b[20] ^= 1;
    let corrupt = temp_file("corrupt-header", &b);
    assert!(matches!(
        Surface::open(&corrupt.0),
        Err(OpenError::Format {
            source: FormatError::HeaderChecksum,
            ..
        })
    ));
    let missing = std::env::temp_dir().join(format!("walksurf-file-corruption-missing-{}", std::process::id()));
    assert!(matches!(Surface::open(&missing), Err(OpenError::Io { .. })));
}

/// The section table and header re-sealed after `bytes` changed, so that a
/// mutation reaches the validation behind the checksums.
fn reseal(bytes: &mut [u8]) {
    if bytes.len() < 64 {
        return;
    }
    let mut h = header(bytes);
    let end = 64 + 32 * h.section_count.get() as usize;
    if let Some(table) = bytes.get(64..end) {
        h.section_table_checksum.set(hash64(table) as u32);
    }
    seal_header(&mut h);
    bytes[..64].copy_from_slice(h.as_bytes());
}

/// Opens `bytes` (never panics) and, if that works, queries it.
fn open_and_query(bytes: &[u8]) {
    if let Ok(s) = Surface::from_bytes(bytes) {
        query_all(&s);
        let _ = s.sweep_horizontal([0.0, 0.0, 100.0], [10.0, 0.0], Agent::DEFAULT);
    }
}

fn fuzz_config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(fuzz_config())]

    #[test]
    fn arbitrary_bytes_never_panic(mut bytes in proptest::collection::vec(any::<u8>(), 0..4096), valid_head in any::<bool>()) {
        if valid_head && bytes.len() >= 64 {
            // A real header with garbage behind it: reach the section table.
            bytes[..64].copy_from_slice(&fixture().bytes[..64]);
            reseal(&mut bytes);
        }
        open_and_query(&bytes);
    }

    /// Arbitrary bytes written over (or inserted into) the baked file, with
    /// the checksums re-sealed or not.
    #[test]
    fn spliced_files_never_panic(
        at in any::<prop::sample::Index>(),
        junk in proptest::collection::vec(any::<u8>(), 1..256),
        insert in any::<bool>(),
        resealed in any::<bool>(),
        in_dense_part in any::<bool>(),
    ) {
        let f = fixture();
        let mut bytes = f.bytes.clone();
        // Half the splices land in the small validated part of the file.
        let span = if in_dense_part { f.layout.data.start } else { bytes.len() };
        let at = at.index(span);
        if insert {
            bytes.splice(at..at, junk);
        } else {
            let end = (at + junk.len()).min(bytes.len());
            bytes[at..end].copy_from_slice(&junk[..end - at]);
        }
        if resealed {
            reseal(&mut bytes);
        }
        open_and_query(&bytes);
    }
}
