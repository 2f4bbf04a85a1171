//! 4-ary quantised BVH traversal with a fixed stack (no allocation).

use crate::tolerance::BVH_STACK;
use walksurf_format::{BVH_EMPTY, BvhLine};

/// A query box in the BVH's `u16` space (inclusive).
#[derive(Clone, Copy, Debug)]
pub(crate) struct QBox {
    pub min: [u16; 3],
    pub max: [u16; 3],
}

impl QBox {
    /// Quantises a query box, rounding outward.
    pub fn new(lo: [f64; 3], hi: [f64; 3]) -> QBox {
        let c = |v: f64| {
            if v.is_nan() || v <= 0.0 {
                0
            } else if v >= u16::MAX as f64 {
                u16::MAX
            } else {
                v as u16
            }
        };
        QBox {
            min: lo.map(|v| c(v.floor())),
            max: hi.map(|v| c(v.ceil())),
        }
    }
}

/// Why a traversal stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Walk {
    Corrupt,
    TooDeep,
}

/// Calls `leaf(item)` for every leaf whose box overlaps `q`. The visitor
/// returns `false` to stop. Child lines must come after their parent (the
/// bake guarantees it) and no line is visited twice, which bounds any walk
/// over a corrupt file.
#[inline]
pub(crate) fn visit(lines: &[BvhLine], q: &QBox, mut leaf: impl FnMut(u32) -> bool) -> Result<(), Walk> {
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
        for node in &line.nodes {
            let child = node.child.get();
            if child == BVH_EMPTY {
                continue;
            }
            let overlaps = (0..3).all(|k| node.min[k].get() <= q.max[k] && node.max[k].get() >= q.min[k]);
            if !overlaps {
                continue;
            }
            if child < 0 {
                if !leaf(!child as u32) {
                    return Ok(());
                }
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
