//! The two precision paths (issue #3 item 6; the seed's `EPrecisionPath`):
//! where a query gets a piece's z error bound.
//!
//! * [`PrecisionPath::Fast`] (the default) reads the piece's `z_err_cm`
//!   slot: O(1).
//! * [`PrecisionPath::Reference`] recomputes the bound on every use from
//!   the precision block the slot was filled from — the tile's
//!   [`PatchRecord`] and the piece's vertices — with the bake's own
//!   [`walksurf_format::piece_z_err_cm`] (a linear scan of the vertices).
//!   A piece without a (finite) patch record gets no bound: the query falls
//!   back with `PrecisionBudget`. A flat-floor certificate carries a copy of
//!   its pieces' bound; Reference replaces it with the largest recomputed
//!   bound of the pieces with the certificate's plane under the query's
//!   reach of the cell (see [`cert_z_err_reference`]), and takes the full
//!   path when it finds none.
//!
//! On a consistent file the two paths use bit-identical bounds, so they
//! decide every query identically (`tests/precision_paths.rs` checks it on
//! the shared levels); on a file whose slots disagree with their patch
//! records they differ, and Reference is the one to believe.

use crate::bvh::Walk;
use crate::query::FallbackReason;
use crate::tile_geom::Frame;
use crate::tolerance::EDGE_BAND_CM;
use walksurf_format::{CERT_CELL_CM, Cert, PatchRecord, PieceHeader, VERTEX_STEPS_PER_CM, VertexFixed, piece_z_err_cm};

/// Where queries get a piece's z error bound (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PrecisionPath {
    /// The bound the bake stored in the piece header: O(1).
    #[default]
    Fast,
    /// The bound recomputed per use from the tile's patch record and the
    /// piece's vertices: linear in the vertex count, for checking `Fast`.
    Reference,
}

/// A piece's z error bound recomputed from its patch record (the Reference
/// path). `Err(PrecisionBudget)` when the tile has no record for the
/// piece's patch or the record (or the bound) is not finite: no guessing.
pub(crate) fn piece_z_err_reference(
    patches: &[PatchRecord],
    header: &PieceHeader,
    verts: &[VertexFixed],
) -> Result<f64, FallbackReason> {
    let record = patches
        .get(header.patch.get() as usize)
        .ok_or(FallbackReason::PrecisionBudget)?;
    let exact = [record.plane_a.get(), record.plane_b.get(), record.plane_c.get()];
    let fit_err = record.fit_err_cm.get();
    // (`piece_z_err_cm`'s max would skip a NaN plane: refuse it here.)
    if !(exact.iter().all(|v| v.is_finite()) && fit_err.is_finite() && fit_err >= 0.0) {
        return Err(FallbackReason::PrecisionBudget);
    }
    let stored = [header.plane_a.get(), header.plane_b.get(), header.plane_c.get()];
    let z_err = piece_z_err_cm(stored, exact, fit_err, verts.iter().map(|v| [v.x.get(), v.y.get()])) as f64;
    if z_err.is_finite() {
        Ok(z_err)
    } else {
        Err(FallbackReason::PrecisionBudget)
    }
}

/// A certificate's z error bound recomputed for a query centred in cell
/// `(i, j)` that reaches `r` around its centre (0 for a line trace): the
/// largest [`piece_z_err_reference`] of the tile's pieces whose stored
/// plane is the certificate's and whose polygon meets the cell grown by
/// `r` (plus the edge band). `Ok(None)`: there is none, the certificate
/// is not borne out (take the full path).
///
/// Why those pieces: the bake certifies a plane in a cell only where one of
/// its pieces meets the cell, and not where a piece with the same stored
/// plane but another stored bound meets the cell grown by the largest agent
/// radius (plus a margin wider than the band). So on a consistent file every
/// piece found here is one the certificate's bound was copied from, and the
/// maximum is that bound, bit for bit.
pub(crate) fn cert_z_err_reference(
    f: &Frame<'_>,
    cert: &Cert,
    (i, j): (usize, usize),
    r: f64,
) -> Result<Option<f64>, FallbackReason> {
    let grow = r + EDGE_BAND_CM;
    let lo = [i as f64 * CERT_CELL_CM - grow, j as f64 * CERT_CELL_CM - grow];
    let hi = [
        (i + 1) as f64 * CERT_CELL_CM + grow,
        (j + 1) as f64 * CERT_CELL_CM + grow,
    ];
    let q = f.query_box([lo[0], lo[1], f64::NEG_INFINITY], [hi[0], hi[1], f64::INFINITY]);
    let plane = [cert.a.get().to_bits(), cert.b.get().to_bits(), cert.k.get().to_bits()];
    let mut bound: Option<f64> = None;
    let mut failed = None;
    let walk = f.visit_pieces(&q, |word| {
        let Some((header, verts)) = f.tile.piece(word) else {
            failed = Some(FallbackReason::MissingData);
            return false;
        };
        let stored = [header.plane_a.get(), header.plane_b.get(), header.plane_c.get()].map(f32::to_bits);
        if stored != plane || !polygon_meets_box(verts, lo, hi) {
            return true;
        }
        match piece_z_err_reference(f.tile.patches, header, verts) {
            Ok(e) => bound = Some(bound.map_or(e, |b| b.max(e))),
            Err(e) => {
                failed = Some(e);
                return false;
            }
        }
        true
    });
    match walk {
        Ok(()) => {}
        Err(Walk::Corrupt) => return Err(FallbackReason::MissingData),
        Err(Walk::TooDeep) => return Err(FallbackReason::BudgetExceeded),
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(bound),
    }
}

/// Whether the convex polygon `verts` (fixed point, either orientation)
/// meets the box `[lo, hi]` (cm): no box axis and no polygon edge separates
/// them. A degenerate polygon meets it when their bounding boxes do (more
/// pieces only make the reference bound more conservative).
fn polygon_meets_box(verts: &[VertexFixed], lo: [f64; 2], hi: [f64; 2]) -> bool {
    let s = VERTEX_STEPS_PER_CM;
    let (lo, hi) = ([lo[0] * s, lo[1] * s], [hi[0] * s, hi[1] * s]);
    let p = |v: &VertexFixed| [v.x.get() as f64, v.y.get() as f64];
    let (mut plo, mut phi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    let mut area2 = 0.0;
    let mut prev = verts.last().map_or([0.0; 2], p);
    for v in verts {
        let q = p(v);
        for k in 0..2 {
            plo[k] = plo[k].min(q[k]);
            phi[k] = phi[k].max(q[k]);
        }
        area2 += prev[0] * q[1] - prev[1] * q[0];
        prev = q;
    }
    if phi[0] < lo[0] || plo[0] > hi[0] || phi[1] < lo[1] || plo[1] > hi[1] {
        return false;
    }
    if area2 == 0.0 {
        return true;
    }
    let corners = [lo, [hi[0], lo[1]], hi, [lo[0], hi[1]]];
    let mut prev = verts.last().map_or([0.0; 2], p);
    for v in verts {
        let q = p(v);
        let (ex, ey) = (q[0] - prev[0], q[1] - prev[1]);
        // Every corner strictly outside this edge (the side away from the
        // polygon's interior): separated.
        if corners
            .iter()
            .all(|c| area2.signum() * (ex * (c[1] - prev[1]) - ey * (c[0] - prev[0])) < 0.0)
        {
            return false;
        }
        prev = q;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Surface;
    use walksurf_format::CERT_CELLS;

    /// The polygon through `points` (cm), or through them reversed.
    fn polygon(points: &[[i32; 2]], ccw: bool) -> Vec<VertexFixed> {
        let s = VERTEX_STEPS_PER_CM as i32;
        let mut v: Vec<VertexFixed> = points
            .iter()
            .map(|&[x, y]| VertexFixed {
                x: (x * s).into(),
                y: (y * s).into(),
            })
            .collect();
        if !ccw {
            v.reverse();
        }
        v
    }

    /// A triangle and a box: separated by its hypotenuse only (the boxes
    /// overlap), then touching; either orientation.
    #[test]
    fn polygon_box_separation() {
        for ccw in [true, false] {
            let tri = polygon(&[[0, 0], [10, 0], [0, 10]], ccw);
            assert!(!polygon_meets_box(&tri, [6.0, 6.0], [9.0, 9.0]), "ccw {ccw}");
            assert!(polygon_meets_box(&tri, [4.0, 4.0], [9.0, 9.0]), "ccw {ccw}");
            assert!(polygon_meets_box(&tri, [-5.0, -5.0], [0.0, 0.0]), "ccw {ccw}");
            assert!(!polygon_meets_box(&tri, [-5.0, -5.0], [-0.001, 20.0]), "ccw {ccw}");
            let sq = polygon(&[[0, 0], [10, 0], [10, 10], [0, 10]], ccw);
            assert!(polygon_meets_box(&sq, [2.0, 2.0], [3.0, 3.0]), "box inside, ccw {ccw}");
            assert!(
                polygon_meets_box(&sq, [-20.0, -20.0], [30.0, 30.0]),
                "polygon inside, ccw {ccw}"
            );
        }
    }

    /// On a baked level, every certificate's recomputed bound is its stored
    /// one, bit for bit, for a line trace, a small agent and the largest:
    /// the Reference path takes every certificate fast path Fast takes.
    #[test]
    fn cert_bounds_recompute_exactly() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/dungeon.obj");
        let config = walksurf_bake::BakeConfig::default();
        let baked = walksurf_bake::bake_file(std::path::Path::new(path), &config, 1, &walksurf_bake::Silent)
            .expect("bake dungeon");
        let surface = Surface::from_bytes(&baked.bytes).expect("open");
        let view = surface.view().expect("view");
        let r_max = surface.bake_params().max_agent_radius_cm.get() as f64;
        let mut checked = 0;
        for hot in view.hot {
            let tile = view.tile(hot).expect("tile");
            let f = Frame {
                origin: tile.origin_cm(),
                quant: tile.quant(),
                tile,
                path: PrecisionPath::Reference,
            };
            for j in 0..CERT_CELLS {
                for i in 0..CERT_CELLS {
                    for cert in tile.certs_in_cell(i, j) {
                        for r in [0.0, 20.0, r_max] {
                            let got = f.cert_z_err(cert, (i, j), r).expect("patch records");
                            let want = cert.z_err_cm.get() as f64;
                            assert_eq!(
                                got.map(f64::to_bits),
                                Some(want.to_bits()),
                                "tile {:?} cell ({i}, {j}) r {r}: {got:?} vs stored {want}",
                                (hot.tile_x.get(), hot.tile_y.get())
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
        println!("{checked} certificate bounds recomputed");
        assert!(checked > 1000, "only {checked} certificate bounds checked");
    }
}
