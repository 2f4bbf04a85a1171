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
