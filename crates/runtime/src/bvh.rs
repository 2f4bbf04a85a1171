//! 4-ary quantised BVH traversal with a fixed stack (no allocation).

use crate::tolerance::BVH_STACK;
use walksurf_format::{BVH_EMPTY, BvhLine};

/// A query box in the BVH's `u16` space (inclusive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct QBox {
    pub min: [u16; 3],
    pub max: [u16; 3],
}

impl QBox {
    /// Quantises a query box, rounding outward (without libm calls: this is
    /// on every query's path).
    pub fn new(lo: [f64; 3], hi: [f64; 3]) -> QBox {
        QBox {
            min: lo.map(floor_u16),
            max: hi.map(ceil_u16),
        }
    }
}

/// `⌊v⌋` clamped to `u16` (NaN: 0).
#[inline]
pub(crate) fn floor_u16(v: f64) -> u16 {
    if v.is_nan() || v <= 0.0 {
        0
    } else if v >= u16::MAX as f64 {
        u16::MAX
    } else {
        v as u16
    }
}

/// `⌈v⌉` clamped to `u16` (NaN: 0).
#[inline]
fn ceil_u16(v: f64) -> u16 {
    let t = floor_u16(v);
    if t < u16::MAX && (t as f64) < v { t + 1 } else { t }
}

/// Lines in the top three levels of a 4-ary tree (1 + 4 + 16): the first
/// lines of a tree the bake writes breadth first.
pub(crate) const TOP_LINES: usize = 21;

/// Starts loading a tree's top levels ([`TOP_LINES`]) without waiting for
/// them, so that a cache-cold walk finds them on its way down instead of
/// missing once per level.
#[inline]
pub(crate) fn touch_top(lines: &[BvhLine]) {
    let mut sink = 0;
    for line in lines.iter().take(TOP_LINES) {
        sink ^= line.nodes[0].child.get();
    }
    std::hint::black_box(sink);
}

/// Why a traversal stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Walk {
    Corrupt,
    TooDeep,
}

/// Calls `leaf(item)` for every leaf whose box overlaps `q`. The visitor
/// returns `false` to stop. Before a line's nodes are visited, `touch(item)`
/// starts loading each overlapping leaf's record (and the walk each
/// overlapping child line), so that a cache-cold walk waits once per level,
/// not once per node; `touch` returns something read from the record.
/// Child lines must come after their parent (the bake guarantees it) and no
/// line is visited twice, which bounds any walk over a corrupt file.
#[inline]
pub(crate) fn visit(
    lines: &[BvhLine],
    q: &QBox,
    touch: impl Fn(u32) -> u32,
    mut leaf: impl FnMut(u32) -> bool,
) -> Result<(), Walk> {
    visit_narrowing(lines, *q, touch, |item, _| leaf(item))
}

/// [`visit`] with a box the visitor may shrink as it goes (a query that has
/// found a contact no longer needs what lies beyond it).
#[inline]
pub(crate) fn visit_narrowing(
    lines: &[BvhLine],
    mut q: QBox,
    touch: impl Fn(u32) -> u32,
    mut leaf: impl FnMut(u32, &mut QBox) -> bool,
) -> Result<(), Walk> {
    if lines.is_empty() {
        return Ok(());
    }
    let mut stack = [0u32; BVH_STACK];
    let mut sp = 1usize;
    // A tree visits each line at most once; more means a corrupt DAG.
    let mut budget = lines.len();
    while sp > 0 {
        sp -= 1;
        if budget == 0 {
            return Err(Walk::Corrupt);
        }
        budget -= 1;
        let at = stack[sp];
        let Some(line) = lines.get(at as usize) else {
            return Err(Walk::Corrupt);
        };
        // Which nodes the box overlaps, then start loading what they lead
        // to (a cold walk then waits once per level, not once per node),
        // then visit them in order.
        let overlaps = |node: &walksurf_format::BvhNode, q: &QBox| {
            // (Non-short-circuit `&`: no branch per axis to mispredict.)
            (node.min[0].get() <= q.max[0])
                & (node.max[0].get() >= q.min[0])
                & (node.min[1].get() <= q.max[1])
                & (node.max[1].get() >= q.min[1])
                & (node.min[2].get() <= q.max[2])
                & (node.max[2].get() >= q.min[2])
                & (node.child.get() != BVH_EMPTY)
        };
        let mut hit = [false; 4];
        for (h, node) in hit.iter_mut().zip(&line.nodes) {
            *h = overlaps(node, &q);
        }
        // (Every node's target is read and the overlapping ones kept:
        // reading is cheap when warm, a branch on the overlap is not.)
        let mut sink = 0;
        for (&h, node) in hit.iter().zip(&line.nodes) {
            let child = node.child.get();
            let read = if child >= 0 {
                lines.get(child as usize).map_or(0, |l| l.nodes[0].child.get() as u32)
            } else {
                touch(!child as u32)
            };
            sink ^= read & (h as u32).wrapping_neg();
        }
        std::hint::black_box(sink);
        let mut narrowed = false;
        for (&h, node) in hit.iter().zip(&line.nodes) {
            if !h || (narrowed && !overlaps(node, &q)) {
                continue;
            }
            let child = node.child.get();
            if child < 0 {
                let before = q;
                if !leaf(!child as u32, &mut q) {
                    return Ok(());
                }
                narrowed |= q != before;
            } else {
                if child as u32 <= at {
                    return Err(Walk::Corrupt);
                }
                if sp == BVH_STACK {
                    return Err(Walk::TooDeep);
                }
                stack[sp] = child as u32;
                sp += 1;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// The libm-free rounding equals libm's, clamped to `u16`.
    #[test]
    fn qbox_rounding_matches_libm() {
        let clamp = |v: f64| {
            if v.is_nan() {
                0
            } else {
                v.clamp(0.0, u16::MAX as f64) as u16
            }
        };
        let mut x: u64 = 5;
        for i in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let r = (x >> 11) as f64 / (1u64 << 53) as f64;
            let v = match i % 5 {
                0 => 70_000.0 * r - 1000.0,
                1 => (100.0 * r).round(),
                2 => 65_535.0 + r,
                3 => f64::NAN,
                _ => r * 1e-3,
            };
            let q = QBox::new([v; 3], [v; 3]);
            assert_eq!((q.min[0], q.max[0]), (clamp(v.floor()), clamp(v.ceil())), "{v}");
        }
    }

    use super::*;
    use proptest::prelude::*;
    use walksurf_bake::stage::layout::{BvhItem, build_bvh};
    use walksurf_format::{BVH_XY_STEPS_PER_CM, BvhNode, TileQuant};

    /// An item box: tile-relative cm, x/y in [-400, 3600], z in [0, 5000]
    /// (degenerate boxes included: a vertical wall has zero width).
    fn item_box() -> impl Strategy<Value = ([f64; 3], [f64; 3])> {
        let axis = |lo: f64, hi: f64, max_len: f64| {
            (lo..=hi, prop_oneof![Just(0.0), 0.0..=max_len]).prop_map(move |(a, len)| (a, (a + len).min(hi)))
        };
        (
            axis(-400.0, 3600.0, 800.0),
            axis(-400.0, 3600.0, 800.0),
            axis(0.0, 5000.0, 600.0),
        )
            .prop_map(|(x, y, z)| ([x.0, y.0, z.0], [x.1, y.1, z.1]))
    }

    /// A query box inside what the quantisation can express without clamping
    /// (x/y from −448 cm, z from 0; 5000 cm fits `u16` for steps ≥ 1/8 cm).
    fn query_box() -> impl Strategy<Value = ([f64; 3], [f64; 3])> {
        let axis = |lo: f64, hi: f64, max_len: f64| {
            (lo..=hi, prop_oneof![Just(0.0), 0.0..=max_len]).prop_map(move |(a, len)| (a, (a + len).min(hi)))
        };
        (
            axis(-440.0, 3640.0, 1500.0),
            axis(-440.0, 3640.0, 1500.0),
            axis(0.0, 5000.0, 1000.0),
        )
            .prop_map(|(x, y, z)| ([x.0, y.0, z.0], [x.1, y.1, z.1]))
    }

    fn qbox(quant: &TileQuant, lo: [f64; 3], hi: [f64; 3]) -> QBox {
        QBox::new(
            [
                TileQuant::xy_query(lo[0]),
                TileQuant::xy_query(lo[1]),
                quant.z_query(lo[2]),
            ],
            [
                TileQuant::xy_query(hi[0]),
                TileQuant::xy_query(hi[1]),
                quant.z_query(hi[2]),
            ],
        )
    }

    fn overlaps(a_lo: [f64; 3], a_hi: [f64; 3], b_lo: [f64; 3], b_hi: [f64; 3]) -> bool {
        (0..3).all(|k| a_lo[k] <= b_hi[k] && a_hi[k] >= b_lo[k])
    }

    /// The item's box as the bake quantises it (outward), against `q`.
    fn quantised_overlap(it: &BvhItem, quant: &TileQuant, q: &QBox) -> bool {
        let (x0, x1) = TileQuant::xy_bounds(it.lo[0], it.hi[0]);
        let (y0, y1) = TileQuant::xy_bounds(it.lo[1], it.hi[1]);
        let (z0, z1) = quant.z_bounds(it.lo[2], it.hi[2]);
        let (min, max) = ([x0, y0, z0], [x1, y1, z1]);
        (0..3).all(|k| min[k] <= q.max[k] && max[k] >= q.min[k])
    }

    fn collect(lines: &[BvhLine], q: &QBox) -> Result<Vec<u32>, Walk> {
        let mut found = Vec::new();
        visit(
            lines,
            q,
            |_| 0,
            |leaf| {
                found.push(leaf);
                true
            },
        )?;
        Ok(found)
    }

    fn cases() -> ProptestConfig {
        ProptestConfig {
            cases: 256,
            failure_persistence: None,
            ..ProptestConfig::default()
        }
    }

    /// A tile quantisation fine enough for 5000 cm of z.
    const FINE_Z: TileQuant = TileQuant {
        z_origin_cm: 0.0,
        z_quant_cm: 0.125,
    };

    /// Uniform in [0, 1), seeded.
    fn unit_rng(mut seed: u64) -> impl FnMut() -> f64 {
        move || 0.5 * (crate::testing::rng(&mut seed) + 1.0)
    }

    /// The bake writes a tree's lines breadth first: levels never decrease
    /// along the lines, so [`TOP_LINES`] covers the top three levels that
    /// [`touch_top`] loads ahead.
    #[test]
    fn lines_are_written_breadth_first() {
        let (mut rng, quant) = (unit_rng(5), FINE_Z);
        let mut items: Vec<BvhItem> = (0..3000u32)
            .map(|leaf| {
                let (x, y, z) = (3200.0 * rng(), 3200.0 * rng(), 900.0 * rng());
                BvhItem {
                    lo: [x, y, z],
                    hi: [x + 50.0 * rng(), y + 50.0 * rng(), z + 10.0 * rng()],
                    leaf,
                }
            })
            .collect();
        let lines = build_bvh(&mut items, &quant);
        let mut level = vec![usize::MAX; lines.len()];
        level[0] = 0;
        for at in 0..lines.len() {
            assert_ne!(level[at], usize::MAX, "line {at} comes before its parent");
            for n in &lines[at].nodes {
                if n.child.get() >= 0 {
                    level[n.child.get() as usize] = level[at] + 1;
                }
            }
        }
        assert!(level.windows(2).all(|w| w[0] <= w[1]), "not breadth first");
        assert_eq!(level.iter().filter(|&&l| l <= 2).count(), TOP_LINES);
        assert_eq!(level[TOP_LINES], 3);
    }

    /// A tree of many items, skewed in size and position (the surface-area
    /// split would peel off the far ones a few at a time), is walked whole
    /// within the fixed stack: the split keeps its depth bounded.
    #[test]
    fn a_large_skewed_tree_fits_the_stack() {
        let (mut rng, quant) = (unit_rng(11), FINE_Z);
        let mut items: Vec<BvhItem> = (0..100_000u32)
            .map(|leaf| {
                // Positions spread geometrically (equal bins of their range
                // hold ever fewer items); a few items are large.
                let (x, y) = (3200.0 * 0.8f64.powf(60.0 * rng()), 3200.0 * 0.8f64.powf(60.0 * rng()));
                let size = if leaf % 97 == 0 { 400.0 * rng() } else { rng() };
                let z = 5000.0 * rng().powi(3);
                BvhItem {
                    lo: [x, y, z],
                    hi: [x + size, y + size, (z + size).min(5000.0)],
                    leaf,
                }
            })
            .collect();
        let lines = build_bvh(&mut items, &quant);
        let all = qbox(&quant, [-400.0, -400.0, 0.0], [3600.0, 3600.0, 5000.0]);
        let found = collect(&lines, &all).expect("walked within the stack");
        assert_eq!(found.len(), items.len());
        // Each line keeps at most (2/3)² of its items in any child: the
        // depth in lines is at most log(n) / log(9/4), plus the leaf line.
        fn depth(lines: &[BvhLine], at: usize) -> usize {
            1 + lines[at]
                .nodes
                .iter()
                .filter(|n| n.child.get() >= 0)
                .map(|n| depth(lines, n.child.get() as usize))
                .max()
                .unwrap_or(0)
        }
        let bound = ((items.len() as f64).ln() / 2.25f64.ln()).ceil() as usize + 1;
        let d = depth(&lines, 0);
        assert!(d <= bound, "depth {d} > {bound}");
        assert!(3 * d < BVH_STACK, "depth {d} needs more than the stack");
    }

    proptest! {
        #![proptest_config(cases())]

        /// BVH query = brute force: every item whose box overlaps the query
        /// is reported, exactly once; what is reported is exactly what the
        /// quantised boxes overlap, so any extra item lies within two
        /// quantisation steps of the query (one from rounding each side).
        #[test]
        fn query_matches_brute_force(
            boxes in proptest::collection::vec(item_box(), 0..200),
            queries in proptest::collection::vec(query_box(), 1..8),
            z_exp in -3i32..=4,
        ) {
            let quant = TileQuant { z_origin_cm: 0.0, z_quant_cm: 2f64.powi(z_exp) };
            let items: Vec<BvhItem> = boxes
                .iter()
                .enumerate()
                .map(|(i, &(lo, hi))| BvhItem { lo, hi, leaf: i as u32 })
                .collect();
            let mut shuffled = items.clone();
            let lines = build_bvh(&mut shuffled, &quant);
            prop_assert_eq!(lines.is_empty(), items.is_empty());
            let xy_step = 1.0 / BVH_XY_STEPS_PER_CM;
            let slack = [2.0 * xy_step, 2.0 * xy_step, 2.0 * quant.z_quant_cm];
            for (qlo, qhi) in queries {
                let q = qbox(&quant, qlo, qhi);
                let mut found = collect(&lines, &q).expect("a baked BVH walks");
                let n = found.len();
                found.sort_unstable();
                found.dedup();
                prop_assert_eq!(found.len(), n, "an item was reported twice");

                let quantised: Vec<u32> = items
                    .iter()
                    .filter(|it| quantised_overlap(it, &quant, &q))
                    .map(|it| it.leaf)
                    .collect();
                prop_assert_eq!(&found, &quantised);
                for it in &items {
                    if overlaps(it.lo, it.hi, qlo, qhi) {
                        prop_assert!(found.binary_search(&it.leaf).is_ok(), "missed item {:?}", it);
                    }
                }
                let (glo, ghi) = (
                    std::array::from_fn(|k| qlo[k] - slack[k]),
                    std::array::from_fn(|k| qhi[k] + slack[k]),
                );
                for &leaf in &found {
                    let it = &items[leaf as usize];
                    prop_assert!(overlaps(it.lo, it.hi, glo, ghi), "{:?} is far from {:?}..{:?}", it, qlo, qhi);
                }
            }
        }
    }

    fn node(child: i32) -> BvhNode {
        BvhNode {
            min: [0.into(); 3],
            max: [u16::MAX.into(); 3],
            child: child.into(),
        }
    }

    fn line(children: [i32; 4]) -> BvhLine {
        BvhLine {
            nodes: children.map(node),
        }
    }

    const EVERYTHING: QBox = QBox {
        min: [0; 3],
        max: [u16::MAX; 3],
    };

    /// Leaves are reported as `!child`; unused slots are skipped; an empty
    /// tree reports nothing; a `false` from the visitor stops the walk.
    #[test]
    fn leaves_empty_slots_and_early_stop() {
        // Root: leaf 0, child line 1, empty, leaf 7. Line 1: leaves 1, 2, 3.
        let lines = [line([!0, 1, BVH_EMPTY, !7]), line([!1, !2, !3, BVH_EMPTY])];
        let mut found = collect(&lines, &EVERYTHING).expect("valid");
        found.sort_unstable();
        assert_eq!(found, [0, 1, 2, 3, 7]);
        assert_eq!(collect(&[], &EVERYTHING), Ok(Vec::new()));

        let mut calls = 0;
        let walk = visit(
            &lines,
            &EVERYTHING,
            |_| 0,
            |_| {
                calls += 1;
                calls < 2
            },
        );
        assert_eq!((walk, calls), (Ok(()), 2));

        // A box that overlaps nothing (every node spans all of u16 space but
        // `min > max` here) visits nothing.
        let nothing = QBox {
            min: [u16::MAX; 3],
            max: [0; 3],
        };
        let mut narrow = lines;
        for l in &mut narrow {
            for n in &mut l.nodes {
                n.min = [10.into(); 3];
                n.max = [20.into(); 3];
            }
        }
        assert_eq!(collect(&narrow, &nothing), Ok(Vec::new()));
        let outside = QBox {
            min: [21, 0, 0],
            max: [u16::MAX; 3],
        };
        assert_eq!(collect(&narrow, &outside), Ok(Vec::new()));
    }

    /// A child that points at its own line or an earlier one is corrupt
    /// (it could loop forever); so is one past the last line.
    #[test]
    fn backward_and_out_of_range_children_are_corrupt() {
        assert_eq!(
            collect(&[line([0, BVH_EMPTY, BVH_EMPTY, BVH_EMPTY])], &EVERYTHING),
            Err(Walk::Corrupt)
        );
        let back = [line([1, !0, BVH_EMPTY, BVH_EMPTY]), line([!1, 0, BVH_EMPTY, BVH_EMPTY])];
        assert_eq!(collect(&back, &EVERYTHING), Err(Walk::Corrupt));
        let past = [
            line([1, BVH_EMPTY, BVH_EMPTY, BVH_EMPTY]),
            line([2, BVH_EMPTY, BVH_EMPTY, BVH_EMPTY]),
        ];
        assert_eq!(collect(&past, &EVERYTHING), Err(Walk::Corrupt));
        let far = [line([i32::MAX, BVH_EMPTY, BVH_EMPTY, BVH_EMPTY])];
        assert_eq!(collect(&far, &EVERYTHING), Err(Walk::Corrupt));
    }

    /// A DAG whose four children all point at the next line has 4^n paths;
    /// the walk must stop after visiting as many lines as exist, not
    /// enumerate them. 16 lines: the line budget runs out before the stack
    /// (3 more entries per level) does.
    #[test]
    fn dag_is_corrupt_and_stops_quickly() {
        // The walk's outcome and the leaves it visited.
        fn walk_counting(lines: &[BvhLine]) -> (Result<(), Walk>, usize) {
            let mut leaves = 0usize;
            let walk = visit(
                lines,
                &EVERYTHING,
                |_| 0,
                |_| {
                    leaves += 1;
                    true
                },
            );
            (walk, leaves)
        }
        let n = 16;
        let mut lines: Vec<BvhLine> = (1..n as i32).map(|next| line([next; 4])).collect();
        lines.push(line([!0, !1, !2, !3]));
        let (walk, leaves) = walk_counting(&lines);
        assert_eq!(walk, Err(Walk::Corrupt));
        assert!(leaves <= 4 * n, "{leaves} leaves visited");

        // Longer chains hit the stack limit first: an error either way, and
        // just as bounded.
        let n = 1000;
        let mut lines: Vec<BvhLine> = (1..n as i32).map(|next| line([next; 4])).collect();
        lines.push(line([!0, !1, !2, !3]));
        let (walk, leaves) = walk_counting(&lines);
        assert!(walk.is_err(), "{walk:?}");
        assert!(leaves <= 4 * n);

        // A plain chain (one child per line) of the same length is a valid,
        // if deep-looking, tree: the stack never holds more than one entry.
        let mut chain: Vec<BvhLine> = (1..n as i32)
            .map(|next| line([next, !next, BVH_EMPTY, BVH_EMPTY]))
            .collect();
        chain.push(line([!0, BVH_EMPTY, BVH_EMPTY, BVH_EMPTY]));
        let found = collect(&chain, &EVERYTHING).expect("a chain is a tree");
        assert_eq!(found.len(), n);
    }
}
