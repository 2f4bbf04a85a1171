//! Ingest of hand-made glTF and OBJ files: every expected value is derived
//! by hand from the literal fixture next to it.

use base64::Engine as _;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use walksurf_bake::stage::ingest::ingest;
use walksurf_bake::{BakeConfig, BakeError, Location, UpAxis};

fn temp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("walksurf-ingest-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// A glTF document with one buffer (data URI) holding `positions` (f32 VEC3)
/// followed by `indices` of the given component type (5121 u8, 5123 u16,
/// 5125 u32; `None` = no index accessor).
struct Gltf {
    doc: Value,
    buffer: Vec<u8>,
}

impl Gltf {
    fn new() -> Gltf {
        Gltf {
            doc: json!({"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": []}], "nodes": [],
                        "meshes": [], "accessors": [], "bufferViews": [], "buffers": [], "materials": []}),
            buffer: Vec::new(),
        }
    }

    fn view(&mut self, bytes: &[u8]) -> usize {
        while !self.buffer.len().is_multiple_of(4) {
            self.buffer.push(0);
        }
        let offset = self.buffer.len();
        self.buffer.extend_from_slice(bytes);
        let views = self.doc["bufferViews"].as_array_mut().unwrap();
        views.push(json!({"buffer": 0, "byteOffset": offset, "byteLength": bytes.len()}));
        views.len() - 1
    }

    fn accessor(
        &mut self,
        view: usize,
        component: u32,
        count: usize,
        ty: &str,
        minmax: Option<(Vec<f32>, Vec<f32>)>,
    ) -> usize {
        let mut a = json!({"bufferView": view, "componentType": component, "count": count, "type": ty});
        if let Some((min, max)) = minmax {
            a["min"] = json!(min);
            a["max"] = json!(max);
        }
        let acc = self.doc["accessors"].as_array_mut().unwrap();
        acc.push(a);
        acc.len() - 1
    }

    /// Adds a mesh with one primitive; returns the mesh index.
    fn mesh(
        &mut self,
        positions: &[[f32; 3]],
        indices: Option<(&[u32], u32)>,
        mode: u32,
        material: Option<usize>,
    ) -> usize {
        let bytes: Vec<u8> = positions.iter().flatten().flat_map(|v| v.to_le_bytes()).collect();
        let v = self.view(&bytes);
        let min = (0..3)
            .map(|k| positions.iter().map(|p| p[k]).fold(f32::MAX, f32::min))
            .collect();
        let max = (0..3)
            .map(|k| positions.iter().map(|p| p[k]).fold(f32::MIN, f32::max))
            .collect();
        let pos = self.accessor(v, 5126, positions.len(), "VEC3", Some((min, max)));
        let mut prim = json!({"attributes": {"POSITION": pos}, "mode": mode});
        if let Some((idx, component)) = indices {
            let bytes: Vec<u8> = match component {
                5121 => idx.iter().map(|&i| i as u8).collect(),
                5123 => idx.iter().flat_map(|&i| (i as u16).to_le_bytes()).collect(),
                _ => idx.iter().flat_map(|&i| i.to_le_bytes()).collect(),
            };
            let v = self.view(&bytes);
            prim["indices"] = json!(self.accessor(v, component, idx.len(), "SCALAR", None));
        }
        if let Some(m) = material {
            prim["material"] = json!(m);
        }
        let meshes = self.doc["meshes"].as_array_mut().unwrap();
        meshes.push(json!({"primitives": [prim]}));
        meshes.len() - 1
    }

    /// Adds a node (root if `parent` is None); returns its index.
    fn node(&mut self, node: Value, parent: Option<usize>) -> usize {
        let nodes = self.doc["nodes"].as_array_mut().unwrap();
        nodes.push(node);
        let i = nodes.len() - 1;
        match parent {
            Some(p) => {
                let n = &mut self.doc["nodes"][p];
                if n.get("children").is_none() {
                    n["children"] = json!([]);
                }
                n["children"].as_array_mut().unwrap().push(json!(i));
            }
            None => self.doc["scenes"][0]["nodes"].as_array_mut().unwrap().push(json!(i)),
        }
        i
    }

    fn write(mut self, name: &str) -> PathBuf {
        let uri = format!(
            "data:application/octet-stream;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(&self.buffer)
        );
        self.doc["buffers"] = json!([{"byteLength": self.buffer.len(), "uri": uri}]);
        if self.doc["materials"].as_array().unwrap().is_empty() {
            self.doc.as_object_mut().unwrap().remove("materials");
        }
        let path = temp_path(name);
        std::fs::write(&path, serde_json::to_vec(&self.doc).unwrap()).unwrap();
        path
    }
}

/// A 1 m square in the glTF XZ plane (Y up), as two triangles.
const QUAD: [[f32; 3]; 4] = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, -1.0], [0.0, 0.0, -1.0]];
const QUAD_IDX: [u32; 6] = [0, 1, 2, 0, 2, 3];

fn sorted_vertices(v: &[[f64; 3]]) -> Vec<[f64; 3]> {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v
}

#[test]
fn y_up_metres_become_z_up_centimetres() {
    // glTF (x, y, z) → (100x, −100z, 100y): the quad at height y = 0 with
    // z ∈ [−1, 0] lands at Z = 0 with Y ∈ [0, 100].
    let mut g = Gltf::new();
    let m = g.mesh(&QUAD, Some((&QUAD_IDX, 5123)), 4, None);
    g.node(json!({"mesh": m, "translation": [0.0, 2.0, 0.0]}), None);
    let path = g.write("yup.gltf");
    let (mesh, report) = ingest(&path, &BakeConfig::default()).unwrap();
    assert_eq!(report.input_triangles, 2);
    assert_eq!(mesh.triangles.len(), 2);
    // Translation y = 2 m → Z = 200 cm.
    assert_eq!(
        sorted_vertices(&mesh.vertices),
        vec![
            [0.0, 0.0, 200.0],
            [0.0, 100.0, 200.0],
            [100.0, 0.0, 200.0],
            [100.0, 100.0, 200.0]
        ]
    );
}

#[test]
fn scale_and_z_up_options() {
    let mut g = Gltf::new();
    let m = g.mesh(&QUAD, Some((&QUAD_IDX, 5125)), 4, None);
    g.node(json!({"mesh": m}), None);
    let path = g.write("zup.gltf");
    // Z up, 1 unit = 0.5 m = 50 cm: (x, y, z) → (50x, 50y, 50z).
    let cfg = BakeConfig {
        up: UpAxis::Z,
        metres_per_unit: 0.5,
        ..Default::default()
    };
    let (mesh, _) = ingest(&path, &cfg).unwrap();
    assert_eq!(
        sorted_vertices(&mesh.vertices),
        vec![[0.0, 0.0, -50.0], [0.0, 0.0, 0.0], [50.0, 0.0, -50.0], [50.0, 0.0, 0.0]]
    );
}

/// Signed z of the triangle normal (winding) in the baked frame.
fn winding_z(mesh: &walksurf_bake::Mesh, t: usize) -> f64 {
    let [a, b, c] = mesh.triangles[t].map(|i| mesh.vertices[i as usize]);
    (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
}

#[test]
fn negative_scale_flips_winding_and_hierarchy_composes() {
    // The quad winds counter-clockwise seen from +Y (glTF up): CCW seen from
    // +Z after conversion. A child under a parent with scale (−1, 1, 1) is
    // mirrored, so the glTF rule flips its winding back to CCW from above.
    let mut g = Gltf::new();
    let m = g.mesh(&QUAD, Some((&QUAD_IDX, 5121)), 4, None);
    let plain = g.node(json!({"mesh": m}), None);
    let parent = g.node(
        json!({"scale": [-1.0, 1.0, 1.0], "translation": [10.0, 0.0, 0.0]}),
        None,
    );
    g.node(json!({"mesh": m, "translation": [1.0, 0.0, 0.0]}), Some(parent));
    let _ = plain;
    let path = g.write("mirror.gltf");
    let (mesh, _) = ingest(&path, &BakeConfig::default()).unwrap();
    assert_eq!(mesh.triangles.len(), 4);
    let plain_sign = winding_z(&mesh, 0).signum();
    for t in 0..4 {
        assert_eq!(winding_z(&mesh, t).signum(), plain_sign, "triangle {t}");
    }
    // Parent translation 10 m, child translation 1 m mirrored: x ∈ [−1+10−1…]
    // i.e. the child's quad spans x ∈ [10 − 2, 10 − 1] m = [800, 900] cm.
    let xs: Vec<f64> = mesh.vertices.iter().map(|v| v[0]).filter(|&x| x > 500.0).collect();
    assert!(xs.iter().all(|&x| x == 800.0 || x == 900.0), "{xs:?}");
}

#[test]
fn strip_fan_and_missing_indices() {
    let mut g = Gltf::new();
    // Strip 0,1,3,2 over the quad corners: two triangles.
    let strip = g.mesh(&QUAD, Some((&[0, 1, 3, 2], 5123)), 5, None);
    // Fan 0,1,2,3: two triangles.
    let fan = g.mesh(&QUAD, Some((&[0, 1, 2, 3], 5123)), 6, None);
    // No indices: 6 positions = 2 triangles.
    let flat: Vec<[f32; 3]> = QUAD_IDX
        .iter()
        .map(|&i| QUAD[i as usize])
        .map(|p| [p[0] + 5.0, p[1], p[2]])
        .collect();
    let plain = g.mesh(&flat, None, 4, None);
    // Points are not triangles: counted, not read.
    let points = g.mesh(&QUAD, None, 0, None);
    for (i, m) in [strip, fan, plain, points].into_iter().enumerate() {
        g.node(json!({"mesh": m, "translation": [0.0, i as f32, 0.0]}), None);
    }
    let path = g.write("modes.gltf");
    let (mesh, report) = ingest(&path, &BakeConfig::default()).unwrap();
    assert_eq!(report.input_triangles, 6);
    assert_eq!(report.non_triangle_primitives, 1);
    // Strip and fan both cover the whole quad: total area 2 × 1 m² = 20000 cm².
    let area: f64 = mesh.triangles[..4]
        .iter()
        .map(|t| {
            walksurf_bake::stage::ingest::area2(
                mesh.vertices[t[0] as usize],
                mesh.vertices[t[1] as usize],
                mesh.vertices[t[2] as usize],
            ) / 2.0
        })
        .sum();
    assert!((area - 20000.0).abs() < 1e-6, "{area}");
}

#[test]
fn extras_and_exclude_patterns() {
    let mut g = Gltf::new();
    g.doc["materials"] = json!([{"name": "ghost", "extras": {"walksurf": {"collision": false}}},
                               {"name": "prop", "extras": {"walksurf": {"walkable": false}}}]);
    let m = g.mesh(&QUAD, Some((&QUAD_IDX, 5123)), 4, None);
    let ghost = g.mesh(&QUAD, Some((&QUAD_IDX, 5123)), 4, Some(0));
    let prop = g.mesh(&QUAD, Some((&QUAD_IDX, 5123)), 4, Some(1));
    g.node(json!({"name": "floor", "mesh": m}), None);
    let hidden = g.node(
        json!({"name": "hidden", "mesh": m, "extras": {"walksurf": {"collision": false}}}),
        None,
    );
    // A child of a no-collision node is dropped too.
    g.node(json!({"name": "hidden_child", "mesh": m}), Some(hidden));
    g.node(
        json!({"name": "crate", "mesh": m, "extras": {"walksurf": {"walkable": false}}}),
        None,
    );
    g.node(json!({"name": "ghost_mat", "mesh": ghost}), None);
    g.node(json!({"name": "prop_mat", "mesh": prop}), None);
    g.node(json!({"name": "navmesh_ref", "mesh": m}), None);
    let path = g.write("extras.gltf");
    let cfg = BakeConfig {
        exclude: vec!["navmesh*".into()],
        ..Default::default()
    };
    let (mesh, report) = ingest(&path, &cfg).unwrap();
    // Kept: floor (2, walkable), crate (2, blocking only), prop_mat (2, blocking only).
    assert_eq!(report.input_triangles, 6);
    assert_eq!(report.blocking_only_triangles, 4);
    assert_eq!(mesh.walkable_allowed.iter().filter(|&&w| w).count(), 2);
    let excluded = report.excluded.join(",");
    for name in ["hidden", "ghost", "navmesh_ref"] {
        assert!(excluded.contains(name), "{excluded}");
    }
    assert!(
        !excluded.contains("hidden_child"),
        "children are reported with their parent: {excluded}"
    );
}

#[test]
fn scene_selection() {
    let mut g = Gltf::new();
    let m = g.mesh(&QUAD, Some((&QUAD_IDX, 5123)), 4, None);
    g.node(json!({"mesh": m}), None);
    // Scene 1 holds a node placed 3 m up.
    let n = g.doc["nodes"].as_array().unwrap().len();
    g.doc["nodes"]
        .as_array_mut()
        .unwrap()
        .push(json!({"mesh": m, "translation": [0.0, 3.0, 0.0]}));
    g.doc["scenes"].as_array_mut().unwrap().push(json!({"nodes": [n]}));
    let path = g.write("scenes.gltf");
    let (m0, _) = ingest(&path, &BakeConfig::default()).unwrap();
    let (m1, _) = ingest(
        &path,
        &BakeConfig {
            scene: Some(1),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(m0.vertices.iter().all(|v| v[2] == 0.0));
    assert!(m1.vertices.iter().all(|v| v[2] == 300.0));
    let err = ingest(
        &path,
        &BakeConfig {
            scene: Some(7),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("scene 7"), "{err}");
}

fn input_error(path: &Path, cfg: &BakeConfig) -> (Location, String) {
    match ingest(path, cfg) {
        Err(BakeError::Input {
            location,
            message,
            path: p,
        }) => {
            assert_eq!(p, path);
            (location, message)
        }
        other => panic!("expected an input error, got {other:?}"),
    }
}

#[test]
fn bad_gltf_errors_name_node_and_primitive() {
    // Index 7 of a 4-vertex primitive.
    let mut g = Gltf::new();
    let m = g.mesh(&QUAD, Some((&[0, 1, 7], 5123)), 4, None);
    g.node(json!({"name": "broken", "mesh": m}), None);
    let path = g.write("badindex.gltf");
    let (loc, msg) = input_error(&path, &BakeConfig::default());
    assert_eq!(
        loc,
        Location::Primitive {
            node: "broken".into(),
            primitive: 0
        }
    );
    assert!(msg.contains("index 7"), "{msg}");

    // NaN position.
    let mut g = Gltf::new();
    let mut quad = QUAD;
    quad[2][1] = f32::NAN;
    let m = g.mesh(&quad, Some((&QUAD_IDX, 5123)), 4, None);
    g.node(json!({"name": "nan", "mesh": m}), None);
    // (min/max stay finite: f32::min/max skip the NaN.)
    let path = g.write("nan.gltf");
    let (loc, msg) = input_error(&path, &BakeConfig::default());
    assert_eq!(
        loc,
        Location::Primitive {
            node: "nan".into(),
            primitive: 0
        }
    );
    assert!(msg.contains("NaN"), "{msg}");

    // Coordinates beyond the format's range (1e7 m = 1e9 cm).
    let mut g = Gltf::new();
    let m = g.mesh(&QUAD, Some((&QUAD_IDX, 5123)), 4, None);
    g.node(
        json!({"name": "far", "mesh": m, "translation": [1.0e7, 0.0, 0.0]}),
        None,
    );
    let path = g.write("far.gltf");
    let (_, msg) = input_error(&path, &BakeConfig::default());
    assert!(msg.contains("range"), "{msg}");

    // A buffer shorter than declared.
    let mut g = Gltf::new();
    let m = g.mesh(&QUAD, Some((&QUAD_IDX, 5123)), 4, None);
    g.node(json!({"mesh": m}), None);
    let real = g.buffer.len();
    let path = g.write("short.gltf");
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    doc["buffers"][0]["byteLength"] = json!(real + 100);
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    let (loc, _) = input_error(&path, &BakeConfig::default());
    assert_eq!(loc, Location::Buffer { index: 0 });

    // Only points: nothing to bake.
    let mut g = Gltf::new();
    let m = g.mesh(&QUAD, None, 0, None);
    g.node(json!({"mesh": m}), None);
    let path = g.write("points.gltf");
    let (loc, msg) = input_error(&path, &BakeConfig::default());
    assert_eq!(loc, Location::File);
    assert!(msg.contains("no triangles"), "{msg}");
}

#[test]
fn obj_polygons_and_bad_lines() {
    // A quad and a pentagon: fan-triangulated into 2 + 3 triangles.
    let path = temp_path("poly.obj");
    std::fs::write(
        &path,
        "v 0 0 0\nv 1 0 0\nv 1 0 -1\nv 0 0 -1\nv 3 0 0\nv 4 0 0\nv 4.5 0 -0.5\nv 4 0 -1\nv 3 0 -1\nf 1 2 3 4\nf 5 6 7 8 9\n",
    )
    .unwrap();
    let (mesh, report) = ingest(&path, &BakeConfig::default()).unwrap();
    assert_eq!(report.input_triangles, 5);
    assert_eq!(mesh.triangles.len(), 5);

    let path = temp_path("badface.obj");
    std::fs::write(&path, "v 0 0 0\nv 1 0 0\nv 1 0 1\n# comment\nf 1 2 9\n").unwrap();
    let (loc, _) = input_error(&path, &BakeConfig::default());
    assert_eq!(loc, Location::Line { line: 5 });

    let path = temp_path("nan.obj");
    std::fs::write(&path, "v 0 0 0\nv nan 0 0\nv 1 0 1\nf 1 2 3\n").unwrap();
    let (loc, _) = input_error(&path, &BakeConfig::default());
    assert_eq!(loc, Location::Line { line: 2 });
}

/// A scene is a glTF's: set for an OBJ it is an error naming the file
/// (it used to be ignored), and without it the same OBJ reads.
#[test]
fn a_scene_set_for_an_obj_is_an_error() {
    let path = temp_path("scene.obj");
    std::fs::write(&path, "v 0 0 0\nv 1 0 0\nv 1 0 -1\nf 1 2 3\n").unwrap();
    let config = BakeConfig {
        scene: Some(0),
        ..BakeConfig::default()
    };
    let (loc, msg) = input_error(&path, &config);
    assert_eq!(loc, Location::File);
    assert!(msg.contains("scene 0") && msg.contains("OBJ"), "{msg}");
    assert!(ingest(&path, &BakeConfig::default()).is_ok());
}

#[test]
fn welding_and_degenerates() {
    // Two triangles sharing an edge given with duplicated positions weld to
    // 4 vertices; a zero-area triangle is dropped and counted.
    let path = temp_path("weld.obj");
    std::fs::write(
        &path,
        "v 0 0 0\nv 1 0 0\nv 1 0 -1\nv 0 0 0\nv 1 0 -1\nv 0 0 -1\nv 2 0 0\nv 3 0 0\nv 4 0 0\nf 1 2 3\nf 4 5 6\nf 7 8 9\n",
    )
    .unwrap();
    let (mesh, report) = ingest(&path, &BakeConfig::default()).unwrap();
    assert_eq!(mesh.triangles.len(), 2);
    assert_eq!(report.degenerate_dropped, 1);
    let used: std::collections::BTreeSet<u32> = mesh.triangles.iter().flatten().copied().collect();
    assert_eq!(used.len(), 4);
}

#[test]
fn quantized_positions_and_material_extensions() {
    // KHR_mesh_quantization: i16 normalized positions; (0, 0, 0), (32767, 0, 0),
    // (0, 0, -32767) decode to (0,0,0), (1,0,0), (0,0,-1) m; a required
    // texture extension does not stop the bake.
    let mut g = Gltf::new();
    let raw: [[i16; 3]; 3] = [[0, 0, 0], [32767, 0, 0], [0, 0, -32767]];
    let mut bytes: Vec<u8> = Vec::new();
    for p in raw {
        for c in p {
            bytes.extend_from_slice(&c.to_le_bytes());
        }
        bytes.extend_from_slice(&[0, 0]); // 4-byte aligned elements (stride 8)
    }
    let v = g.view(&bytes);
    g.doc["bufferViews"][v]["byteStride"] = json!(8);
    let acc = g.doc["accessors"].as_array().unwrap().len();
    g.doc["accessors"].as_array_mut().unwrap().push(json!({
        "bufferView": v, "componentType": 5122, "normalized": true, "count": 3, "type": "VEC3",
        "min": [0, 0, -32767], "max": [32767, 0, 0]
    }));
    g.doc["meshes"]
        .as_array_mut()
        .unwrap()
        .push(json!({"primitives": [{"attributes": {"POSITION": acc}}]}));
    g.node(json!({"mesh": 0}), None);
    g.doc["extensionsUsed"] = json!(["KHR_mesh_quantization", "KHR_texture_basisu"]);
    g.doc["extensionsRequired"] = json!(["KHR_mesh_quantization", "KHR_texture_basisu"]);
    let path = g.write("quantized.gltf");
    let (mesh, _) = ingest(&path, &BakeConfig::default()).unwrap();
    assert_eq!(
        sorted_vertices(&mesh.vertices),
        vec![[0.0, 0.0, 0.0], [0.0, 100.0, 0.0], [100.0, 0.0, 0.0]]
    );

    // Compressed geometry cannot be read: a clear error, not missing triangles.
    let mut g = Gltf::new();
    let m = g.mesh(&QUAD, Some((&QUAD_IDX, 5123)), 4, None);
    g.node(json!({"mesh": m}), None);
    g.doc["extensionsUsed"] = json!(["EXT_meshopt_compression"]);
    let path = g.write("meshopt.gltf");
    let (loc, msg) = input_error(&path, &BakeConfig::default());
    assert_eq!(loc, Location::File);
    assert!(msg.contains("EXT_meshopt_compression"), "{msg}");
}
