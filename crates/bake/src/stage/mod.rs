//! The bake pipeline, one stage per module, in pipeline order.

pub mod certificates;
pub mod classify;
pub mod contour;
pub mod convex_partition;
pub mod coplanar_merge;
pub mod grid;
pub mod hidden;
pub mod ingest;
pub mod layout;
pub mod tiling;
