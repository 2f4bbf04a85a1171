//! Stage 5, contour: the headroom cut and the rings.
//!
//! [`headroom_cut`] splits every piece whose cells are partly blocked
//! ([`crate::stage::grid`]) by straight lines where it can (one line for
//! split pieces joined across shared edges, or a line per piece meeting its
//! neighbours' where the walkable cells end on their shared edge, or a line
//! per group of blocked cells, or around their convex hull) and else along
//! the cell lines between walkable and blocked cells; merges each side back
//! into convex pieces, and gives each flat group up to two patches: its
//! walkable part and its cut part. A piece vertex where a cut crosses a true edge is that
//! crossing rounded once to the fixed-point grid (computed from the
//! original edge, so neighbouring fragments share it exactly): the boundary
//! moves by no more than the vertex quantisation. A walkable patch never
//! reaches into a blocked cell; how far inside the true headroom boundary
//! it may end (a cell diagonal along cell lines, more for a straight cut,
//! bounded by `MAX_STRAIGHT_CUT_DEV_CM`) is the patch's `cut_dev_cm`.
//!
//! [`rings`] turns one patch's pieces back into its boundary: closed loops,
//! outer ones counter-clockwise, holes clockwise, T-junctions split.
//! [`check_rings`] validates them with exact integer predicates.

use crate::stage::convex_partition::{FastMap, FastSet};
use crate::stage::convex_partition::{Polygon, area2, merge_convex};
use crate::stage::grid::CellMask;
use crate::stage::tiling::{Piece, orient_i};
use std::ops::Range;
use walksurf_format::{CELL_SIZE_CM, VERTEX_STEPS_PER_CM};

/// Fixed-point units per cell edge (exact: 20 · 1024).
const CELL_FIXED: i64 = (CELL_SIZE_CM * VERTEX_STEPS_PER_CM) as i64;

/// One patch of a tile: a flat group's walkable part or its cut part.
#[derive(Clone, Debug, PartialEq)]
pub struct PatchInfo {
    /// The flat group (tile-local) the patch belongs to.
    pub group: u32,
    /// Geometry above leaves less than the headroom over its cells.
    pub cut: bool,
    /// How far a piece vertex on a true edge may lie from it. [Units: cm]
    pub edge_dev_cm: f64,
    /// How far an edge made by the cut may lie from where headroom truly
    /// ends (0: the patch has no such edge). [Units: cm]
    pub cut_dev_cm: f64,
    /// The group's plane and fit residual (as its pieces carry them).
    pub plane: [f64; 3],
    pub fit_err_cm: f64,
}

/// What the cut did in one tile.
#[derive(Clone, Copy, Debug, Default)]
pub struct CutStats {
    /// Pieces split (by straight lines or along cell lines).
    pub split: usize,
    /// Pieces whose split along cell lines could not be represented (a
    /// fragment stopped being convex once rounded): kept whole and counted
    /// as cut, with every piece of their flat group that has a blocked
    /// cell.
    pub unsplittable: usize,
}

/// Splits pieces by their masks; renumbers `patch` from flat group to the
/// tile's patch index. Returns the pieces (in a deterministic order) and
/// the patch table.
pub fn headroom_cut(pieces: Vec<Piece>, masks: &[CellMask]) -> (Vec<Piece>, Vec<PatchInfo>, CutStats) {
    let mut stats = CutStats::default();
    let cuts = cut_groups(&pieces, masks, &mut stats);
    // Each piece's parts: (polygon, cut), and how far its true edges and
    // its cut edges may lie from the truth (0: no cut edge).
    let mut parts: Vec<Parts> = Vec::with_capacity(pieces.len());
    // Groups with a walkable part: only there does a piece cut whole have
    // an edge where headroom is claimed to end (against walkable floor).
    let walkable: FastSet<u32> = pieces
        .iter()
        .zip(&cuts)
        .filter(|(_, c)| matches!(c, Cut::Whole(false) | Cut::Widened(_, false) | Cut::Split(..)))
        .map(|(p, _)| p.patch)
        .collect();
    for ((piece, cut), mask) in pieces.iter().zip(cuts).zip(masks) {
        let whole = |poly: &Polygon, cut: bool| {
            if cut && walkable.contains(&piece.patch) {
                whole_cut_dev_cm(poly, mask)
            } else {
                0.0
            }
        };
        parts.push(match cut {
            Cut::Whole(state) => (
                vec![(piece.vertices.clone(), state)],
                EDGE_DEV_CM,
                whole(&piece.vertices, state),
            ),
            Cut::Widened(poly, state) => {
                let dev = whole(&poly, state);
                (vec![(poly, state)], EDGE_SPLIT_DEV_CM, dev)
            }
            Cut::Split(walk, cut, cut_dev) => {
                stats.split += 1;
                let tagged = walk
                    .into_iter()
                    .map(|p| (p, false))
                    .chain(cut.into_iter().map(|p| (p, true)));
                (tagged.collect(), EDGE_SPLIT_DEV_CM, cut_dev)
            }
        });
    }
    // Patches in order of first appearance; a patch that holds fragments
    // of a split is merged again as a whole (fragments of neighbouring
    // pieces join across the lines they were cut along).
    let mut patches: Vec<PatchInfo> = Vec::new();
    let mut members: Vec<(Vec<Polygon>, &Piece)> = Vec::new();
    let mut index: FastMap<(u32, bool), usize> = FastMap::default();
    for (piece, (list, edge_dev, cut_dev)) in pieces.iter().zip(parts) {
        for (poly, cut) in list {
            let k = *index.entry((piece.patch, cut)).or_insert_with(|| {
                patches.push(PatchInfo {
                    group: piece.patch,
                    cut,
                    edge_dev_cm: EDGE_DEV_CM,
                    cut_dev_cm: 0.0,
                    plane: piece.plane,
                    fit_err_cm: piece.plane_err_cm,
                });
                members.push((Vec::new(), piece));
                patches.len() - 1
            });
            patches[k].edge_dev_cm = patches[k].edge_dev_cm.max(edge_dev);
            patches[k].cut_dev_cm = patches[k].cut_dev_cm.max(cut_dev);
            members[k].0.push(poly);
        }
    }
    // A group's walkable and cut patches meet along the same cut edges:
    // each records the larger deviation.
    let mut group_dev: FastMap<u32, f64> = FastMap::default();
    for p in &patches {
        let d = group_dev.entry(p.group).or_insert(0.0);
        *d = d.max(p.cut_dev_cm);
    }
    for p in &mut patches {
        p.cut_dev_cm = group_dev[&p.group];
    }
    // Vertices that are neither the source's nor cell corners are rounded
    // crossings of a cut with an edge.
    let source: FastSet<[i32; 2]> = pieces.iter().flat_map(|p| p.vertices.iter().copied()).collect();
    let corner = |v: &[i32; 2]| v[0] as i64 % CELL_FIXED == 0 && v[1] as i64 % CELL_FIXED == 0;
    let made = |v: &[i32; 2]| !(source.contains(v) || corner(v));
    let mut out = Vec::with_capacity(pieces.len());
    for (k, (polys, first)) in members.into_iter().enumerate() {
        // Pieces the cut touched merge again (across the lines they were
        // cut along); the others were merged before.
        let merged: Vec<Polygon> = if patches[k].edge_dev_cm > EDGE_DEV_CM {
            merge_convex(polys).into_iter().map(|(p, _)| p).collect()
        } else {
            polys
        };
        for vertices in merged {
            out.push(Piece {
                patch: k as u32,
                cut_crossings: vertices.iter().any(made),
                vertices,
                interior_edges: 0,
                plane: first.plane,
                plane_err_cm: first.plane_err_cm,
            });
        }
    }
    set_interior_edges(&mut out, &patches);
    (out, patches, stats)
}

/// How far the edges of a piece cut whole may lie from where headroom
/// truly ends: a cell diagonal where every cell it overlaps is blocked,
/// else, for the farthest cell it overlaps, that cell's distance from a
/// blocked one plus two diagonals (any point of the cell, and anywhere in
/// the blocked cell). [Units: cm]
fn whole_cut_dev_cm(poly: &Polygon, mask: &CellMask) -> f64 {
    let bbox = fixed_box(poly);
    let overlaps = |k: usize| {
        let lo = [
            (mask.i0 as i64 + (k % mask.w) as i64) * CELL_FIXED,
            (mask.j0 as i64 + (k / mask.w) as i64) * CELL_FIXED,
        ];
        overlaps_cell_within(poly, bbox, lo)
    };
    // The piece's own cells, if it has open ones.
    let open: Vec<usize> = (0..mask.blocked.len())
        .filter(|&k| !mask.blocked[k] && overlaps(k))
        .collect();
    if open.is_empty() {
        return CUT_DEV_CELLS_CM;
    }
    let (w, h) = (mask.w as i32, mask.h as i32);
    // Cells apart by (di, dj) are max(0, |d| - 1) cells apart per axis.
    let gap2 = |a: [i32; 2], b: [i32; 2]| {
        let d = |k: usize| ((a[k] - b[k]).abs() - 1).max(0) as i64;
        d(0) * d(0) + d(1) * d(1)
    };
    // For each cell, some blocked cell (propagated from its neighbours in
    // two sweeps): its gap is at least the nearest one's, so the farthest
    // of them bounds the truth from above.
    let mut seed: Vec<Option<[i32; 2]>> = (0..mask.blocked.len())
        .map(|k| mask.blocked[k].then_some([k as i32 % w, k as i32 / w]))
        .collect();
    let mut relax = |i: i32, j: i32, from: &[(i32, i32)]| {
        let k = (j * w + i) as usize;
        if mask.blocked[k] {
            return; // (its own seed, at gap 0)
        }
        for &(di, dj) in from {
            let (ni, nj) = (i + di, j + dj);
            if ni < 0 || nj < 0 || ni >= w || nj >= h {
                continue;
            }
            if let Some(s) = seed[(nj * w + ni) as usize]
                && seed[k].is_none_or(|t| gap2([i, j], s) < gap2([i, j], t))
            {
                seed[k] = Some(s);
            }
        }
    };
    for j in 0..h {
        for i in 0..w {
            relax(i, j, &[(-1, 0), (-1, -1), (0, -1), (1, -1)]);
        }
    }
    for j in (0..h).rev() {
        for i in (0..w).rev() {
            relax(i, j, &[(1, 0), (1, 1), (0, 1), (-1, 1)]);
        }
    }
    let far = open
        .iter()
        .filter_map(|&k| seed[k].map(|s| gap2([k as i32 % w, k as i32 / w], s)))
        .max()
        .unwrap_or(0);
    (far as f64).sqrt() * CELL_SIZE_CM + 2.0 * CUT_DEV_CELLS_CM
}

/// How far a piece vertex on a true edge may lie from it: half a
/// fixed-point step on each axis (every such vertex is an exact point of
/// the edge rounded once). [Units: cm]
pub const EDGE_DEV_CM: f64 = 0.5 * std::f64::consts::SQRT_2 / VERTEX_STEPS_PER_CM;

/// How far a vertex where a cell line crosses a true edge may lie from
/// it: the crossing is rounded once (possibly to one side, up to a unit on
/// one axis) on an edge whose own ends are quantised. [Units: cm]
pub const EDGE_SPLIT_DEV_CM: f64 = walksurf_format::MAX_PIECE_EDGE_DEV_CM;

/// A piece is split only if at least this share of its area stays
/// walkable (`NUM / DEN`); else it is cut whole (conservative: a thin
/// walkable remainder along a slanted wall would cost a staircase of
/// fragments for little floor).
const MIN_WALK_SHARE_NUM: i128 = 1;
const MIN_WALK_SHARE_DEN: i128 = 2;

/// How far a straight cut may lie from where headroom truly ends (see
/// [`HalfPlane::dev_cm`]); a line that strays farther from the blocked
/// cells would give up too much walkable floor, and the cut follows the
/// cell lines instead. [Units: cm]
const MAX_STRAIGHT_CUT_DEV_CM: f64 = CUT_DEV_CELLS_CM + STRAIGHT_CUT_STRAY_CM;

/// How much farther than a cell line a straight cut may stray from the
/// blocked cells: the default agent's radius (floor that near to where
/// headroom ends lies under the agent's side, never under its centre).
/// [Units: cm]
const STRAIGHT_CUT_STRAY_CM: f64 = 42.0;

/// How far a cut along cell lines may lie from where headroom truly ends:
/// it follows the side of a blocked cell. [Units: cm]
pub const CUT_DEV_CELLS_CM: f64 = CELL_SIZE_CM * std::f64::consts::SQRT_2;

/// Marks every piece edge that lies wholly along edges of other pieces of
/// the same flat group, reversed: its group's surface goes on across it
/// (T-junctions included: the edges that cover it may end anywhere on it).
/// Exact, on the fixed-point vertices.
fn set_interior_edges(pieces: &mut [Piece], patches: &[PatchInfo]) {
    // Every edge on its line: (group, primitive direction, offset) → the
    // edges on it as (piece, its interval along the direction, forward).
    type LineKey = (u32, [i64; 2], i64);
    let line_of = |a: [i32; 2], b: [i32; 2]| {
        let d = [b[0] as i64 - a[0] as i64, b[1] as i64 - a[1] as i64];
        let g = gcd(d[0].unsigned_abs(), d[1].unsigned_abs()).max(1) as i64;
        let mut u = [d[0] / g, d[1] / g];
        let forward = u[0] > 0 || (u[0] == 0 && u[1] > 0);
        if !forward {
            u = [-u[0], -u[1]];
        }
        let offset = u[0] * a[1] as i64 - u[1] * a[0] as i64;
        let along = |p: [i32; 2]| u[0] * p[0] as i64 + u[1] * p[1] as i64;
        let (ta, tb) = (along(a), along(b));
        (u, offset, forward, ta.min(tb), ta.max(tb))
    };
    let group = |p: &Piece| patches[p.patch as usize].group;
    let mut lines: FastMap<LineKey, Vec<(usize, i64, i64, bool)>> = FastMap::default();
    for (i, p) in pieces.iter().enumerate() {
        let n = p.vertices.len();
        for k in 0..n {
            let (u, offset, forward, t0, t1) = line_of(p.vertices[k], p.vertices[(k + 1) % n]);
            lines
                .entry((group(p), u, offset))
                .or_default()
                .push((i, t0, t1, forward));
        }
    }
    let mut cover: Vec<(i64, i64)> = Vec::new();
    let masks: Vec<u32> = pieces
        .iter()
        .enumerate()
        .map(|(i, piece)| {
            let n = piece.vertices.len();
            let mut bits = 0;
            for k in 0..n {
                let (u, offset, forward, t0, t1) = line_of(piece.vertices[k], piece.vertices[(k + 1) % n]);
                cover.clear();
                cover.extend(
                    lines
                        .get(&(group(piece), u, offset))
                        .into_iter()
                        .flatten()
                        .filter(|&&(j, s0, s1, f)| j != i && f != forward && s1 > t0 && s0 < t1)
                        .map(|&(_, s0, s1, _)| (s0, s1)),
                );
                cover.sort_unstable();
                let mut reached = t0;
                for &(s0, s1) in &cover {
                    if s0 > reached {
                        break;
                    }
                    reached = reached.max(s1);
                }
                if t1 > t0 && reached >= t1 {
                    bits |= 1 << k;
                }
            }
            bits
        })
        .collect();
    for (piece, bits) in pieces.iter_mut().zip(masks) {
        piece.interior_edges = bits;
    }
}

/// A piece's parts `(polygon, cut)`, and how far its true edges and its
/// cut edges may lie from the truth. [Units: cm]
type Parts = (Vec<(Polygon, bool)>, f64, f64);

/// A piece's fragments over walkable cells and over blocked cells.
type Fragments = (Vec<Polygon>, Vec<Polygon>);

/// What the cut makes of one piece.
#[derive(Clone, Debug, PartialEq)]
enum Cut {
    /// Unchanged; cut (`true`) or walkable.
    Whole(bool),
    /// Unchanged but for crossings of its neighbours' cuts inserted into
    /// its edges; cut (`true`) or walkable.
    Widened(Polygon, bool),
    /// Fragments over walkable cells and over blocked cells, and how far
    /// the cut between them may lie from where headroom truly ends. [Units: cm]
    Split(Vec<Polygon>, Vec<Polygon>, f64),
}

/// The cut of every piece, a flat group at a time. A piece with blocked
/// and walkable cells, at least half of it walkable, is split: by straight
/// lines where [`try_cut_group`] finds them, else along the cell lines
/// between blocked and walkable cells. Where a cut crosses an edge shared
/// with a piece that is not split, the crossing is rounded to the split
/// piece's side and inserted into the other piece's edge (which stays
/// convex: the point lies outside it), so neighbouring pieces keep exactly
/// matching edges; a piece whose crossing the other cannot take, or which
/// rounding leaves on one side of its cut, is cut whole and the rest done
/// again. A group with a piece that cannot be split along cell lines at all
/// (a fragment not convex once rounded, too many vertices) is not split:
/// each of its pieces is cut if any of its cells is blocked.
fn cut_groups(pieces: &[Piece], masks: &[CellMask], stats: &mut CutStats) -> Vec<Cut> {
    let mut out: Vec<Cut> = masks.iter().map(|m| Cut::Whole(m.any_blocked())).collect();
    let mut groups: FastMap<u32, Vec<usize>> = FastMap::default();
    for (i, p) in pieces.iter().enumerate() {
        if masks[i].any_blocked() {
            groups.entry(p.patch).or_default();
        }
    }
    for (i, p) in pieces.iter().enumerate() {
        if let Some(g) = groups.get_mut(&p.patch) {
            g.push(i);
        }
    }
    let mut keys: Vec<u32> = groups.keys().copied().collect();
    keys.sort_unstable();
    for key in keys {
        let members = &groups[&key];
        match cut_group(pieces, masks, members) {
            Some(cuts) => {
                for (&i, c) in members.iter().zip(cuts) {
                    out[i] = c;
                }
            }
            None => {
                stats.unsplittable += members.iter().filter(|&&i| masks[i].any_blocked()).count();
            }
        }
    }
    out
}

/// [`cut_groups`] for one group's `members`; `None` if it cannot be split.
fn cut_group(pieces: &[Piece], masks: &[CellMask], members: &[usize]) -> Option<Vec<Cut>> {
    // Which pieces split (nearest rounding is enough to tell; those
    // fragments serve as they are where no crossing needs rounding to a
    // side).
    let nearest = |_: usize| false;
    let mut splits: Vec<bool> = Vec::with_capacity(members.len());
    let mut near: Vec<Option<Fragments>> = Vec::with_capacity(members.len());
    for &i in members {
        let parts = match masks[i].any_blocked() {
            true => Some(split(&pieces[i].vertices, &masks[i], &nearest, &mut Vec::new())?),
            false => None,
        };
        // Split only where that keeps a real part walkable: a piece mostly
        // over blocked cells is cut whole (conservative, and it saves the
        // staircase of fragments a thin remainder costs).
        let area = area2(&pieces[i].vertices);
        splits.push(matches!(&parts,
            Some((w, c)) if !c.is_empty() && MIN_WALK_SHARE_DEN * w.iter().map(area2).sum::<i128>() >= MIN_WALK_SHARE_NUM * area));
        near.push(parts);
    }
    // No piece to split: each is cut whole or not at all (what a pass of
    // `try_cut_group` gives with nothing to split).
    if !splits.contains(&true) {
        return Some(members.iter().map(|&i| Cut::Whole(masks[i].any_blocked())).collect());
    }
    let edges = members.iter().map(|&i| pieces[i].vertices.len()).sum();
    let mut owner: FastMap<([i32; 2], [i32; 2]), usize> = FastMap::with_capacity_and_hasher(edges, Default::default());
    for (m, &i) in members.iter().enumerate() {
        let v = &pieces[i].vertices;
        for k in 0..v.len() {
            owner.insert((v[k], v[(k + 1) % v.len()]), m);
        }
    }
    // Split what should be; a piece whose crossings a neighbour cannot take
    // (it would stop being convex) is cut whole instead, and the rest done
    // again: fewer splits each time, so this ends.
    loop {
        match try_cut_group(pieces, masks, members, &owner, &splits, &near)? {
            Ok(cuts) => return Some(cuts),
            Err(sources) => {
                for m in sources {
                    splits[m] = false;
                }
            }
        }
    }
}

/// One pass of [`cut_group`] with the pieces to split fixed: the cuts, or
/// `Err(split pieces to cut whole instead)` (whose crossings a neighbour
/// could not take, or which rounding left on one side of their cut);
/// `None` if a split piece cannot be split along cell lines at all. Split
/// pieces joined across shared edges (a cluster) are cut by one straight
/// line, else each by a line of its own ([`chords`]), else along the cell
/// lines of the whole cluster.
fn try_cut_group(
    pieces: &[Piece],
    masks: &[CellMask],
    members: &[usize],
    owner: &FastMap<([i32; 2], [i32; 2]), usize>,
    splits: &[bool],
    near: &[Option<Fragments>],
) -> Option<Result<Vec<Cut>, Vec<usize>>> {
    let mut cuts: Vec<Cut> = members.iter().map(|&i| Cut::Whole(masks[i].any_blocked())).collect();
    // Crossings to insert: (member, edge start, point, member that made it).
    let mut pending: Vec<(usize, [i32; 2], [i32; 2], usize)> = Vec::new();
    let neighbour = |m: usize, e: usize| {
        let v = &pieces[members[m]].vertices;
        owner.get(&(v[(e + 1) % v.len()], v[e])).copied()
    };
    // Round toward the split piece where the neighbour across stays whole.
    let toward = |m: usize| move |e: usize| neighbour(m, e).is_some_and(|n| !splits[n]);
    // A whole neighbour takes the crossings a split piece's parts keep as
    // vertices (split neighbours made the same ones; a crossing whose part
    // was clipped away or dropped as a sliver is no vertex of any).
    let mut record = |m: usize, made: Vec<(usize, [i32; 2])>, parts: &[&Vec<Polygon>]| {
        let v = &pieces[members[m]].vertices;
        for (e, point) in made {
            let kept = parts.iter().any(|list| list.iter().any(|p| p.contains(&point)));
            if let Some(n) = neighbour(m, e).filter(|&n| !splits[n] && kept) {
                pending.push((n, v[(e + 1) % v.len()], point, m));
            }
        }
    };
    // Split pieces joined across shared edges are cut by one straight line
    // (a crossing of an edge two of them share is then the same point in
    // both); where that cannot be done, each along its cell lines.
    let adjacent = |m: usize| {
        (0..pieces[members[m]].vertices.len())
            .filter_map(|e| neighbour(m, e))
            .collect()
    };
    for cluster in clusters(splits, adjacent) {
        let polys: Vec<&Polygon> = cluster.iter().map(|&m| &pieces[members[m]].vertices).collect();
        let cluster_masks: Vec<&CellMask> = cluster.iter().map(|&m| &masks[members[m]]).collect();
        let straight = straight_line(&polys, &cluster_masks).and_then(|(line, cells)| {
            let mut out = Vec::with_capacity(cluster.len());
            let mut on_line = Vec::new();
            for &m in &cluster {
                let mut made = Vec::new();
                let parts = split_by_line(polys[out.len()], &line, &toward(m), &|_| None, &mut made, &mut on_line)?;
                out.push((m, parts.0, parts.1, made));
            }
            let dev = line.dev_cm(&on_line, &cells);
            Some(
                out.into_iter()
                    .map(|(m, walk, cut, made)| (m, walk.into_iter().collect(), cut.into_iter().collect(), made, dev))
                    .collect::<Vec<_>>(),
            )
        });
        let shared = |m: usize, e: usize| neighbour(m, e).filter(|&n| splits[n]);
        let cut_lines = straight.or_else(|| {
            chords(
                &cluster,
                |m| &pieces[members[m]].vertices,
                |m| &masks[members[m]],
                shared,
                |m, e| toward(m)(e),
            )
        });
        // A cut part's edges along a piece edge shared with another piece
        // border that piece's floor, walkable or not: they count as cut
        // edges too, and the whole cut must stay within the limit.
        let cut_lines = cut_lines.and_then(|out| {
            out.into_iter()
                .map(|(m, walk, cut, made, dev)| {
                    let v = &pieces[members[m]].vertices;
                    let cells = blocked_cells(v, &masks[members[m]]);
                    let shared_edges: Vec<usize> = (0..v.len()).filter(|&e| neighbour(m, e).is_some()).collect();
                    let along = |u: [i32; 2], w: [i32; 2]| {
                        shared_edges.iter().any(|&e| {
                            on_segment(v[e], v[(e + 1) % v.len()], u) && on_segment(v[e], v[(e + 1) % v.len()], w)
                        })
                    };
                    let mut dev = dev;
                    for c in &cut {
                        for k in 0..c.len() {
                            let (u, w) = (c[k], c[(k + 1) % c.len()]);
                            if u != w && along(u, w) {
                                let line = HalfPlane::through([-((w[1] - u[1]) as i64), (w[0] - u[0]) as i64], u);
                                let ends = [u, w].map(|p| [p[0] as f64, p[1] as f64]);
                                dev = dev.max(line.dev_cm(&ends, &cells));
                            }
                        }
                    }
                    (dev <= MAX_STRAIGHT_CUT_DEV_CM).then_some((m, walk, cut, made, dev))
                })
                .collect::<Option<Vec<_>>>()
        });
        if let Some(out) = cut_lines {
            for (m, walk, cut, made, dev) in out {
                record(m, made, &[&walk, &cut]);
                // A piece the line leaves on one side keeps any crossing it
                // made (where its other side was a sliver rounding dropped):
                // its neighbours hold them too.
                cuts[m] = match (walk.len(), cut.len()) {
                    (0, 0) => return Some(Err(vec![m])),
                    (1, 0) => Cut::Widened(walk.into_iter().next()?, false),
                    (0, 1) => Cut::Widened(cut.into_iter().next()?, true),
                    _ => Cut::Split(walk, cut, dev),
                };
            }
            continue;
        }
        // Along cell lines: split pieces sharing an edge must cross it at
        // the same lines, so a cluster's pieces are all cut by the bands and
        // runs of its cells together.
        let together = (cluster.len() > 1).then(|| union_mask(&cluster_masks));
        for m in cluster {
            let i = members[m];
            let v = &pieces[i].vertices;
            let mut made = Vec::new();
            let (walk, cut) = match (&together, &near[m]) {
                (None, Some(parts)) if !(0..v.len()).any(toward(m)) => parts.clone(),
                (Some(mask), _) => split(v, mask, &toward(m), &mut made)?,
                (None, _) => split(v, &masks[i], &toward(m), &mut made)?,
            };
            if walk.is_empty() || cut.is_empty() {
                // Rounding changed what the piece is: cut it whole, and the
                // rest again.
                return Some(Err(vec![m]));
            }
            record(m, made, &[&walk, &cut]);
            cuts[m] = Cut::Split(walk, cut, CUT_DEV_CELLS_CM);
        }
    }
    pending.sort_unstable();
    pending.dedup();
    let mut failed = Vec::new();
    for m in 0..members.len() {
        let mine: Vec<([i32; 2], [i32; 2])> = pending.iter().filter(|p| p.0 == m).map(|p| (p.1, p.2)).collect();
        if mine.is_empty() {
            continue;
        }
        match insert_points(&pieces[members[m]].vertices, &mine) {
            Some(widened) => cuts[m] = Cut::Widened(widened, masks[members[m]].any_blocked()),
            None => failed.extend(pending.iter().filter(|p| p.0 == m).map(|p| p.3)),
        }
    }
    Some(if failed.is_empty() { Ok(cuts) } else { Err(failed) })
}

/// `poly` with each `(edge start, point)` inserted into the edge from that
/// start: points exactly on the edge are left out (the edge already holds
/// them); a point inside the polygon, or too many vertices, is `None`.
fn insert_points(poly: &Polygon, points: &[([i32; 2], [i32; 2])]) -> Option<Polygon> {
    let n = poly.len();
    let mut out = Vec::with_capacity(n + points.len());
    for k in 0..n {
        let (a, b) = (poly[k], poly[(k + 1) % n]);
        out.push(a);
        let mut on: Vec<(i128, [i32; 2])> = Vec::new();
        for &(_, p) in points.iter().filter(|q| q.0 == a) {
            let o = orient_i(a, b, p);
            if o > 0 {
                return None;
            }
            if o < 0 && p != a && p != b {
                let t = (p[0] - a[0]) as i128 * (b[0] - a[0]) as i128 + (p[1] - a[1]) as i128 * (b[1] - a[1]) as i128;
                on.push((t, p));
            }
        }
        on.sort_unstable();
        on.dedup();
        out.extend(on.into_iter().map(|(_, p)| p));
    }
    let m = out.len();
    let convex = (0..m).all(|i| orient_i(out[(i + m - 1) % m], out[i], out[(i + 1) % m]) > 0);
    (convex && m <= walksurf_format::MAX_PIECE_VERTICES).then_some(out)
}

/// A vertex while clipping: exact-ish position, its rounding, and what the
/// edge from it to the next vertex lies on.
#[derive(Clone, Copy, Debug)]
struct ClipVertex {
    at: [f64; 2],
    fixed: [i32; 2],
    on: On,
}

/// What the boundary from a clip vertex to the next lies on.
#[derive(Clone, Copy, Debug, PartialEq)]
enum On {
    /// The original polygon's edge.
    Edge(usize),
    /// A cell line.
    CellLine,
    /// A clipping line, by value (normal, c).
    Line(([i64; 2], i128)),
}

/// The polygon's vertices to start clipping from.
fn clip_start(poly: &Polygon) -> Vec<ClipVertex> {
    poly.iter()
        .enumerate()
        .map(|(e, &v)| ClipVertex {
            at: [v[0] as f64, v[1] as f64],
            fixed: v,
            on: On::Edge(e),
        })
        .collect()
}

/// The piece's fragments over walkable cells and over blocked cells, or
/// `None` if a fragment is not strictly convex once rounded. A crossing of
/// edge `e` is rounded to the piece's side of it where `toward(e)`, and
/// then recorded in `made` as `(e, point)`.
fn split(
    poly: &Polygon,
    mask: &CellMask,
    toward: &dyn Fn(usize) -> bool,
    made: &mut Vec<(usize, [i32; 2])>,
) -> Option<Fragments> {
    // Every cell blocked: no line to clip along, and the one fragment is
    // the piece itself, finished (what the bands below would give).
    if !mask.blocked.is_empty() && mask.all_blocked() {
        return Some((Vec::new(), finish(poly.iter().copied())?.into_iter().collect()));
    }
    let start = clip_start(poly);
    let (mut walk, mut cut) = (Vec::new(), Vec::new());
    // (Scratch, reused by every clip.)
    let (mut strip, mut part, mut spare) = (Vec::new(), Vec::new(), Vec::new());
    // Into `out`: the part of `p` between the lines at cells `span.start`
    // and `span.end` (offset by `first`) on `axis`; no line at the mask's
    // ends. `spare` is scratch.
    let mut clip_span = |p: &[ClipVertex],
                         axis: usize,
                         first: i32,
                         span: &Range<usize>,
                         n: usize,
                         out: &mut Vec<ClipVertex>,
                         spare: &mut Vec<ClipVertex>| {
        let line = |k: usize| (first as i64 + k as i64) * CELL_FIXED;
        out.clear();
        out.extend_from_slice(p);
        if span.start > 0 {
            clip_line(out, poly, axis, line(span.start), true, toward, made, spare);
            std::mem::swap(out, spare);
        }
        if span.end < n {
            clip_line(out, poly, axis, line(span.end), false, toward, made, spare);
            std::mem::swap(out, spare);
        }
    };
    // Bands of consecutive rows with the same states, then runs of equal
    // cells in a band: cut only where the state changes (an axis-aligned
    // blocked strip is one cut).
    let row = |j: usize| &mask.blocked[j * mask.w..(j + 1) * mask.w];
    for band in equal_runs(mask.h, |a, b| row(a) == row(b)) {
        clip_span(&start, 1, mask.j0, &band, mask.h, &mut strip, &mut spare);
        if strip.len() < 3 {
            continue;
        }
        let states = row(band.start);
        for run in equal_runs(mask.w, |a, b| states[a] == states[b]) {
            clip_span(&strip, 0, mask.i0, &run, mask.w, &mut part, &mut spare);
            if let Some(p) = finish(part.iter().map(|v| v.fixed))? {
                if states[run.start] { cut.push(p) } else { walk.push(p) }
            }
        }
    }
    Some((walk, cut))
}

/// The connected sets of split members (`split[m]`), joined where one is
/// among the other's `adjacent` members; each sorted, in order of their
/// first member.
fn clusters(split: &[bool], adjacent: impl Fn(usize) -> Vec<usize>) -> Vec<Vec<usize>> {
    let mut seen = vec![false; split.len()];
    let mut out = Vec::new();
    for first in (0..split.len()).filter(|&m| split[m]) {
        if seen[first] {
            continue;
        }
        seen[first] = true;
        let mut cluster = vec![first];
        let mut k = 0;
        while k < cluster.len() {
            for n in adjacent(cluster[k]) {
                if split[n] && !seen[n] {
                    seen[n] = true;
                    cluster.push(n);
                }
            }
            k += 1;
        }
        cluster.sort_unstable();
        out.push(cluster);
    }
    out
}

impl HalfPlane {
    /// As a straight cut (walkable side `side <= 0`): how far it may lie
    /// from where headroom truly ends, the farthest point of the line
    /// between `on_line` points from a blocked cell (lowest corners
    /// `cells`), plus that cell's diagonal. Distance is 1-Lipschitz along
    /// the line, so samples a step apart miss at most half a step.
    /// [Units: cm]
    fn dev_cm(&self, on_line: &[[f64; 2]], cells: &[[i64; 2]]) -> f64 {
        let dir = [-(self.normal[1] as f64), self.normal[0] as f64];
        let along = |p: &[f64; 2]| p[0] * dir[0] + p[1] * dir[1];
        let (Some(lo), Some(hi)) = (
            on_line.iter().copied().min_by(|p, q| along(p).total_cmp(&along(q))),
            on_line.iter().copied().max_by(|p, q| along(p).total_cmp(&along(q))),
        ) else {
            return CUT_DEV_CELLS_CM;
        };
        let len = (hi[0] - lo[0]).hypot(hi[1] - lo[1]);
        let samples = (len / (CELL_FIXED as f64 / 4.0)).ceil().max(1.0) as usize;
        let cell = CELL_FIXED as f64;
        let limit = (MAX_STRAIGHT_CUT_DEV_CM - CUT_DEV_CELLS_CM) * VERTEX_STEPS_PER_CM;
        // Only cells within the limit of the segment can be a sample's
        // nearest within it (farther means the line is refused anyway):
        // those, by their centre's position along it, so each sample looks
        // at a window of them.
        let unit = if len > 0.0 {
            [(hi[0] - lo[0]) / len, (hi[1] - lo[1]) / len]
        } else {
            [1.0, 0.0]
        };
        let reach = limit + cell;
        let mut near: Vec<(f64, [i64; 2])> = cells
            .iter()
            .filter_map(|c| {
                let centre = [c[0] as f64 + 0.5 * cell, c[1] as f64 + 0.5 * cell];
                let t = (centre[0] - lo[0]) * unit[0] + (centre[1] - lo[1]) * unit[1];
                let q = t.clamp(0.0, len);
                let (dx, dy) = (centre[0] - lo[0] - q * unit[0], centre[1] - lo[1] - q * unit[1]);
                (dx * dx + dy * dy <= reach * reach).then_some((t, *c))
            })
            .collect();
        near.sort_by(|a, b| a.0.total_cmp(&b.0));
        // Squared distances; a sample no farther from the cell nearest the
        // last one than the farthest so far changes nothing.
        let (mut far2, mut last) = (0.0f64, None::<[i64; 2]>);
        let mut first = 0;
        for s in 0..=samples {
            let t = s as f64 / samples as f64;
            let p = [lo[0] + t * (hi[0] - lo[0]), lo[1] + t * (hi[1] - lo[1])];
            let dist2 = |c: &[i64; 2]| {
                let dx = (c[0] as f64 - p[0]).max(p[0] - (c[0] as f64 + cell)).max(0.0);
                let dy = (c[1] as f64 - p[1]).max(p[1] - (c[1] as f64 + cell)).max(0.0);
                dx * dx + dy * dy
            };
            if last.is_some_and(|c| dist2(&c) <= far2) {
                continue;
            }
            let u = t * len;
            while first < near.len() && near[first].0 < u - reach {
                first += 1;
            }
            let mut best = (None, f64::INFINITY);
            for (_, c) in near[first..].iter().take_while(|(v, _)| *v <= u + reach) {
                let d = dist2(c);
                if d < best.1 {
                    best = (Some(*c), d);
                }
            }
            last = best.0;
            far2 = far2.max(best.1);
            if far2 > limit * limit {
                break; // too far already: the caller only needs to know that
            }
        }
        let far = far2.sqrt();
        (far + 0.5 * len / samples as f64) / VERTEX_STEPS_PER_CM + CUT_DEV_CELLS_CM
    }
}

/// One straight line in place of the staircase of cell lines through
/// `polys` (a connected set of pieces): of the candidate directions
/// ([`candidate_normals`]), the line through the nearest blocked-cell
/// corner that keeps every blocked cell the pieces overlap on its cut
/// side, strays no farther than [`MAX_STRAIGHT_CUT_DEV_CM`], and keeps the
/// most area on its walkable side, if that is at least the share
/// [`cut_group`] asks of a split; with the blocked cells (lowest corners).
/// `None` where no blocked cell overlaps them or no line qualifies.
fn straight_line(polys: &[&Polygon], masks: &[&CellMask]) -> Option<(HalfPlane, Vec<[i64; 2]>)> {
    let mut cells: Vec<[i64; 2]> = polys.iter().zip(masks).flat_map(|(p, m)| blocked_cells(p, m)).collect();
    cells.sort_unstable();
    cells.dedup();
    if cells.is_empty() {
        return None;
    }
    let line = line_for_cells(polys, &cells, MIN_WALK_SHARE_NUM as f64 / MIN_WALK_SHARE_DEN as f64)?;
    Some((line, cells))
}

/// [`straight_line`] for given blocked `cells`, keeping at least `share`
/// of the pieces' area walkable.
fn line_for_cells(polys: &[&Polygon], cells: &[[i64; 2]], share: f64) -> Option<HalfPlane> {
    let hull = cells_hull(cells);
    let normals = candidate_normals(polys, &hull);
    let fpolys: Vec<Vec<[f64; 2]>> = polys
        .iter()
        .map(|p| p.iter().map(|v| [v[0] as f64, v[1] as f64]).collect())
        .collect();
    let total: f64 = polys.iter().map(|p| 0.5 * area2(p) as f64).sum();
    // Each candidate through the nearest blocked-cell corner; the one
    // keeping the most area of those that stay near the blocked cells.
    let mut candidates: Vec<(f64, usize, HalfPlane, Vec<[f64; 2]>)> = Vec::with_capacity(normals.len());
    for (k, &normal) in normals.iter().enumerate() {
        let dot = |v: [i64; 2]| normal[0] as i128 * v[0] as i128 + normal[1] as i128 * v[1] as i128;
        // (a linear function is least at a vertex of the cells' hull)
        let c = hull.iter().map(|v| dot([v[0] as i64, v[1] as i64])).min()?;
        let mut on_line = Vec::new();
        let kept: f64 = fpolys.iter().map(|p| half_plane_area(p, normal, c, &mut on_line)).sum();
        if kept >= share * total && kept < total {
            candidates.push((kept, k, HalfPlane { normal, c }, on_line));
        }
    }
    candidates.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    candidates
        .into_iter()
        .find(|(_, _, line, on_line)| line.dev_cm(on_line, cells) <= MAX_STRAIGHT_CUT_DEV_CM)
        .map(|(_, _, line, _)| line)
}

/// `poly`'s parts on the walkable and the cut side of `line` (`None`: no
/// area there), each crossing computed once from its edge and rounded as
/// in [`split`], or the point `fixed` gives for that edge (every crossing
/// recorded in `made` as `(edge, point)`); the exact crossings and vertices on the line are
/// added to `on_line`. `None` if a part is not strictly convex once
/// rounded, or the line crosses the piece but rounding leaves nothing on
/// one side.
fn split_by_line(
    poly: &Polygon,
    line: &HalfPlane,
    toward: &dyn Fn(usize) -> bool,
    fixed: &dyn Fn(usize) -> Option<[i32; 2]>,
    made: &mut Vec<(usize, [i32; 2])>,
    on_line: &mut Vec<[f64; 2]>,
) -> Option<(Option<Polygon>, Option<Polygon>)> {
    let n = poly.len();
    let (mut walk, mut cut) = (Vec::with_capacity(n + 1), Vec::with_capacity(n + 1));
    for k in 0..n {
        let (a, b) = (poly[k], poly[(k + 1) % n]);
        let (sa, sb) = (line.side_exact(a), line.side_exact(b));
        if sa <= 0 {
            walk.push(a);
        }
        if sa >= 0 {
            cut.push(a);
        }
        if sa == 0 {
            on_line.push([a[0] as f64, a[1] as f64]);
        }
        if (sa < 0 && sb > 0) || (sa > 0 && sb < 0) {
            let (at, fixed) = match fixed(k) {
                Some(x) => ([x[0] as f64, x[1] as f64], x),
                None => line_crossing(a, b, |v| line.side_exact(v), toward(k)),
            };
            made.push((k, fixed));
            walk.push(fixed);
            cut.push(fixed);
            on_line.push(at);
        }
    }
    let crossed = walk.iter().any(|v| !poly.contains(v));
    let parts = (finish(walk.into_iter())?, finish(cut.into_iter())?);
    // Crossed, the piece keeps both sides: one lost to rounding would move
    // the outline its neighbours share.
    (!crossed || (parts.0.is_some() && parts.1.is_some())).then_some(parts)
}

/// One cut of a cluster's pieces, per piece: its walkable and cut parts,
/// the crossings it inserts into whole neighbours, and the cut's deviation.
/// [Units: cm]
type LineCut = (usize, Vec<Polygon>, Vec<Polygon>, Vec<(usize, [i32; 2])>, f64);

/// Each piece of a cluster cut by a straight line of its own, the lines
/// meeting where the walkable cells end on the edges the pieces share (the
/// crossing of that cell line, rounded to nearest from the edge itself, so
/// both pieces hold the same point): a chord through two such points, a
/// line through one in the best candidate direction, or a free line. Every
/// walkable part must overlap no blocked cell and every cut stay within
/// [`MAX_STRAIGHT_CUT_DEV_CM`] of the blocked cells; `None` otherwise
/// (and where a shared edge changes state more than once).
fn chords<'a>(
    cluster: &[usize],
    poly: impl Fn(usize) -> &'a Polygon,
    mask: impl Fn(usize) -> &'a CellMask,
    shared: impl Fn(usize, usize) -> Option<usize>,
    toward: impl Fn(usize, usize) -> bool,
) -> Option<Vec<LineCut>> {
    let mut out = Vec::with_capacity(cluster.len());
    for &m in cluster {
        let v = poly(m);
        let n = v.len();
        let mut ends: Vec<(usize, [i32; 2])> = Vec::new();
        for e in (0..n).filter(|&e| shared(m, e).is_some()) {
            if let Some(x) = edge_transition(v[e], v[(e + 1) % n], mask(m)).ok()? {
                ends.push((e, x));
            }
        }
        let cells: Vec<[i64; 2]> = blocked_cells(v, mask(m));
        let line_through = |normal: [i64; 2], x: [i32; 2]| HalfPlane {
            normal,
            c: normal[0] as i128 * x[0] as i128 + normal[1] as i128 * x[1] as i128,
        };
        let lines: Vec<HalfPlane> = match ends.as_slice() {
            // (Alone, the piece's own line was the cluster's, tried already.)
            [] if cluster.len() == 1 => Vec::new(),
            [] => straight_line(&[v], &[mask(m)])
                .map(|(line, _)| line)
                .into_iter()
                .collect(),
            [(_, x)] => candidate_normals(&[v], &cells_hull(&cells))
                .into_iter()
                .map(|normal| line_through(normal, *x))
                .collect(),
            [(_, x), (_, y)] if x != y => {
                let normal = [-((y[1] - x[1]) as i64), (y[0] - x[0]) as i64];
                vec![line_through(normal, *x), line_through([-normal[0], -normal[1]], *x)]
            }
            _ => return None,
        };
        let fixed = |e: usize| ends.iter().find(|p| p.0 == e).map(|p| p.1);
        let mut best: Option<(i128, LineCut)> = None;
        for line in &lines {
            let (mut made, mut on_line) = (Vec::new(), Vec::new());
            let Some((walk, cut)) = split_by_line(v, line, &|e| toward(m, e), &fixed, &mut made, &mut on_line) else {
                continue;
            };
            let kept = walk.as_ref().map_or(0, area2);
            let dev = line.dev_cm(&on_line, &cells);
            if walk
                .as_ref()
                .is_none_or(|w| !cells.iter().any(|&lo| overlaps_cell(w, lo)))
                && dev <= MAX_STRAIGHT_CUT_DEV_CM
                && best.as_ref().is_none_or(|(k, _)| kept > *k)
            {
                best = Some((
                    kept,
                    (m, walk.into_iter().collect(), cut.into_iter().collect(), made, dev),
                ));
            }
        }
        if best.is_none() && ends.is_empty() {
            best = group_lines(v, mask(m), &|e| toward(m, e))
                .or_else(|| hull_cut(v, mask(m), &|e| toward(m, e)))
                .map(|c| (0, (m, c.0, c.1, c.2, c.3)));
        }
        out.push(best?.1);
    }
    // Each edge two split pieces share is crossed at the same points from
    // both sides (the cells' change, or nowhere).
    for (m, _, _, made, _) in &out {
        let v = poly(*m);
        for e in 0..v.len() {
            let Some(other) = shared(*m, e) else { continue };
            let (a, b) = (v[e], v[(e + 1) % v.len()]);
            let w = poly(other);
            let back = (0..w.len()).find(|&f| w[f] == b && w[(f + 1) % w.len()] == a)?;
            let theirs = &out.get(cluster.binary_search(&other).ok()?)?.3;
            let on = |list: &[(usize, [i32; 2])], edge: usize| {
                let mut p: Vec<[i32; 2]> = list.iter().filter(|q| q.0 == edge).map(|q| q.1).collect();
                p.sort_unstable();
                p
            };
            if on(made, e) != on(theirs, back) {
                return None;
            }
        }
    }
    Some(out)
}

/// Lowest corners (fixed point) of the blocked cells of `mask` that share
/// area with `poly`.
fn blocked_cells(poly: &Polygon, mask: &CellMask) -> Vec<[i64; 2]> {
    let bbox = fixed_box(poly);
    (0..mask.h)
        .flat_map(|j| (0..mask.w).map(move |i| (i, j)))
        .filter(|&(i, j)| mask.blocked[j * mask.w + i])
        .map(|(i, j)| {
            [
                (mask.i0 as i64 + i as i64) * CELL_FIXED,
                (mask.j0 as i64 + j as i64) * CELL_FIXED,
            ]
        })
        .filter(|&lo| overlaps_cell_within(poly, bbox, lo))
        .collect()
}

/// The four corners of the cell with lowest corner `lo` (fixed point).
fn cell_corners(lo: [i64; 2]) -> [[i64; 2]; 4] {
    [[0, 0], [1, 0], [0, 1], [1, 1]].map(|[di, dj]| [lo[0] + di * CELL_FIXED, lo[1] + dj * CELL_FIXED])
}

/// The convex hull of the cells with lowest corners `cells` (only each
/// row's first and last cell can hold a hull vertex).
fn cells_hull(cells: &[[i64; 2]]) -> Polygon {
    let mut rows: Vec<[i64; 2]> = cells.iter().map(|c| [c[1], c[0]]).collect();
    rows.sort_unstable();
    let mut ends: Vec<[i64; 2]> = Vec::new();
    for row in rows.chunk_by(|a, b| a[0] == b[0]) {
        if let (Some(first), Some(last)) = (row.first(), row.last()) {
            ends.push([first[1], first[0]]);
            ends.push([last[1], last[0]]);
        }
    }
    convex_hull(
        ends.iter()
            .flat_map(|&lo| cell_corners(lo))
            .map(|v| [v[0] as i32, v[1] as i32])
            .collect(),
    )
}

/// Directions a straight cut may take (as normals): the axes, the
/// diagonals, the edges of the blocked cells' hull (each keeping them all
/// on its inner side) and both sides of every piece edge.
/// Each direction once (the first of its multiples), `hull` being the
/// blocked cells' hull.
fn candidate_normals(polys: &[&Polygon], hull: &Polygon) -> Vec<[i64; 2]> {
    let mut normals: Vec<[i64; 2]> = vec![[1, 0], [-1, 0], [0, 1], [0, -1], [1, 1], [1, -1], [-1, 1], [-1, -1]];
    for k in 0..hull.len() {
        let (a, b) = (hull[k], hull[(k + 1) % hull.len()]);
        normals.push([-((b[1] - a[1]) as i64), (b[0] - a[0]) as i64]);
    }
    for poly in polys {
        for k in 0..poly.len() {
            let (a, b) = (poly[k], poly[(k + 1) % poly.len()]);
            let d = [(b[0] - a[0]) as i64, (b[1] - a[1]) as i64];
            normals.extend([[d[1], -d[0]], [-d[1], d[0]]]);
        }
    }
    let mut seen: FastSet<[i64; 2]> = FastSet::default();
    normals.retain(|n| {
        let g = gcd(n[0].unsigned_abs(), n[1].unsigned_abs()).max(1) as i64;
        seen.insert([n[0] / g, n[1] / g])
    });
    normals
}

/// Where edge `a → b` passes between walkable and blocked cells of
/// `mask`: `Ok(None)` nowhere, `Ok(Some(point))` at exactly one cell line
/// (the crossing rounded to nearest from the edge's endpoints in a
/// canonical order, as [`split`] rounds it), `Err(())` more often or along
/// a cell line.
fn edge_transition(a: [i32; 2], b: [i32; 2], mask: &CellMask) -> Result<Option<[i32; 2]>, ()> {
    let (p, q) = if a <= b { (a, b) } else { (b, a) };
    let on_line = |axis: usize| p[axis] == q[axis] && (p[axis] as i64).rem_euclid(CELL_FIXED) == 0;
    if on_line(0) || on_line(1) {
        return Err(());
    }
    // Cell lines crossed strictly inside the edge, in order along it.
    let mut lines: Vec<(f64, usize, i64)> = Vec::new();
    for axis in 0..2 {
        let (lo, hi) = (p[axis].min(q[axis]) as i64, p[axis].max(q[axis]) as i64);
        let first = lo.div_euclid(CELL_FIXED) + 1;
        let last = (hi - 1).div_euclid(CELL_FIXED);
        for k in first..=last {
            let c = k * CELL_FIXED;
            lines.push(((c - p[axis] as i64) as f64 / (q[axis] - p[axis]) as f64, axis, c));
        }
    }
    lines.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    let state = |t0: f64, t1: f64| {
        let t = 0.5 * (t0 + t1);
        let at = |k: usize| p[k] as f64 + t * (q[k] - p[k]) as f64;
        let cell = |x: f64| (x / CELL_FIXED as f64).floor() as i32;
        mask.is_blocked(cell(at(0)), cell(at(1)))
    };
    let mut change: Option<(usize, i64)> = None;
    let mut prev_t = 0.0;
    let mut prev_state: Option<bool> = None;
    for (k, &(t, axis, c)) in lines.iter().enumerate() {
        let next_t = lines.get(k + 1).map_or(1.0, |l| l.0);
        if next_t <= t {
            continue; // a cell corner: the next line is the same point
        }
        let before = prev_state.unwrap_or_else(|| state(prev_t, t));
        let after = state(t, next_t);
        if before != after {
            if change.is_some() {
                return Err(());
            }
            change = Some((axis, c));
        }
        prev_state = Some(after);
        prev_t = t;
    }
    Ok(change.map(|(axis, c)| edge_crossing(p, q, axis, c, false).fixed))
}

/// Walkable parts, cut parts, crossings `(edge, point)` and the cut's
/// deviation. [Units: cm]
type LinesCut = (Vec<Polygon>, Vec<Polygon>, Vec<(usize, [i32; 2])>, f64);

/// A piece whose blocked cells form separate groups (8-connected), cut by
/// one line per group ([`straight_line`] for that group alone) where the
/// lines do not meet inside it: the walkable part is the piece on the
/// walkable side of every line, each cut part the piece beyond one line.
/// Returns the walkable part, the cut parts, every crossing as `(edge,
/// point)` and the cut's deviation [Units: cm]; `None` where a group has
/// no line, the lines meet, or a part does not survive rounding.
fn group_lines(poly: &Polygon, mask: &CellMask, toward: &dyn Fn(usize) -> bool) -> Option<LinesCut> {
    let cells = blocked_cells(poly, mask);
    // 8-connected groups of cells.
    let index: FastMap<[i64; 2], usize> = cells.iter().enumerate().map(|(k, c)| (*c, k)).collect();
    let mut group = vec![usize::MAX; cells.len()];
    let mut groups = 0;
    for first in 0..cells.len() {
        if group[first] != usize::MAX {
            continue;
        }
        group[first] = groups;
        let mut stack = vec![first];
        while let Some(k) = stack.pop() {
            for (di, dj) in [(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)] {
                let c = [cells[k][0] + di * CELL_FIXED, cells[k][1] + dj * CELL_FIXED];
                if let Some(&o) = index.get(&c)
                    && group[o] == usize::MAX
                {
                    group[o] = groups;
                    stack.push(o);
                }
            }
        }
        groups += 1;
    }
    if groups < 2 {
        return None;
    }
    let mut lines = Vec::with_capacity(groups);
    for g in 0..groups {
        let mine: Vec<[i64; 2]> = cells
            .iter()
            .zip(&group)
            .filter(|(_, k)| **k == g)
            .map(|(c, _)| *c)
            .collect();
        lines.push(line_for_cells(&[poly], &mine, 0.0)?);
    }
    let n = poly.len();
    // Crossings: (edge, line, exact point, rounded point).
    let mut crossings: Vec<(usize, usize, [f64; 2], [i32; 2])> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let mut count = 0;
        for k in 0..n {
            let (a, b) = (poly[k], poly[(k + 1) % n]);
            let (sa, sb) = (line.side_exact(a), line.side_exact(b));
            if sa == 0 {
                return None; // through a vertex: not handled here
            }
            if (sa < 0) != (sb < 0) {
                let (at, fixed) = line_crossing(a, b, |v| line.side_exact(v), toward(k));
                crossings.push((k, i, at, fixed));
                count += 1;
            }
        }
        if count != 2 {
            return None;
        }
    }
    // The lines must not meet inside the piece: each one's crossings lie
    // strictly on the walkable side of every other.
    if crossings
        .iter()
        .any(|&(_, i, _, x)| lines.iter().enumerate().any(|(j, l)| j != i && l.side_exact(x) >= 0))
    {
        return None;
    }
    let mut walk = Vec::new();
    let mut cut: Vec<Vec<[i32; 2]>> = vec![Vec::new(); lines.len()];
    for (k, &a) in poly.iter().enumerate() {
        match lines.iter().position(|l| l.side_exact(a) > 0) {
            None => walk.push(a),
            Some(i) => cut[i].push(a),
        }
        let mut here: Vec<&(usize, usize, [f64; 2], [i32; 2])> = crossings.iter().filter(|c| c.0 == k).collect();
        let from = [a[0] as f64, a[1] as f64];
        here.sort_by(|p, q| {
            let d = |c: &[f64; 2]| (c[0] - from[0]).hypot(c[1] - from[1]);
            d(&p.2).total_cmp(&d(&q.2))
        });
        for &&(_, i, _, x) in &here {
            walk.push(x);
            cut[i].push(x);
        }
    }
    let walk = finish(walk.into_iter())??;
    if cells.iter().any(|&lo| overlaps_cell(&walk, lo)) {
        return None;
    }
    let cut: Vec<Polygon> = cut
        .into_iter()
        .map(|c| finish(c.into_iter()))
        .collect::<Option<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect();
    let mut dev: f64 = 0.0;
    for (i, line) in lines.iter().enumerate() {
        let on: Vec<[f64; 2]> = crossings.iter().filter(|c| c.1 == i).map(|c| c.2).collect();
        dev = dev.max(line.dev_cm(&on, &cells));
    }
    if dev > MAX_STRAIGHT_CUT_DEV_CM {
        return None;
    }
    let made = crossings.iter().map(|c| (c.0, c.3)).collect();
    Some((vec![walk], cut, made, dev))
}

/// A piece cut around the convex hull of its blocked cells: the hull (the
/// cut part) and the rest in walkable parts, split by vertical lines through
/// the hull's vertices (the part left and right of the hull, and one
/// trapezoid above or below each hull edge), so every vertex is a piece
/// vertex, a hull vertex (a cell corner, exact) or a crossing of a piece
/// edge computed once from that edge. For an island of blocked cells (a
/// building standing on a large floor triangle) this is a few pieces where
/// the cell lines make a staircase of bands. Returns the walkable parts,
/// the cut part, every crossing as `(edge, point)` and the cut's deviation
/// (each hull edge's, as [`HalfPlane::dev_cm`]) [Units: cm]; `None`
/// where that strays beyond [`MAX_STRAIGHT_CUT_DEV_CM`], the hull does not
/// meet the piece's interior, or a part does not survive rounding.
fn hull_cut(poly: &Polygon, mask: &CellMask, toward: &dyn Fn(usize) -> bool) -> Option<LinesCut> {
    let cells = blocked_cells(poly, mask);
    let hull = cells_hull(&cells);
    if hull.len() < 3 {
        return None;
    }
    let k = hull.len();
    // Hull edge i: inside where `side <= 0` (outward normal, reduced).
    let edge_line = |i: usize| {
        let (a, b) = (hull[i], hull[(i + 1) % k]);
        let d = [(b[0] - a[0]) as i64, (b[1] - a[1]) as i64];
        HalfPlane::through([d[1], -d[0]], a)
    };
    let mut dev: f64 = 0.0;
    for i in 0..k {
        let ends = [hull[i], hull[(i + 1) % k]].map(|v| [v[0] as f64, v[1] as f64]);
        dev = dev.max(edge_line(i).dev_cm(&ends, &cells));
    }
    if dev > MAX_STRAIGHT_CUT_DEV_CM {
        return None;
    }
    let x_min = hull.iter().map(|v| v[0]).min()?;
    let x_max = hull.iter().map(|v| v[0]).max()?;
    let at_most_x = |x: i32| HalfPlane::through([1, 0], [x, 0]);
    let at_least_x = |x: i32| HalfPlane::through([-1, 0], [x, 0]);
    // The regions, each the piece clipped by half-planes.
    let mut regions: Vec<(bool, Vec<HalfPlane>)> = vec![
        (false, vec![at_most_x(x_min)]),
        (false, vec![at_least_x(x_max)]),
        (true, (0..k).map(edge_line).collect()),
    ];
    for i in 0..k {
        let (a, b) = (hull[i], hull[(i + 1) % k]);
        if a[0] != b[0] {
            let (lo, hi) = (a[0].min(b[0]), a[0].max(b[0]));
            regions.push((false, vec![at_least_x(lo), at_most_x(hi), edge_line(i).flipped()]));
        }
    }
    let start = clip_start(poly);
    let (mut walk, mut cut, mut made) = (Vec::new(), Vec::new(), Vec::new());
    for (inside, planes) in &regions {
        let (mut part, mut provisional) = (start.clone(), Vec::new());
        for plane in planes {
            part = clip_half_plane(&part, poly, plane, toward, &mut made, &mut provisional)?;
            if part.len() < 3 {
                break;
            }
        }
        if part.len() >= 3 && part.iter().any(|v| provisional.contains(&v.at)) {
            return None; // two hull lines meet off the grid inside the piece
        }
        if let Some(p) = finish(part.iter().map(|v| v.fixed))? {
            if *inside { cut.push(p) } else { walk.push(p) }
        }
    }
    if cut.is_empty() || walk.iter().any(|w| cells.iter().any(|&lo| overlaps_cell(w, lo))) {
        return None;
    }
    // Only crossings some part keeps (others were clipped away later).
    made.retain(|(_, x)| walk.iter().chain(&cut).any(|p| p.contains(x)));
    made.sort_unstable();
    made.dedup();
    Some((walk, cut, made, dev))
}

/// The points `normal · x - c <= 0` (fixed point; the normal reduced to
/// lowest terms so f64 sides stay exact for the small normals the cut
/// uses).
#[derive(Clone, Copy, Debug)]
struct HalfPlane {
    normal: [i64; 2],
    c: i128,
}

impl HalfPlane {
    fn through(normal: [i64; 2], p: [i32; 2]) -> HalfPlane {
        let g = gcd(normal[0].unsigned_abs(), normal[1].unsigned_abs()).max(1) as i64;
        let normal = [normal[0] / g, normal[1] / g];
        HalfPlane {
            normal,
            c: normal[0] as i128 * p[0] as i128 + normal[1] as i128 * p[1] as i128,
        }
    }

    fn flipped(self) -> HalfPlane {
        HalfPlane {
            normal: [-self.normal[0], -self.normal[1]],
            c: -self.c,
        }
    }

    fn side_exact(&self, v: [i32; 2]) -> i128 {
        self.normal[0] as i128 * v[0] as i128 + self.normal[1] as i128 * v[1] as i128 - self.c
    }

    /// Exact for a grid point, else from the exact position in f64.
    fn side(&self, v: &ClipVertex) -> f64 {
        if v.at == [v.fixed[0] as f64, v.fixed[1] as f64] {
            self.side_exact(v.fixed) as f64
        } else {
            self.normal[0] as f64 * v.at[0] + self.normal[1] as f64 * v.at[1] - self.c as f64
        }
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Sutherland–Hodgman against one half-plane. A crossing of an original
/// edge is computed from that edge (canonically, rounded toward the piece
/// where `toward`, and recorded in `made`); a crossing of two clipping
/// lines off the grid is added to `provisional` (it must not survive the
/// last clip). `None` for a vertex too near the line to tell its side.
fn clip_half_plane(
    part: &[ClipVertex],
    orig: &Polygon,
    plane: &HalfPlane,
    toward: &dyn Fn(usize) -> bool,
    made: &mut Vec<(usize, [i32; 2])>,
    provisional: &mut Vec<[f64; 2]>,
) -> Option<Vec<ClipVertex>> {
    const AMBIGUOUS: f64 = 1e-6;
    let key = (plane.normal, plane.c);
    let n = part.len();
    let mut sides = Vec::with_capacity(n);
    for v in part {
        let s = plane.side(v);
        let exact = v.at == [v.fixed[0] as f64, v.fixed[1] as f64];
        if !exact && s.abs() < AMBIGUOUS * (plane.normal[0].abs() + plane.normal[1].abs()) as f64 {
            return None;
        }
        sides.push(s);
    }
    let crossing =
        |from: &ClipVertex, made: &mut Vec<(usize, [i32; 2])>, provisional: &mut Vec<[f64; 2]>| -> Option<ClipVertex> {
            match from.on {
                On::Edge(e) => {
                    let (a, b) = (orig[e], orig[(e + 1) % orig.len()]);
                    let axis = match plane.normal {
                        [_, 0] => Some(0),
                        [0, _] => Some(1),
                        _ => None,
                    };
                    let (at, fixed) = match axis {
                        Some(axis) => {
                            let c = (plane.c / plane.normal[axis] as i128) as i64;
                            let x = edge_crossing(a, b, axis, c, toward(e));
                            (x.at, x.fixed)
                        }
                        None => line_crossing(a, b, |v| plane.side_exact(v), toward(e)),
                    };
                    made.push((e, fixed));
                    Some(ClipVertex { at, fixed, on: from.on })
                }
                On::CellLine => None,
                On::Line((m, c)) => {
                    // Two lines: an exact grid point or nothing.
                    let det = m[0] as i128 * plane.normal[1] as i128 - m[1] as i128 * plane.normal[0] as i128;
                    if det == 0 {
                        return None;
                    }
                    let x = c * plane.normal[1] as i128 - plane.c * m[1] as i128;
                    let y = m[0] as i128 * plane.c - plane.normal[0] as i128 * c;
                    let fixed = [
                        i32::try_from(div_round(x, det)).ok()?,
                        i32::try_from(div_round(y, det)).ok()?,
                    ];
                    let at = [x as f64 / det as f64, y as f64 / det as f64];
                    if x % det != 0 || y % det != 0 {
                        // Off the grid: a later line must clip it away.
                        provisional.push(at);
                    }
                    Some(ClipVertex { at, fixed, on: from.on })
                }
            }
        };
    let mut out = Vec::with_capacity(n + 2);
    for k in 0..n {
        let (pi, ci) = ((k + n - 1) % n, k);
        let (p, c) = (&part[pi], &part[ci]);
        match (sides[pi] <= 0.0, sides[ci] <= 0.0) {
            (true, true) => out.push(*c),
            (true, false) => out.push(ClipVertex {
                on: On::Line(key),
                ..crossing(p, made, provisional)?
            }),
            (false, true) => {
                out.push(crossing(p, made, provisional)?);
                out.push(*c);
            }
            (false, false) => {}
        }
    }
    Some(out)
}

/// The convex hull of `points`, CCW without collinear vertices (empty
/// below three distinct points).
fn convex_hull(mut p: Vec<[i32; 2]>) -> Polygon {
    p.sort_unstable();
    p.dedup();
    if p.len() < 3 {
        return Vec::new();
    }
    let mut h: Vec<[i32; 2]> = Vec::with_capacity(p.len() + 1);
    for pass in 0..2 {
        let start = h.len();
        let mut add = |v: [i32; 2]| {
            while h.len() >= start + 2 && orient_i(h[h.len() - 2], h[h.len() - 1], v) <= 0 {
                h.pop();
            }
            h.push(v);
        };
        if pass == 0 {
            p.iter().for_each(|&v| add(v));
        } else {
            p.iter().rev().for_each(|&v| add(v));
        }
        h.pop();
    }
    h
}

/// Whether `p` lies on segment `a`–`b` within two fixed-point units (a
/// rounded crossing of it).
fn on_segment(a: [i32; 2], b: [i32; 2], p: [i32; 2]) -> bool {
    let d = [(b[0] - a[0]) as f64, (b[1] - a[1]) as f64];
    let len2 = d[0] * d[0] + d[1] * d[1];
    if len2 == 0.0 {
        return false;
    }
    let r = [(p[0] - a[0]) as f64, (p[1] - a[1]) as f64];
    let t = (r[0] * d[0] + r[1] * d[1]) / len2;
    let dist = (d[0] * r[1] - d[1] * r[0]).abs() / len2.sqrt();
    dist <= 2.0 && (-2.0 / len2.sqrt()..=1.0 + 2.0 / len2.sqrt()).contains(&t)
}

/// Whether the convex CCW `poly` and the cell with lowest corner `lo`
/// (fixed point) share area: no axis of either separates them (exact).
fn overlaps_cell(poly: &Polygon, lo: [i64; 2]) -> bool {
    overlaps_cell_within(poly, fixed_box(poly), lo)
}

/// The lowest and highest coordinates of `poly` per axis (0 when empty).
fn fixed_box(poly: &Polygon) -> ([i64; 2], [i64; 2]) {
    let ends = |axis: usize| {
        let min = poly.iter().map(|v| v[axis] as i64).min().unwrap_or(0);
        let max = poly.iter().map(|v| v[axis] as i64).max().unwrap_or(0);
        (min, max)
    };
    let (x, y) = (ends(0), ends(1));
    ([x.0, y.0], [x.1, y.1])
}

/// [`overlaps_cell`] with the polygon's [`fixed_box`] given.
fn overlaps_cell_within(poly: &Polygon, (min, max): ([i64; 2], [i64; 2]), lo: [i64; 2]) -> bool {
    let hi = [lo[0] + CELL_FIXED, lo[1] + CELL_FIXED];
    for axis in 0..2 {
        if max[axis] <= lo[axis] || min[axis] >= hi[axis] {
            return false;
        }
    }
    let corners = [[lo[0], lo[1]], [hi[0], lo[1]], [lo[0], hi[1]], [hi[0], hi[1]]];
    let Some(&last) = poly.last() else {
        return true;
    };
    let mut a = last;
    poly.iter().all(|&b| {
        let (ax, ay, bx, by) = (a[0] as i128, a[1] as i128, b[0] as i128, b[1] as i128);
        a = b;
        corners
            .iter()
            .any(|c| (bx - ax) * (c[1] as i128 - ay) - (by - ay) * (c[0] as i128 - ax) > 0)
    })
}

/// The area of `poly` where `normal · x <= c` (f64: it only ranks lines);
/// adds where the line crosses its edges to `on_line`.
fn half_plane_area(poly: &[[f64; 2]], normal: [i64; 2], c: i128, on_line: &mut Vec<[f64; 2]>) -> f64 {
    let s = |v: [f64; 2]| normal[0] as f64 * v[0] + normal[1] as f64 * v[1] - c as f64;
    let mut kept: Vec<[f64; 2]> = Vec::with_capacity(poly.len() + 1);
    for k in 0..poly.len() {
        let (a, b) = (poly[k], poly[(k + 1) % poly.len()]);
        let (sa, sb) = (s(a), s(b));
        if sa <= 0.0 {
            kept.push(a);
        }
        if sa == 0.0 {
            on_line.push(a);
        }
        if (sa < 0.0 && sb > 0.0) || (sa > 0.0 && sb < 0.0) {
            let t = sa / (sa - sb);
            let x = [a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])];
            kept.push(x);
            on_line.push(x);
        }
    }
    0.5 * crate::geom::signed_area2(&kept)
}

/// Where edge `a → b` crosses the line `side(x) = 0` (`side(a)` and
/// `side(b)` of opposite signs): the exact point, and its rounding, from
/// the edge's endpoints in a canonical order; to nearest, or, if `left`,
/// to the nearest grid point on the left of `a → b` or on it.
fn line_crossing(a: [i32; 2], b: [i32; 2], side: impl Fn([i32; 2]) -> i128, left: bool) -> ([f64; 2], [i32; 2]) {
    let (p, q) = if a <= b { (a, b) } else { (b, a) };
    let (sp, sq) = (side(p), side(q));
    let den = sp - sq;
    let mut at = [0.0; 2];
    let mut fixed = [0i32; 2];
    let mut floor = [0i128; 2];
    for k in 0..2 {
        let num = (q[k] as i128 - p[k] as i128) * sp;
        at[k] = p[k] as f64 + num as f64 / den as f64;
        fixed[k] = (p[k] as i128 + div_round(num, den)) as i32;
        let (num, den) = if den < 0 { (-num, -den) } else { (num, den) };
        floor[k] = p[k] as i128 + num.div_euclid(den);
    }
    if left && orient_i(a, b, fixed) < 0 {
        // The nearest corner of the grid square around the true point that
        // lies on the piece's side (one always does: the edge crosses it).
        let mut best: Option<([i32; 2], f64)> = None;
        for [dx, dy] in [[0, 0], [1, 0], [0, 1], [1, 1]] {
            let c = [(floor[0] + dx) as i32, (floor[1] + dy) as i32];
            let d = (c[0] as f64 - at[0]).hypot(c[1] as f64 - at[1]);
            if orient_i(a, b, c) >= 0 && best.is_none_or(|(_, e)| d < e) {
                best = Some((c, d));
            }
        }
        if let Some((c, _)) = best {
            fixed = c;
        }
    }
    (at, fixed)
}

/// One mask over the boxes of `masks`, blocked where any of them is.
fn union_mask(masks: &[&CellMask]) -> CellMask {
    let i0 = masks.iter().map(|m| m.i0).min().unwrap_or(0);
    let j0 = masks.iter().map(|m| m.j0).min().unwrap_or(0);
    let i1 = masks.iter().map(|m| m.i0 + m.w as i32).max().unwrap_or(i0);
    let j1 = masks.iter().map(|m| m.j0 + m.h as i32).max().unwrap_or(j0);
    let (w, h) = ((i1 - i0) as usize, (j1 - j0) as usize);
    let mut out = CellMask {
        i0,
        j0,
        w,
        h,
        blocked: vec![false; w * h],
    };
    for m in masks {
        for (k, _) in m.blocked.iter().enumerate().filter(|(_, b)| **b) {
            let (i, j) = ((m.i0 - i0) as usize + k % m.w, (m.j0 - j0) as usize + k / m.w);
            out.blocked[j * w + i] = true;
        }
    }
    out
}

/// The ranges of consecutive indices `0..n` that `same` says are equal.
fn equal_runs(n: usize, same: impl Fn(usize, usize) -> bool) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < n {
        let mut end = i + 1;
        while end < n && same(i, end) {
            end += 1;
        }
        out.push(i..end);
        i = end;
    }
    out
}

/// Sutherland–Hodgman against the cell line `axis = c` (fixed point),
/// keeping `≥ c` (`keep_above`) or `≤ c`. A crossing of an original edge is
/// computed from that edge's endpoints, in a canonical order. The result
/// replaces `out`'s contents.
#[allow(clippy::too_many_arguments)]
fn clip_line(
    poly: &[ClipVertex],
    orig: &Polygon,
    axis: usize,
    c: i64,
    keep_above: bool,
    toward: &dyn Fn(usize) -> bool,
    made: &mut Vec<(usize, [i32; 2])>,
    out: &mut Vec<ClipVertex>,
) {
    let inside = |v: &ClipVertex| {
        if keep_above {
            v.at[axis] >= c as f64
        } else {
            v.at[axis] <= c as f64
        }
    };
    let mut crossing = |from: &ClipVertex| -> ClipVertex {
        match from.on {
            On::Edge(e) => {
                let (a, b) = (orig[e], orig[(e + 1) % orig.len()]);
                let side = toward(e);
                let x = edge_crossing(a, b, axis, c, side);
                if side {
                    made.push((e, x.fixed));
                }
                x
            }
            On::CellLine | On::Line(_) => {
                // Along a perpendicular cell line: a corner, exact.
                let mut at = from.at;
                at[axis] = c as f64;
                let mut fixed = from.fixed;
                fixed[axis] = c as i32;
                ClipVertex {
                    at,
                    fixed,
                    on: On::CellLine,
                }
            }
        }
    };
    let n = poly.len();
    out.clear();
    for k in 0..n {
        let (p, c_) = (&poly[(k + n - 1) % n], &poly[k]);
        match (inside(p), inside(c_)) {
            (true, true) => out.push(*c_),
            (true, false) => out.push(ClipVertex {
                on: On::CellLine,
                ..crossing(p)
            }),
            (false, true) => {
                out.push(ClipVertex {
                    on: p.on,
                    ..crossing(p)
                });
                out.push(*c_);
            }
            (false, false) => {}
        }
    }
}

/// Where edge `a → b` crosses `axis = c`: the other coordinate as f64 and
/// rounded (exact rational rounding) to nearest, or, if `left`, to the
/// nearest point on the left of `a → b` or on it. The same for `b → a`
/// when rounding to nearest.
fn edge_crossing(a: [i32; 2], b: [i32; 2], axis: usize, c: i64, left: bool) -> ClipVertex {
    let (p, q) = if a <= b { (a, b) } else { (b, a) };
    let o = 1 - axis;
    let (pa, qa, po, qo) = (p[axis] as i128, q[axis] as i128, p[o] as i128, q[o] as i128);
    let den = qa - pa;
    let mut at = [0.0; 2];
    let mut fixed = [0i32; 2];
    at[axis] = c as f64;
    fixed[axis] = c as i32;
    if den == 0 {
        at[o] = po as f64;
        fixed[o] = po as i32;
    } else {
        let num = (c as i128 - pa) * (qo - po);
        at[o] = po as f64 + num as f64 / den as f64;
        fixed[o] = (po + div_round(num, den)) as i32;
        if left && orient_i(a, b, fixed) < 0 {
            // The other neighbour of the true point on this line.
            let (num, den) = if den < 0 { (-num, -den) } else { (num, den) };
            let (lo, hi) = (po + num.div_euclid(den), po + num.div_euclid(den) + 1);
            fixed[o] = if fixed[o] as i128 == lo { hi as i32 } else { lo as i32 };
        }
    }
    ClipVertex {
        at,
        fixed,
        on: On::CellLine,
    }
}

/// `num / den` rounded to nearest, ties away from zero.
fn div_round(num: i128, den: i128) -> i128 {
    let (num, den) = if den < 0 { (-num, -den) } else { (num, den) };
    if num >= 0 {
        (2 * num + den) / (2 * den)
    } else {
        -((-2 * num + den) / (2 * den))
    }
}

/// The rounded fragment: `Ok(None)` if nothing with area is left,
/// `None` (as the outer option) if it is not strictly convex.
fn finish(run: impl Iterator<Item = [i32; 2]>) -> Option<Option<Polygon>> {
    let mut q: Polygon = Vec::new();
    for v in run {
        if q.last() != Some(&v) {
            q.push(v);
        }
    }
    while q.len() > 1 && q.first() == q.last() {
        q.pop();
    }
    loop {
        let n = q.len();
        if n < 3 {
            return Some(None);
        }
        let turn = |i: usize| orient_i(q[(i + n - 1) % n], q[i], q[(i + 1) % n]);
        if (0..n).any(|i| turn(i) < 0) {
            // Tiny slivers may fold when rounded; anything else is a bug
            // the caller answers conservatively.
            return if area2(&q).abs() <= 2 * n as i128 {
                Some(None)
            } else {
                None
            };
        }
        match (0..n).find(|&i| turn(i) == 0) {
            Some(i) => {
                q.remove(i);
            }
            None => break,
        }
    }
    // A sliver narrower than a fixed-point step is rounding, not area.
    let longest = (0..q.len())
        .map(|i| {
            let (a, b) = (q[i], q[(i + 1) % q.len()]);
            (b[0] as i128 - a[0] as i128)
                .abs()
                .max((b[1] as i128 - a[1] as i128).abs())
        })
        .max()
        .unwrap_or(0);
    if area2(&q) <= longest {
        return Some(None);
    }
    (q.len() <= walksurf_format::MAX_PIECE_VERTICES).then_some(Some(q))
}

/// One closed boundary loop of a patch.
#[derive(Clone, Debug, PartialEq)]
pub struct Ring {
    pub vertices: Polygon,
    /// Twice the signed area: > 0 outer (CCW), < 0 a hole (CW).
    pub area2: i128,
    /// The boundary edges led back to the first vertex (always, for pieces
    /// that do not overlap).
    pub closed: bool,
}

/// The boundary of the union of `pieces` (CCW, non-overlapping convex
/// polygons of one patch): every directed edge no other piece holds
/// reversed, split first at every vertex of the patch lying exactly on it
/// (T-junctions), chained into loops. At a vertex with several outgoing
/// edges (loops touching at a point) the one turning most to the left is
/// taken: the region stays on the left and each loop stays simple.
pub fn rings(pieces: &[&Polygon]) -> Vec<Ring> {
    rings_within(pieces, 0).0
}

/// [`rings`] with a tolerance for pieces whose shared edges do not match
/// exactly (source meshes whose T-junctions stopped being exactly
/// collinear when their vertices were quantised): vertices within
/// `snap_units` of each other are welded, and an edge is split at every
/// vertex within `snap_units` of it (clear of its ends). The second member
/// bounds (twice) the area this moves, so the rings' area is the pieces'
/// area within it. `snap_units = 0` is [`rings`].
pub fn rings_within(pieces: &[&Polygon], snap_units: i32) -> (Vec<Ring>, i128) {
    // Weld vertices within snap_units of each other (two roundings of one
    // point) to the smallest of their cluster.
    let mut verts: Vec<[i32; 2]> = pieces.iter().flat_map(|p| p.iter().copied()).collect();
    verts.sort_unstable();
    verts.dedup();
    let weld = weld_map(&verts, snap_units);
    let welded: Vec<Polygon> = pieces
        .iter()
        .map(|p| {
            let mut q: Polygon = Vec::with_capacity(p.len());
            for v in p.iter() {
                let w = weld.get(v).copied().unwrap_or(*v);
                if q.last() != Some(&w) {
                    q.push(w);
                }
            }
            while q.len() > 1 && q.first() == q.last() {
                q.pop();
            }
            q
        })
        .filter(|q| q.len() >= 3)
        .collect();
    let mut snapped: i128 = pieces
        .iter()
        .map(|p| area2(p))
        .sum::<i128>()
        .abs_diff(welded.iter().map(area2).sum::<i128>()) as i128;
    let pieces: Vec<&Polygon> = welded.iter().collect();
    let mut verts: Vec<[i32; 2]> = welded.iter().flat_map(|p| p.iter().copied()).collect();
    verts.sort_unstable();
    verts.dedup();
    let mut edges: Vec<([i32; 2], [i32; 2])> = Vec::new();
    for p in pieces {
        let n = p.len();
        for k in 0..n {
            let (a, b) = (p[k], p[(k + 1) % n]);
            let (lo, hi) = (a[0].min(b[0]) - snap_units, a[0].max(b[0]) + snap_units);
            let own = |v: &[i32; 2]| p.contains(v);
            let (ex, ey) = ((b[0] - a[0]) as i128, (b[1] - a[1]) as i128);
            let len2 = ex * ex + ey * ey;
            let from = verts.partition_point(|v| v[0] < lo);
            let mut on: Vec<(i128, [i32; 2])> = Vec::new();
            for &v in verts[from..].iter().take_while(|v| v[0] <= hi) {
                let (vx, vy) = ((v[0] - a[0]) as i128, (v[1] - a[1]) as i128);
                let t = vx * ex + vy * ey; // projection × |e|
                let o = orient_i(a, b, v) as i128;
                // Strictly inside the edge, at most snap_units off its line.
                // Exactly on it, or nearly and clear of both ends (a vertex
                // a unit from an end is a neighbour of that end, not on the
                // edge).
                let snap2 = (snap_units as i128).pow(2) * len2;
                let inside = t > 0 && t < len2;
                let near = o * o <= snap2
                    && t * t > snap2
                    && (len2 - t) * (len2 - t) > snap2
                    && !own(&v)
                    && !(0..n).any(|j| j != k && near_edge(p[j], p[(j + 1) % n], v, snap_units));
                if inside && (o == 0 || near) {
                    on.push((t, v));
                    snapped += o.abs();
                }
            }
            on.sort_unstable();
            let mut prev = a;
            for v in on.into_iter().map(|(_, v)| v).chain([b]) {
                edges.push((prev, v));
                prev = v;
            }
        }
    }
    let mut count: FastMap<([i32; 2], [i32; 2]), i32> = FastMap::default();
    for &e in &edges {
        *count.entry(e).or_default() += 1;
    }
    let mut boundary: Vec<([i32; 2], [i32; 2])> = edges
        .into_iter()
        .filter(|&(a, b)| count.get(&(b, a)).copied().unwrap_or(0) == 0)
        .collect();
    boundary.sort_unstable();
    boundary.dedup();
    // Chain. At a vertex with several outgoing edges (loops touching at a
    // point) take the one turning most to the left: the region stays on
    // the left and each loop stays simple.
    let mut next: FastMap<[i32; 2], Vec<usize>> = FastMap::default();
    for (i, &(a, _)) in boundary.iter().enumerate() {
        next.entry(a).or_default().push(i);
    }
    let turn = |(a, b): ([i32; 2], [i32; 2]), (_, c): ([i32; 2], [i32; 2])| {
        let (ux, uy) = ((b[0] - a[0]) as f64, (b[1] - a[1]) as f64);
        let (vx, vy) = ((c[0] - b[0]) as f64, (c[1] - b[1]) as f64);
        (ux * vy - uy * vx).atan2(ux * vx + uy * vy)
    };
    let mut used = vec![false; boundary.len()];
    let mut out = Vec::new();
    for s in 0..boundary.len() {
        if used[s] {
            continue;
        }
        let start = boundary[s].0;
        let mut loop_ = Vec::new();
        let mut e = s;
        let closed = loop {
            used[e] = true;
            let (a, b) = boundary[e];
            loop_.push(a);
            if b == start {
                break true;
            }
            let exits = next.get(&b).map(|l| l.as_slice()).unwrap_or(&[]);
            let best = exits
                .iter()
                .copied()
                .filter(|&i| !used[i])
                .max_by(|&i, &j| turn(boundary[e], boundary[i]).total_cmp(&turn(boundary[e], boundary[j])));
            match best {
                Some(n) => e = n,
                None => break false,
            }
        };
        let area2 = area2(&loop_);
        out.push(Ring {
            vertices: loop_,
            area2,
            closed,
        });
    }
    (out, snapped)
}

/// Vertex → its cluster's smallest vertex, for vertices within
/// `snap_units` (on each axis) of another; `verts` sorted.
fn weld_map(verts: &[[i32; 2]], snap_units: i32) -> FastMap<[i32; 2], [i32; 2]> {
    let mut parent: Vec<usize> = (0..verts.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for i in 0..verts.len() {
        for j in i + 1..verts.len() {
            if verts[j][0] - verts[i][0] > snap_units {
                break;
            }
            if (verts[j][1] - verts[i][1]).abs() <= snap_units {
                let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    let mut out = FastMap::default();
    for i in 0..verts.len() {
        let r = root(&mut parent, i);
        if r != i {
            out.insert(verts[i], verts[r]);
        }
    }
    out
}

/// Whether `v` lies within `snap_units` of segment `a → b` (projecting
/// onto it).
fn near_edge(a: [i32; 2], b: [i32; 2], v: [i32; 2], snap_units: i32) -> bool {
    let (ex, ey) = ((b[0] - a[0]) as i128, (b[1] - a[1]) as i128);
    let len2 = ex * ex + ey * ey;
    let t = (v[0] - a[0]) as i128 * ex + (v[1] - a[1]) as i128 * ey;
    let o = orient_i(a, b, v) as i128;
    (0..=len2).contains(&t) && o * o <= (snap_units as i128).pow(2) * len2
}

/// Why a ring set is not valid.
#[derive(Clone, Debug, PartialEq)]
pub enum RingError {
    /// A loop does not close (an edge has no successor).
    Open,
    /// Two edges cross or overlap.
    Crossing([i32; 2], [i32; 2]),
    /// A loop has no area.
    Degenerate,
}

/// Checks that every loop closes, none has zero area, and no two edges of
/// the whole set cross or overlap (they may share endpoints). Exact;
/// quadratic in the edge count (a check, not a bake step).
pub fn check_rings(rings: &[Ring]) -> Result<(), RingError> {
    let mut edges = Vec::new();
    for r in rings {
        if !r.closed {
            return Err(RingError::Open);
        }
        if r.area2 == 0 {
            return Err(RingError::Degenerate);
        }
        let n = r.vertices.len();
        for k in 0..n {
            edges.push((r.vertices[k], r.vertices[(k + 1) % n]));
        }
    }
    // Closed: every vertex has as many edges in as out.
    let mut degree: FastMap<[i32; 2], i32> = FastMap::default();
    for &(a, b) in &edges {
        *degree.entry(a).or_default() += 1;
        *degree.entry(b).or_default() -= 1;
    }
    if degree.values().any(|&d| d != 0) {
        return Err(RingError::Open);
    }
    for i in 0..edges.len() {
        for j in i + 1..edges.len() {
            if segments_conflict(edges[i], edges[j]) {
                return Err(RingError::Crossing(edges[i].0, edges[j].0));
            }
        }
    }
    Ok(())
}

/// Two segments cross at an interior point of either, or overlap.
fn segments_conflict((a, b): ([i32; 2], [i32; 2]), (c, d): ([i32; 2], [i32; 2])) -> bool {
    let (o1, o2) = (orient_i(a, b, c).signum(), orient_i(a, b, d).signum());
    let (o3, o4) = (orient_i(c, d, a).signum(), orient_i(c, d, b).signum());
    if o1 * o2 < 0 && o3 * o4 < 0 {
        return true; // proper crossing
    }
    // r strictly inside segment p–q, given that the three are collinear.
    let within = |p: [i32; 2], q: [i32; 2], r: [i32; 2]| {
        r != p
            && r != q
            && (p[0].min(q[0])..=p[0].max(q[0])).contains(&r[0])
            && (p[1].min(q[1])..=p[1].max(q[1])).contains(&r[1])
    };
    // A vertex of one strictly inside the other (T-touch or overlap).
    (o1 == 0 && within(a, b, c))
        || (o2 == 0 && within(a, b, d))
        || (o3 == 0 && within(c, d, a))
        || (o4 == 0 && within(c, d, b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn mask(i0: i32, j0: i32, w: usize, h: usize, blocked: impl Fn(usize, usize) -> bool) -> CellMask {
        CellMask {
            i0,
            j0,
            w,
            h,
            blocked: (0..w * h).map(|k| blocked(k % w, k / w)).collect(),
        }
    }

    fn piece(vertices: Polygon) -> Piece {
        Piece {
            patch: 0,
            vertices,
            plane: [0.0, 0.0, 0.0],
            plane_err_cm: 0.0,
            interior_edges: 0,
            cut_crossings: false,
        }
    }

    #[test]
    fn a_square_cut_in_half_makes_two_patches_whose_rings_meet_on_the_cell_line() {
        let c = CELL_FIXED as i32;
        let sq = vec![[0, 0], [4 * c, 0], [4 * c, 2 * c], [0, 2 * c]];
        let m = mask(0, 0, 4, 2, |i, _| i >= 2);
        let (pieces, patches, stats) = headroom_cut(vec![piece(sq.clone())], &[m]);
        assert_eq!(stats.split, 1);
        assert_eq!(patches.len(), 2);
        assert_eq!(pieces.len(), 2, "{pieces:?}");
        for p in &pieces {
            let want = if patches[p.patch as usize].cut { 2 * c } else { 0 };
            assert!(p.vertices.iter().all(|v| v[0] == want || v[0] == want + 2 * c));
            assert_eq!(area2(&p.vertices), 2 * (2 * c as i128) * (2 * c as i128));
            assert_eq!(p.interior_edges.count_ones(), 1, "the shared cut edge");
        }
    }

    /// A piece mostly under a low ceiling is cut whole, next to a walkable
    /// piece of its group: their shared edge claims headroom ends there,
    /// three cells short of where it does, and both patches record at
    /// least that much deviation.
    #[test]
    fn a_piece_cut_whole_records_how_far_its_edge_is_from_the_blocked_cells() {
        let c = CELL_FIXED as i32;
        let a = vec![[-4 * c, 0], [0, 0], [0, 10 * c], [-4 * c, 10 * c]];
        let b = vec![[0, 0], [10 * c, 0], [10 * c, 10 * c], [0, 10 * c]];
        let masks = [mask(-4, 0, 4, 10, |_, _| false), mask(0, 0, 10, 10, |i, _| i >= 3)];
        let (pieces, patches, stats) = headroom_cut(vec![piece(a), piece(b)], &masks);
        assert_eq!((stats.split, pieces.len(), patches.len()), (0, 2, 2), "{pieces:?}");
        let truth_cm = 3.0 * CELL_SIZE_CM;
        for p in &patches {
            assert!(p.cut_dev_cm >= truth_cm, "{p:?}");
        }
        // Alone, a group cut whole has no such edge.
        let alone = vec![[0, 0], [10 * c, 0], [10 * c, 10 * c], [0, 10 * c]];
        let (_, patches, _) = headroom_cut(vec![piece(alone)], &masks[1..]);
        assert_eq!(patches.len(), 1);
        assert_eq!(patches[0].cut_dev_cm, 0.0);
    }

    /// A round pillar in the middle of a floor: cut around the hull of its
    /// cells (whose many edges' lines meet off the grid outside it), the
    /// cut part holding every blocked cell, the walkable parts none.
    #[test]
    fn a_round_pillar_is_cut_around_its_hull() {
        let c = CELL_FIXED as i32;
        let square = vec![[0, 0], [40 * c, 0], [40 * c, 40 * c], [0, 40 * c]];
        let disk = |i: usize, j: usize| (i as f64 - 19.5).hypot(j as f64 - 19.5) <= 5.0;
        let m = mask(0, 0, 40, 40, disk);
        let (walk, cut, _, dev) = hull_cut(&square, &m, &|_| false).expect("a hull cut");
        assert_eq!(cut.len(), 1);
        for lo in blocked_cells(&square, &m) {
            assert!(walk.iter().all(|w| !overlaps_cell(w, lo)), "cell {lo:?}");
            assert!(overlaps_cell(&cut[0], lo) || !overlaps_cell(&square, lo));
        }
        let area: i128 = walk.iter().chain(&cut).map(area2).sum();
        assert_eq!(area, area2(&square));
        assert!(dev <= MAX_STRAIGHT_CUT_DEV_CM);
    }

    /// A diagonal wall with open floor behind it, next to a walkable piece
    /// of the group: a straight cut would leave the floor behind the wall
    /// on its cut side, its edge against the walkable piece 72 cm from the
    /// nearest blocked cell, beyond the limit; the cut that is made keeps
    /// every walkable/cut boundary within its recorded deviation.
    #[test]
    fn cut_edges_against_a_neighbour_stay_within_the_recorded_deviation() {
        let c = CELL_FIXED as i32;
        let m = vec![[0, 0], [10 * c, 0], [10 * c, 10 * c], [0, 10 * c]];
        let n = vec![[10 * c, 0], [20 * c, 0], [20 * c, 10 * c], [10 * c, 10 * c]];
        let wall = |i: i64, j: i64| (0..10).contains(&i) && (0..10).contains(&j) && (12..=13).contains(&(i + j));
        let masks = [
            mask(0, 0, 10, 10, |i, j| wall(i as i64, j as i64)),
            mask(10, 0, 10, 10, |_, _| false),
        ];
        let (pieces, patches, stats) = headroom_cut(vec![piece(m), piece(n)], &masks);
        assert_eq!(stats.split, 1);
        assert!(patches.iter().any(|p| p.cut) && patches.iter().any(|p| !p.cut));
        check_cut_edges(&pieces, &patches, wall).unwrap();
    }

    /// Every point where a cut piece meets a walkable one (sampled every
    /// 5 cm along the cut pieces' edges) lies within its patch's recorded
    /// deviation, less the cell diagonal allowed for where in a blocked
    /// cell headroom ends, of a blocked cell (a few units for rounding).
    fn check_cut_edges(
        pieces: &[Piece],
        patches: &[PatchInfo],
        blocked: impl Fn(i64, i64) -> bool,
    ) -> Result<(), TestCaseError> {
        let walls: Vec<&Polygon> = pieces
            .iter()
            .filter(|p| !patches[p.patch as usize].cut)
            .map(|p| &p.vertices)
            .collect();
        for p in pieces.iter().filter(|p| patches[p.patch as usize].cut) {
            let allowed = (patches[p.patch as usize].cut_dev_cm - CUT_DEV_CELLS_CM) * VERTEX_STEPS_PER_CM + 4.0;
            let n = p.vertices.len();
            for k in 0..n {
                let (a, b) = (p.vertices[k], p.vertices[(k + 1) % n]);
                let len = ((b[0] - a[0]) as f64).hypot((b[1] - a[1]) as f64);
                let steps = (len / (CELL_FIXED as f64 / 4.0)).ceil().max(1.0) as usize;
                for s in 0..=steps {
                    let t = s as f64 / steps as f64;
                    let x = [
                        a[0] as f64 + t * (b[0] - a[0]) as f64,
                        a[1] as f64 + t * (b[1] - a[1]) as f64,
                    ];
                    let on_walkable = walls.iter().any(|w| {
                        (0..w.len()).any(|e| {
                            let (u, v) = (w[e], w[(e + 1) % w.len()]);
                            let d = [(v[0] - u[0]) as f64, (v[1] - u[1]) as f64];
                            let r = [x[0] - u[0] as f64, x[1] - u[1] as f64];
                            let len2 = d[0] * d[0] + d[1] * d[1];
                            let t = ((r[0] * d[0] + r[1] * d[1]) / len2).clamp(0.0, 1.0);
                            (r[0] - t * d[0]).hypot(r[1] - t * d[1]) <= 2.0
                        })
                    });
                    if !on_walkable {
                        continue;
                    }
                    let (ci, cj) = (
                        (x[0] / CELL_FIXED as f64).floor() as i64,
                        (x[1] / CELL_FIXED as f64).floor() as i64,
                    );
                    let reach = (allowed / CELL_FIXED as f64).ceil() as i64 + 1;
                    let cell = CELL_FIXED as f64;
                    let near = (cj - reach..=cj + reach)
                        .flat_map(|j| (ci - reach..=ci + reach).map(move |i| (i, j)))
                        .filter(|&(i, j)| blocked(i, j))
                        .map(|(i, j)| {
                            let (x0, y0) = (i as f64 * cell, j as f64 * cell);
                            let dx = (x0 - x[0]).max(x[0] - (x0 + cell)).max(0.0);
                            let dy = (y0 - x[1]).max(x[1] - (y0 + cell)).max(0.0);
                            dx.hypot(dy)
                        })
                        .fold(f64::INFINITY, f64::min);
                    prop_assert!(
                        near <= allowed,
                        "cut/walkable boundary point {:?} is {} units from a blocked cell, allowed {}",
                        x,
                        near,
                        allowed
                    );
                }
            }
        }
        Ok(())
    }

    /// A slanted wall across a corner: one straight cut (two pieces), not
    /// a staircase; the walkable piece keeps clear of every blocked cell,
    /// within the recorded deviation of them.
    #[test]
    fn a_slanted_wall_is_cut_by_one_straight_line() {
        let c = CELL_FIXED as i32;
        let sq = vec![[0, 0], [10 * c, 0], [10 * c, 10 * c], [0, 10 * c]];
        let m = mask(0, 0, 10, 10, |i, j| i + j >= 15);
        let (pieces, patches, stats) = headroom_cut(vec![piece(sq.clone())], std::slice::from_ref(&m));
        assert_eq!((stats.split, stats.unsplittable), (1, 0));
        assert_eq!(pieces.len(), 2, "{pieces:?}");
        let walk = pieces
            .iter()
            .find(|p| !patches[p.patch as usize].cut)
            .expect("a walkable piece");
        for lo in blocked_cells(&sq, &m) {
            assert!(
                !overlaps_cell(&walk.vertices, lo),
                "walkable piece overlaps cell {lo:?}"
            );
        }
        // The blocked cells' inner corners lie on x + y = 15 cells: the line
        // through them leaves a triangle of 5 × 5 / 2 cells to the cut (the
        // staircase would cut the 10 blocked cells).
        let kept = area2(&walk.vertices) as f64 / (2.0 * (c as f64).powi(2));
        assert!((kept - 87.5).abs() < 1e-3, "kept {kept} cells");
        let dev = patches[walk.patch as usize].cut_dev_cm;
        assert!((CUT_DEV_CELLS_CM..=MAX_STRAIGHT_CUT_DEV_CM).contains(&dev), "{dev}");
    }

    /// A random convex polygon (hull of random points), CCW, fixed point.
    fn hull(points: &[(i32, i32)]) -> Polygon {
        convex_hull(points.iter().map(|&(x, y)| [x, y]).collect())
    }

    /// The piece's mask over its cell box, blocked where `blocked(i, j)`
    /// (cell coordinates relative to the box).
    fn mask_over(poly: &Polygon, blocked: impl Fn(usize, usize) -> bool) -> CellMask {
        let (lo_x, lo_y) = (
            poly.iter().map(|v| v[0]).min().unwrap(),
            poly.iter().map(|v| v[1]).min().unwrap(),
        );
        let (hi_x, hi_y) = (
            poly.iter().map(|v| v[0]).max().unwrap(),
            poly.iter().map(|v| v[1]).max().unwrap(),
        );
        let cell = |v: i32| (v as i64).div_euclid(CELL_FIXED) as i32;
        let (i0, j0) = (cell(lo_x), cell(lo_y));
        let (w, h) = ((cell(hi_x) - i0 + 1) as usize, (cell(hi_y) - j0 + 1) as usize);
        mask(i0, j0, w, h, blocked)
    }

    proptest! {
        #[test]
        fn cut_pieces_are_convex_small_and_tile_the_rings(
            pts in proptest::collection::vec((-70_000i32..70_000, -70_000i32..70_000), 3..12),
            blocked in proptest::collection::vec(any::<bool>(), 64),
        ) {
            let poly = hull(&pts);
            prop_assume!(poly.len() >= 3 && area2(&poly) > 0);
            let m = mask_over(&poly, |i, j| blocked[(j * 8 + i) % 64]);
            check_cut(&poly, &m)?;
        }

        /// A flat group of several pieces (a fan of triangles) under a wall
        /// along a random line, or random cells: its pieces, walkable and
        /// cut together, still cover the polygon once — the rings valid,
        /// one of them holding all but rounding, no hole but a rounding
        /// sliver — whichever way the cut
        /// went (one line for the group, a line per piece meeting at
        /// shared edges, cell lines), and no walkable piece reaches into a
        /// blocked cell.
        #[test]
        fn a_group_of_pieces_is_cut_without_gaps_or_overlaps(
            pts in proptest::collection::vec((-150_000i32..150_000, -150_000i32..150_000), 4..12),
            line in ((-150_000.0f64..150_000.0, -150_000.0f64..150_000.0), 0.0f64..std::f64::consts::TAU),
            depth in 1.0f64..60_000.0,
            random in proptest::option::of(proptest::collection::vec(any::<bool>(), 64)),
        ) {
            let poly = hull(&pts);
            prop_assume!(poly.len() >= 3 && area2(&poly) > 0);
            let fan: Vec<Polygon> = (1..poly.len() - 1).map(|k| vec![poly[0], poly[k], poly[k + 1]]).collect();
            prop_assume!(fan.iter().all(|t| area2(t) > 0));
            let ((px, py), angle) = line;
            let (ex, ey) = (angle.cos(), angle.sin());
            // A cell is blocked if a corner lies within `depth` of the line.
            let blocked = |ci: i64, cj: i64| match &random {
                Some(bits) => bits[(ci.rem_euclid(8) * 8 + cj.rem_euclid(8)) as usize],
                None => [(0, 0), (1, 0), (0, 1), (1, 1)].iter().any(|&(di, dj)| {
                    let (x, y) = (((ci + di) * CELL_FIXED) as f64, ((cj + dj) * CELL_FIXED) as f64);
                    (ex * (y - py) - ey * (x - px)).abs() < depth
                }),
            };
            let masks: Vec<CellMask> = fan
                .iter()
                .map(|t| {
                    let probe = mask_over(t, |_, _| false);
                    mask_over(t, |i, j| blocked(probe.i0 as i64 + i as i64, probe.j0 as i64 + j as i64))
                })
                .collect();
            let (pieces, patches, _) = headroom_cut(fan.iter().cloned().map(piece).collect(), &masks);
            let mut total = 0i128;
            for p in &pieces {
                let n = p.vertices.len();
                prop_assert!((3..=walksurf_format::MAX_PIECE_VERTICES).contains(&n));
                prop_assert!((0..n).all(|i| orient_i(p.vertices[(i + n - 1) % n], p.vertices[i], p.vertices[(i + 1) % n]) > 0));
                total += area2(&p.vertices);
                if !patches[p.patch as usize].cut {
                    let q: Vec<[f64; 2]> = p.vertices.iter().map(|v| [v[0] as f64, v[1] as f64]).collect();
                    let (lo, hi) = crate::geom::xy_box(&q.iter().map(|v| [v[0], v[1], 0.0]).collect::<Vec<_>>());
                    for cj in (lo[1] as i64).div_euclid(CELL_FIXED)..=(hi[1] as i64).div_euclid(CELL_FIXED) {
                        for ci in (lo[0] as i64).div_euclid(CELL_FIXED)..=(hi[0] as i64).div_euclid(CELL_FIXED) {
                            if !blocked(ci, cj) {
                                continue;
                            }
                            let c0 = [(ci * CELL_FIXED) as f64, (cj * CELL_FIXED) as f64];
                            let a = 2.0 * crate::geom::clipped_area(&q, c0, [c0[0] + CELL_FIXED as f64, c0[1] + CELL_FIXED as f64]);
                            prop_assert!(a.abs() <= 8.0 * CELL_FIXED as f64, "walkable piece {:?} overlaps blocked cell {},{}", p.vertices, ci, cj);
                        }
                    }
                }
            }
            check_cut_edges(&pieces, &patches, blocked)?;
            let all: Vec<&Polygon> = pieces.iter().map(|p| &p.vertices).collect();
            let rs = rings(&all);
            prop_assert_eq!(check_rings(&rs), Ok(()), "rings {:?}", rs);
            prop_assert_eq!(rs.iter().map(|r| r.area2).sum::<i128>(), total, "rings {:?}", rs);
            // A hole may only be a sliver rounding dropped (less than a unit
            // wide: within the edge error band of the pieces around it, where
            // the runtime falls back).
            for r in rs.iter().filter(|r| r.area2 < 0) {
                let n = r.vertices.len();
                let perimeter: f64 = (0..n)
                    .map(|i| {
                        let (a, b) = (r.vertices[i], r.vertices[(i + 1) % n]);
                        ((b[0] - a[0]) as f64).hypot((b[1] - a[1]) as f64)
                    })
                    .sum();
                prop_assert!((-r.area2) as f64 <= perimeter, "a gap: rings {:?}", rs);
            }
            let perimeter: f64 = (0..poly.len())
                .map(|i| {
                    let (a, b) = (poly[i], poly[(i + 1) % poly.len()]);
                    ((b[0] - a[0]) as f64).hypot((b[1] - a[1]) as f64)
                })
                .sum();
            prop_assert!(((total - area2(&poly)) as f64).abs() <= 2.0 * perimeter + 8.0);
            // One ring holds all but rounding: a notch rounding cut into
            // the outline may split off a ring only along it.
            let largest = rs.iter().map(|r| r.area2).max().unwrap_or(0);
            prop_assert!(((largest - area2(&poly)) as f64).abs() <= 2.0 * perimeter + 8.0, "rings {:?}", rs);
        }

        /// A wall along one edge: the blocked cells are those within
        /// `depth` of the edge's line.
        #[test]
        fn a_strip_along_an_edge_is_cut_conservatively(
            pts in proptest::collection::vec((-150_000i32..150_000, -150_000i32..150_000), 3..12),
            edge in 0usize..12,
            depth in 1.0f64..40_000.0,
        ) {
            let poly = hull(&pts);
            prop_assume!(poly.len() >= 3 && area2(&poly) > 0);
            let k = edge % poly.len();
            let (a, b) = (poly[k], poly[(k + 1) % poly.len()]);
            let (ex, ey) = ((b[0] - a[0]) as f64, (b[1] - a[1]) as f64);
            let len = ex.hypot(ey);
            let probe = mask_over(&poly, |_, _| false);
            // A cell is blocked if any corner lies within depth of the line.
            let near = |i: usize, j: usize| {
                let (ci, cj) = (probe.i0 as i64 + i as i64, probe.j0 as i64 + j as i64);
                [(0, 0), (1, 0), (0, 1), (1, 1)].iter().any(|&(di, dj)| {
                    let (x, y) = (((ci + di) * CELL_FIXED) as f64, ((cj + dj) * CELL_FIXED) as f64);
                    let d = (ex * (y - a[1] as f64) - ey * (x - a[0] as f64)) / len;
                    (-CELL_FIXED as f64..depth).contains(&d)
                })
            };
            let m = mask_over(&poly, near);
            check_cut(&poly, &m)?;
        }
    }

    /// The cut's properties for one piece and mask: convex pieces of at
    /// most 32 vertices, no walkable piece in a blocked cell, the area kept
    /// within rounding, valid rings holding the pieces' area.
    fn check_cut(poly: &Polygon, m: &CellMask) -> Result<(), TestCaseError> {
        {
            let (pieces, patches, stats) = headroom_cut(vec![piece(poly.clone())], std::slice::from_ref(m));
            if stats.unsplittable != 0 {
                return Ok(());
            }
            let mut total: i128 = 0;
            for p in &pieces {
                let n = p.vertices.len();
                prop_assert!((3..=walksurf_format::MAX_PIECE_VERTICES).contains(&n));
                prop_assert!((0..n).all(|i| orient_i(
                    p.vertices[(i + n - 1) % n],
                    p.vertices[i],
                    p.vertices[(i + 1) % n]
                ) > 0));
                total += area2(&p.vertices);
                // A walkable piece reaches into no blocked cell (conservative).
                if !patches[p.patch as usize].cut {
                    for (c, _) in m.blocked.iter().enumerate().filter(|(_, b)| **b) {
                        let (i, j) = (m.i0 as i64 + (c % m.w) as i64, m.j0 as i64 + (c / m.w) as i64);
                        let (x0, y0) = ((i * CELL_FIXED) as f64, (j * CELL_FIXED) as f64);
                        let (x1, y1) = (x0 + CELL_FIXED as f64, y0 + CELL_FIXED as f64);
                        let q: Vec<[f64; 2]> = p.vertices.iter().map(|v| [v[0] as f64, v[1] as f64]).collect();
                        // (twice the area: the sliver bound below is in those units)
                        let a = 2.0 * crate::geom::clipped_area(&q, [x0, y0], [x1, y1]);
                        // Rounding may move a crossing half a unit into
                        // the cell: at most a unit-wide sliver along it.
                        let sliver = 2.0 * 4.0 * CELL_FIXED as f64;
                        prop_assert!(
                            a.abs() <= sliver,
                            "walkable piece {:?} overlaps blocked cell {},{}",
                            p.vertices,
                            i,
                            j
                        );
                    }
                }
            }
            // Every vertex the cut made lies inside the source polygon or
            // within its patch's recorded edge deviation of the boundary,
            // and on a cell line (a cut along the cells) or on that boundary
            // (where a straight cut crosses it).
            for p in &pieces {
                let dev = patches[p.patch as usize].edge_dev_cm * VERTEX_STEPS_PER_CM;
                for v in p.vertices.iter().filter(|v| !poly.contains(v)) {
                    let n = poly.len();
                    let inside = (0..n)
                        .map(|k| {
                            let (a, b) = (poly[k], poly[(k + 1) % n]);
                            let len = ((b[0] - a[0]) as f64).hypot((b[1] - a[1]) as f64);
                            orient_i(a, b, *v) as f64 / len
                        })
                        .fold(f64::INFINITY, f64::min);
                    prop_assert!(
                        inside >= -dev,
                        "{:?} lies {} units outside, recorded {}",
                        v,
                        -inside,
                        dev
                    );
                    prop_assert!(
                        v[0] as i64 % CELL_FIXED == 0 || v[1] as i64 % CELL_FIXED == 0 || inside <= dev,
                        "{:?} is on no cell line and {} units inside the boundary",
                        v,
                        inside
                    );
                }
            }
            // The cut stays within its recorded deviation of the blocked
            // cells.
            check_cut_edges(&pieces, &patches, |i, j| m.is_blocked(i as i32, j as i32))?;
            // Rounding each crossing moves the area by less than a step per
            // unit of boundary length.
            let perimeter: f64 = (0..poly.len())
                .map(|i| {
                    let (a, b) = (poly[i], poly[(i + 1) % poly.len()]);
                    (((b[0] - a[0]) as f64).powi(2) + ((b[1] - a[1]) as f64).powi(2)).sqrt()
                })
                .sum();
            prop_assert!(((total - area2(poly)) as f64).abs() <= 2.0 * perimeter + 8.0);
            // Per patch: rings valid, their area is the pieces' area.
            for (k, info) in patches.iter().enumerate() {
                let mine: Vec<&Polygon> = pieces
                    .iter()
                    .filter(|p| p.patch as usize == k)
                    .map(|p| &p.vertices)
                    .collect();
                let rs = rings(&mine);
                prop_assert_eq!(
                    check_rings(&rs),
                    Ok(()),
                    "pieces {:?} rings {:?} mask {:?}",
                    mine,
                    rs,
                    m
                );
                let ring_area: i128 = rs.iter().map(|r| r.area2).sum();
                let piece_area: i128 = mine.iter().map(|p| area2(p)).sum();
                prop_assert_eq!(ring_area, piece_area, "patch {:?}", info);
                prop_assert!(rs.iter().filter(|r| r.area2 > 0).count() >= 1);
            }
        }
        Ok(())
    }
}
