//! Rings and the patch table on the shared levels (issue 3): for every tile
//! of every level, every patch's pieces form rings that close, do not cross
//! (exact integer predicates), are oriented (outer CCW, holes CW) and hold
//! exactly the pieces' area; every piece has a patch record; the headroom
//! cut leaves some walkable area. Prints per level the pieces, the cut
//! pieces and the walkable triangles.
//!
//! Skips with a notice when the folder is absent; fails when `CI=true`.

mod common;

use common::{SHARED_LEVELS, bake_shared_level, shared_levels_dir};
use walksurf_bake::geom::convex_overlap_area;
use walksurf_bake::stage::contour::{check_rings, rings, rings_within};
use walksurf_bake::stage::convex_partition::area2;
use walksurf_format::{FileView, patch_flags};

#[test]
fn every_patch_of_every_shared_level_has_valid_rings() {
    let Some(dir) = shared_levels_dir() else {
        return;
    };
    let mut failures = 0;
    for &(file, _, _) in SHARED_LEVELS {
        let (_, _, baked) = bake_shared_level(&dir, file);
        let layout = FileView::parse(&baked.bytes).unwrap_or_else(|e| panic!("{file}: {e}"));
        let view = FileView::new(&baked.bytes, &layout).expect("a view");
        let (mut patches, mut ring_count, mut holes, mut pieces, mut cut) = (0, 0, 0, 0, 0);
        let (mut tolerant, mut failed, mut overlaps) = (0, 0, 0);
        let mut walk_area2: i128 = 0;
        for hot in view.hot {
            let tile = view.tile(hot).expect("a readable tile");
            // Pieces by patch.
            let mut by_patch: Vec<Vec<Vec<[i32; 2]>>> = vec![Vec::new(); tile.patches.len()];
            let mut word = 0u32;
            while (word as usize) * 4 < tile.pieces.len() {
                let (h, verts) = tile.piece(word).unwrap_or_else(|| panic!("{file}: a readable piece"));
                word += ((size_of_val(h) + size_of_val(verts)) / 4) as u32;
                let p = h.patch.get() as usize;
                assert!(p < by_patch.len(), "{file}: piece with patch {p} of {}", by_patch.len());
                by_patch[p].push(verts.iter().map(|v| [v.x.get(), v.y.get()]).collect());
                pieces += 1;
                cut += usize::from(tile.patches[p].flags.get() & patch_flags::HEADROOM_CUT != 0);
            }
            for (p, polys) in by_patch.iter().enumerate() {
                let refs: Vec<&Vec<[i32; 2]>> = polys.iter().collect();
                // Exact first; pieces straight from a mesh whose T-junctions
                // lost exact collinearity in quantisation need the tolerance.
                let mut rs = rings(&refs);
                let mut slack: i128 = 0;
                if check_rings(&rs).is_err() {
                    (rs, slack) = rings_within(&refs, SOURCE_SNAP_UNITS);
                    tolerant += 1;
                }
                let overlapping = || max_overlap_area2(polys) > OVERLAP_AREA2;
                if let Err(e) = check_rings(&rs) {
                    if overlapping() {
                        overlaps += 1;
                        continue;
                    }
                    eprintln!("{file}: tile {:?} patch {p}: {e:?}", tile.origin_cm());
                    if std::env::var("WS_RING_DEBUG").is_ok() {
                        eprintln!("pieces {polys:?}\nrings {rs:?}");
                    }
                    failed += 1;
                    continue;
                }
                let ring_area: i128 = rs.iter().map(|r| r.area2).sum();
                let piece_area: i128 = refs.iter().map(|q| area2(q)).sum();
                if (ring_area - piece_area).abs() > slack {
                    if overlapping() {
                        overlaps += 1;
                        continue;
                    }
                    eprintln!(
                        "{file}: tile {:?} patch {p}: rings hold {ring_area}, pieces {piece_area} (overlap)",
                        tile.origin_cm()
                    );
                    failed += 1;
                    continue;
                }
                assert!(
                    polys.is_empty() || rs.iter().any(|r| r.area2 > 0),
                    "{file}: no outer ring"
                );
                if tile.patches[p].flags.get() & patch_flags::HEADROOM_CUT == 0 {
                    walk_area2 += piece_area;
                }
                patches += 1;
                ring_count += rs.len();
                holes += rs.iter().filter(|r| r.area2 < 0).count();
            }
        }
        println!(
            "{file}: {patches} patches, {ring_count} rings ({holes} holes; {tolerant} patches needed the tolerance, \
             {overlaps} have overlapping source triangles, {failed} failed), {pieces} pieces ({cut} cut), {} walkable \
             triangles",
            baked.report.walkable_triangles
        );
        failures += failed;
        assert!(walk_area2 > 0, "{file}: the headroom cut left no walkable area");
    }
    assert_eq!(failures, 0, "patches without valid rings (listed above)");
}

/// Pieces overlapping by more than this (twice the area, fixed-point
/// units²: a square of 16 units, 0.016 cm) come from source triangles that
/// overlap; the union of such a patch has no rings its pieces tile.
const OVERLAP_AREA2: f64 = 512.0;

/// The largest area (twice, units²) two of `polys` (convex, CCW) share.
fn max_overlap_area2(polys: &[Vec<[i32; 2]>]) -> f64 {
    let f: Vec<Vec<[f64; 2]>> = polys
        .iter()
        .map(|p| p.iter().map(|v| [v[0] as f64, v[1] as f64]).collect())
        .collect();
    let mut best: f64 = 0.0;
    for i in 0..f.len() {
        for j in i + 1..f.len() {
            best = best.max(2.0 * convex_overlap_area(&f[i], &f[j]));
        }
    }
    best
}

/// Tolerance for pieces made straight from a source mesh: its vertices
/// were rounded once to the fixed-point grid (half a unit per axis), so a
/// T-junction of the source may end up to a unit or so off exact.
const SOURCE_SNAP_UNITS: i32 = 2;
