//! Closed-form contacts of a sphere moving straight down, and distances from
//! a vertical segment (the capsule's axis) to triangles. Ericson, *Real-Time
//! Collision Detection* §5.1 (closest points), §5.5 (moving sphere).
//!
//! All coordinates are one tile's frame (cm); the caller adds error bounds.

pub type V3 = [f64; 3];

#[inline]
pub fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
#[inline]
pub fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}
#[inline]
pub fn scale(a: V3, s: f64) -> V3 {
    [a[0] * s, a[1] * s, a[2] * s]
}
#[inline]
pub fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
#[inline]
pub fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}
#[inline]
pub fn len(a: V3) -> f64 {
    dot(a, a).sqrt()
}

/// A contact of the sphere moving down: the distance moved and the contact
/// point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    pub t: f64,
    pub point: V3,
}

/// The interval of `t` during which the sphere moving down touches or
/// overlaps the whole segment `p0 → p1` (distance ≤ `r`), with the contact
/// point at its start; `None` if never. The distance along the motion is
/// convex, so the set is one interval: the union of the endpoints' and the
/// interior's intervals.
#[cfg(test)]
pub fn sphere_down_segment_interval(c: V3, r: f64, p0: V3, p1: V3) -> Option<(Contact, f64)> {
    SegmentCast::new(c, p0, p1).interval(r)
}

/// Horizontal distance² from `c` to the XY box of the segment: a cheap lower
/// bound of its distance.
#[inline]
pub fn segment_box_dist2(c: V3, p0: V3, p1: V3) -> f64 {
    let gap = |v: f64, a: f64, b: f64| (a.min(b) - v).max(v - a.max(b)).max(0.0);
    let (gx, gy) = (gap(c[0], p0[0], p1[0]), gap(c[1], p0[1], p1[1]));
    gx * gx + gy * gy
}

/// Horizontal distance² from `c` to the segment's XY projection.
#[inline]
pub fn segment_xy_dist2(c: V3, p0: V3, p1: V3) -> f64 {
    walksurf_format::segment_xy_dist2([c[0], c[1]], [p0[0], p0[1]], [p1[0], p1[1]])
}

/// The radius-independent part of [`sphere_down_segment_interval`], so one
/// segment can be asked for several radii (nominal, grown, shrunk) at the
/// cost of one.
#[derive(Clone, Copy, Debug)]
pub struct SegmentCast {
    c: V3,
    p0: V3,
    p1: V3,
    /// Horizontal distance² from the centre to each endpoint.
    h2: [f64; 2],
    /// Horizontal distance² from the centre to the segment's XY box.
    box2: f64,
    /// Unit direction, length, and the line terms (see the interval).
    u: V3,
    l: f64,
    a: f64,
    b: f64,
    w0p2: f64,
    along0: f64,
}

impl SegmentCast {
    pub fn new(c: V3, p0: V3, p1: V3) -> SegmentCast {
        let h2 = [p0, p1].map(|v| (c[0] - v[0]).powi(2) + (c[1] - v[1]).powi(2));
        let d = sub(p1, p0);
        let l = len(d);
        let (mut u, mut a, mut b, mut w0p2, mut along0) = ([0.0; 3], 0.0, 0.0, 0.0, 0.0);
        if l > 0.0 {
            u = scale(d, 1.0 / l);
            let w0 = sub(c, p0);
            along0 = dot(w0, u);
            let w0p = sub(w0, scale(u, along0));
            let zp = sub([0.0, 0.0, 1.0], scale(u, u[2]));
            a = dot(zp, zp);
            b = dot(w0p, zp);
            w0p2 = dot(w0p, w0p);
        }
        SegmentCast {
            c,
            p0,
            p1,
            h2,
            box2: segment_box_dist2(c, p0, p1),
            u,
            l,
            a,
            b,
            w0p2,
            along0,
        }
    }

    /// The interval of `t` during which the sphere of radius `r` touches or
    /// overlaps the segment, with the contact point at its start.
    pub fn interval(&self, r: f64) -> Option<(Contact, f64)> {
        if self.box2 > r * r {
            return None;
        }
        let mut first: Option<Contact> = None;
        let mut last = f64::NEG_INFINITY;
        let mut take = |t_in: f64, t_out: f64, point: V3| {
            if t_in <= t_out {
                if first.is_none_or(|f| t_in < f.t) {
                    first = Some(Contact { t: t_in, point });
                }
                last = last.max(t_out);
            }
        };
        for (v, h2) in [(self.p0, self.h2[0]), (self.p1, self.h2[1])] {
            if h2 <= r * r {
                let s = (r * r - h2).sqrt();
                take(self.c[2] - v[2] - s, self.c[2] - v[2] + s, v);
            }
        }
        let (a, b, u, l) = (self.a, self.b, self.u, self.l);
        let disc = b * b - a * (self.w0p2 - r * r);
        if l > 0.0 && a >= 1e-12 && disc >= 0.0 {
            let (mut t1, mut t2) = ((b - disc.sqrt()) / a, (b + disc.sqrt()) / a);
            // Keep the times whose closest point is inside the segment.
            if u[2].abs() > 0.0 {
                let (ta, tb) = (self.along0 / u[2], (self.along0 - l) / u[2]);
                t1 = t1.max(ta.min(tb));
                t2 = t2.min(ta.max(tb));
            } else if !(0.0..=l).contains(&self.along0) {
                t2 = t1 - 1.0;
            }
            let along = self.along0 - t1 * u[2];
            take(t1, t2, add(self.p0, scale(u, along.clamp(0.0, l))));
        }
        first.map(|f| (f, last))
    }
}

/// How far (XY) from its face contact point a sphere of radius `r` moving
/// down may touch a point of the same plane (whose slope is at most
/// `slope`) by the time it has gone `s` farther than the face contact: an
/// upper bound.
///
/// After the further descent `s` the sphere meets the plane in a circle of
/// radius `√(2·r·s·n_z − s²·n_z²) ≤ √(2·r·s)` whose centre has moved
/// `s·sin θ ≤ s·slope` down the slope from the face contact point; an XY
/// distance is at most the in-plane one.
#[inline]
pub fn reach_after_descent(s: f64, r: f64, slope: f64) -> f64 {
    (2.0 * r * s).sqrt() + s * slope
}

/// `√(1 + a² + b²)` of the plane `z = a·x + b·y + k` (the length of its
/// normal `(−a, −b, 1)`), without the square root for a level plane (most
/// floors; the same value).
#[inline]
pub fn plane_root(a: f64, b: f64) -> f64 {
    if a == 0.0 && b == 0.0 {
        1.0
    } else {
        (a * a + b * b + 1.0).sqrt()
    }
}

/// Sphere moving down onto the upper side of the plane `z = a·x + b·y + k`
/// (contact point anywhere on the plane; the caller tests it is inside).
pub fn sphere_down_plane(c: V3, r: f64, a: f64, b: f64, k: f64) -> Contact {
    sphere_down_plane_normal(c, r, a, b, k).0
}

/// [`sphere_down_plane`] and the plane's unit normal, which it computes on
/// the way (the same bits as `tile_geom::plane_normal`).
#[inline]
pub fn sphere_down_plane_normal(c: V3, r: f64, a: f64, b: f64, k: f64) -> (Contact, V3) {
    let n_len = plane_root(a, b);
    let t = c[2] - (a * c[0] + b * c[1] + k) - r * n_len;
    let n = [-a / n_len, -b / n_len, 1.0 / n_len];
    let centre = [c[0], c[1], c[2] - t];
    let contact = Contact {
        t,
        point: sub(centre, scale(n, r)),
    };
    (contact, n)
}

/// Closest point of triangle `abc` to `p` (Ericson §5.1.5).
pub fn closest_point_triangle(p: V3, a: V3, b: V3, c: V3) -> V3 {
    let ab = sub(b, a);
    let ac = sub(c, a);
    let ap = sub(p, a);
    let d1 = dot(ab, ap);
    let d2 = dot(ac, ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        return a;
    }
    let bp = sub(p, b);
    let d3 = dot(ab, bp);
    let d4 = dot(ac, bp);
    if d3 >= 0.0 && d4 <= d3 {
        return b;
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return add(a, scale(ab, d1 / (d1 - d3)));
    }
    let cp = sub(p, c);
    let d5 = dot(ab, cp);
    let d6 = dot(ac, cp);
    if d6 >= 0.0 && d5 <= d6 {
        return c;
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return add(a, scale(ac, d2 / (d2 - d6)));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return add(b, scale(sub(c, b), (d4 - d3) / ((d4 - d3) + (d5 - d6))));
    }
    let denom = 1.0 / (va + vb + vc);
    add(a, add(scale(ab, vb * denom), scale(ac, vc * denom)))
}

/// Distance between segments `p1q1` and `p2q2` (Ericson §5.1.9).
pub fn segment_segment_distance(p1: V3, q1: V3, p2: V3, q2: V3) -> f64 {
    let d1 = sub(q1, p1);
    let d2 = sub(q2, p2);
    let r = sub(p1, p2);
    let a = dot(d1, d1);
    let e = dot(d2, d2);
    let f = dot(d2, r);
    let (s, t);
    if a <= f64::EPSILON && e <= f64::EPSILON {
        return len(r);
    }
    if a <= f64::EPSILON {
        s = 0.0;
        t = (f / e).clamp(0.0, 1.0);
    } else {
        let c = dot(d1, r);
        if e <= f64::EPSILON {
            t = 0.0;
            s = (-c / a).clamp(0.0, 1.0);
        } else {
            let b = dot(d1, d2);
            let denom = a * e - b * b;
            let s0 = if denom > 0.0 {
                ((b * f - c * e) / denom).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let t0 = (b * s0 + f) / e;
            if t0 < 0.0 {
                t = 0.0;
                s = (-c / a).clamp(0.0, 1.0);
            } else if t0 > 1.0 {
                t = 1.0;
                s = ((b - c) / a).clamp(0.0, 1.0);
            } else {
                t = t0;
                s = s0;
            }
        }
    }
    len(sub(add(p1, scale(d1, s)), add(p2, scale(d2, t))))
}

/// Distance from the vertical segment `x = c.x, y = c.y, z ∈ [z0, z1]` to
/// triangle `abc`.
pub fn vertical_segment_triangle_distance(cx: f64, cy: f64, z0: f64, z1: f64, tri: [V3; 3]) -> f64 {
    let [a, b, c] = tri;
    // Does the segment pierce the triangle?
    let n = cross(sub(b, a), sub(c, a));
    if n[2] != 0.0 {
        let e = |p: V3, q: V3| (q[0] - p[0]) * (cy - p[1]) - (q[1] - p[1]) * (cx - p[0]);
        let (s0, s1, s2) = (e(a, b), e(b, c), e(c, a));
        let inside = (s0 >= 0.0 && s1 >= 0.0 && s2 >= 0.0) || (s0 <= 0.0 && s1 <= 0.0 && s2 <= 0.0);
        if inside {
            let z = a[2] - (n[0] * (cx - a[0]) + n[1] * (cy - a[1])) / n[2];
            if (z0..=z1).contains(&z) {
                return 0.0;
            }
        }
    }
    let p = [cx, cy, z0];
    let q = [cx, cy, z1];
    let mut d = len(sub(p, closest_point_triangle(p, a, b, c))).min(len(sub(q, closest_point_triangle(q, a, b, c))));
    for (u, v) in [(a, b), (b, c), (c, a)] {
        d = d.min(segment_segment_distance(p, q, u, v));
    }
    d
}

// ---------------------------------------------------------------------------
// Horizontal sweep: the capsule moving sideways (Ericson §5.5; the feature
// pairs of the oracle's capsule cast).
//
// Frame: relative to the capsule centre at the start of the move. The axis
// is the segment (0,0,−h)..(0,0,h); it moves by s·u (u unit, horizontal),
// s ≥ 0. Each function gives the first s at which the distance between the
// moving part and the feature drops to `rho` (the "entering" root): a
// feature already within `rho` and approaching gives 0, one within `rho` and
// receding gives nothing (the caller checks the start separately).

/// A contact of the moving capsule: distance moved, the touched point, and
/// the unit normal from that point toward the capsule axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepContact {
    pub s: f64,
    pub point: V3,
    pub normal: V3,
}

/// Smallest `s ≥ 0` at which `a·s² + 2·b·s + c` (a squared distance minus
/// `rho²`, `a ≥ 0`) enters `≤ 0`; `Some(0)` if it starts inside while
/// decreasing; `None` if it never decreases into the region.
#[inline]
pub fn entering_root(a: f64, b: f64, c: f64) -> Option<f64> {
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
    // Stable form of (−b − √disc) / a.
    Some(c / (-b + disc.sqrt()))
}

#[inline]
fn unit_or(v: V3, fallback: V3) -> V3 {
    let l = len(v);
    if l > 0.0 && l.is_finite() {
        scale(v, 1.0 / l)
    } else {
        fallback
    }
}

/// Sphere centre `e` moving along `u` against the plane through `q` with unit
/// normal `n`, from whichever side it is on: when its distance to the plane
/// reaches `rho`. `point` is the foot of the centre on the plane then (the
/// caller checks it lies inside the face); `normal` is `±n` toward the sphere.
#[inline]
pub fn sweep_sphere_plane(e: V3, u: V3, n: V3, q: V3, rho: f64) -> Option<SweepContact> {
    let sd0 = dot(n, sub(e, q));
    if sd0 == 0.0 {
        return None;
    }
    let side = sd0.signum();
    let speed = -side * dot(n, u);
    if speed <= 0.0 {
        return None;
    }
    let s = (sd0.abs() - rho).max(0.0) / speed;
    let c = add(e, scale(u, s));
    Some(SweepContact {
        s,
        point: sub(c, scale(n, dot(n, sub(c, q)))),
        normal: scale(n, side),
    })
}

/// Sphere centre `e` moving along `u` against the interior of segment
/// `p0 → p1` (endpoints: [`sweep_sphere_point`]).
#[inline]
pub fn sweep_sphere_segment(e: V3, u: V3, p0: V3, p1: V3, rho: f64) -> Option<SweepContact> {
    let d = sub(p1, p0);
    let dd = dot(d, d);
    if dd <= 0.0 {
        return None;
    }
    let m = sub(e, p0);
    let m_perp = sub(m, scale(d, dot(m, d) / dd));
    let u_perp = sub(u, scale(d, dot(u, d) / dd));
    let a = dot(u_perp, u_perp);
    if a <= 0.0 {
        return None;
    }
    let s = entering_root(a, dot(m_perp, u_perp), dot(m_perp, m_perp) - rho * rho)?;
    let c = add(e, scale(u, s));
    let tau = dot(sub(c, p0), d) / dd;
    if !(0.0..=1.0).contains(&tau) {
        return None;
    }
    let x = add(p0, scale(d, tau));
    Some(SweepContact {
        s,
        point: x,
        normal: unit_or(sub(c, x), scale(u, -1.0)),
    })
}

/// Sphere centre `e` moving along unit `u` against the point `q`.
#[inline]
pub fn sweep_sphere_point(e: V3, u: V3, q: V3, rho: f64) -> Option<SweepContact> {
    let m = sub(e, q);
    let s = entering_root(1.0, dot(m, u), dot(m, m) - rho * rho)?;
    Some(SweepContact {
        s,
        point: q,
        normal: unit_or(sub(add(e, scale(u, s)), q), scale(u, -1.0)),
    })
}

/// The interior of the vertical axis `z ∈ [−h, h]` (at the origin, moving
/// along horizontal unit `u`) against segment `p0 → p1`: the common
/// perpendicular of a vertical line and a non-vertical one is horizontal, so
/// this is the 2-D distance to the edge's projected line, valid when the
/// closest edge point lies on the edge and within the axis's z range.
/// Vertical edges are parallel to the axis: their endpoints cover them.
#[inline]
pub fn sweep_axis_segment(h: f64, u: V3, p0: V3, p1: V3, rho: f64) -> Option<SweepContact> {
    let d = sub(p1, p0);
    let dxy2 = d[0] * d[0] + d[1] * d[1];
    if dxy2 <= 1e-24 * dot(d, d) || dxy2 <= 0.0 {
        return None;
    }
    let l = dxy2.sqrt();
    let (ex, ey) = (d[0] / l, d[1] / l);
    // Signed 2-D distance of the axis (at the origin) from the edge's line.
    let sd0 = -p0[0] * ey + p0[1] * ex;
    if sd0 == 0.0 {
        return None;
    }
    let side = sd0.signum();
    let speed = -side * (u[0] * ey - u[1] * ex);
    if speed <= 0.0 {
        return None;
    }
    let s = (sd0.abs() - rho).max(0.0) / speed;
    let (cx, cy) = (s * u[0], s * u[1]);
    let tau = ((cx - p0[0]) * d[0] + (cy - p0[1]) * d[1]) / dxy2;
    if !(0.0..=1.0).contains(&tau) {
        return None;
    }
    let x = add(p0, scale(d, tau));
    if x[2] < -h || x[2] > h {
        return None;
    }
    Some(SweepContact {
        s,
        point: x,
        normal: unit_or([cx - x[0], cy - x[1], 0.0], scale(u, -1.0)),
    })
}

/// The interior of the vertical axis `z ∈ [−h, h]` moving along horizontal
/// unit `u` against the point `q` (a vertical cylinder against a point).
#[inline]
pub fn sweep_axis_point(h: f64, u: V3, q: V3, rho: f64) -> Option<SweepContact> {
    if q[2] < -h || q[2] > h {
        return None;
    }
    let a = u[0] * u[0] + u[1] * u[1];
    let b = -(q[0] * u[0] + q[1] * u[1]);
    let s = entering_root(a, b, q[0] * q[0] + q[1] * q[1] - rho * rho)?;
    let (cx, cy) = (s * u[0], s * u[1]);
    Some(SweepContact {
        s,
        point: q,
        normal: unit_or([cx - q[0], cy - q[1], 0.0], scale(u, -1.0)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(c: V3, r: f64, p0: V3, p1: V3) -> Option<Contact> {
        sphere_down_segment_interval(c, r, p0, p1).map(|(f, _)| f)
    }

    #[test]
    fn segment_contact_matches_closed_form() {
        // A horizontal edge along x at z = 0; sphere r = 42 centred 20 cm to
        // the side and 100 cm up: contact when the vertical gap is
        // sqrt(42² − 20²), so t = 100 − sqrt(1364); it leaves at 100 + that.
        let (f, out) =
            sphere_down_segment_interval([0.0, 20.0, 100.0], 42.0, [-50.0, 0.0, 0.0], [50.0, 0.0, 0.0]).unwrap();
        assert!((f.t - (100.0 - 1364f64.sqrt())).abs() < 1e-9);
        assert!((out - (100.0 + 1364f64.sqrt())).abs() < 1e-9);
        assert!(f.point[0].abs() < 1e-9 && f.point[1].abs() < 1e-9);
        // Beyond the end (80 − 50 = 30 cm in x, 20 in y): the endpoint.
        let f = first([80.0, 20.0, 100.0], 42.0, [-50.0, 0.0, 0.0], [50.0, 0.0, 0.0]).unwrap();
        assert_eq!(f.point, [50.0, 0.0, 0.0]);
        assert!((f.t - (100.0 - (42f64.powi(2) - 30f64.powi(2) - 20f64.powi(2)).sqrt())).abs() < 1e-9);
        assert!(first([80.0, 40.0, 100.0], 42.0, [-50.0, 0.0, 0.0], [50.0, 0.0, 0.0]).is_none());
    }

    #[test]
    fn sloped_segment_contact_touches_at_distance_r() {
        let (p0, p1) = ([0.0, 0.0, 0.0], [100.0, 0.0, 50.0]);
        let c0 = [40.0, 15.0, 200.0];
        let c = first(c0, 30.0, p0, p1).unwrap();
        let centre = [c0[0], c0[1], c0[2] - c.t];
        let d = segment_segment_distance(centre, centre, p0, p1);
        assert!((d - 30.0).abs() < 1e-9, "{d}");
        // Just before, the sphere is clear of the segment.
        let before = [c0[0], c0[1], c0[2] - c.t + 1e-6];
        assert!(segment_segment_distance(before, before, p0, p1) > 30.0);
    }

    #[test]
    fn plane_and_point_contacts() {
        // Flat plane z = 5: the sphere bottom reaches it after 100 − 5 − 10.
        let c = sphere_down_plane([0.0, 0.0, 100.0], 10.0, 0.0, 0.0, 5.0);
        assert!((c.t - 85.0).abs() < 1e-12);
        assert_eq!(c.point, [0.0, 0.0, 5.0]);
        // A degenerate segment is a point.
        let v = first([3.0, 4.0, 100.0], 10.0, [0.0; 3], [0.0; 3]).unwrap();
        assert!((v.t - (100.0 - 75f64.sqrt())).abs() < 1e-12);
        assert!(first([30.0, 4.0, 100.0], 10.0, [0.0; 3], [0.0; 3]).is_none());
    }

    #[test]
    fn vertical_segment_distances() {
        let tri = [[0.0, 0.0, 0.0], [100.0, 0.0, 0.0], [0.0, 100.0, 0.0]];
        assert_eq!(vertical_segment_triangle_distance(10.0, 10.0, -5.0, 5.0, tri), 0.0);
        assert!((vertical_segment_triangle_distance(10.0, 10.0, 3.0, 50.0, tri) - 3.0).abs() < 1e-12);
        // Beside the hypotenuse x + y = 100, level with it: |60 + 60 − 100| / √2.
        let d = vertical_segment_triangle_distance(60.0, 60.0, -1.0, 1.0, tri);
        assert!((d - 20.0 / 2f64.sqrt()).abs() < 1e-9, "{d}");
        // A vertical wall triangle.
        let wall = [[0.0, 0.0, 0.0], [100.0, 0.0, 0.0], [0.0, 0.0, 100.0]];
        assert!((vertical_segment_triangle_distance(10.0, 7.0, 10.0, 20.0, wall) - 7.0).abs() < 1e-12);
    }

    /// After a further descent `s` past its face contact, every point at
    /// which the sphere meets the plane lies within the bound of the face
    /// contact point, even measured in the plane (XY is less): the meeting
    /// circle computed directly, on planes of random tilt and direction.
    /// And on a flat plane the bound is tight up to `s`.
    #[test]
    fn reach_after_descent_bounds_the_meeting_circle() {
        for i in 0..40 {
            for j in 0..12 {
                let slope = 0.1 * i as f64 % 1.2;
                let dir = j as f64 * 0.5;
                let (a, b) = (slope * dir.cos(), slope * dir.sin());
                let r = 5.0 + 3.0 * i as f64;
                let c = [3.0, -2.0, 100.0];
                let face = sphere_down_plane(c, r, a, b, 7.0);
                for s in [1e-4, 0.01, 0.3, 2.0, 0.5 * r] {
                    // The centre after the further descent, its height above
                    // the plane, and the meeting circle.
                    let n = [-a, -b, 1.0];
                    let nl = len(n);
                    let n = scale(n, 1.0 / nl);
                    let centre = [c[0], c[1], c[2] - face.t - s];
                    let h = (centre[2] - (a * centre[0] + b * centre[1] + 7.0)) / nl;
                    let rho = (r * r - h * h).max(0.0).sqrt();
                    let foot = sub(centre, scale(n, h));
                    // Two unit vectors in the plane.
                    let e1 = scale(cross(n, [0.0, 1.0, 0.0]), 1.0 / len(cross(n, [0.0, 1.0, 0.0])));
                    let e2 = cross(n, e1);
                    let bound = reach_after_descent(s, r, slope);
                    let mut far: f64 = 0.0;
                    for k in 0..256 {
                        let t = k as f64 / 256.0 * std::f64::consts::TAU;
                        let p = add(foot, add(scale(e1, rho * t.cos()), scale(e2, rho * t.sin())));
                        // In-plane distance (at least the XY one).
                        let d = len(sub(p, face.point));
                        far = far.max(d);
                    }
                    assert!(far <= bound + 1e-9, "slope {slope} r {r} s {s}: {far} > {bound}");
                    if slope == 0.0 {
                        assert!(bound - far <= s + 1e-9, "r {r} s {s}: {bound} vs {far}");
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod sweep_tests {
    use super::*;

    const U: V3 = [1.0, 0.0, 0.0];

    #[test]
    fn entering_root_cases() {
        // Distance² − ρ² = (s − 10)² − 4: enters at s = 8.
        assert_eq!(entering_root(1.0, -10.0, 96.0), Some(8.0));
        // Already inside and approaching: 0; receding or missing: none.
        assert_eq!(entering_root(1.0, -1.0, -1.0), Some(0.0));
        assert_eq!(entering_root(1.0, 1.0, -1.0), None);
        assert_eq!(entering_root(1.0, -1.0, 5.0), None);
    }

    #[test]
    fn sphere_against_wall_plane_and_edges() {
        // Wall plane x = 50 (normal −x toward the sphere): touch after 50 − 10.
        let c = sweep_sphere_plane([0.0; 3], U, [1.0, 0.0, 0.0], [50.0, 0.0, 0.0], 10.0).unwrap();
        assert_eq!(c.s, 40.0);
        assert_eq!(c.point, [50.0, 0.0, 0.0]);
        assert_eq!(c.normal, [-1.0, 0.0, 0.0]);
        // Moving away: nothing.
        assert!(sweep_sphere_plane([0.0; 3], [-1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [50.0, 0.0, 0.0], 10.0).is_none());
        // A horizontal edge along y at x = 50, 6 cm below the centre: touch
        // when the horizontal gap is √(100 − 36) = 8.
        let e = sweep_sphere_segment([0.0; 3], U, [50.0, -5.0, -6.0], [50.0, 5.0, -6.0], 10.0).unwrap();
        assert!((e.s - 42.0).abs() < 1e-12, "{e:?}");
        assert!((e.normal[0] + 0.8).abs() < 1e-12 && (e.normal[2] - 0.6).abs() < 1e-12);
        // The same as a point.
        let p = sweep_sphere_point([0.0; 3], U, [50.0, 0.0, -6.0], 10.0).unwrap();
        assert!((p.s - 42.0).abs() < 1e-12);
    }

    #[test]
    fn axis_against_edges_and_points() {
        // A sloped edge crossing x = 30 at z = 20 (within h = 50): 2-D line
        // distance, contact after 30 − 10.
        let c = sweep_axis_segment(50.0, U, [30.0, -10.0, 0.0], [30.0, 10.0, 40.0], 10.0).unwrap();
        assert!((c.s - 20.0).abs() < 1e-12);
        assert!((c.point[2] - 20.0).abs() < 1e-12);
        // Above the axis: not the straight part's business.
        assert!(sweep_axis_segment(50.0, U, [30.0, -10.0, 60.0], [30.0, 10.0, 80.0], 10.0).is_none());
        // Vertical edges are left to their endpoints.
        assert!(sweep_axis_segment(50.0, U, [30.0, 0.0, -10.0], [30.0, 0.0, 10.0], 10.0).is_none());
        // A point 6 cm off the line of motion: √(100 − 36) = 8 before it.
        let p = sweep_axis_point(50.0, U, [30.0, 6.0, 0.0], 10.0).unwrap();
        assert!((p.s - 22.0).abs() < 1e-12);
        assert!((p.normal[0] + 0.8).abs() < 1e-12 && (p.normal[1] + 0.6).abs() < 1e-12);
        assert!(sweep_axis_point(50.0, U, [30.0, 6.0, 51.0], 10.0).is_none());
    }
}
