//! Stage 6, convex partition: the clipped, quantised triangles of one flat
//! group (one plane, see `coplanar_merge::flat_groups`) → fewer convex
//! polygons of at most [`MAX_PIECE_VERTICES`] vertices covering exactly the
//! same area.
//!
//! Hertel–Mehlhorn style: the triangles are the triangulation; every edge two
//! polygons share (exactly, in fixed point) is a diagonal, removed whenever
//! the union stays strictly convex and small enough. Orientation tests are
//! exact integer predicates; exactly collinear vertices left by a merge are
//! dropped (that changes no area). Greedy, twice: polygon by polygon in
//! input order, and over the shared edges longest first (a long diagonal
//! removed early tends to leave larger polygons); the result with fewer
//! polygons is kept. Deterministic. Cost: `O(e · v)` per pass for `e`
//! shared edges and polygons of `v` vertices.

use crate::stage::tiling::orient_i;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use walksurf_format::MAX_PIECE_VERTICES;

/// A CCW convex polygon in fixed point.
pub type Polygon = Vec<[i32; 2]>;

/// Merges CCW convex polygons across shared edges. Returns the merged
/// polygons (in a deterministic order) and, for each, a bit mask of its
/// edges still shared with another polygon of the set.
pub fn merge_convex(polys: Vec<Polygon>) -> Vec<(Polygon, u32)> {
    if polys.len() == 1 {
        // Nothing to merge with, no edge shared (the common case).
        return polys.into_iter().map(|p| (p, 0)).collect();
    }
    // Few edges (most groups are two triangles): the edge maps are short
    // lists, searched in full, with the same answers as the hash maps.
    if polys.iter().map(Vec::len).sum::<usize>() <= SMALL_EDGES {
        merge_convex_with::<SmallEdgeMap<usize>, SmallEdgeMap<()>>(polys)
    } else {
        merge_convex_with::<EdgeMap<usize>, EdgeMap<()>>(polys)
    }
}

/// [`merge_convex`] of more than one polygon, its edge maps of types `O`
/// (edge → polygon) and `S` (edges present).
fn merge_convex_with<O: EdgeLookup<usize>, S: EdgeLookup<()>>(polys: Vec<Polygon>) -> Vec<(Polygon, u32)> {
    // Two greedy orders; the one leaving fewer polygons (the first on a
    // tie). Two polygons, or one left, leave nothing to choose.
    if polys.len() <= 2 {
        return with_shared_edges::<S>(merge_greedy::<O>(polys, false));
    }
    let in_order = merge_greedy::<O>(polys.clone(), false);
    if in_order.len() <= 1 {
        return with_shared_edges::<S>(in_order);
    }
    let longest_first = merge_greedy::<O>(polys, true);
    let live = if longest_first.len() < in_order.len() {
        longest_first
    } else {
        in_order
    };
    with_shared_edges::<S>(live)
}

/// Greedy diagonal removal: polygon by polygon in input order, or each
/// round over the shared edges longest first.
fn merge_greedy<O: EdgeLookup<usize>>(polys: Vec<Polygon>, longest_first: bool) -> Vec<Polygon> {
    let mut polys: Vec<Option<Polygon>> = polys.into_iter().map(Some).collect();
    // Directed edge → polygon holding it.
    let edges = polys.iter().flatten().map(Vec::len).sum();
    let mut owner = O::with_capacity(edges);
    for (i, p) in polys.iter().enumerate() {
        if let Some(p) = p {
            for k in 0..p.len() {
                owner.insert((p[k], p[(k + 1) % p.len()]), i);
            }
        }
    }
    let mut changed = true;
    while longest_first && changed {
        changed = false;
        let mut edges: Vec<(i64, [i32; 2], [i32; 2])> = Vec::new();
        for p in polys.iter().flatten() {
            for k in 0..p.len() {
                let (u, v) = (p[k], p[(k + 1) % p.len()]);
                if u < v && owner.contains_key(&(v, u)) {
                    let d = [(v[0] - u[0]) as i64, (v[1] - u[1]) as i64];
                    edges.push((-(d[0] * d[0] + d[1] * d[1]), u, v));
                }
            }
        }
        edges.sort_unstable();
        for (_, u, v) in edges {
            let (Some(&a), Some(&b)) = (owner.get(&(u, v)), owner.get(&(v, u))) else {
                continue;
            };
            let (Some(pa), Some(pb)) = (&polys[a], &polys[b]) else {
                continue;
            };
            let Some(k) = (0..pa.len()).find(|&k| pa[k] == u && pa[(k + 1) % pa.len()] == v) else {
                continue;
            };
            if a != b
                && let Some(merged) = try_merge(pa, k, pb, (v, u))
            {
                replace_merged(&mut polys, &mut owner, a, b, merged);
                changed = true;
            }
        }
    }
    changed = true;
    while changed {
        changed = false;
        for a in 0..polys.len() {
            let mut k = 0;
            while let Some(pa) = &polys[a] {
                if k >= pa.len() {
                    break;
                }
                let (u, v) = (pa[k], pa[(k + 1) % pa.len()]);
                let (b, pb) = match owner.get(&(v, u)) {
                    Some(&b) if b != a => match &polys[b] {
                        Some(pb) => (b, pb),
                        None => {
                            k += 1;
                            continue;
                        }
                    },
                    _ => {
                        k += 1;
                        continue;
                    }
                };
                match try_merge(pa, k, pb, (v, u)) {
                    Some(merged) => {
                        replace_merged(&mut polys, &mut owner, a, b, merged);
                        changed = true;
                        k = 0;
                    }
                    None => k += 1,
                }
            }
        }
    }
    polys.into_iter().flatten().collect()
}

/// `merged` (of `a` and `b`) in `a`'s place; `b` gone.
fn replace_merged(
    polys: &mut [Option<Polygon>],
    owner: &mut impl EdgeLookup<usize>,
    a: usize,
    b: usize,
    merged: Polygon,
) {
    for p in [&polys[a], &polys[b]].into_iter().flatten() {
        for j in 0..p.len() {
            owner.remove(&(p[j], p[(j + 1) % p.len()]));
        }
    }
    for j in 0..merged.len() {
        owner.insert((merged[j], merged[(j + 1) % merged.len()]), a);
    }
    polys[a] = Some(merged);
    polys[b] = None;
}

/// Each polygon with the bit mask of its edges another one holds reversed.
fn with_shared_edges<S: EdgeLookup<()>>(live: Vec<Polygon>) -> Vec<(Polygon, u32)> {
    let edges = live.iter().map(Vec::len).sum();
    let mut shared = S::with_capacity(edges);
    for p in &live {
        for k in 0..p.len() {
            shared.insert((p[k], p[(k + 1) % p.len()]), ());
        }
    }
    live.into_iter()
        .map(|p| {
            let mut mask = 0u32;
            for k in 0..p.len() {
                if shared.contains_key(&(p[(k + 1) % p.len()], p[k])) {
                    mask |= 1 << k;
                }
            }
            (p, mask)
        })
        .collect()
}

/// A directed fixed-point edge.
type Edge = ([i32; 2], [i32; 2]);

/// Directed fixed-point edge → value. Only looked up, never iterated, so
/// the (fast, non-cryptographic) hash order cannot change the result.
type EdgeMap<V> = FastMap<Edge, V>;

/// Edge maps at most this long (in edges inserted at the start) are
/// [`SmallEdgeMap`]s.
const SMALL_EDGES: usize = 16;

/// What the merge asks of an edge map: a map's lookups, inserts (a key
/// inserted again takes the new value) and removals, no iteration.
trait EdgeLookup<V> {
    fn with_capacity(n: usize) -> Self;
    fn get(&self, k: &Edge) -> Option<&V>;
    fn insert(&mut self, k: Edge, v: V);
    fn remove(&mut self, k: &Edge);
    fn contains_key(&self, k: &Edge) -> bool {
        self.get(k).is_some()
    }
}

impl<V> EdgeLookup<V> for EdgeMap<V> {
    fn with_capacity(n: usize) -> Self {
        EdgeMap::with_capacity_and_hasher(n, Default::default())
    }
    fn get(&self, k: &Edge) -> Option<&V> {
        HashMap::get(self, k)
    }
    fn insert(&mut self, k: Edge, v: V) {
        HashMap::insert(self, k, v);
    }
    fn remove(&mut self, k: &Edge) {
        HashMap::remove(self, k);
    }
}

/// An edge map as a list searched in full: for a few edges, cheaper than
/// hashing them.
struct SmallEdgeMap<V>(Vec<(Edge, V)>);

impl<V> EdgeLookup<V> for SmallEdgeMap<V> {
    fn with_capacity(n: usize) -> Self {
        SmallEdgeMap(Vec::with_capacity(n))
    }
    fn get(&self, k: &Edge) -> Option<&V> {
        self.0.iter().find(|(e, _)| e == k).map(|(_, v)| v)
    }
    fn insert(&mut self, k: Edge, v: V) {
        match self.0.iter_mut().find(|(e, _)| *e == k) {
            Some(slot) => slot.1 = v,
            None => self.0.push((k, v)),
        }
    }
    fn remove(&mut self, k: &Edge) {
        if let Some(i) = self.0.iter().position(|(e, _)| e == k) {
            self.0.swap_remove(i);
        }
    }
}

/// A hash map with [`EdgeHasher`], for keys made of the bake's own data
/// (integers, byte strings). Only to look up: iterating it would make the
/// output depend on the hash.
pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<EdgeHasher>>;
/// The set of [`FastMap`].
pub(crate) type FastSet<K> = std::collections::HashSet<K, BuildHasherDefault<EdgeHasher>>;

/// A multiply-rotate hash of 32-bit words, such as an edge's four `i32`s
/// (keys come from the bake's own geometry, not from an adversary choosing
/// collisions).
#[derive(Default)]
pub(crate) struct EdgeHasher(u64);

impl Hasher for EdgeHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(4) {
            let mut word = [0u8; 4];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u32(u32::from_le_bytes(word));
        }
    }

    fn write_i32(&mut self, v: i32) {
        self.write_u32(v as u32);
    }

    fn write_u32(&mut self, v: u32) {
        self.0 = (self.0.rotate_left(5) ^ v as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// The union of `a` and `b` across a's edge `k` (= b's edge `v → u`), if it
/// is strictly convex with at most [`MAX_PIECE_VERTICES`] vertices.
fn try_merge(a: &Polygon, k: usize, b: &Polygon, (v, u): ([i32; 2], [i32; 2])) -> Option<Polygon> {
    let kb = (0..b.len()).find(|&j| b[j] == v && b[(j + 1) % b.len()] == u)?;
    // The union turns only where a and b meet (every other vertex keeps
    // both its neighbours): reflex at v or at u, it is not convex, as the
    // loop below would find (dropping a collinear neighbour keeps the
    // turn's sign), so refuse before building it.
    let (na, nb) = (a.len(), b.len());
    if orient_i(b[(kb + nb - 1) % nb], v, a[(k + 2) % na]) < 0
        || orient_i(a[(k + na - 1) % na], u, b[(kb + 2) % nb]) < 0
    {
        return None;
    }
    // a from v around to u, then b from after u around to before v.
    let mut m: Polygon = Vec::with_capacity(a.len() + b.len() - 2);
    for j in 0..a.len() {
        m.push(a[(k + 1 + j) % a.len()]);
    }
    for j in 2..b.len() {
        m.push(b[(kb + j) % b.len()]);
    }
    // Drop exactly collinear vertices; refuse any reflex one.
    let mut i = 0;
    while i < m.len() && m.len() >= 3 {
        let n = m.len();
        let o = orient_i(m[(i + n - 1) % n], m[i], m[(i + 1) % n]);
        if o < 0 {
            return None;
        }
        if o == 0 {
            m.remove(i);
            i = i.saturating_sub(1);
            continue;
        }
        i += 1;
    }
    (m.len() >= 3 && m.len() <= MAX_PIECE_VERTICES && is_strictly_convex(&m)).then_some(m)
}

fn is_strictly_convex(p: &Polygon) -> bool {
    let n = p.len();
    (0..n).all(|i| orient_i(p[(i + n - 1) % n], p[i], p[(i + 1) % n]) > 0)
}

/// Twice the signed area (fixed-point units²).
pub fn area2(p: &Polygon) -> i128 {
    let n = p.len();
    (0..n)
        .map(|i| {
            let (a, b) = (p[i], p[(i + 1) % n]);
            a[0] as i128 * b[1] as i128 - b[0] as i128 * a[1] as i128
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // The short-list maps give what the hash maps give, edge for edge:
    // random cells of a grid, each two triangles along a random diagonal
    // (some cells' triangles left out), merged both ways.
    #[test]
    fn small_edge_maps_merge_as_hash_maps_do() {
        let mut rng = crate::geom::TestRng::new(11);
        for round in 0..400 {
            let (w, h) = (1 + rng.bits() % 4, 1 + rng.bits() % 4);
            let mut polys: Vec<Polygon> = Vec::new();
            for j in 0..h as i32 {
                for i in 0..w as i32 {
                    let c = |di: i32, dj: i32| [(i + di) * 10, (j + dj) * 10];
                    let tris = if rng.bits().is_multiple_of(2) {
                        [vec![c(0, 0), c(1, 0), c(1, 1)], vec![c(0, 0), c(1, 1), c(0, 1)]]
                    } else {
                        [vec![c(0, 0), c(1, 0), c(0, 1)], vec![c(1, 0), c(1, 1), c(0, 1)]]
                    };
                    polys.extend(tris.into_iter().filter(|_| !rng.bits().is_multiple_of(5)));
                }
            }
            let small = merge_convex_with::<SmallEdgeMap<usize>, SmallEdgeMap<()>>(polys.clone());
            let hashed = merge_convex_with::<EdgeMap<usize>, EdgeMap<()>>(polys);
            assert_eq!(small, hashed, "round {round}");
        }
    }

    #[test]
    fn two_triangles_of_a_square_merge_into_one_quad() {
        let a = vec![[0, 0], [10, 0], [10, 10]];
        let b = vec![[0, 0], [10, 10], [0, 10]];
        let out = merge_convex(vec![a, b]);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].0.len(), 4);
        assert_eq!(area2(&out[0].0), 200);
        assert_eq!(out[0].1, 0, "no shared edge left");
    }

    #[test]
    fn a_reflex_union_is_not_merged() {
        // An L of two triangles whose union is not convex.
        let a = vec![[0, 0], [10, 0], [0, 10]];
        let b = vec![[10, 0], [20, 10], [0, 10]];
        let c = vec![[0, 10], [20, 10], [-30, 40]];
        let out = merge_convex(vec![a, b, c]);
        let total: i128 = out.iter().map(|(p, _)| area2(p)).sum();
        assert_eq!(total, 100 + 200 + 600);
        assert!(out.iter().all(|(p, _)| is_strictly_convex(p)));
    }

    /// A grid of `n × m` unit squares split into triangles.
    fn grid(n: i32, m: i32, s: i32, flip: &[bool]) -> Vec<Polygon> {
        let mut out = Vec::new();
        for i in 0..n {
            for j in 0..m {
                let (x, y) = (i * s, j * s);
                let f = flip.get((i * m + j) as usize).copied().unwrap_or(false);
                if f {
                    out.push(vec![[x, y], [x + s, y], [x, y + s]]);
                    out.push(vec![[x + s, y], [x + s, y + s], [x, y + s]]);
                } else {
                    out.push(vec![[x, y], [x + s, y], [x + s, y + s]]);
                    out.push(vec![[x, y], [x + s, y + s], [x, y + s]]);
                }
            }
        }
        out
    }

    proptest! {
        #[test]
        fn pieces_are_convex_small_and_cover_the_area(
            n in 1i32..6, m in 1i32..6, s in 1i32..2000,
            flip in proptest::collection::vec(any::<bool>(), 36),
            drop in proptest::collection::vec(any::<bool>(), 72),
        ) {
            let tris: Vec<Polygon> = grid(n, m, s, &flip)
                .into_iter()
                .zip(drop.iter().chain(std::iter::repeat(&false)))
                .filter(|(_, d)| !**d)
                .map(|(t, _)| t)
                .collect();
            let want: i128 = tris.iter().map(area2).sum();
            let count = tris.len();
            let out = merge_convex(tris);
            let got: i128 = out.iter().map(|(p, _)| area2(p)).sum();
            prop_assert_eq!(got, want);
            prop_assert!(out.len() <= count.max(1));
            for (p, _) in &out {
                prop_assert!(is_strictly_convex(p));
                prop_assert!(p.len() >= 3 && p.len() <= MAX_PIECE_VERTICES);
            }
            // No two pieces overlap: total area equals area of the union,
            // which for a grid subset is the sum of the kept triangles.
        }
    }
}
