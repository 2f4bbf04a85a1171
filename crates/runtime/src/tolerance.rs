//! Named tolerances of the runtime, in one place. Each one says what error it
//! covers; none of them is tuned to make a number look better.

use walksurf_format::VERTEX_STEPS_PER_CM;

/// Half-width of the band around a piece or blocker edge inside which the
/// runtime cannot tell inside from outside: vertex quantisation (1/1024 cm,
/// ≤ 0.0007 cm per vertex), the convexity fix of the bake (≤ 0.002 cm) and
/// f64 rounding, with margin. A point in the band is undecided. [Units: cm]
pub const EDGE_BAND_CM: f64 = 0.005;
/// Largest XY error of a stored vertex: half a fixed-point step on each axis.
/// [Units: cm]
pub const VERTEX_XY_ERR_CM: f64 = 0.5 * std::f64::consts::SQRT_2 / VERTEX_STEPS_PER_CM;
/// Largest Z error of a stored blocker vertex. [Units: cm]
pub const VERTEX_Z_ERR_CM: f64 = 0.5 / VERTEX_STEPS_PER_CM;
/// Extra margin on every distance comparison beyond the stored error bounds
/// (f64 rounding of world ↔ tile coordinates far from the origin). [Units: cm]
pub const Z_MARGIN_CM: f64 = 0.001;
/// Two candidate contacts whose distances differ by less than this (beyond
/// their error bounds) may swap order: unless they agree on the normal, the
/// answer is undecided. [Units: cm]
pub const SAME_Z_CM: f64 = 0.005;
/// Two normals within this (max component difference) are the same.
pub const SAME_NORMAL: f64 = 1e-4;
/// A normal whose z lies this close to the walkable threshold is undecided.
pub const WALKABLE_Z_BAND: f64 = 1e-5;
/// An answer whose own error bound exceeds this cannot promise the 0.01 cm
/// contract (with the other margins added). [Units: cm]
pub const MAX_CONTACT_ERR_CM: f64 = 0.004;
/// Line-trace window: how far above the capsule bottom the trace starts.
/// [Units: cm]
pub const LINE_TRACE_ABOVE_CM: f64 = 2.0;
/// Depth of the BVH traversal stack; a deeper tree is a corrupt file.
pub const BVH_STACK: usize = 64;
/// Most candidate contacts one query keeps; more is `BudgetExceeded`.
pub const MAX_CANDIDATES: usize = 96;
