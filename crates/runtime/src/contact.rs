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

/// Sphere (centre `c`, radius `r`) moving down onto the segment `p0 → p1`,
/// touching it at an interior point. `None` if it never does (or only at an
/// endpoint: the vertex test covers those).
pub fn sphere_down_segment(c: V3, r: f64, p0: V3, p1: V3) -> Option<Contact> {
    let d = sub(p1, p0);
    let l = len(d);
    if l == 0.0 {
        return None;
    }
    let u = scale(d, 1.0 / l);
    // Perpendicular parts (to the line) of w0 = c − p0 and of the motion −ẑ.
    let w0 = sub(c, p0);
    let w0p = sub(w0, scale(u, dot(w0, u)));
    let zp = sub([0.0, 0.0, 1.0], scale(u, u[2]));
    let a = dot(zp, zp); // 1 − u_z²
    if a < 1e-12 {
        return None; // vertical segment: only its endpoints can be touched first
    }
    // |w0p − t·zp|² = r²  →  a t² − 2 b t + (|w0p|² − r²) = 0
    let b = dot(w0p, zp);
    let cc = dot(w0p, w0p) - r * r;
    let disc = b * b - a * cc;
    if disc < 0.0 {
        return None;
    }
    let t = (b - disc.sqrt()) / a;
    let along = dot(w0, u) - t * u[2];
    if !(0.0..=l).contains(&along) {
        return None;
    }
    Some(Contact {
        t,
        point: add(p0, scale(u, along)),
    })
}

/// Sphere moving down onto the point `v`.
pub fn sphere_down_point(c: V3, r: f64, v: V3) -> Option<Contact> {
    let h2 = (c[0] - v[0]).powi(2) + (c[1] - v[1]).powi(2);
    if h2 > r * r {
        return None;
    }
    Some(Contact {
        t: (c[2] - v[2]) - (r * r - h2).sqrt(),
        point: v,
    })
}

/// Sphere moving down onto the upper side of the plane `z = a·x + b·y + k`
/// (contact point anywhere on the plane; the caller tests it is inside).
pub fn sphere_down_plane(c: V3, r: f64, a: f64, b: f64, k: f64) -> Contact {
    let n_len = (a * a + b * b + 1.0).sqrt();
    let t = c[2] - (a * c[0] + b * c[1] + k) - r * n_len;
    let n = [-a / n_len, -b / n_len, 1.0 / n_len];
    let centre = [c[0], c[1], c[2] - t];
    Contact {
        t,
        point: sub(centre, scale(n, r)),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_contact_matches_closed_form() {
        // A horizontal edge along x at z = 0; sphere r = 42 centred 20 cm to
        // the side and 100 cm up: contact when the vertical gap is
        // sqrt(42² − 20²), so t = 100 − sqrt(1364).
        let c = sphere_down_segment([0.0, 20.0, 100.0], 42.0, [-50.0, 0.0, 0.0], [50.0, 0.0, 0.0]).unwrap();
        assert!((c.t - (100.0 - 1364f64.sqrt())).abs() < 1e-9);
        assert!((c.point[0]).abs() < 1e-9 && c.point[1].abs() < 1e-9);
        // Beyond the end: no interior contact.
        assert!(sphere_down_segment([80.0, 20.0, 100.0], 42.0, [-50.0, 0.0, 0.0], [50.0, 0.0, 0.0]).is_none());
    }

    #[test]
    fn sloped_segment_contact_touches_at_distance_r() {
        let (p0, p1) = ([0.0, 0.0, 0.0], [100.0, 0.0, 50.0]);
        let c0 = [40.0, 15.0, 200.0];
        let c = sphere_down_segment(c0, 30.0, p0, p1).unwrap();
        let centre = [c0[0], c0[1], c0[2] - c.t];
        let d = segment_segment_distance(centre, centre, p0, p1);
        assert!((d - 30.0).abs() < 1e-9, "{d}");
    }

    #[test]
    fn plane_and_point_contacts() {
        // Flat plane z = 5: the sphere bottom reaches it after 100 − 5 − 10.
        let c = sphere_down_plane([0.0, 0.0, 100.0], 10.0, 0.0, 0.0, 5.0);
        assert!((c.t - 85.0).abs() < 1e-12);
        assert_eq!(c.point, [0.0, 0.0, 5.0]);
        let v = sphere_down_point([3.0, 4.0, 100.0], 10.0, [0.0, 0.0, 0.0]).unwrap();
        assert!((v.t - (100.0 - 75f64.sqrt())).abs() < 1e-12);
        assert!(sphere_down_point([30.0, 4.0, 100.0], 10.0, [0.0, 0.0, 0.0]).is_none());
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
}
