//! Stage 3, coplanar merge: edge-connected walkable triangles whose normals
//! lie within [`FLAT_NORMAL_TOL_RAD`](crate::tolerance::FLAT_NORMAL_TOL_RAD)
//! of the group's first triangle and whose vertices lie within
//! `coplanar_dist_cm` of its plane become one *flat group* `z = A·x + B·y +
//! C` (least-squares fit, residual recorded), which may share one plane as
//! convex pieces.
//!
//! Region growing in triangle order over a sorted edge list: deterministic,
//! `O(n log n)` in the walkable triangle count.

use crate::config::BakeConfig;
use crate::geom::position_key;
use crate::stage::classify::{Classes, TriClass};
use crate::stage::ingest::Mesh;

/// One planar walkable patch.
#[derive(Clone, Debug, PartialEq)]
pub struct Patch {
    /// `z = a·x + b·y + c` in world cm.
    pub plane: [f64; 3],
    /// Largest |z − plane(x, y)| over the patch's vertices. [Units: cm]
    pub residual_cm: f64,
    /// Positions in the input triangle list.
    pub triangles: Vec<u32>,
}

#[derive(Clone, Debug, Default)]
pub struct Patches {
    pub patches: Vec<Patch>,
}

/// Groups the walkable triangles into *flat* groups, which may share one
/// plane as a convex piece: normals within
/// [`FLAT_NORMAL_TOL_RAD`](crate::tolerance::FLAT_NORMAL_TOL_RAD) of the
/// group's first triangle (so a contact normal on any crease between them
/// stays within the runtime's normal tolerance) and vertices within
/// `coplanar_dist_cm` of its plane.
pub fn flat_groups(mesh: &Mesh, classes: &Classes, tris: &[u32], config: &BakeConfig) -> Patches {
    grow_regions(
        mesh,
        classes,
        tris,
        crate::tolerance::FLAT_NORMAL_TOL_RAD.cos(),
        config.coplanar_dist_cm,
    )
}

/// Region growing from each unassigned triangle in order: a neighbour joins
/// when its normal is within `cos_tol` of the seed's and its vertices within
/// `dist_cm` of the seed's plane.
fn grow_regions(mesh: &Mesh, classes: &Classes, tris: &[u32], cos_tol: f64, dist_cm: f64) -> Patches {
    let n = tris.len();
    let walkable = |t: usize| classes.class[tris[t] as usize] == TriClass::Walkable;
    let tri = |t: usize| mesh.triangles[tris[t] as usize];
    let normal = |t: usize| classes.normal[tris[t] as usize];

    // Sorted (edge, triangle) list gives neighbours without hashing.
    let mut edges: Vec<(u32, u32, u32, u8)> = Vec::new();
    for t in 0..n {
        if !walkable(t) {
            continue;
        }
        let tri = tri(t);
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            edges.push((a.min(b), a.max(b), t as u32, k as u8));
        }
    }
    edges.sort_unstable();
    let groups = edge_groups(&edges);
    // Neighbour lists, flat (count, prefix sums, fill).
    let mut starts = vec![0usize; n + 1];
    for g in &groups {
        for x in g.clone() {
            starts[edges[x].2 as usize + 1] += g.len() - 1;
        }
    }
    for t in 0..n {
        starts[t + 1] += starts[t];
    }
    let mut fill = starts.clone();
    let mut adjacent = vec![0u32; starts[n]];
    for g in &groups {
        for x in g.clone() {
            for y in g.clone() {
                if x != y {
                    let at = &mut fill[edges[x].2 as usize];
                    adjacent[*at] = edges[y].2;
                    *at += 1;
                }
            }
        }
    }
    let neighbours = |t: usize| &adjacent[starts[t]..starts[t + 1]];

    let mut patch_of = vec![u32::MAX; n];
    let mut patches = Vec::new();
    let mut queue = Vec::new();
    for seed in 0..n {
        if !walkable(seed) || patch_of[seed] != u32::MAX {
            continue;
        }
        let id = patches.len() as u32;
        let seed_n = normal(seed);
        let seed_p = mesh.vertices[tri(seed)[0] as usize];
        let seed_d = dot(seed_n, seed_p);
        patch_of[seed] = id;
        let mut members = vec![seed as u32];
        queue.clear();
        queue.push(seed as u32);
        while let Some(t) = queue.pop() {
            for &nb in neighbours(t as usize) {
                let nbu = nb as usize;
                if patch_of[nbu] != u32::MAX || !walkable(nbu) {
                    continue;
                }
                if dot(normal(nbu), seed_n) < cos_tol {
                    continue;
                }
                let on_plane = tri(nbu)
                    .iter()
                    .all(|&v| (dot(seed_n, mesh.vertices[v as usize]) - seed_d).abs() / seed_n[2] <= dist_cm);
                if !on_plane {
                    continue;
                }
                patch_of[nbu] = id;
                members.push(nb);
                queue.push(nb);
            }
        }
        members.sort_unstable();
        let global: Vec<u32> = members.iter().map(|&m| tris[m as usize]).collect();
        let (plane, residual_cm) = fit_plane(mesh, &global);
        patches.push(Patch {
            plane,
            residual_cm,
            triangles: members,
        });
    }
    Patches { patches }
}

/// Runs of equal edges in a sorted edge list.
fn edge_groups(edges: &[(u32, u32, u32, u8)]) -> Vec<std::ops::Range<usize>> {
    let mut groups = Vec::new();
    let mut start = 0;
    for run in edges.chunk_by(|a, b| (a.0, a.1) == (b.0, b.1)) {
        if run.len() > 1 {
            groups.push(start..start + run.len());
        }
        start += run.len();
    }
    groups
}

/// Where a flat group's triangles meet without sharing their edge (a
/// T-junction, or vertices that were not welded) and the two sides part by
/// more than [`SEAM_CONTINUOUS_CM`](crate::tolerance::SEAM_CONTINUOUS_CM):
/// the four ends (world cm) of each such overlap of two boundary edges, and
/// the triangles along them ([`Seams`]),
/// that comes within [`SEAM_NEAR_CM`](crate::tolerance::SEAM_NEAR_CM) of
/// the box `within` (a tile's square and halo; farther ones are not looked
/// for). The pieces treat the group as one surface; there it is not.
///
/// Boundary edges (used by one triangle of the group) are bucketed by a
/// coarse XY grid; each pair in a bucket that lies along one line (within
/// [`SEAM_NEAR_CM`](crate::tolerance::SEAM_NEAR_CM)) and overlaps is
/// compared at the ends of its overlap, where a distance between two
/// segments along one line is largest.
pub fn rough_seams(mesh: &Mesh, tris: &[u32], patch: &Patch, within: ([f64; 2], [f64; 2])) -> Seams {
    type Key = [u64; 3];
    use crate::tolerance::{SEAM_CONTINUOUS_CM, SEAM_NEAR_CM};
    // Boundary edges (used once), each from its smaller end by position,
    // sorted by position: what follows must not depend on how the input
    // numbers its vertices.
    let mut edges: Vec<(Key, Key, [[f64; 3]; 2], u32)> = patch
        .triangles
        .iter()
        .flat_map(|&pos| {
            let t = mesh.triangles[tris[pos as usize] as usize].map(|i| mesh.vertices[i as usize]);
            (0..3).map(move |k| {
                let (p, q) = (t[k], t[(k + 1) % 3]);
                let (kp, kq) = (position_key(p), position_key(q));
                if kp <= kq {
                    (kp, kq, [p, q], pos)
                } else {
                    (kq, kp, [q, p], pos)
                }
            })
        })
        .collect();
    edges.sort_unstable_by_key(|e| (e.0, e.1));
    // (Each with the position of its triangle.)
    let boundary: Vec<([[f64; 3]; 2], u32)> = edges
        .chunk_by(|x, y| (x.0, x.1) == (y.0, y.1))
        .filter_map(|run| match run {
            [(_, _, e, pos)] => Some((*e, *pos)),
            _ => None,
        })
        .collect();
    if boundary.len() < 2 {
        return Seams::default();
    }
    // Buckets of a coarse grid: each edge in the cells it passes within
    // SEAM_NEAR_CM of (two edges that near each other share one), column
    // by column: the part of the edge over the column, grown, gives its
    // rows (work along the edge, not over its box: a ground triangle's
    // edge may be kilometres long, and every tile it reaches asks).
    const CELL_CM: f64 = 200.0;
    // (Grown a little more: rounding must not drop a cell.)
    let near = SEAM_NEAR_CM + 1e-3;
    let cell = |v: f64| (v / CELL_CM).floor() as i64;
    // (Only the cells near `within`.)
    let (x_lo, x_hi) = (cell(within.0[0] - near), cell(within.1[0] + near));
    let (y_lo, y_hi) = (cell(within.0[1] - near), cell(within.1[1] + near));
    let mut cells: Vec<((i64, i64), u32)> = Vec::new();
    for (e, ([a, b], _)) in boundary.iter().enumerate() {
        let dx = b[0] - a[0];
        for x in cell(a[0].min(b[0]) - near).max(x_lo)..=cell(a[0].max(b[0]) + near).min(x_hi) {
            let (lo, hi) = (x as f64 * CELL_CM - near, (x + 1) as f64 * CELL_CM + near);
            let (t0, t1) = if dx == 0.0 {
                (0.0, 1.0)
            } else {
                let (ta, tb) = ((lo - a[0]) / dx, (hi - a[0]) / dx);
                (ta.min(tb).max(0.0), ta.max(tb).min(1.0))
            };
            if t0 > t1 {
                continue;
            }
            let (ya, yb) = (a[1] + t0 * (b[1] - a[1]), a[1] + t1 * (b[1] - a[1]));
            for y in cell(ya.min(yb) - near).max(y_lo)..=cell(ya.max(yb) + near).min(y_hi) {
                cells.push(((x, y), e as u32));
            }
        }
    }
    cells.sort_unstable();
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    for run in cells.chunk_by(|x, y| x.0 == y.0) {
        for (k, &(_, p)) in run.iter().enumerate() {
            for &(_, q) in &run[k + 1..] {
                pairs.push((p.min(q), p.max(q)));
            }
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    let mut seams = Seams::default();
    for (e, f) in pairs {
        // Along the longer one's line (a T-junction's short edges lie along
        // the long edge; the other way round, its far end may not).
        let ((mut e, e_pos), (mut f, f_pos)) = (boundary[e as usize], boundary[f as usize]);
        let len2 = |[p, q]: [[f64; 3]; 2]| (q[0] - p[0]).powi(2) + (q[1] - p[1]).powi(2);
        if len2(f) > len2(e) {
            (e, f) = (f, e);
        }
        let ([a, b], [c, d]) = (e, f);
        let (ux, uy) = (b[0] - a[0], b[1] - a[1]);
        let len = ux.hypot(uy);
        if len == 0.0 {
            continue;
        }
        let (ux, uy) = (ux / len, uy / len);
        let along = |p: [f64; 3]| (p[0] - a[0]) * ux + (p[1] - a[1]) * uy;
        let off = |p: [f64; 3]| (p[0] - a[0]) * uy - (p[1] - a[1]) * ux;
        if off(c).abs() > SEAM_NEAR_CM || off(d).abs() > SEAM_NEAR_CM {
            continue;
        }
        let (sc, sd) = (along(c), along(d));
        if sc == sd {
            continue;
        }
        let (lo, hi) = (sc.min(sd).max(0.0), sc.max(sd).min(len));
        if hi - lo <= SEAM_NEAR_CM {
            continue; // meeting at a corner, not along an edge
        }
        // Both edges at `s` along the first.
        let on_first = |s: f64| {
            let t = s / len;
            [0, 1, 2].map(|k| a[k] + t * (b[k] - a[k]))
        };
        let on_second = |s: f64| {
            let t = (s - sc) / (sd - sc);
            [0, 1, 2].map(|k| c[k] + t * (d[k] - c[k]))
        };
        let ends = [lo, hi].map(|s| (on_first(s), on_second(s)));
        let apart = ends.iter().any(|(p, q)| {
            let d2 = (0..3).map(|k| (p[k] - q[k]).powi(2)).sum::<f64>();
            d2 > SEAM_CONTINUOUS_CM * SEAM_CONTINUOUS_CM
        });
        if apart {
            seams.quads.push([ends[0].0, ends[1].0, ends[1].1, ends[0].1]);
            seams.triangles.extend([e_pos, f_pos]);
        }
    }
    seams.triangles.sort_unstable();
    seams.triangles.dedup();
    seams
}

/// What [`rough_seams`] finds in a flat group.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Seams {
    /// The four ends (world cm) of each overlap of two boundary edges
    /// where the sides part.
    pub quads: Vec<[[f64; 3]; 4]>,
    /// The group's triangles (positions in [`Patch::triangles`]' list)
    /// with an edge along one, sorted.
    pub triangles: Vec<u32>,
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// Least-squares `z = a·x + b·y + c` over the triangles' vertices (centred
/// for conditioning) and the largest |z error|.
pub fn fit_plane(mesh: &Mesh, tris: &[u32]) -> ([f64; 3], f64) {
    // (By position, not by vertex number: the sums' rounding must not
    // depend on how the input numbers its vertices.)
    let mut pts: Vec<[f64; 3]> = tris
        .iter()
        .flat_map(|&t| mesh.triangles[t as usize].map(|i| mesh.vertices[i as usize]))
        .collect();
    pts.sort_unstable_by_key(|&p| position_key(p));
    pts.dedup_by_key(|p| position_key(*p));
    let m = pts.len() as f64;
    let c = pts
        .iter()
        .fold([0.0; 3], |s, p| [s[0] + p[0], s[1] + p[1], s[2] + p[2]])
        .map(|s| s / m);
    let (mut sxx, mut sxy, mut syy, mut sxz, mut syz) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for p in &pts {
        let (x, y, z) = (p[0] - c[0], p[1] - c[1], p[2] - c[2]);
        sxx += x * x;
        sxy += x * y;
        syy += y * y;
        sxz += x * z;
        syz += y * z;
    }
    let det = sxx * syy - sxy * sxy;
    let (a, b) = if det.abs() > 1e-12 * (sxx * syy).max(1e-300) {
        ((sxz * syy - syz * sxy) / det, (syz * sxx - sxz * sxy) / det)
    } else {
        // Collinear footprint (cannot happen for a non-degenerate walkable
        // triangle): fall back to the plane of the triangle with the
        // smallest corners.
        let corners = |t: &u32| {
            let mut k = mesh.triangles[*t as usize].map(|i| position_key(mesh.vertices[i as usize]));
            k.sort_unstable();
            k
        };
        let first = tris.iter().min_by_key(|t| corners(t)).copied().unwrap_or(0);
        let t = mesh.triangles[first as usize].map(|i| mesh.vertices[i as usize]);
        let n = crate::stage::classify::up_normal(t[0], t[1], t[2]);
        (-n[0] / n[2], -n[1] / n[2])
    };
    let c0 = c[2] - a * c[0] - b * c[1];
    let residual = pts
        .iter()
        .map(|p| (p[2] - (a * p[0] + b * p[1] + c0)).abs())
        .fold(0.0, f64::max);
    ([a, b, c0], residual)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seams of one group made of all of `triangles` (vertices welded
    /// by index as given).
    fn seams(vertices: Vec<[f64; 3]>, triangles: Vec<[u32; 3]>) -> Vec<[[f64; 3]; 4]> {
        seams_within(vertices, triangles, EVERYWHERE)
    }

    const EVERYWHERE: ([f64; 2], [f64; 2]) = ([f64::MIN / 4.0; 2], [f64::MAX / 4.0; 2]);

    /// [`seams`], looked for near the box `within` only.
    fn seams_within(
        vertices: Vec<[f64; 3]>,
        triangles: Vec<[u32; 3]>,
        within: ([f64; 2], [f64; 2]),
    ) -> Vec<[[f64; 3]; 4]> {
        found(vertices, triangles, within).quads
    }

    /// Everything [`rough_seams`] finds in that group.
    fn found(vertices: Vec<[f64; 3]>, triangles: Vec<[u32; 3]>, within: ([f64; 2], [f64; 2])) -> Seams {
        let n = triangles.len();
        let mesh = Mesh {
            vertices,
            triangles,
            walkable_allowed: vec![true; n],
        };
        let tris: Vec<u32> = (0..n as u32).collect();
        let patch = Patch {
            plane: [0.0; 3],
            residual_cm: 0.0,
            triangles: tris.clone(),
        };
        rough_seams(&mesh, &tris, &patch, within)
    }

    /// A rectangle below y = 100 and a fan above it from `t` on its top
    /// edge (a T-junction), joined on the left so they are one group.
    fn t_junction(t: [f64; 3]) -> Vec<[[f64; 3]; 4]> {
        let (v, triangles) = t_junction_level(t);
        seams(v, triangles)
    }

    fn t_junction_level(t: [f64; 3]) -> (Vec<[f64; 3]>, Vec<[u32; 3]>) {
        let v = vec![
            [0.0, 0.0, 0.0],
            [200.0, 0.0, 0.0],
            [200.0, 100.0, 0.0],
            [0.0, 100.0, 0.0],
            [200.0, 200.0, 0.0],
            [0.0, 200.0, 0.0],
            t,
        ];
        (v, vec![[0, 1, 2], [0, 2, 3], [3, 6, 5], [6, 4, 5], [6, 2, 4]])
    }

    /// The triangles along a seam: the rectangle's upper one and the two
    /// fan triangles on its top edge, not the others (the bake keeps them
    /// exact).
    #[test]
    fn the_triangles_along_a_seam_are_named() {
        let (v, triangles) = t_junction_level([100.0, 100.0, 0.001]);
        let found = found(v, triangles, EVERYWHERE);
        assert_eq!(found.quads.len(), 2);
        assert_eq!(found.triangles, [1, 2, 4]);
    }

    #[test]
    fn a_t_junction_is_a_seam_only_where_its_sides_part() {
        assert!(t_junction([100.0, 100.0, 0.0]).is_empty(), "exact: one surface");
        let raised = t_junction([100.0, 100.0, 0.001]);
        assert_eq!(raised.len(), 2, "both fan edges along the rectangle's: {raised:?}");
        assert!(raised.iter().flatten().all(|p| (p[1] - 100.0).abs() < 0.01));
        assert_eq!(t_junction([100.0, 100.0003, 0.0]).len(), 2, "a crack");
        // T slightly off the edge and raised, the short edges' indices in
        // either order: each is measured against the long edge's line.
        let t = [50.0, 100.005, 0.001];
        assert_eq!(t_junction(t).len(), 2);
        let v = vec![
            t,
            [200.0, 0.0, 0.0],
            [200.0, 100.0, 0.0],
            [0.0, 100.0, 0.0],
            [200.0, 200.0, 0.0],
            [0.0, 200.0, 0.0],
            [0.0, 0.0, 0.0],
        ];
        let swapped = seams(v, vec![[6, 1, 2], [6, 2, 3], [3, 0, 5], [0, 4, 5], [0, 2, 4]]);
        assert_eq!(swapped.len(), 2, "{swapped:?}");
    }

    /// A seam along an edge longer than the whole grid's usual reach (a
    /// diagonal 600 m long) is still found.
    #[test]
    fn a_seam_along_a_long_diagonal_is_found() {
        let (l, h) = (60_000.0, 0.001);
        let v = vec![
            [0.0, 0.0, 0.0],
            [l, l, 0.0],
            [l, 0.0, 0.0],
            [0.0, l, 0.0],
            [l / 2.0, l / 2.0, h],
        ];
        // Below the diagonal one triangle; above it two, from a raised
        // T-vertex on the diagonal; joined at the corners.
        let tris = vec![[0, 2, 1], [0, 4, 3], [4, 1, 3]];
        let found = seams(v.clone(), tris.clone());
        assert_eq!(found.len(), 2, "{found:?}");
        // Looked for in a tile's box on the diagonal's first half: the
        // seam of the upper edge from (0, 0) to the T-vertex only; in a box
        // 33 000 cm off the diagonal (the edges pass nowhere near): none.
        let on = seams_within(v.clone(), tris.clone(), ([10_000.0; 2], [13_200.0; 2]));
        assert_eq!(on.len(), 1, "{on:?}");
        assert!(found.contains(&on[0]) && on[0][0] == [0.0; 3], "{on:?}");
        let off = seams_within(v, tris, ([50_000.0, 0.0], [53_200.0, 3200.0]));
        assert!(off.is_empty(), "{off:?}");
    }

    #[test]
    fn edges_shared_by_index_or_position_are_no_seam() {
        // Two squares side by side, welded along x = 100.
        let v = vec![
            [0.0, 0.0, 0.0],
            [100.0, 0.0, 0.0],
            [100.0, 100.0, 0.0],
            [0.0, 100.0, 0.0],
            [200.0, 0.0, 0.0],
            [200.0, 100.0, 0.0],
        ];
        let quads = vec![[0, 1, 2], [0, 2, 3], [1, 4, 5], [1, 5, 2]];
        assert!(seams(v.clone(), quads).is_empty());
        // The same, not welded: the right square has its own copies of the
        // shared vertices, at the same places...
        let mut v2 = v.clone();
        v2.extend([[100.0, 0.0, 0.0], [100.0, 100.0, 0.0]]);
        let apart = vec![[0, 1, 2], [0, 2, 3], [6, 4, 5], [6, 5, 7]];
        assert!(seams(v2.clone(), apart.clone()).is_empty());
        // ...or one of them 0.001 cm higher: a step.
        v2[7][2] = 0.001;
        assert_eq!(seams(v2, apart).len(), 1);
    }
}
