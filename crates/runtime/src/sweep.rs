//! `sweep_horizontal`: the capsule moving by `(dx, dy, 0)`.

use crate::Surface;
use crate::query::*;

impl Surface {
    /// Sweeps the capsule from `pos` by `(dx, dy, 0)`. This runtime version
    /// does not answer sweeps yet: every valid query returns
    /// `Fallback(Unsupported)`.
    pub fn sweep_horizontal(&self, pos: [f64; 3], delta_xy: [f64; 2], agent: Agent) -> SweepOutcome {
        if !pos.iter().chain(&delta_xy).all(|v| v.is_finite()) || !agent.is_valid() {
            return SweepOutcome::Fallback(FallbackReason::InvalidInput);
        }
        if delta_xy[0].hypot(delta_xy[1]) > self.bake_params().max_sweep_len_cm.get() as f64 {
            return SweepOutcome::Fallback(FallbackReason::BudgetExceeded);
        }
        SweepOutcome::Fallback(FallbackReason::Unsupported)
    }
}
