//! Per-agent query state: the last tile, the file generation it came from,
//! and counters. Owned by the caller (one per agent or per thread): no
//! locks, no allocation, and `Surface` stays immutable and shareable.

use crate::query::{FallbackReason, FloorOutcome, SweepOutcome};

/// Calls, answers and fallbacks by reason, as a caller reads them to measure
/// the fallback rate that decides the real gain.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueryStats {
    pub calls: u64,
    pub answered: u64,
    /// Indexed like [`FallbackReason::ALL`].
    pub fallbacks: [u64; FallbackReason::ALL.len()],
    /// Calls the caller's own physics answered (`*_or` helpers).
    pub physics_calls: u64,
}

impl QueryStats {
    /// Fallbacks for one reason.
    pub fn fallbacks_for(&self, reason: FallbackReason) -> u64 {
        FallbackReason::ALL
            .iter()
            .position(|r| *r == reason)
            .and_then(|i| self.fallbacks.get(i))
            .copied()
            .unwrap_or(0)
    }

    /// Adds another agent's counters.
    pub fn merge(&mut self, other: &QueryStats) {
        self.calls += other.calls;
        self.answered += other.answered;
        self.physics_calls += other.physics_calls;
        for (a, b) in self.fallbacks.iter_mut().zip(&other.fallbacks) {
            *a += b;
        }
    }

    pub(crate) fn record(&mut self, fallback: Option<FallbackReason>) {
        self.calls += 1;
        match fallback {
            None => self.answered += 1,
            Some(reason) => {
                let i = FallbackReason::ALL.iter().position(|r| *r == reason);
                if let Some(c) = i.and_then(|i| self.fallbacks.get_mut(i)) {
                    *c += 1;
                }
            }
        }
    }

    pub(crate) fn record_floor(&mut self, o: &FloorOutcome) {
        self.record(match o {
            FloorOutcome::Fallback(r) => Some(*r),
            _ => None,
        });
    }

    pub(crate) fn record_sweep(&mut self, o: &SweepOutcome) {
        self.record(match o {
            SweepOutcome::Fallback(r) => Some(*r),
            _ => None,
        });
    }
}

/// The per-agent cache: `{ last tile, generation }` plus counters. A cache
/// filled from another generation of the file is ignored and refilled; a
/// cached tile is used only after checking it is the tile asked for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueryCache {
    pub(crate) generation: u64,
    /// Tile coordinates and hot-record index of the last query, if any.
    pub(crate) tile: Option<(i32, i32, u32)>,
    pub stats: QueryStats,
}

impl QueryCache {
    pub fn new() -> QueryCache {
        QueryCache::default()
    }

    /// The cached hot-record index for tile `(tx, ty)` of `generation`.
    pub(crate) fn hint(&mut self, generation: u64, tx: i32, ty: i32) -> Option<u32> {
        if self.generation != generation {
            self.generation = generation;
            self.tile = None;
            return None;
        }
        match self.tile {
            Some((x, y, i)) if x == tx && y == ty => Some(i),
            _ => None,
        }
    }
}

impl crate::Surface {
    /// [`crate::Surface::sweep_horizontal`], counted in `cache.stats`.
    pub fn sweep_horizontal_cached(
        &self,
        cache: &mut QueryCache,
        pos: [f64; 3],
        delta_xy: [f64; 2],
        agent: crate::Agent,
    ) -> SweepOutcome {
        let out = self.sweep_horizontal(pos, delta_xy, agent);
        cache.stats.record_sweep(&out);
        out
    }

    /// Answers from the file when it can and calls the caller's physics
    /// (`physics(reason)`, which must return `Clear` or `Hit`) otherwise;
    /// `cache.stats` counts both (`answered` vs `physics_calls`).
    pub fn sweep_horizontal_or(
        &self,
        cache: &mut QueryCache,
        pos: [f64; 3],
        delta_xy: [f64; 2],
        agent: crate::Agent,
        physics: impl FnOnce(FallbackReason) -> SweepOutcome,
    ) -> SweepOutcome {
        match self.sweep_horizontal_cached(cache, pos, delta_xy, agent) {
            SweepOutcome::Fallback(reason) => {
                cache.stats.physics_calls += 1;
                physics(reason)
            }
            answered => answered,
        }
    }

    /// Like [`QueryCache`]-counted `find_floor`, calling the caller's physics
    /// (`physics(reason)`, returning `Floor` or `NoFloor`) on a fallback.
    pub fn find_floor_or(
        &self,
        cache: &mut QueryCache,
        pos: [f64; 3],
        down_cm: f64,
        agent: crate::Agent,
        mode: crate::FloorMode,
        physics: impl FnOnce(FallbackReason) -> FloorOutcome,
    ) -> FloorOutcome {
        match self.find_floor_cached(cache, pos, down_cm, agent, mode) {
            FloorOutcome::Fallback(reason) => {
                cache.stats.physics_calls += 1;
                physics(reason)
            }
            answered => answered,
        }
    }
}
