//! Stage 4, grid: which 20 cm cells of each convex piece have headroom.
//!
//! A tile (square plus halo) is divided into cells of [`CELL_SIZE_CM`] on
//! the world grid. Each piece is its own layer: overlapping floors, bridges
//! and storeys keep separate masks. A cell of a piece is *blocked* when some
//! other geometry (any triangle, any piece of another flat group) lies over
//! the part of the piece inside the cell at a height `d` above the piece's
//! plane with `HEADROOM_TOUCH_CM < d < headroom` for some point more than
//! `HEADROOM_EDGE_CM` inside the piece — the agent of full height
//! `headroom` could not stand there. (A wall standing on the piece's edge
//! is beside the floor, not over it; a floor running on under a wall is
//! inside a solid there.) Cells the piece does not reach are empty; the
//! others are walkable. The pieces of one flat group then share their
//! blocked cells: the group is one layer.
//!
//! The test is exact up to f64 rounding: the other primitive is clipped to
//! the piece (both convex; the piece inset by the edge tolerance), then to
//! each cell, and `d` is linear over what is left, so its range is that of
//! the clipped vertices. Cost: a box-tree query per primitive (pieces whose
//! box and height band it meets; a piece whose every cell is blocked leaves
//! the tree), then per candidate piece nothing if the cells where they meet
//! are all blocked already, else the clips.

use crate::geom::xy_box;
use crate::stage::tiling::{BlockerTri, Piece};
use crate::tolerance::{HEADROOM_EDGE_CM, HEADROOM_TOUCH_CM};
use walksurf_format::{CELL_SIZE_CM, from_fixed};

/// The blocked cells of one piece over the cells its box covers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CellMask {
    /// Lowest cell (tile-relative cell coordinates: cell `i` spans
    /// `[i·20, (i+1)·20)` cm from the tile origin).
    pub i0: i32,
    pub j0: i32,
    pub w: usize,
    pub h: usize,
    /// Row-major, `w·h`.
    pub blocked: Vec<bool>,
}

impl CellMask {
    pub fn any_blocked(&self) -> bool {
        self.blocked.iter().any(|&b| b)
    }

    /// Whether every cell is blocked.
    pub fn all_blocked(&self) -> bool {
        self.blocked.iter().all(|&b| b)
    }

    /// Whether cell `(i, j)` is blocked (false outside the mask).
    pub fn is_blocked(&self, i: i32, j: i32) -> bool {
        let (di, dj) = (i - self.i0, j - self.j0);
        di >= 0
            && dj >= 0
            && (di as usize) < self.w
            && (dj as usize) < self.h
            && self.blocked[dj as usize * self.w + di as usize]
    }
}

/// The cell holding tile-relative coordinate `cm` (a floor without the
/// library call: this is on the stage's hot path).
pub fn cell_of(cm: f64) -> i32 {
    let v = cm / CELL_SIZE_CM;
    let i = v as i32;
    if (i as f64) > v { i - 1 } else { i }
}

/// Computes every piece's mask. `blockers` are in world cm, `origin` is
/// the tile origin; pieces are tile-relative (their `patch` is their flat
/// group here: pieces of one group never block each other).
pub fn headroom_masks(pieces: &[Piece], blockers: &[BlockerTri], origin: [f64; 2], headroom_cm: f64) -> Vec<CellMask> {
    // Each piece as a 3-D polygon, its cell box and z range.
    let mut polys = Runs::default();
    for p in pieces {
        polys.push(piece_polygon(p));
    }
    let mut masks: Vec<CellMask> = polys
        .iter()
        .map(|p| {
            let (lo, hi) = xy_box(p);
            let (i0, j0) = (cell_of(lo[0]), cell_of(lo[1]));
            let (w, h) = ((cell_of(hi[0]) - i0 + 1) as usize, (cell_of(hi[1]) - j0 + 1) as usize);
            CellMask {
                i0,
                j0,
                w,
                h,
                blocked: vec![false; w * h],
            }
        })
        .collect();
    if pieces.is_empty() {
        return masks;
    }
    let z_range: Vec<(f64, f64)> = polys.iter().map(z_box).collect();

    let boxes: Vec<([f64; 2], [f64; 2])> = polys.iter().map(xy_box).collect();

    // The pieces as filter entries, rounded outward (the exact test comes
    // after), boxes shrunk by the edge tolerance (only what lies farther
    // inside counts), in a box tree.
    let entries: Vec<Entry> = (0..pieces.len())
        .map(|p| {
            let (lo, hi) = boxes[p];
            Entry {
                piece: p as u32,
                group: pieces[p].patch,
                touch: ((z_range[p].0 + HEADROOM_TOUCH_CM) as f32).next_down(),
                reach: ((z_range[p].1 + headroom_cm) as f32).next_up(),
                lo: lo.map(|v| ((v + HEADROOM_EDGE_CM) as f32).next_down()),
                hi: hi.map(|v| ((v - HEADROOM_EDGE_CM) as f32).next_up()),
            }
        })
        .collect();
    let mut tree = EntryTree::new(entries, pieces.len());
    // Cells of each piece not blocked yet.
    let mut open: Vec<usize> = masks.iter().map(|m| m.blocked.len()).collect();
    let (mut found, mut stack): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
    // The part of a primitive over a piece, and one row of it.
    let (mut over, mut row): (Vec<[f64; 3]>, Vec<[f64; 3]>) = (Vec::new(), Vec::new());

    // Each piece's edges as inward unit-normal lines.
    let mut lines = Runs::default();
    for p in polys.iter() {
        lines.push(inset_lines(p));
    }
    let mut buf = Clipper::default();

    // Every other primitive: the pieces themselves, then the blockers (no
    // group). (The masks do not depend on the order. Pieces first: floors
    // stacked inside a prop block each other wholly and leave the search
    // before the prop's many blocker triangles look for them.)
    let blocker_polys: Vec<[[f64; 3]; 3]> = blockers
        .iter()
        .map(|b| b.vertices.map(|v| [v[0] - origin[0], v[1] - origin[1], v[2]]))
        .collect();
    let prims = polys
        .iter()
        .zip(pieces)
        .map(|(p, piece)| (p, piece.patch))
        .chain(blocker_polys.iter().map(|p| (p.as_slice(), u32::MAX)));
    // Pieces wholly blocked so far.
    let mut gone = 0;
    for (at, (q, group)) in prims.enumerate() {
        // The blockers search only the pieces left: where many are wholly
        // blocked by then (a level full of props), a tree of those alone.
        if at == pieces.len() && gone * 4 > pieces.len() {
            let live = tree
                .entries
                .iter()
                .filter(|e| !tree.retired[e.piece as usize])
                .copied()
                .collect();
            tree = EntryTree::new(live, pieces.len());
        }
        let (qlo, qhi) = xy_box(q);
        let (qz_lo, qz_hi) = z_box(q);
        // The primitive's box in f32, rounded outward.
        let (q_bottom, q_top) = ((qz_lo as f32).next_down(), (qz_hi as f32).next_up());
        let (q_lo, q_hi) = (qlo.map(|v| (v as f32).next_down()), qhi.map(|v| (v as f32).next_up()));
        let (qcell_lo, qcell_hi) = (qlo.map(cell_of), qhi.map(cell_of));
        let query = Entry {
            piece: 0,
            group,
            touch: q_top,
            reach: q_bottom,
            lo: q_lo,
            hi: q_hi,
        };
        tree.query(&query, &mut found, &mut stack);
        for &p in &found {
            let p = p as usize;
            // Nothing left to block where they meet?
            let m = &masks[p];
            let (lo, hi) = (
                [qcell_lo[0].max(m.i0), qcell_lo[1].max(m.j0)],
                [
                    qcell_hi[0].min(m.i0 + m.w as i32 - 1),
                    qcell_hi[1].min(m.j0 + m.h as i32 - 1),
                ],
            );
            if (lo[1]..=hi[1]).all(|cj| (lo[0]..=hi[0]).all(|ci| m.is_blocked(ci, cj))) {
                continue;
            }
            // Is q over the piece at all? Then row by row, cell by
            // cell, over the part of q inside the piece.
            buf.load(q);
            if !buf.inside(lines.get(p)) || !buf.in_band(&pieces[p].plane, headroom_cm) {
                continue;
            }
            // Wholly within the band: every cell it meets is blocked.
            let all = buf.all_in_band(&pieces[p].plane, headroom_cm);
            std::mem::swap(&mut buf.work, &mut over);
            let m = &mut masks[p];
            let (olo, ohi) = xy_box(&over);
            let (lo, hi) = ([0, 1].map(|k| cell_of(olo[k])), [0, 1].map(|k| cell_of(ohi[k])));
            for cj in lo[1]..=hi[1] {
                let y0 = cj as f64 * CELL_SIZE_CM;
                buf.load(&over);
                buf.clip(|p| p[1] - y0);
                buf.clip(|p| y0 + CELL_SIZE_CM - p[1]);
                if buf.work.is_empty() {
                    continue;
                }
                std::mem::swap(&mut buf.work, &mut row);
                let (rlo, rhi) = xy_box(&row);
                for ci in cell_of(rlo[0])..=cell_of(rhi[0]) {
                    if m.is_blocked(ci, cj) {
                        continue;
                    }
                    // A convex row meets every cell of its x range;
                    // within the band throughout, each is blocked.
                    let block = all || {
                        let x0 = ci as f64 * CELL_SIZE_CM;
                        buf.load(&row);
                        buf.clip(|p| p[0] - x0);
                        buf.clip(|p| x0 + CELL_SIZE_CM - p[0]);
                        !buf.work.is_empty() && buf.in_band(&pieces[p].plane, headroom_cm)
                    };
                    if block {
                        let k = (cj - m.j0) as usize * m.w + (ci - m.i0) as usize;
                        m.blocked[k] = true;
                        open[p] -= 1;
                    }
                }
            }
            // Wholly blocked: nothing can change its mask any more.
            if open[p] == 0 {
                gone += 1;
                tree.retire(p as u32);
            }
        }
    }
    share_within_groups(pieces, &mut masks);
    masks
}

/// A cell is blocked for every piece of a flat group once it is for one:
/// the mask is the patch layer's, so neighbouring pieces are cut along the
/// same lines (and a shared edge at the same rounded crossing).
fn share_within_groups(pieces: &[Piece], masks: &mut [CellMask]) {
    // The pieces of each group together (stable: by group, then index).
    let mut order: Vec<usize> = (0..pieces.len()).collect();
    order.sort_by_key(|&p| pieces[p].patch);
    let at = |g: &CellMask, m: &CellMask, k: usize| {
        let (i, j) = (m.i0 + (k % m.w) as i32, m.j0 + (k / m.w) as i32);
        (j - g.j0) as usize * g.w + (i - g.i0) as usize
    };
    for group in order.chunk_by(|&a, &b| pieces[a].patch == pieces[b].patch) {
        if group.len() < 2 || !group.iter().any(|&p| masks[p].any_blocked()) {
            continue;
        }
        // The group's blocked cells on one grid over the cells its pieces'
        // masks cover (one group at a time: memory for one grid).
        let (mut lo, mut hi) = ([i32::MAX; 2], [i32::MIN; 2]);
        for &p in group {
            let m = &masks[p];
            lo = [lo[0].min(m.i0), lo[1].min(m.j0)];
            hi = [hi[0].max(m.i0 + m.w as i32 - 1), hi[1].max(m.j0 + m.h as i32 - 1)];
        }
        let (w, h) = ((hi[0] - lo[0] + 1) as usize, (hi[1] - lo[1] + 1) as usize);
        let mut shared = CellMask {
            i0: lo[0],
            j0: lo[1],
            w,
            h,
            blocked: vec![false; w * h],
        };
        for &p in group {
            let m = &masks[p];
            for k in (0..m.blocked.len()).filter(|&k| m.blocked[k]) {
                let cell = at(&shared, m, k);
                shared.blocked[cell] = true;
            }
        }
        for &p in group {
            let m = &mut masks[p];
            for k in 0..m.blocked.len() {
                m.blocked[k] |= shared.blocked[at(&shared, m, k)];
            }
        }
    }
}

/// A piece as the candidate search sees it (or a primitive's query, with
/// `touch` = its top and `reach` = its bottom). Rounded outward.
#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    piece: u32,
    group: u32,
    /// A primitive's top must be above this (the piece's lowest + touching)
    /// and its bottom below `reach` (the piece's highest + headroom).
    touch: f32,
    reach: f32,
    /// XY box shrunk by the edge tolerance.
    lo: [f32; 2],
    hi: [f32; 2],
}

/// A static binary box tree over the entries (median splits): a query
/// visits only subtrees whose bounds it meets and that still hold a piece
/// not retired.
struct EntryTree {
    entries: Vec<Entry>,
    /// Per node: bounds (min touch, max reach, min lo, max hi) and either
    /// children `(left, right)` or a leaf range of `entries`.
    nodes: Vec<(Entry, NodeKind)>,
    /// Per node: its parent (the root's is itself) and how many of its
    /// pieces are not retired.
    parent: Vec<u32>,
    live: Vec<u32>,
    /// Per piece: its leaf, and whether it is retired.
    leaf_of: Vec<u32>,
    retired: Vec<bool>,
}

#[derive(Clone, Copy, Debug)]
enum NodeKind {
    Inner(u32, u32),
    Leaf(u32, u32),
}

/// Most entries in a leaf.
const TREE_LEAF: usize = 8;

impl EntryTree {
    /// The tree over `entries`, whose pieces are numbered below `pieces`.
    fn new(mut entries: Vec<Entry>, pieces: usize) -> EntryTree {
        let mut tree = EntryTree {
            entries: Vec::new(),
            nodes: Vec::new(),
            parent: Vec::new(),
            live: Vec::new(),
            leaf_of: vec![0; pieces],
            retired: vec![false; pieces],
        };
        if !entries.is_empty() {
            let n = entries.len();
            tree.build(&mut entries, 0, n, 0);
        }
        for (at, (_, kind)) in tree.nodes.iter().enumerate() {
            if let NodeKind::Leaf(s, e) = *kind {
                for x in &entries[s as usize..e as usize] {
                    tree.leaf_of[x.piece as usize] = at as u32;
                }
            }
        }
        tree.entries = entries;
        tree
    }

    fn build(&mut self, entries: &mut [Entry], start: usize, end: usize, parent: u32) -> u32 {
        let part = &mut entries[start..end];
        let mut b = part[0];
        for e in part.iter() {
            b.touch = b.touch.min(e.touch);
            b.reach = b.reach.max(e.reach);
            for k in 0..2 {
                b.lo[k] = b.lo[k].min(e.lo[k]);
                b.hi[k] = b.hi[k].max(e.hi[k]);
            }
        }
        let at = self.nodes.len() as u32;
        self.nodes.push((b, NodeKind::Leaf(start as u32, end as u32)));
        self.parent.push(parent);
        self.live.push(part.len() as u32);
        if part.len() > TREE_LEAF {
            let axis = usize::from(b.hi[1] - b.lo[1] > b.hi[0] - b.lo[0]);
            let mid = part.len() / 2;
            let centre = |e: &Entry| e.lo[axis] + e.hi[axis];
            part.select_nth_unstable_by(mid, |x, y| centre(x).total_cmp(&centre(y)));
            let left = self.build(entries, start, start + mid, at);
            let right = self.build(entries, start + mid, end, at);
            self.nodes[at as usize].1 = NodeKind::Inner(left, right);
        }
        at
    }

    /// Queries no longer return `piece` (once, for a piece in the tree).
    fn retire(&mut self, piece: u32) {
        if std::mem::replace(&mut self.retired[piece as usize], true) {
            return;
        }
        let mut n = self.leaf_of[piece as usize] as usize;
        loop {
            self.live[n] -= 1;
            if n == 0 {
                break;
            }
            n = self.parent[n] as usize;
        }
    }

    /// The pieces not retired that `q` may lie over, each once, into `out`
    /// (cleared first); `stack` is scratch.
    fn query(&self, q: &Entry, out: &mut Vec<u32>, stack: &mut Vec<u32>) {
        out.clear();
        if self.nodes.is_empty() {
            return;
        }
        // (Non-short-circuit `&`: one branch instead of six unpredictable
        // ones.)
        let meets = |e: &Entry| {
            (q.touch > e.touch)
                & (q.reach < e.reach)
                & (q.hi[0] > e.lo[0])
                & (q.hi[1] > e.lo[1])
                & (q.lo[0] < e.hi[0])
                & (q.lo[1] < e.hi[1])
        };
        stack.clear();
        stack.push(0);
        while let Some(n) = stack.pop() {
            let (b, kind) = &self.nodes[n as usize];
            if !meets(b) || self.live[n as usize] == 0 {
                continue;
            }
            match *kind {
                NodeKind::Inner(l, r) => {
                    stack.push(l);
                    stack.push(r);
                }
                NodeKind::Leaf(s, e) => {
                    for x in &self.entries[s as usize..e as usize] {
                        if x.group != q.group && !self.retired[x.piece as usize] && meets(x) {
                            out.push(x.piece);
                        }
                    }
                }
            }
        }
    }
}

/// A piece edge as a line: a point and the inward unit normal.
#[derive(Clone, Copy, Debug)]
struct Line {
    at: [f64; 2],
    normal: [f64; 2],
}

fn inset_lines(piece: &[[f64; 3]]) -> impl Iterator<Item = Line> + '_ {
    let n = piece.len();
    (0..n).map(move |k| {
        let (a, b) = (piece[k], piece[(k + 1) % n]);
        let len = (b[0] - a[0]).hypot(b[1] - a[1]).max(f64::MIN_POSITIVE);
        Line {
            at: [a[0], a[1]],
            normal: [-(b[1] - a[1]) / len, (b[0] - a[0]) / len],
        }
    })
}

/// Per piece, a run of one flat list (one allocation for them all).
struct Runs<T> {
    /// Run `i` is `items[ends[i - 1]..ends[i]]` (from 0 for the first).
    ends: Vec<usize>,
    items: Vec<T>,
}

impl<T> Default for Runs<T> {
    fn default() -> Self {
        Runs {
            ends: Vec::new(),
            items: Vec::new(),
        }
    }
}

impl<T> Runs<T> {
    fn push(&mut self, run: impl IntoIterator<Item = T>) {
        self.items.extend(run);
        self.ends.push(self.items.len());
    }

    fn get(&self, i: usize) -> &[T] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.items[start..self.ends[i]]
    }

    fn iter(&self) -> impl Iterator<Item = &[T]> {
        (0..self.ends.len()).map(|i| self.get(i))
    }
}

/// Reused clipping buffers (nothing allocated per test once warm).
#[derive(Default)]
struct Clipper {
    work: Vec<[f64; 3]>,
    spare: Vec<[f64; 3]>,
}

impl Clipper {
    fn load(&mut self, q: &[[f64; 3]]) {
        self.work.clear();
        self.work.extend_from_slice(q);
    }

    /// Clips `work` to the piece (more than `HEADROOM_EDGE_CM` inside
    /// every edge: a wall standing on the piece's edge is beside it, not
    /// over it). Whether anything is left.
    fn inside(&mut self, lines: &[Line]) -> bool {
        let side = |l: &Line, p: &[f64; 3]| l.normal[0] * (p[0] - l.at[0]) + l.normal[1] * (p[1] - l.at[1]);
        // Wholly outside one edge (the common case: a wall on the edge)?
        if lines
            .iter()
            .any(|l| self.work.iter().all(|p| side(l, p) < HEADROOM_EDGE_CM))
        {
            return false;
        }
        for l in lines {
            self.clip(|p| side(l, p) - HEADROOM_EDGE_CM);
            if self.work.is_empty() {
                return false;
            }
        }
        true
    }

    /// Whether some point of `work` lies above the plane by more than
    /// touching and less than `headroom_cm` (the height above is linear, so
    /// its range is that of the vertices).
    fn in_band(&self, plane: &[f64; 3], headroom_cm: f64) -> bool {
        let d = |p: &[f64; 3]| p[2] - (plane[0] * p[0] + plane[1] * p[1] + plane[2]);
        let (lo, hi) = self
            .work
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
                (lo.min(d(p)), hi.max(d(p)))
            });
        hi > HEADROOM_TOUCH_CM && lo < headroom_cm
    }

    /// Whether every point of `work` lies in that band.
    fn all_in_band(&self, plane: &[f64; 3], headroom_cm: f64) -> bool {
        let d = |p: &[f64; 3]| p[2] - (plane[0] * p[0] + plane[1] * p[1] + plane[2]);
        self.work.iter().all(|p| d(p) > HEADROOM_TOUCH_CM && d(p) < headroom_cm)
    }

    /// Sutherland–Hodgman of `work` against `side(p) ≥ 0`, z interpolated.
    /// Keeps degenerate (zero-area) polygons such as a vertical wall's
    /// footprint.
    fn clip(&mut self, side: impl Fn(&[f64; 3]) -> f64) {
        self.spare.clear();
        let Some(&last) = self.work.last() else {
            return;
        };
        // Each edge from the previous vertex `p` to `c`; each side once.
        let (mut p, mut sp) = (last, side(&last));
        for &c in &self.work {
            let sc = side(&c);
            if (sp >= 0.0) != (sc >= 0.0) {
                let t = sp / (sp - sc);
                self.spare.push([0, 1, 2].map(|a| p[a] + t * (c[a] - p[a])));
            }
            if sc >= 0.0 {
                self.spare.push(c);
            }
            (p, sp) = (c, sc);
        }
        std::mem::swap(&mut self.work, &mut self.spare);
    }
}

fn piece_polygon(p: &Piece) -> impl Iterator<Item = [f64; 3]> + '_ {
    p.vertices.iter().map(|v| {
        let (x, y) = (from_fixed(v[0]), from_fixed(v[1]));
        [x, y, p.plane[0] * x + p.plane[1] * y + p.plane[2]]
    })
}

fn z_box(p: &[[f64; 3]]) -> (f64, f64) {
    p.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v[2]), hi.max(v[2]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use walksurf_format::to_fixed;

    fn square(x0: f64, y0: f64, x1: f64, y1: f64, z: f64, group: u32) -> Piece {
        Piece {
            patch: group,
            vertices: [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]
                .map(|p| p.map(to_fixed))
                .to_vec(),
            plane: [0.0, 0.0, z],
            plane_err_cm: 0.0,
            interior_edges: 0,
            cut_crossings: false,
        }
    }

    fn quad(x0: f64, y0: f64, x1: f64, y1: f64, z: f64) -> [BlockerTri; 2] {
        let t = |a: [f64; 2], b: [f64; 2], c: [f64; 2]| BlockerTri {
            vertices: [a, b, c].map(|p| [p[0], p[1], z]),
            flags: 0,
        };
        [t([x0, y0], [x1, y0], [x1, y1]), t([x0, y0], [x1, y1], [x0, y1])]
    }

    #[test]
    fn a_low_ceiling_blocks_exactly_the_cells_under_it() {
        let floor = square(0.0, 0.0, 200.0, 100.0, 0.0, 0);
        // A slab 150 cm up over x in [90, 130]: cells 4..=6 (x 80–140).
        let slab = quad(90.0, -10.0, 130.0, 110.0, 150.0);
        let m = &headroom_masks(&[floor], &slab, [0.0, 0.0], 192.0)[0];
        for i in 0..10 {
            for j in 0..5 {
                assert_eq!(m.is_blocked(i, j), (4..=6).contains(&i), "cell {i},{j}");
            }
        }
    }

    #[test]
    fn a_high_ceiling_a_floor_below_and_the_floor_itself_do_not_block() {
        let floor = square(0.0, 0.0, 200.0, 100.0, 0.0, 0);
        let same_group = square(200.0, 0.0, 300.0, 100.0, 0.0, 0);
        let below = square(0.0, 0.0, 300.0, 100.0, -300.0, 1);
        let high = quad(0.0, 0.0, 300.0, 100.0, 193.0);
        let masks = headroom_masks(&[floor, same_group, below], &high, [0.0, 0.0], 192.0);
        assert!(masks.iter().all(|m| !m.any_blocked()), "{masks:?}");
    }

    #[test]
    fn a_wall_on_the_floor_edge_does_not_block() {
        let floor = square(0.0, 0.0, 200.0, 100.0, 0.0, 0);
        let wall = [BlockerTri {
            vertices: [[200.0, 0.0, 0.0], [200.0, 100.0, 0.0], [200.0, 100.0, 300.0]],
            flags: 0,
        }];
        assert!(!headroom_masks(&[floor], &wall, [0.0, 0.0], 192.0)[0].any_blocked());
    }

    #[test]
    fn a_wall_standing_on_the_floor_blocks_its_cells_only() {
        let floor = square(0.0, 0.0, 200.0, 100.0, 0.0, 0);
        // A vertical wall along x = 50 (cell 2), from z 0 to 300.
        let wall = [
            BlockerTri {
                vertices: [[50.0, 0.0, 0.0], [50.0, 100.0, 0.0], [50.0, 100.0, 300.0]],
                flags: 0,
            },
            BlockerTri {
                vertices: [[50.0, 0.0, 0.0], [50.0, 100.0, 300.0], [50.0, 0.0, 300.0]],
                flags: 0,
            },
        ];
        let m = &headroom_masks(&[floor], &wall, [0.0, 0.0], 192.0)[0];
        for i in 0..10 {
            assert_eq!(m.is_blocked(i, 2), i == 2, "cell {i}");
        }
    }

    #[test]
    fn pieces_of_one_group_share_their_blocked_cells() {
        // Two pieces of group 0 meeting at x = 110 (cell 5 holds both), a
        // third of group 1 beside them; a slab over x in [90, 105] lies
        // over the first piece only (cells 4 and 5).
        let pieces = [
            square(0.0, 0.0, 110.0, 100.0, 0.0, 0),
            square(110.0, 0.0, 200.0, 100.0, 0.0, 0),
            square(110.0, 100.0, 200.0, 200.0, 0.0, 1),
        ];
        let slab = quad(90.0, -10.0, 105.0, 110.0, 150.0);
        let masks = headroom_masks(&pieces, &slab, [0.0, 0.0], 192.0);
        for j in 0..5 {
            assert!(
                masks[0].is_blocked(4, j) && masks[0].is_blocked(5, j),
                "own cells, row {j}"
            );
            assert!(masks[1].is_blocked(5, j), "shared cell, row {j}");
            assert!(!masks[1].is_blocked(6, j), "beyond the slab, row {j}");
        }
        assert!(!masks[2].any_blocked(), "{:?}", masks[2]);
    }

    #[test]
    fn the_tree_finds_what_a_scan_finds_and_no_retired_piece() {
        // A deterministic scatter of boxes at several heights and sizes.
        let mut rng = crate::geom::TestRng::new(7);
        let mut next = move || rng.unit() as f32;
        let mut entry = |piece: u32| {
            let (x, y, z) = (next() * 3000.0, next() * 3000.0, next() * 600.0);
            let (w, h) = (1.0 + next() * next() * 800.0, 1.0 + next() * 40.0);
            Entry {
                piece,
                group: piece % 5,
                touch: z,
                reach: z + 192.0,
                lo: [x, y],
                hi: [x + w, y + h],
            }
        };
        let pieces: Vec<Entry> = (0..500).map(&mut entry).collect();
        let queries: Vec<Entry> = (0..200).map(|_| entry(9)).collect();
        let mut tree = EntryTree::new(pieces.clone(), pieces.len());
        let (mut found, mut stack) = (Vec::new(), Vec::new());
        let mut total = [0; 3];
        for (round, total) in total.iter_mut().enumerate() {
            if round > 0 {
                // Retire every third, then every other piece (twice is harmless).
                for p in (0..500).step_by(if round == 1 { 3 } else { 2 }) {
                    tree.retire(p);
                    tree.retire(p);
                }
            }
            let retired = |p: u32| (round >= 1 && p.is_multiple_of(3)) || (round >= 2 && p.is_multiple_of(2));
            for q in &queries {
                let as_query = Entry {
                    touch: q.reach,
                    reach: q.touch,
                    ..*q
                };
                tree.query(&as_query, &mut found, &mut stack);
                found.sort_unstable();
                let scan: Vec<u32> = pieces
                    .iter()
                    .filter(|e| {
                        e.group != as_query.group
                            && !retired(e.piece)
                            && as_query.touch > e.touch
                            && as_query.reach < e.reach
                            && (0..2).all(|k| as_query.hi[k] > e.lo[k] && as_query.lo[k] < e.hi[k])
                    })
                    .map(|e| e.piece)
                    .collect();
                assert_eq!(found, scan, "round {round}");
                *total += found.len();
            }
        }
        // Something was found, and retiring took some of it away.
        assert!(total[0] > 30 && total[0] > total[1] && total[1] > total[2], "{total:?}");
    }
}
