//! Named tolerances of the runtime, in one place. Each one says what error it
//! covers; none of them is tuned to make a number look better.

/// Half-width of the band around a piece or blocker edge inside which the
/// runtime cannot tell inside from outside: vertex quantisation (1/1024 cm,
/// ≤ 0.0007 cm per vertex), the convexity fix of the bake (≤ 0.002 cm) and
/// f64 rounding, with margin. A point in the band is undecided. [Units: cm]
pub const EDGE_BAND_CM: f64 = 0.005;
/// Extra margin on every z comparison beyond the stored error bounds
/// (f64 rounding of world ↔ tile coordinates far from the origin). [Units: cm]
pub const Z_MARGIN_CM: f64 = 0.001;
/// Two candidate surfaces whose heights differ by less than this at the query
/// point are treated as the same height: which one is first is undecided
/// unless they are the same plane. [Units: cm]
pub const SAME_Z_CM: f64 = 0.005;
/// Two normals within this (max component difference) are the same.
pub const SAME_NORMAL: f64 = 1e-4;
/// A normal whose z lies this close to the walkable threshold is undecided.
pub const WALKABLE_Z_BAND: f64 = 1e-5;
/// Line-trace window: how far above the capsule bottom the trace starts.
/// [Units: cm]
pub const LINE_TRACE_ABOVE_CM: f64 = 2.0;
/// Depth of the BVH traversal stack; a deeper tree is a corrupt file.
pub const BVH_STACK: usize = 64;
