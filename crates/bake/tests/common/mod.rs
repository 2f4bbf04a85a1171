//! Generated-level helpers the bake's tests share.

use walksurf_bake::Mesh;

/// Vertices and triangles of quads (each `[a, b, c, d]`, split along
/// `a`–`c`), four vertices per quad.
pub fn quads(qs: impl IntoIterator<Item = [[f64; 3]; 4]>) -> (Vec<[f64; 3]>, Vec<[u32; 3]>) {
    let mut vertices = Vec::new();
    let mut triangles = Vec::new();
    for q in qs {
        let i = vertices.len() as u32;
        vertices.extend(q);
        triangles.extend([[i, i + 1, i + 2], [i, i + 2, i + 3]]);
    }
    (vertices, triangles)
}

/// A mesh whose every triangle may be walkable.
pub fn mesh(vertices: Vec<[f64; 3]>, triangles: Vec<[u32; 3]>) -> Mesh {
    let n = triangles.len();
    Mesh {
        vertices,
        triangles,
        walkable_allowed: vec![true; n],
    }
}

/// The six faces of an axis-aligned box as quads `[a, b, c, d]`, each
/// counter-clockwise seen from outside.
#[allow(dead_code)] // (not every test crate builds boxes)
pub fn cuboid_quads(centre: [f64; 3], half: [f64; 3]) -> [[[f64; 3]; 4]; 6] {
    let c = |sx: f64, sy: f64, sz: f64| {
        [
            centre[0] + sx * half[0],
            centre[1] + sy * half[1],
            centre[2] + sz * half[2],
        ]
    };
    let v = [
        c(-1., -1., -1.),
        c(1., -1., -1.),
        c(1., 1., -1.),
        c(-1., 1., -1.),
        c(-1., -1., 1.),
        c(1., -1., 1.),
        c(1., 1., 1.),
        c(-1., 1., 1.),
    ];
    [
        [0, 3, 2, 1],
        [4, 5, 6, 7],
        [0, 1, 5, 4],
        [1, 2, 6, 5],
        [2, 3, 7, 6],
        [3, 0, 4, 7],
    ]
    .map(|q| q.map(|i| v[i]))
}
