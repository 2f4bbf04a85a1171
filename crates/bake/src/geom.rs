//! Plane geometry the bake stages share: boxes, areas, convex clipping.

use walksurf_format::MAX_PIECE_VERTICES;

/// Area of a convex polygon (either orientation) clipped to a box, without
/// allocating. A polygon of more than [`MAX_PIECE_VERTICES`] vertices
/// counts as 0 (it then covers nothing: no certificate).
pub fn clipped_area(poly: &[[f64; 2]], lo: [f64; 2], hi: [f64; 2]) -> f64 {
    // Each of the four cuts adds at most one vertex to a convex polygon.
    const CAP: usize = MAX_PIECE_VERTICES + 4;
    if poly.len() > MAX_PIECE_VERTICES {
        return 0.0;
    }
    let mut bufs = [[[0.0; 2]; CAP]; 2];
    bufs[0][..poly.len()].copy_from_slice(poly);
    let mut n = poly.len();
    // (`at`: the buffer holding the polygon so far.)
    let mut at = 0;
    for (axis, bound, keep_below) in [(0, lo[0], false), (0, hi[0], true), (1, lo[1], false), (1, hi[1], true)] {
        let [a, b] = &mut bufs;
        let (src, dst) = if at == 0 { (&*a, b) } else { (&*b, a) };
        let inside = |v: [f64; 2]| if keep_below { v[axis] <= bound } else { v[axis] >= bound };
        // A cut that keeps every vertex gives them back in order: skip it.
        if src[..n].iter().all(|&v| inside(v)) {
            continue;
        }
        at = 1 - at;
        let mut m = 0;
        let mut prev = src[n - 1];
        for &cur in &src[..n] {
            let (pi, ci) = (inside(prev), inside(cur));
            if pi != ci && m < CAP {
                let t = (bound - prev[axis]) / (cur[axis] - prev[axis]);
                let mut r = [prev[0] + t * (cur[0] - prev[0]), prev[1] + t * (cur[1] - prev[1])];
                r[axis] = bound;
                dst[m] = r;
                m += 1;
            }
            if ci && m < CAP {
                dst[m] = cur;
                m += 1;
            }
            prev = cur;
        }
        if m < 3 {
            return 0.0;
        }
        n = m;
    }
    polygon_area(&bufs[at][..n])
}

/// Twice the signed area of a polygon (positive counter-clockwise).
pub fn signed_area2(p: &[[f64; 2]]) -> f64 {
    let Some(&last) = p.last() else {
        return 0.0;
    };
    let mut area2 = 0.0;
    let mut prev = last;
    for &cur in p {
        area2 += prev[0] * cur[1] - cur[0] * prev[1];
        prev = cur;
    }
    area2
}

/// Area of a simple polygon (either orientation).
pub fn polygon_area(p: &[[f64; 2]]) -> f64 {
    (signed_area2(p) / 2.0).abs()
}

/// Area of the intersection of two convex polygons (either orientation):
/// `a` clipped by every edge line of `b`.
pub fn convex_overlap_area(a: &[[f64; 2]], b: &[[f64; 2]]) -> f64 {
    let signed = |p: &[[f64; 2]]| {
        let n = p.len();
        (0..n)
            .map(|i| p[i][0] * p[(i + 1) % n][1] - p[(i + 1) % n][0] * p[i][1])
            .sum::<f64>()
            / 2.0
    };
    let orient = signed(b).signum();
    if orient == 0.0 {
        return 0.0;
    }
    let mut poly: Vec<[f64; 2]> = a.to_vec();
    let n = b.len();
    for i in 0..n {
        let (p, q) = (b[i], b[(i + 1) % n]);
        let side = |v: [f64; 2]| orient * ((q[0] - p[0]) * (v[1] - p[1]) - (q[1] - p[1]) * (v[0] - p[0]));
        let mut out = Vec::with_capacity(poly.len() + 1);
        for j in 0..poly.len() {
            let (u, v) = (poly[(j + poly.len() - 1) % poly.len()], poly[j]);
            let (su, sv) = (side(u), side(v));
            let cut = || {
                let t = su / (su - sv);
                [u[0] + t * (v[0] - u[0]), u[1] + t * (v[1] - u[1])]
            };
            match (su >= 0.0, sv >= 0.0) {
                (true, true) => out.push(v),
                (true, false) => out.push(cut()),
                (false, true) => {
                    out.push(cut());
                    out.push(v);
                }
                (false, false) => {}
            }
        }
        poly = out;
        if poly.len() < 3 {
            return 0.0;
        }
    }
    signed(&poly).abs()
}

/// The smaller of `a` and `b` by one comparison: `b` unless `a < b`. For
/// the bake's hot loops over finite coordinates, where `f64::min`'s NaN
/// handling costs extra dependent instructions; the same value whenever
/// neither is NaN (up to the sign of a zero).
#[inline(always)]
pub fn lesser(a: f64, b: f64) -> f64 {
    if a < b { a } else { b }
}

/// The larger of `a` and `b` by one comparison (see [`lesser`]).
#[inline(always)]
pub fn greater(a: f64, b: f64) -> f64 {
    if a > b { a } else { b }
}

/// The least over the four corners `v` of the box `[lo, hi]` (`lo ≤ hi`)
/// of `s[0]·(v[1] − p[1]) − s[1]·(v[0] − p[0])`: the side of `v` of the line
/// through `p` along `s`, evaluated at one corner only. The rounded
/// expression is monotone in each coordinate of `v` (the direction given by
/// the signs of `s`), so the corner where exact arithmetic has it least has
/// it least rounded too. The greatest is `−least_side(p, −s, ..)` (rounding
/// is symmetric).
pub fn least_side(p: [f64; 2], s: [f64; 2], lo: [f64; 2], hi: [f64; 2]) -> f64 {
    let v0 = if s[1] > 0.0 { hi[0] } else { lo[0] };
    let v1 = if s[0] > 0.0 { lo[1] } else { hi[1] };
    s[0] * (v1 - p[1]) - s[1] * (v0 - p[0])
}

/// `f64` bits as a `u64` with the same order as the numbers (−0 = +0;
/// positions are never NaN).
pub fn ordered_bits(v: f64) -> u64 {
    let b = if v == 0.0 { 0.0f64 } else { v }.to_bits();
    if b >> 63 == 0 { b | 1 << 63 } else { !b }
}

/// A position as a sort key: lexicographic by x, y, z, as numbers. Stages
/// whose output must not depend on how the input numbers its vertices
/// order them by this.
pub fn position_key(p: [f64; 3]) -> [u64; 3] {
    p.map(ordered_bits)
}

/// The XY box of points given as `[x, y, ...]`.
pub fn xy_box<const N: usize>(p: &[[f64; N]]) -> ([f64; 2], [f64; 2]) {
    let mut lo = [f64::INFINITY; 2];
    let mut hi = [f64::NEG_INFINITY; 2];
    for v in p {
        for k in 0..2 {
            lo[k] = lesser(v[k], lo[k]);
            hi[k] = greater(v[k], hi[k]);
        }
    }
    (lo, hi)
}

/// Horizontal distance from `p` to the segment `a b`.
pub fn segment_xy_distance(p: [f64; 2], a: [f64; 3], b: [f64; 3]) -> f64 {
    walksurf_format::segment_xy_dist2(p, [a[0], a[1]], [b[0], b[1]]).sqrt()
}

/// A small deterministic generator for tests: a 64-bit LCG, read by its
/// high bits.
#[cfg(test)]
pub(crate) struct TestRng(u64);

#[cfg(test)]
impl TestRng {
    pub(crate) fn new(seed: u64) -> TestRng {
        TestRng(seed)
    }

    /// 31 random bits.
    pub(crate) fn bits(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    /// Uniform in `[0, 1)`.
    pub(crate) fn unit(&mut self) -> f64 {
        self.bits() as f64 / (1u64 << 31) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Rectangles (either orientation, vertices from any corner) against
    // boxes: the clipped area is the overlap of the two boxes, whichever
    // of the four cuts do nothing.
    #[test]
    fn clipped_area_of_a_rectangle_is_the_box_overlap() {
        let mut rng = TestRng::new(3);
        let coord = |rng: &mut TestRng| (rng.bits() % 9) as f64 * 5.0;
        for _ in 0..5000 {
            let (x, y) = ([coord(&mut rng), coord(&mut rng)], [coord(&mut rng), coord(&mut rng)]);
            let (b0, b1) = ([coord(&mut rng), coord(&mut rng)], [coord(&mut rng), coord(&mut rng)]);
            let (plo, phi) = ([x[0].min(x[1]), y[0].min(y[1])], [x[0].max(x[1]), y[0].max(y[1])]);
            let (blo, bhi) = (
                [b0[0].min(b1[0]), b0[1].min(b1[1])],
                [b0[0].max(b1[0]), b0[1].max(b1[1])],
            );
            let mut poly = vec![plo, [phi[0], plo[1]], phi, [plo[0], phi[1]]];
            poly.rotate_left(rng.bits() as usize % 4);
            if rng.bits().is_multiple_of(2) {
                poly.reverse();
            }
            let w = |k: usize| (phi[k].min(bhi[k]) - plo[k].max(blo[k])).max(0.0);
            let want = w(0) * w(1);
            let got = clipped_area(&poly, blo, bhi);
            // (A clip down to a sliver of fewer than three vertices, or a
            // degenerate rectangle, counts as 0 either way.)
            assert!(
                (got - want).abs() < 1e-9,
                "{poly:?} in {blo:?}..{bhi:?}: {got} vs {want}"
            );
        }
    }
}
