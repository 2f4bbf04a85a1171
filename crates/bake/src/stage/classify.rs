//! Stage 2, classify: each triangle → walkable / collected / blocking by
//! `|n.z|` (collision is double-sided, so a triangle facing down is stood on
//! from its upper side just the same). Cost: linear.

use crate::config::BakeConfig;
use crate::stage::ingest::Mesh;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum TriClass {
    /// `|n.z| ≥ walkable_normal_z` and the input allows standing on it.
    Walkable,
    /// Not walkable but `|n.z| ≥ collected_normal_z` (steep faces, ceilings,
    /// surfaces marked blocking-only).
    Collected,
    /// Near-vertical: walls.
    Blocking,
}

/// Per-triangle classes and unit normals (oriented so that `n.z ≥ 0`).
#[derive(Clone, Debug)]
pub struct Classes {
    pub class: Vec<TriClass>,
    pub normal: Vec<[f64; 3]>,
}

impl Classes {
    pub fn count(&self, c: TriClass) -> usize {
        self.class.iter().filter(|&&x| x == c).count()
    }
}

/// The unit normal of a triangle, flipped to point up (or along +x/+y for a
/// vertical one). Zero for a degenerate triangle.
pub fn up_normal(a: [f64; 3], b: [f64; 3], c: [f64; 3]) -> [f64; 3] {
    let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
    let v = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
    let mut n = [
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    ];
    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    if len == 0.0 {
        return [0.0; 3];
    }
    if n[2] < 0.0 {
        n = n.map(|x| -x);
    }
    n.map(|x| x / len)
}

pub fn classify(mesh: &Mesh, config: &BakeConfig) -> Classes {
    let mut class = Vec::with_capacity(mesh.triangles.len());
    let mut normal = Vec::with_capacity(mesh.triangles.len());
    for (t, tri) in mesh.triangles.iter().enumerate() {
        let [a, b, c] = tri.map(|i| mesh.vertices[i as usize]);
        let n = up_normal(a, b, c);
        let nz = n[2].abs();
        class.push(if nz >= config.walkable_normal_z && mesh.walkable_allowed[t] {
            TriClass::Walkable
        } else if nz >= config.collected_normal_z {
            TriClass::Collected
        } else {
            TriClass::Blocking
        });
        normal.push(n);
    }
    Classes { class, normal }
}
