//! Stage 7b (part of tiling), hidden blockers: the non-walkable triangles
//! of a tile that lie directly under its walkable surface — a stair's
//! risers under the nosings, a slab's sides under its edges.
//!
//! A point `q` directly below (or on) a surface point `p` is never touched
//! first by a capsule moving down: if `p` is below the capsule's top, the
//! capsule either overlaps `p` at its start or meets `p` no later than `q`
//! (same column, `p` higher). So capsule `find_floor` may skip such a
//! triangle (when `p` is below its top, which [`HIDDEN_RISE_CM`] bounds);
//! the walkable triangles stay, as pieces or blockers of the same tile, and
//! the tile holds them wherever a query of the tile can reach.
//!
//! The test is exact, with no arithmetic on positions: every vertex of the
//! blocker has the XY of a vertex of one walkable triangle `T` (so its
//! footprint lies in `T`'s), no higher than `T` there, and `T` is at most
//! [`HIDDEN_RISE_CM`] above the blocker's top at those vertices. Both
//! heights are linear over the footprint (a vertical blocker's top edge
//! runs between two of them), so holding at the vertices they hold over it.
//!
//! Cost: `O(w + b log b)` for `w` walkable vertices and `b` blockers.

use crate::stage::classify::{Classes, TriClass};
use crate::stage::convex_partition::FastMap;
use crate::stage::ingest::Mesh;
use crate::stage::tiling::BlockerTri;
use walksurf_format::{HIDDEN_RISE_CM, blocker_flags};

/// Sets [`blocker_flags::HIDDEN`] on every blocker of a tile (not a
/// demoted walkable one) hidden under one of the walkable triangles
/// `tris` (the tile's triangle list; world cm throughout).
pub fn mark_hidden(mesh: &Mesh, classes: &Classes, tris: &[u32], blockers: &mut [BlockerTri]) {
    // XY bit patterns (`+0.0` for `-0.0`).
    let key = |v: [f64; 3]| [v[0] + 0.0, v[1] + 0.0].map(f64::to_bits);
    // The blockers to test (not demoted walkable ones), by the XY of their
    // first vertex, each key's run of them found through a map.
    let mut wanted: Vec<([u64; 2], u32)> = blockers
        .iter()
        .enumerate()
        .filter(|(_, b)| b.flags & blocker_flags::DEMOTED_WALKABLE == 0)
        .map(|(i, b)| (key(b.vertices[0]), i as u32))
        .collect();
    if wanted.is_empty() {
        return;
    }
    wanted.sort_unstable();
    let mut runs: FastMap<[u64; 2], (u32, u32)> = FastMap::with_capacity_and_hasher(wanted.len(), Default::default());
    let mut start = 0;
    for run in wanted.chunk_by(|a, b| a.0 == b.0) {
        runs.insert(run[0].0, (start, start + run.len() as u32));
        start += run.len() as u32;
    }
    // Each walkable vertex: the blockers whose first vertex has its XY.
    // (A blocker is hidden if any walkable triangle hides it, in any order.)
    for &t in tris
        .iter()
        .filter(|&&t| classes.class[t as usize] == TriClass::Walkable)
    {
        let corners = mesh.triangles[t as usize].map(|i| mesh.vertices[i as usize]);
        for v in corners {
            let Some(&(lo, hi)) = runs.get(&key(v)) else {
                continue;
            };
            for &(_, i) in &wanted[lo as usize..hi as usize] {
                let b = &mut blockers[i as usize];
                if b.flags & blocker_flags::HIDDEN == 0 && hides(corners, &b.vertices) {
                    b.flags |= blocker_flags::HIDDEN;
                }
            }
        }
    }
}

/// Whether triangle `t` (walkable) hides triangle `b`: every vertex of `b`
/// has the XY of a vertex of `t` that is at least as high and at most
/// [`HIDDEN_RISE_CM`] above `b`'s highest vertex.
fn hides(t: [[f64; 3]; 3], b: &[[f64; 3]; 3]) -> bool {
    let top = b[0][2].max(b[1][2]).max(b[2][2]);
    b.iter().all(|q| {
        t.iter()
            .find(|p| p[0] == q[0] && p[1] == q[1])
            .is_some_and(|p| p[2] >= q[2] && p[2] <= top + HIDDEN_RISE_CM)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stage::classify::classify;

    /// A mesh of the given triangles (each its own three vertices).
    fn mesh(tris: &[[[f64; 3]; 3]]) -> Mesh {
        Mesh {
            vertices: tris.iter().flatten().copied().collect(),
            triangles: (0..tris.len() as u32).map(|t| [3 * t, 3 * t + 1, 3 * t + 2]).collect(),
            walkable_allowed: vec![true; tris.len()],
        }
    }

    /// The blockers of `tris` after marking: which are hidden.
    fn hidden_of(tris: &[[[f64; 3]; 3]]) -> Vec<bool> {
        let m = mesh(tris);
        let classes = classify(&m, &crate::BakeConfig::default());
        let ids: Vec<u32> = (0..tris.len() as u32).collect();
        let mut blockers: Vec<BlockerTri> = ids
            .iter()
            .filter(|&&t| classes.class[t as usize] != TriClass::Walkable)
            .map(|&t| BlockerTri {
                vertices: tris[t as usize],
                flags: 0,
            })
            .collect();
        mark_hidden(&m, &classes, &ids, &mut blockers);
        blockers.iter().map(|b| b.flags & blocker_flags::HIDDEN != 0).collect()
    }

    /// A tread at height `z` over `[0, 30] × [0, 100]` (two triangles).
    fn tread(z: f64) -> [[[f64; 3]; 3]; 2] {
        [
            [[0.0, 0.0, z], [30.0, 0.0, z], [30.0, 100.0, z]],
            [[0.0, 0.0, z], [30.0, 100.0, z], [0.0, 100.0, z]],
        ]
    }

    #[test]
    fn a_riser_under_a_nosing_is_hidden() {
        // The riser under the tread's edge x = 30, from z 0 to 20, as two
        // triangles.
        let [t0, t1] = tread(20.0);
        let r0 = [[30.0, 0.0, 20.0], [30.0, 100.0, 20.0], [30.0, 0.0, 0.0]];
        let r1 = [[30.0, 100.0, 20.0], [30.0, 100.0, 0.0], [30.0, 0.0, 0.0]];
        assert_eq!(hidden_of(&[t0, t1, r0, r1]), [true, true]);
    }

    #[test]
    fn a_lip_above_the_tread_or_a_step_beside_it_is_not() {
        let [t0, t1] = tread(20.0);
        // Its top 1e-9 above the tread at one end.
        let lip = [[30.0, 0.0, 20.0 + 1e-9], [30.0, 100.0, 20.0], [30.0, 0.0, 0.0]];
        // A riser one ulp outside the tread's edge.
        let x = 30f64.next_up();
        let beside = [[x, 0.0, 20.0], [x, 100.0, 20.0], [x, 0.0, 0.0]];
        // A wall standing on the tread.
        let wall = [[30.0, 0.0, 20.0], [30.0, 100.0, 20.0], [30.0, 0.0, 60.0]];
        assert_eq!(hidden_of(&[t0, t1, lip, beside, wall]), [false, false, false]);
    }

    #[test]
    fn a_side_deeper_than_the_rise_is_not() {
        // A slab side reaching further below the surface than the bound.
        let [t0, t1] = tread(20.0);
        let deep = 20.0 - HIDDEN_RISE_CM - 1.0;
        let side = [[30.0, 0.0, deep], [30.0, 100.0, deep], [30.0, 0.0, deep - 5.0]];
        let shallow = [
            [30.0, 0.0, 20.0 - HIDDEN_RISE_CM],
            [30.0, 100.0, 0.0],
            [30.0, 0.0, -5.0],
        ];
        assert_eq!(hidden_of(&[t0, t1, side, shallow]), [false, true]);
    }

    #[test]
    fn the_rise_is_at_most_its_bound() {
        // The tread exactly HIDDEN_RISE_CM above a side's top, then one ulp
        // more.
        let [t0, t1] = tread(20.0);
        let side = |top: f64| [[30.0, 0.0, top], [30.0, 100.0, top], [30.0, 0.0, top - 5.0]];
        let at = 20.0 - HIDDEN_RISE_CM;
        assert_eq!(hidden_of(&[t0, t1, side(at)]), [true]);
        assert_eq!(hidden_of(&[t0, t1, side(at.next_down())]), [false]);
    }

    #[test]
    fn a_triangle_under_two_walkable_ones_is_not_taken() {
        // Under the tread's anti-diagonal, so truly hidden, but no one
        // triangle holds its vertices: the test is conservative there.
        let [t0, t1] = tread(20.0);
        let across = [[30.0, 0.0, 10.0], [0.0, 100.0, 10.0], [30.0, 0.0, 0.0]];
        assert_eq!(hidden_of(&[t0, t1, across]), [false]);
    }
}
