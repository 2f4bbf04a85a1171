//! Exact closed-form geometry for the oracle: vector helpers, segment/triangle
//! closest points, and the first time of contact of a translating upright
//! capsule against one triangle.
//!
//! Every triangle is double-sided: nothing here looks at winding except to
//! orient the inside test consistently with the triangle's own normal.

use crate::Vec3;

#[inline]
pub(crate) fn sub(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

#[inline]
pub(crate) fn add(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

#[inline]
pub(crate) fn scale(a: Vec3, k: f64) -> Vec3 {
    [a[0] * k, a[1] * k, a[2] * k]
}

#[inline]
pub(crate) fn dot(a: Vec3, b: Vec3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[inline]
pub(crate) fn cross(a: Vec3, b: Vec3) -> Vec3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

#[inline]
pub(crate) fn norm2(a: Vec3) -> f64 {
    dot(a, a)
}

/// Unit vector along `a`, or `None` for a zero / non-finite vector.
#[inline]
pub(crate) fn normalize(a: Vec3) -> Option<Vec3> {
    let n = norm2(a).sqrt();
    if n > 0.0 && n.is_finite() {
        Some(scale(a, 1.0 / n))
    } else {
        None
    }
}

/// A triangle with its unit normal (`None` when degenerate: then only its
/// edges and vertices take part in queries).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tri {
    pub v: [Vec3; 3],
    pub n: Option<Vec3>,
}

impl Tri {
    /// Builds a triangle; it counts as degenerate when its area is negligible
    /// against its longest edge (relative 1e-12), i.e. it is a segment or a point.
    pub(crate) fn new(v: [Vec3; 3]) -> Tri {
        let e0 = sub(v[1], v[0]);
        let e1 = sub(v[2], v[0]);
        let e2 = sub(v[2], v[1]);
        let c = cross(e0, e1);
        let longest2 = norm2(e0).max(norm2(e1)).max(norm2(e2));
        let n = if norm2(c) > 1e-24 * longest2 * longest2 {
            normalize(c)
        } else {
            None
        };
        Tri { v, n }
    }

    /// The same triangle translated by `-o`.
    pub(crate) fn relative_to(&self, o: Vec3) -> Tri {
        Tri {
            v: [sub(self.v[0], o), sub(self.v[1], o), sub(self.v[2], o)],
            n: self.n,
        }
    }

    /// Whether point `x` (assumed in the plane) lies inside the closed triangle.
    fn contains_planar(&self, n: Vec3, x: Vec3) -> bool {
        (0..3).all(|i| {
            let a = self.v[i];
            let b = self.v[(i + 1) % 3];
            dot(cross(sub(b, a), sub(x, a)), n) >= 0.0
        })
    }
}

/// Closest points of segments `[p1, q1]` and `[p2, q2]` (Ericson, RTCD §5.1.9),
/// degenerate segments allowed. Returns (squared distance, point on 1, point on 2).
fn closest_segment_segment(p1: Vec3, q1: Vec3, p2: Vec3, q2: Vec3) -> (f64, Vec3, Vec3) {
    let d1 = sub(q1, p1);
    let d2 = sub(q2, p2);
    let r = sub(p1, p2);
    let a = norm2(d1);
    let e = norm2(d2);
    let f = dot(d2, r);
    let (s, t);
    if a <= 0.0 && e <= 0.0 {
        s = 0.0;
        t = 0.0;
    } else if a <= 0.0 {
        s = 0.0;
        t = (f / e).clamp(0.0, 1.0);
    } else {
        let c = dot(d1, r);
        if e <= 0.0 {
            t = 0.0;
            s = (-c / a).clamp(0.0, 1.0);
        } else {
            let b = dot(d1, d2);
            let denom = a * e - b * b;
            let mut s0 = if denom > 0.0 {
                ((b * f - c * e) / denom).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let mut t0 = (b * s0 + f) / e;
            if t0 < 0.0 {
                t0 = 0.0;
                s0 = (-c / a).clamp(0.0, 1.0);
            } else if t0 > 1.0 {
                t0 = 1.0;
                s0 = ((b - c) / a).clamp(0.0, 1.0);
            }
            s = s0;
            t = t0;
        }
    }
    let c1 = add(p1, scale(d1, s));
    let c2 = add(p2, scale(d2, t));
    (norm2(sub(c1, c2)), c1, c2)
}

/// Closest points of segment `[a, b]` and triangle `tri`.
/// Returns (squared distance, point on the segment, point on the triangle).
pub(crate) fn closest_segment_triangle(a: Vec3, b: Vec3, tri: &Tri) -> (f64, Vec3, Vec3) {
    let mut best = (f64::INFINITY, a, tri.v[0]);
    if let Some(n) = tri.n {
        let sa = dot(n, sub(a, tri.v[0]));
        let sb = dot(n, sub(b, tri.v[0]));
        if sa * sb <= 0.0 && sa != sb {
            let tau = sa / (sa - sb);
            let x = add(a, scale(sub(b, a), tau));
            let x = sub(x, scale(n, dot(n, sub(x, tri.v[0]))));
            if tri.contains_planar(n, x) {
                return (0.0, x, x);
            }
        }
        for (e, s) in [(a, sa), (b, sb)] {
            let proj = sub(e, scale(n, s));
            if tri.contains_planar(n, proj) && s * s < best.0 {
                best = (s * s, e, proj);
            }
        }
    }
    for i in 0..3 {
        let (d2, on_seg, on_tri) = closest_segment_segment(a, b, tri.v[i], tri.v[(i + 1) % 3]);
        if d2 < best.0 {
            best = (d2, on_seg, on_tri);
        }
    }
    best
}

/// Smallest `s >= 0` with `A s² + 2 B s + C = 0` entering the region
/// `A s² + 2 B s + C <= 0` (`A >= 0`). A start already inside (`C <= 0`) that is
/// moving further in (`B < 0`) gives 0 so that round-off never hides a contact.
fn entering_root(a: f64, b: f64, c: f64) -> Option<f64> {
    if b >= 0.0 {
        return None;
    }
    if c <= 0.0 {
        return Some(0.0);
    }
    let disc = b * b - a * c;
    if disc < 0.0 {
        return None;
    }
    // Stable form of (-b - sqrt(disc)) / a.
    Some(c / (-b + disc.sqrt()))
}

/// A contact of the moving capsule with a triangle, in the triangle's frame
/// (relative to the capsule centre at the start).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Contact {
    /// Distance travelled along the unit direction.
    pub s: f64,
    /// Contact point on the triangle (unmoved triangle frame).
    pub point: Vec3,
    /// Unit normal from the triangle toward the capsule.
    pub normal: Vec3,
}

/// First contact of an upright capsule (axis from `(0,0,-h)` to `(0,0,h)`,
/// radius `r`) moving by `s·u` (`u` unit, `0 <= s <= max_s`) with `tri`, given
/// relative to the capsule centre. The capsule must not overlap `tri` at `s = 0`
/// (checked by the caller); a contact at exactly `max_s` counts.
///
/// The first contact is the smallest `s` over the feature pairs that can carry
/// the closest points: each end sphere against the face, the edges and the
/// vertices; the axis interior against the edges (lines) and the vertices.
pub(crate) fn cast_capsule_triangle(h: f64, r: f64, u: Vec3, max_s: f64, tri: &Tri) -> Option<Contact> {
    let mut best: Option<Contact> = None;
    let mut consider = |s: f64, point: Vec3, normal: Option<Vec3>| {
        if s.is_nan() || s > max_s {
            return;
        }
        if best.is_some_and(|b| b.s <= s) {
            return;
        }
        if let Some(normal) = normal {
            best = Some(Contact { s, point, normal });
        }
    };
    let ends: &[Vec3] = if h > 0.0 {
        &[[0.0, 0.0, -h], [0.0, 0.0, h]]
    } else {
        &[[0.0, 0.0, 0.0]]
    };
    let edges = [(0usize, 1usize), (1, 2), (2, 0)];

    for &end in ends {
        // End sphere against the face (either side).
        if let Some(n) = tri.n {
            let sd0 = dot(n, sub(end, tri.v[0]));
            if sd0 != 0.0 {
                let side = sd0.signum();
                let speed = -side * dot(n, u);
                if speed > 0.0 {
                    let s = (sd0.abs() - r).max(0.0) / speed;
                    let c = add(end, scale(u, s));
                    let x = sub(c, scale(n, dot(n, sub(c, tri.v[0]))));
                    if tri.contains_planar(n, x) {
                        consider(s, x, Some(scale(n, side)));
                    }
                }
            }
        }
        // End sphere against each edge (infinite cylinder, then the segment check).
        for &(i, j) in &edges {
            let p0 = tri.v[i];
            let e = sub(tri.v[j], p0);
            let ee = norm2(e);
            if ee <= 0.0 {
                continue;
            }
            let m = sub(end, p0);
            let m_perp = sub(m, scale(e, dot(m, e) / ee));
            let u_perp = sub(u, scale(e, dot(u, e) / ee));
            let a = norm2(u_perp);
            if a <= 0.0 {
                continue;
            }
            if let Some(s) = entering_root(a, dot(m_perp, u_perp), norm2(m_perp) - r * r) {
                let c = add(end, scale(u, s));
                let tau = dot(sub(c, p0), e) / ee;
                if (0.0..=1.0).contains(&tau) {
                    let x = add(p0, scale(e, tau));
                    consider(s, x, normalize(sub(c, x)));
                }
            }
        }
        // End sphere against each vertex.
        for &q in &tri.v {
            let m = sub(end, q);
            if let Some(s) = entering_root(norm2(u), dot(m, u), norm2(m) - r * r) {
                let c = add(end, scale(u, s));
                consider(s, q, normalize(sub(c, q)));
            }
        }
    }

    if h > 0.0 {
        let uxy = [u[0], u[1]];
        // Axis interior against each edge: the common perpendicular of a vertical
        // line and a non-vertical line is horizontal, so the distance is the 2-D
        // distance from the axis to the edge's projected line.
        for &(i, j) in &edges {
            let p0 = tri.v[i];
            let e = sub(tri.v[j], p0);
            let exy2 = e[0] * e[0] + e[1] * e[1];
            if exy2 <= 1e-24 * norm2(e) || exy2 <= 0.0 {
                continue; // vertical edge: parallel to the axis, end tests cover it
            }
            let len = exy2.sqrt();
            let eh = [e[0] / len, e[1] / len];
            // Signed 2-D distance of the axis (at xy = s·u_xy) from the edge line.
            let sd0 = -p0[0] * eh[1] + p0[1] * eh[0];
            let k = uxy[0] * eh[1] - uxy[1] * eh[0];
            if sd0 == 0.0 {
                continue;
            }
            let side = sd0.signum();
            let speed = -side * k;
            if speed <= 0.0 {
                continue;
            }
            let s = (sd0.abs() - r).max(0.0) / speed;
            let cxy = [s * uxy[0], s * uxy[1]];
            let tau = ((cxy[0] - p0[0]) * e[0] + (cxy[1] - p0[1]) * e[1]) / exy2;
            if !(0.0..=1.0).contains(&tau) {
                continue;
            }
            let x = add(p0, scale(e, tau));
            let z_rel = x[2] - s * u[2];
            if z_rel < -h || z_rel > h {
                continue;
            }
            consider(s, x, normalize([cxy[0] - x[0], cxy[1] - x[1], 0.0]));
        }
        // Axis interior against each vertex (infinite vertical cylinder).
        let a = uxy[0] * uxy[0] + uxy[1] * uxy[1];
        if a > 0.0 {
            for &q in &tri.v {
                let b = -(q[0] * uxy[0] + q[1] * uxy[1]);
                let c = q[0] * q[0] + q[1] * q[1] - r * r;
                if let Some(s) = entering_root(a, b, c) {
                    let z_rel = q[2] - s * u[2];
                    if z_rel < -h || z_rel > h {
                        continue;
                    }
                    let cxy = [s * uxy[0], s * uxy[1]];
                    consider(s, q, normalize([cxy[0] - q[0], cxy[1] - q[1], 0.0]));
                }
            }
        }
    }
    best
}

/// Height at which the vertical line through `(x, y)` meets `tri`, or `None`
/// when it misses or the triangle is vertical (parallel to the line).
///
/// Edge functions are evaluated with the edge's endpoints in a canonical order,
/// so two triangles sharing an edge classify points on it consistently (no
/// cracks along shared edges).
pub(crate) fn vertical_line_triangle(x: f64, y: f64, tri: &Tri) -> Option<f64> {
    let n = tri.n?;
    if n[2] == 0.0 {
        return None;
    }
    let v = tri.v;
    let area = (v[1][0] - v[0][0]) * (v[2][1] - v[0][1]) - (v[1][1] - v[0][1]) * (v[2][0] - v[0][0]);
    if area == 0.0 {
        return None;
    }
    let orient = area.signum();
    // w[k]: edge function of the edge opposite vertex k, signed so that the
    // inside of the triangle is positive.
    let mut w = [0.0; 3];
    for (k, wk) in w.iter_mut().enumerate() {
        let a = v[(k + 1) % 3];
        let b = v[(k + 2) % 3];
        let (p, q, flip) = if (a[0], a[1]) <= (b[0], b[1]) {
            (a, b, 1.0)
        } else {
            (b, a, -1.0)
        };
        let f = (q[0] - p[0]) * (y - p[1]) - (q[1] - p[1]) * (x - p[0]);
        *wk = f * flip * orient;
        if *wk < 0.0 {
            return None;
        }
    }
    let sum = w[0] + w[1] + w[2];
    if sum.is_nan() || sum <= 0.0 {
        return None;
    }
    Some((w[0] * v[0][2] + w[1] * v[1][2] + w[2] * v[2][2]) / sum)
}
