//! Named tolerances of the bake, in one place.

/// Extra halo beyond the largest agent radius.
pub const HALO_SLACK_CM: f64 = 8.0;
/// A triangle whose doubled area is below this is degenerate. [Units: cm²]
pub const DEGENERATE_AREA2_CM2: f64 = 1e-6;
/// Coordinates beyond this magnitude are refused. [Units: cm]
pub const MAX_COORD_CM: f64 = 1.0e8;
/// Triangles share one plane as a convex piece only when their normals lie
/// within this of the group's first: then any contact normal on a crease
/// between them is within 2× this of the piece's normal, well inside the
/// 1e-3 normal tolerance of the contract. [Units: radians]
pub const FLAT_NORMAL_TOL_RAD: f64 = 2e-4;
/// Extra inset a certified floor must have from its piece's edges: the
/// runtime's edge band (quantisation of the piece's vertices). [Units: cm]
pub const CERT_BAND_CM: f64 = 0.005;
/// How far above a capsule resting on a certified floor (its plane plus the
/// largest agent's height) a certificate still lists primitives by their
/// footprints; higher ones bound its clearance instead. [Units: cm]
pub const CERT_LIST_SLACK_CM: f64 = 50.0;
/// Headroom: geometry at most this high above a piece's plane is the
/// piece's own edge or a coplanar neighbour (plane fits and quantisation
/// differ by far less), not something over it. [Units: cm]
pub const HEADROOM_TOUCH_CM: f64 = 1.0;
/// Headroom: geometry within this of a piece's edge (XY) is beside the
/// piece, not over it (quantisation of the piece's vertices is far less).
/// [Units: cm]
pub const HEADROOM_EDGE_CM: f64 = 0.01;
/// Seams: two boundary edges of one flat group (each used by one of its
/// triangles only) lying within this of each other's line (XY) meet at a
/// seam, a T-junction or vertices that were not welded. [Units: cm]
pub const SEAM_NEAR_CM: f64 = 0.01;
/// A seam whose two sides stay within this of each other (3-D) is
/// continuous: a step this small tilts the contact normal of a sphere of
/// radius r ≥ 0.2 cm by at most 1e-3 (√(2·h/r)); a smaller agent, or a line
/// trace into a crack narrower than this, is not covered. Beyond it the true
/// surface may step or open there. [Units: cm]
pub const SEAM_CONTINUOUS_CM: f64 = 1e-7;
