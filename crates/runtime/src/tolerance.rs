//! Named tolerances of the runtime, in one place. Each one says what error it
//! covers; none of them is tuned to make a number look better.

use walksurf_format::VERTEX_STEPS_PER_CM;

/// Half-width of the band around a piece or blocker edge inside which the
/// runtime cannot tell inside from outside: vertex quantisation (1/1024 cm,
/// ≤ 0.0007 cm per vertex) and f64 rounding, with margin. A point in the
/// band is undecided. [Units: cm]
pub const EDGE_BAND_CM: f64 = 0.005;
/// Largest XY error of a stored vertex: half a fixed-point step on each axis.
/// [Units: cm]
pub const VERTEX_XY_ERR_CM: f64 = 0.5 * std::f64::consts::SQRT_2 / VERTEX_STEPS_PER_CM;
/// Largest Z error of a stored blocker vertex. [Units: cm]
pub const VERTEX_Z_ERR_CM: f64 = 0.5 / VERTEX_STEPS_PER_CM;
/// Largest XY distance of a piece's boundary from the true one: vertex
/// quantisation. The bake moves no edge otherwise (a triangle that would
/// need it is kept exact as a blocker)... [Units: cm]
pub const PIECE_XY_ERR_CM: f64 = VERTEX_XY_ERR_CM;
/// ...but for a piece flagged `CUT_CROSSINGS`: the points where the
/// headroom cut crosses an edge are rounded once more
/// (`walksurf_format::MAX_PIECE_EDGE_DEV_CM`). [Units: cm]
pub const PIECE_CUT_XY_ERR_CM: f64 = walksurf_format::MAX_PIECE_EDGE_DEV_CM;

/// Largest `|z|` of a query position [cm]: beyond the heights any file can
/// hold (an `i32` z origin ± the fixed point's range), and where f64 still
/// carries world ↔ tile coordinates to 1e-6 cm, well inside [`Z_MARGIN_CM`].
/// Farther is `OutsideCoverage`.
pub const MAX_QUERY_Z_CM: f64 = 4.0e9;
/// Extra margin on every distance comparison beyond the stored error bounds
/// (f64 rounding of world ↔ tile coordinates far from the origin). [Units: cm]
pub const Z_MARGIN_CM: f64 = 0.001;
/// Two normals within this (max component difference) are the same: half
/// the 1e-3 normal tolerance of the contract, so either may be answered.
pub const SAME_NORMAL: f64 = 5e-4;
/// A normal whose z lies this close to the walkable threshold is undecided
/// (beyond the answer's own normal error bound).
pub const WALKABLE_Z_BAND: f64 = 1e-5;
/// The contract's normal tolerance (any component): an answer whose
/// normal may be farther from the truth falls back.
pub const MAX_NORMAL_ERR: f64 = 1e-3;
/// How far a piece's stored plane normal may lie from the normal of any of
/// its true triangles: the bake merges triangles into one flat group only
/// within 2e-4 rad of the group's first (`FLAT_NORMAL_TOL_RAD`), so any
/// two, and the fitted plane, are within twice that; plus `f32` storage.
pub const PIECE_NORMAL_ERR: f64 = 4e-4 + 1e-6;
/// An answer whose own error bound exceeds this cannot promise the 0.01 cm
/// contract (the rest is margin for f64 rounding). [Units: cm]
pub const MAX_CONTACT_ERR_CM: f64 = 0.008;
/// A primitive that cannot be touched until this long after a contact
/// already certain is skipped: beyond `decide`'s reach (best error plus two
/// margins), so it can neither be first nor conflict. [Units: cm]
pub const PRUNE_MARGIN_CM: f64 = 4.0 * Z_MARGIN_CM + MAX_CONTACT_ERR_CM;
/// Line-trace window: how far above the capsule bottom the trace starts.
/// [Units: cm]
pub const LINE_TRACE_ABOVE_CM: f64 = 2.0;
/// Depth of the BVH traversal stack; a deeper tree is a corrupt file.
pub const BVH_STACK: usize = 64;
/// How many of the earliest candidate contacts a query keeps; later ones
/// only count as undecided (they can veto an answer, never make one).
pub const MAX_CANDIDATES: usize = 12;
/// Largest 3-D error of a stored blocker vertex: half a fixed-point step on
/// each of the three axes. A blocker triangle (and each of its edges) lies
/// within this of the source triangle. [Units: cm]
pub const BLOCKER_VERTEX_ERR_CM: f64 = 0.5 * 1.732_050_807_568_877_2 / VERTEX_STEPS_PER_CM;
/// Sweep: slack added to every primitive's distance error bound for f64
/// evaluation (world ↔ tile frame, the closed forms) and the tilt of a
/// piece's f32 plane over one agent radius. [Units: cm]
pub const SWEEP_EVAL_SLACK_CM: f64 = 1e-5;
/// Sweep: a Hit is answered only when the true first contact, known to lie
/// in an interval around the reported one, is certainly within this of it
/// (the 0.01 cm contract less [`Z_MARGIN_CM`]). [Units: cm]
pub const SWEEP_MAX_ERR_CM: f64 = 0.01 - Z_MARGIN_CM;
/// Sweep: the BVH query box is the swept capsule's box grown by this; any
/// primitive outside it is farther than the radius from the capsule, error
/// bounds included. [Units: cm]
pub const SWEEP_BOX_MARGIN_CM: f64 = 1.0;
/// Sweep: most tiles one query reads (a move longer than a tile is refused).
pub const MAX_SWEEP_TILES: usize = 16;
