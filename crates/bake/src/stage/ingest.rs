//! Stage 1, ingest: a glTF/GLB or OBJ file → one welded triangle soup in the
//! baked frame (Z up, centimetres).
//!
//! glTF: the chosen scene's node hierarchy with transforms (a negative
//! determinant flips winding), TRIANGLES / TRIANGLE_STRIP / TRIANGLE_FAN
//! primitives, GLB, data-URI and external buffers, u8/u16/u32 or missing
//! indices. `extras: {"walksurf": {"collision": false}}` on a node or material
//! drops it; `{"walksurf": {"walkable": false}}` keeps it as blocking only; a
//! node-name glob in `exclude` drops the node and its children. OBJ through
//! `tobj`, polygons fan-triangulated (a `scene` set for an OBJ is an error).
//!
//! Then vertices are welded (bitwise-equal positions, numbered in order
//! of first use by a triangle corner) and degenerate triangles
//! dropped and counted. Cost: linear in the input.

use crate::config::{BakeConfig, UpAxis};
use crate::error::{BakeError, Location};
use crate::stage::convex_partition::FastMap;
use crate::tolerance::{DEGENERATE_AREA2_CM2, MAX_COORD_CM};
use base64::Engine as _;
use std::path::{Path, PathBuf};

/// The welded triangle soup every later stage reads.
#[derive(Clone, Debug, Default)]
pub struct Mesh {
    /// Z up, cm.
    pub vertices: Vec<[f64; 3]>,
    pub triangles: Vec<[u32; 3]>,
    /// `false` where the input said the triangle may not be stood on.
    pub walkable_allowed: Vec<bool>,
}

/// What ingest saw, for the bake report.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct IngestReport {
    pub input_triangles: usize,
    pub degenerate_dropped: usize,
    pub non_triangle_primitives: usize,
    /// Nodes or materials dropped from collision, by name.
    pub excluded: Vec<String>,
    pub blocking_only_triangles: usize,
}

/// Reads `path` (format from its extension) into a [`Mesh`].
pub fn ingest(path: &Path, config: &BakeConfig) -> Result<(Mesh, IngestReport), BakeError> {
    if !matches!(extension(path).as_str(), "gltf" | "glb" | "obj") {
        return Err(BakeError::UnknownFormat {
            path: path.to_path_buf(),
        });
    }
    let bytes = std::fs::read(path).map_err(|source| BakeError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    ingest_bytes(path, &bytes, config)
}

/// [`ingest`] of bytes already read from `path`. `path` gives the format
/// (its extension), names the input in errors, and is where a glTF's
/// external buffers are looked for (next to it).
pub fn ingest_bytes(path: &Path, bytes: &[u8], config: &BakeConfig) -> Result<(Mesh, IngestReport), BakeError> {
    config.validate().map_err(BakeError::Config)?;
    let mut soup = Soup::new(path, config)?;
    match extension(path).as_str() {
        "gltf" | "glb" => read_gltf(path, bytes, config, &mut soup)?,
        "obj" => {
            // (A scene is a glTF's: set for an OBJ it would be ignored.)
            if let Some(n) = config.scene {
                return Err(BakeError::input(
                    path,
                    Location::File,
                    format!("scene {n} is set, but an OBJ has no scenes (scene is for glTF)"),
                ));
            }
            read_obj(path, bytes, &mut soup)?
        }
        _ => {
            return Err(BakeError::UnknownFormat {
                path: path.to_path_buf(),
            });
        }
    }
    soup.finish()
}

fn extension(path: &Path) -> String {
    path.extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .unwrap_or_default()
}

/// Triangles as read, before welding: each primitive's vertices (Z-up
/// cm) and every triangle's corners as indices into them.
struct Soup {
    path: PathBuf,
    up: UpAxis,
    cm_per_unit: f64,
    vertices: Vec<[f64; 3]>,
    corners: Vec<u32>,
    walkable_allowed: Vec<bool>,
    report: IngestReport,
    excluded: Vec<glob::Pattern>,
}

impl Soup {
    fn new(path: &Path, config: &BakeConfig) -> Result<Soup, BakeError> {
        let excluded = config
            .exclude
            .iter()
            .map(|p| glob::Pattern::new(p).map_err(|e| BakeError::Config(format!("exclude pattern \"{p}\": {e}"))))
            .collect::<Result<_, _>>()?;
        Ok(Soup {
            path: path.to_path_buf(),
            up: config.up,
            cm_per_unit: config.metres_per_unit * 100.0,
            vertices: Vec::new(),
            corners: Vec::new(),
            walkable_allowed: Vec::new(),
            report: IngestReport::default(),
            excluded,
        })
    }

    /// Converts an input position (already transformed) to Z-up cm. The
    /// error is a message: the caller knows where the position came from.
    fn convert(&self, p: [f64; 3]) -> Result<[f64; 3], String> {
        let s = self.cm_per_unit;
        let q = match self.up {
            UpAxis::Y => [p[0] * s, -p[2] * s, p[1] * s],
            UpAxis::Z => [p[0] * s, p[1] * s, p[2] * s],
        };
        if q.iter().any(|v| !v.is_finite()) {
            return Err(if p.iter().all(|v| v.is_finite()) {
                "position is NaN or infinite after the node transform and scale".to_owned()
            } else {
                "position is NaN or infinite".to_owned()
            });
        }
        if q.iter().any(|v| v.abs() > MAX_COORD_CM) {
            return Err(format!(
                "position {q:?} cm is beyond the format's range of ±{MAX_COORD_CM} cm (check --scale)"
            ));
        }
        // -0.0 and 0.0 must weld.
        Ok(q.map(|v| if v == 0.0 { 0.0 } else { v }))
    }

    /// Adds a primitive's converted vertices; its triangles' corners are
    /// the returned base plus their index among them.
    fn add_vertices(&mut self, vertices: &[[f64; 3]]) -> Result<u32, BakeError> {
        let base = self.vertices.len();
        if base + vertices.len() > u32::MAX as usize {
            return Err(BakeError::input(
                &self.path,
                Location::File,
                format!("more than {} vertices", u32::MAX),
            ));
        }
        self.vertices.extend_from_slice(vertices);
        Ok(base as u32)
    }

    /// Adds a triangle by its corners (indices into the vertices added).
    fn push(&mut self, tri: [u32; 3], walkable: bool) {
        self.corners.extend_from_slice(&tri);
        self.walkable_allowed.push(walkable);
        self.report.input_triangles += 1;
        if !walkable {
            self.report.blocking_only_triangles += 1;
        }
    }

    fn finish(mut self) -> Result<(Mesh, IngestReport), BakeError> {
        if self.corners.is_empty() {
            let why = match (&self.report, self.report.excluded.first()) {
                (r, _) if r.non_triangle_primitives > 0 => format!(
                    "the only primitives ({}) are points or lines",
                    r.non_triangle_primitives
                ),
                (_, Some(first)) => format!("everything is excluded from collision ({first}, …)"),
                _ => "the input holds no faces".to_owned(),
            };
            return Err(BakeError::input(
                &self.path,
                Location::File,
                format!("no triangles to bake: {why}"),
            ));
        }
        // Welded in order of first use by a corner (the vertices no corner
        // uses are left out).
        let (vertices, corners) = weld(&self.vertices, &self.corners);
        let mut triangles = Vec::with_capacity(self.walkable_allowed.len());
        let mut walkable_allowed = Vec::with_capacity(self.walkable_allowed.len());
        for (t, &walkable) in self.walkable_allowed.iter().enumerate() {
            let tri = [0, 1, 2].map(|k| corners[3 * t + k]);
            let [a, b, c] = tri.map(|i| vertices[i as usize]);
            if tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2] || area2(a, b, c) < DEGENERATE_AREA2_CM2 {
                self.report.degenerate_dropped += 1;
                continue;
            }
            triangles.push(tri);
            walkable_allowed.push(walkable);
        }
        if triangles.is_empty() {
            return Err(BakeError::input(
                &self.path,
                Location::File,
                "every triangle is degenerate (zero area)",
            ));
        }
        Ok((
            Mesh {
                vertices,
                triangles,
                walkable_allowed,
            },
            self.report,
        ))
    }
}

/// Welds vertices of bitwise-equal positions: the distinct positions in
/// order of first use by a corner (a vertex no corner uses is left out),
/// and every corner as an index into them. Each input vertex is looked up
/// once.
fn weld(vertices: &[[f64; 3]], corners: &[u32]) -> (Vec<[f64; 3]>, Vec<u32>) {
    const NONE: u32 = u32::MAX;
    let mut index: FastMap<[u64; 3], u32> = FastMap::with_capacity_and_hasher(vertices.len(), Default::default());
    let mut remap = vec![NONE; vertices.len()];
    let mut welded: Vec<[f64; 3]> = Vec::with_capacity(vertices.len());
    let mut out = Vec::with_capacity(corners.len());
    for &c in corners {
        let v = c as usize;
        if remap[v] == NONE {
            remap[v] = *index.entry(vertices[v].map(f64::to_bits)).or_insert_with(|| {
                welded.push(vertices[v]);
                welded.len() as u32 - 1
            });
        }
        out.push(remap[v]);
    }
    (welded, out)
}

/// Twice the triangle's area.
pub fn area2(a: [f64; 3], b: [f64; 3], c: [f64; 3]) -> f64 {
    let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
    let v = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
    let n = [
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    ];
    (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt()
}

// ---------------------------------------------------------------- glTF

/// What a node's or material's `extras.walksurf` says.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Flags {
    no_collision: bool,
    blocking_only: bool,
}

fn flags_of(extras: &gltf::json::Extras) -> Flags {
    let Some(raw) = extras else {
        return Flags::default();
    };
    let Ok(value) = serde_json::from_str::<serde_json::Value>(raw.get()) else {
        return Flags::default();
    };
    let ws = &value["walksurf"];
    Flags {
        no_collision: ws["collision"] == serde_json::Value::Bool(false),
        blocking_only: ws["walkable"] == serde_json::Value::Bool(false),
    }
}

type Mat4 = [[f64; 4]; 4];

fn mat_mul(a: &Mat4, b: &Mat4) -> Mat4 {
    // Column-major: (a·b)[c][r] = Σk a[k][r]·b[c][k].
    let mut m = [[0.0; 4]; 4];
    for (c, col) in m.iter_mut().enumerate() {
        for (r, v) in col.iter_mut().enumerate() {
            *v = (0..4).map(|k| a[k][r] * b[c][k]).sum();
        }
    }
    m
}

fn transform(m: &Mat4, p: [f32; 3]) -> [f64; 3] {
    let p = p.map(f64::from);
    let mut q = [0.0; 3];
    for (r, v) in q.iter_mut().enumerate() {
        *v = m[0][r] * p[0] + m[1][r] * p[1] + m[2][r] * p[2] + m[3][r];
    }
    q
}

fn det3(m: &Mat4) -> f64 {
    m[0][0] * (m[1][1] * m[2][2] - m[2][1] * m[1][2]) - m[1][0] * (m[0][1] * m[2][2] - m[2][1] * m[0][2])
        + m[2][0] * (m[0][1] * m[1][2] - m[1][1] * m[0][2])
}

fn read_gltf(path: &Path, bytes: &[u8], config: &BakeConfig, soup: &mut Soup) -> Result<(), BakeError> {
    let file_err = |m: String| BakeError::input(path, Location::File, m);
    check_glb_length(bytes).map_err(file_err)?;
    // `Gltf::from_slice` validates, but gltf-json 1.4.1's validation indexes
    // the POSITION accessor without a bounds check (a panic on hostile
    // input, found by fuzzing): parse, check that index, then validate.
    let invalid = |e: gltf::Error| file_err(format!("invalid glTF: {e}"));
    let raw = gltf::Gltf::from_slice_without_validation(bytes).map_err(invalid)?;
    check_position_accessors(raw.document.as_json()).map_err(file_err)?;
    let mut json = raw.document.into_json();
    check_extensions(&json).map_err(file_err)?;
    // Every other required extension only changes materials, textures or
    // lights (nothing collides differently), or is KHR_mesh_quantization,
    // whose positions `read_positions` decodes (`check_extensions`):
    // validate without them.
    json.extensions_required.clear();
    let gltf = gltf::Document::from_json(json).map_err(invalid)?;
    let buffers = load_buffers(path, &gltf, raw.blob)?;

    let scene = match config.scene {
        Some(n) => gltf.scenes().nth(n).ok_or_else(|| {
            file_err(format!(
                "scene {n} does not exist (the file has {} scenes)",
                gltf.scenes().len()
            ))
        })?,
        None => gltf
            .default_scene()
            .or_else(|| gltf.scenes().next())
            .ok_or_else(|| file_err("the file has no scene".into()))?,
    };

    if scene.nodes().len() == 0 {
        return Err(file_err(format!("scene {} has no nodes", scene.index())));
    }
    // A scene lists root nodes only: a child listed there would lose its
    // parent's transform.
    let mut parent = vec![None; gltf.nodes().len()];
    for n in gltf.nodes() {
        for c in n.children() {
            if let Some(p) = parent.get_mut(c.index()) {
                *p = Some(n.index());
            }
        }
    }
    if let Some((root, p)) = scene
        .nodes()
        .find_map(|n| parent.get(n.index()).copied().flatten().map(|p| (n.index(), p)))
    {
        return Err(file_err(format!(
            "scene {} lists node {root} as a root, but it is a child of node {p}",
            scene.index()
        )));
    }

    let identity: Mat4 = [
        [1.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ];
    // Explicit stack: hostile files can nest deeply.
    let mut stack: Vec<(gltf::Node, Mat4, Flags, usize)> =
        scene.nodes().map(|n| (n, identity, Flags::default(), 0)).collect();
    stack.reverse();
    // glTF node hierarchies are disjoint trees: a node reached twice is a
    // cycle or a shared child, which could otherwise multiply the work
    // without bound.
    let mut visited = vec![false; gltf.nodes().len()];
    while let Some((node, parent, parent_flags, depth)) = stack.pop() {
        if depth > 256 {
            return Err(file_err("node hierarchy deeper than 256 (a cycle?)".into()));
        }
        match visited.get_mut(node.index()) {
            Some(seen) if !*seen => *seen = true,
            _ => {
                return Err(file_err(format!(
                    "node {} is reached twice: the node hierarchy is not a tree",
                    node.index()
                )));
            }
        }
        check_node(&node, &name_of(&node)).map_err(file_err)?;
        let local = node.transform().matrix().map(|c| c.map(f64::from));
        let world = mat_mul(&parent, &local);
        let name = name_of(&node);
        let own = flags_of(node.extras());
        let mut flags = Flags {
            no_collision: parent_flags.no_collision || own.no_collision,
            blocking_only: parent_flags.blocking_only || own.blocking_only,
        };
        if soup.excluded.iter().any(|p| p.matches(&name)) {
            flags.no_collision = true;
        }
        if flags.no_collision && !parent_flags.no_collision {
            soup.report.excluded.push(format!("node \"{name}\""));
        }
        if let (false, Some(mesh)) = (flags.no_collision, node.mesh()) {
            if node.skin().is_some() {
                return Err(file_err(format!(
                    "node \"{name}\" is a skinned mesh, placed by its joints, which walksurf does not read: \
                     export it as a static mesh (or --exclude it)"
                )));
            }
            let weights = node.weights().or(mesh.weights()).unwrap_or(&[]);
            for prim in mesh.primitives() {
                read_primitive(path, &name, &prim, weights, &world, flags, &buffers, soup)?;
            }
        }
        let mut children: Vec<_> = node.children().map(|c| (c, world, flags, depth + 1)).collect();
        children.reverse();
        stack.extend(children);
    }
    Ok(())
}

fn name_of(node: &gltf::Node) -> String {
    node.name()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("#{}", node.index()))
}

/// How far a node's rotation quaternion's length may be from 1 (glTF
/// requires unit quaternions; exporters round them).
const QUATERNION_LENGTH_TOLERANCE: f32 = 1e-3;

/// Refuses a node transform glTF does not allow, which would otherwise be
/// read as some other transform: a rotation that is not a unit quaternion
/// (it would scale too), a matrix whose last row is not `0 0 0 1`.
fn check_node(node: &gltf::Node, name: &str) -> Result<(), String> {
    match node.transform() {
        gltf::scene::Transform::Decomposed { rotation: q, .. } => {
            let len = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
            if len.is_nan() || (len - 1.0).abs() > QUATERNION_LENGTH_TOLERANCE {
                return Err(format!(
                    "node \"{name}\": rotation {q:?} is not a unit quaternion (length {len})"
                ));
            }
        }
        gltf::scene::Transform::Matrix { matrix: m } => {
            // (Column-major: the last row is element 3 of each column.)
            if m[0][3] != 0.0 || m[1][3] != 0.0 || m[2][3] != 0.0 || m[3][3] != 1.0 {
                return Err(format!(
                    "node \"{name}\": matrix's last row is {:?}, not [0, 0, 0, 1] (a projective matrix)",
                    [m[0][3], m[1][3], m[2][3], m[3][3]]
                ));
            }
        }
    }
    Ok(())
}

/// Every buffer's bytes; a GLB's BIN chunk (`blob`) is moved, not copied,
/// into the first buffer that uses it.
fn load_buffers(path: &Path, gltf: &gltf::Document, mut blob: Option<Vec<u8>>) -> Result<Vec<Vec<u8>>, BakeError> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    let mut bin_at = None;
    for buffer in gltf.buffers() {
        let loc = || Location::Buffer { index: buffer.index() };
        let data = match buffer.source() {
            gltf::buffer::Source::Bin => match (blob.take(), bin_at) {
                (Some(bytes), _) => {
                    bin_at = Some(out.len());
                    bytes
                }
                (None, Some(i)) => out[i].clone(),
                (None, None) => return Err(BakeError::input(path, loc(), "GLB has no BIN chunk")),
            },
            gltf::buffer::Source::Uri(uri) if uri.starts_with("data:") => {
                let payload = uri
                    .split_once(";base64,")
                    .map(|(_, p)| p)
                    .ok_or_else(|| BakeError::input(path, loc(), "data URI is not base64"))?;
                base64::engine::general_purpose::STANDARD
                    .decode(payload)
                    .map_err(|e| BakeError::input(path, loc(), format!("bad base64 data URI: {e}")))?
            }
            gltf::buffer::Source::Uri(uri) => {
                let file = path.parent().unwrap_or(Path::new(".")).join(percent_decode(uri));
                read_buffer_file(&file, buffer.length()).map_err(|e| {
                    BakeError::input(path, loc(), format!("cannot read buffer file {}: {e}", file.display()))
                })?
            }
        };
        if data.len() < buffer.length() {
            return Err(BakeError::input(
                path,
                loc(),
                format!("buffer holds {} bytes but declares {}", data.len(), buffer.length()),
            ));
        }
        out.push(data);
    }
    Ok(out)
}

/// Every primitive's POSITION accessor exists (see [`read_gltf`]).
/// Extensions that change the geometry in ways this reader cannot decode.
const UNDECODABLE_EXTENSIONS: [&str; 3] = [
    "KHR_draco_mesh_compression",
    "EXT_meshopt_compression",
    "EXT_mesh_gpu_instancing",
];

/// Required extensions that cannot change where triangles are (materials,
/// textures, lights, metadata), or that this reader decodes
/// (KHR_mesh_quantization): by name, or by a prefix ending in `_`.
const HARMLESS_REQUIRED_EXTENSIONS: [&str; 9] = [
    "KHR_mesh_quantization",
    "KHR_materials_",
    "KHR_texture_",
    "EXT_texture_",
    "MSFT_texture_dds",
    "KHR_lights_punctual",
    "EXT_lights_",
    "KHR_xmp",
    "KHR_xmp_json_ld",
];

/// Refuses files whose geometry needs an extension this reader cannot
/// decode (rather than baking them with triangles missing), and files that
/// require one it does not know (glTF requires that of a reader: it may
/// change the geometry).
fn check_extensions(root: &gltf::json::Root) -> Result<(), String> {
    let required = root.extensions_required.iter();
    let used = root.extensions_used.iter();
    if let Some(ext) = required
        .clone()
        .chain(used)
        .find(|e| UNDECODABLE_EXTENSIONS.contains(&e.as_str()))
    {
        return Err(format!(
            "uses extension {ext}, whose geometry walksurf cannot decode: export the level without it"
        ));
    }
    let harmless = |e: &str| {
        HARMLESS_REQUIRED_EXTENSIONS
            .iter()
            .any(|h| if h.ends_with('_') { e.starts_with(h) } else { e == *h })
    };
    match required.into_iter().find(|e| !harmless(e)) {
        Some(ext) => Err(format!(
            "requires extension {ext}, which walksurf does not know (it may change the geometry): \
             export the level without it"
        )),
        None => Ok(()),
    }
}

/// Reads a POSITION accessor: `f32`, or the (normalized or plain) integer
/// types of KHR_mesh_quantization. Bounds were checked by the caller.
fn read_positions(acc: &gltf::Accessor, buffers: &[Vec<u8>]) -> Option<Vec<[f32; 3]>> {
    use gltf::accessor::DataType;
    let view = acc.view()?;
    let data = buffers.get(view.buffer().index())?;
    let size = acc.data_type().size();
    let stride = view.stride().unwrap_or(3 * size);
    let base = view.offset().checked_add(acc.offset())?;
    let norm = acc.normalized();
    let component = |b: &[u8]| -> Option<f32> {
        Some(match acc.data_type() {
            DataType::F32 => f32::from_le_bytes(b.get(..4)?.try_into().ok()?),
            DataType::I8 => {
                let v = *b.first()? as i8 as f32;
                if norm { (v / 127.0).max(-1.0) } else { v }
            }
            DataType::U8 => {
                let v = *b.first()? as f32;
                if norm { v / 255.0 } else { v }
            }
            DataType::I16 => {
                let v = i16::from_le_bytes(b.get(..2)?.try_into().ok()?) as f32;
                if norm { (v / 32767.0).max(-1.0) } else { v }
            }
            DataType::U16 => {
                let v = u16::from_le_bytes(b.get(..2)?.try_into().ok()?) as f32;
                if norm { v / 65535.0 } else { v }
            }
            DataType::U32 => return None,
        })
    };
    (0..acc.count())
        .map(|i| {
            let at = base.checked_add(i.checked_mul(stride)?)?;
            let e = data.get(at..at.checked_add(3 * size)?)?;
            Some([
                component(e)?,
                component(e.get(size..)?)?,
                component(e.get(2 * size..)?)?,
            ])
        })
        .collect()
}

fn check_position_accessors(root: &gltf::json::Root) -> Result<(), String> {
    use gltf::json::validation::Checked;
    let positions = Checked::Valid(gltf::json::mesh::Semantic::Positions);
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, prim) in mesh.primitives.iter().enumerate() {
            if let Some(acc) = prim.attributes.get(&positions)
                && acc.value() >= root.accessors.len()
            {
                return Err(format!(
                    "mesh {m} primitive {p}: POSITION accessor {} does not exist (the file has {} accessors)",
                    acc.value(),
                    root.accessors.len()
                ));
            }
        }
    }
    Ok(())
}

/// The first bytes of a GLB file.
pub(crate) const GLB_MAGIC: &[u8; 4] = b"glTF";

/// A GLB whose header or chunk headers declare more bytes than the file
/// holds is truncated; say so instead of the parser's generic message. Also
/// refuses a header length shorter than the header.
fn check_glb_length(bytes: &[u8]) -> Result<(), String> {
    let u32_at = |at: usize| {
        bytes
            .get(at..at + 4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(|b| u32::from_le_bytes(b) as usize)
    };
    if !bytes.starts_with(GLB_MAGIC) {
        return Ok(());
    }
    let truncated = |what: &str, need: usize| {
        Err(format!(
            "GLB is truncated: {what} needs {need} bytes, the file has {}",
            bytes.len()
        ))
    };
    let total = match u32_at(8) {
        None => return truncated("the 12-byte header", 12),
        Some(total) if total > bytes.len() => return truncated("the header's length field", total),
        // (gltf 1.4.1 subtracts 12 from it unchecked: found by fuzzing.)
        Some(total) if total < 12 => {
            return Err(format!(
                "GLB header declares a length of {total} bytes, less than the header itself"
            ));
        }
        Some(total) => total,
    };
    // Chunks: [length u32][type u32][data], from byte 12 to `total`.
    let mut at = 12usize;
    while at < total {
        let Some(len) = u32_at(at) else {
            return truncated("a chunk header", at + 8);
        };
        let end = at.saturating_add(8).saturating_add(len);
        if end > bytes.len() {
            return truncated(&format!("the chunk at byte {at}"), end);
        }
        at = end;
    }
    Ok(())
}

/// A relative URI reference as a path: `%XX` escapes decoded (a `%` not
/// followed by two hex digits is kept as it is).
pub(crate) fn percent_decode(uri: &str) -> String {
    let b = uri.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).copied().and_then(hex),
            b.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Reads an external buffer: a regular file, at most `declared` bytes of it
/// (a longer file's tail is not part of the buffer).
fn read_buffer_file(file: &Path, declared: usize) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let f = std::fs::File::open(file)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut data = Vec::new();
    f.take(declared as u64).read_to_end(&mut data)?;
    Ok(data)
}

#[allow(clippy::too_many_arguments)]
fn read_primitive(
    path: &Path,
    node: &str,
    prim: &gltf::Primitive,
    weights: &[f32],
    world: &Mat4,
    node_flags: Flags,
    buffers: &[Vec<u8>],
    soup: &mut Soup,
) -> Result<(), BakeError> {
    use gltf::mesh::Mode;
    let loc = || Location::Primitive {
        node: node.to_owned(),
        primitive: prim.index(),
    };
    let mat = flags_of(prim.material().extras());
    if mat.no_collision {
        let name = prim.material().name().unwrap_or("unnamed").to_owned();
        soup.report
            .excluded
            .push(format!("material \"{name}\" on node \"{node}\""));
        return Ok(());
    }
    let walkable = !(node_flags.blocking_only || mat.blocking_only);
    // Morph targets at their default weights of 0 leave the base shape,
    // which is read; other weights would move it.
    if prim.morph_targets().len() > 0 && weights.iter().any(|&w| w != 0.0) {
        return Err(BakeError::input(
            path,
            loc(),
            "morph targets with non-zero weights are not supported: export the shape applied (or --exclude the node)",
        ));
    }
    let mode = prim.mode();
    if !matches!(mode, Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan) {
        soup.report.non_triangle_primitives += 1;
        return Ok(());
    }
    // gltf's readers assume what its validation does not check (element
    // type and size, stride, a count of at least 1) and panic otherwise:
    // check all of it here (found by fuzzing).
    use gltf::accessor::{DataType, Dimensions};
    let position = prim.get(&gltf::Semantic::Positions).map(|a| (a, "POSITION"));
    for (acc, role) in position.into_iter().chain(prim.indices().map(|a| (a, "indices"))) {
        let what = || format!("{role} accessor {}", acc.index());
        let type_ok = match role {
            // F32, or the integer types of KHR_mesh_quantization.
            "POSITION" => acc.dimensions() == Dimensions::Vec3 && acc.data_type() != DataType::U32,
            _ => {
                matches!(acc.data_type(), DataType::U8 | DataType::U16 | DataType::U32)
                    && acc.dimensions() == Dimensions::Scalar
            }
        };
        if !type_ok {
            let expected = if role == "POSITION" {
                "float, (unsigned) byte or short VEC3"
            } else {
                "unsigned byte, short or int SCALAR"
            };
            return Err(BakeError::input(
                path,
                loc(),
                format!(
                    "{} is {:?} {:?} (expected {expected})",
                    what(),
                    acc.data_type(),
                    acc.dimensions()
                ),
            ));
        }
        if acc.count() == 0 {
            return Err(BakeError::input(path, loc(), format!("{} has count 0", what())));
        }
        if acc.sparse().is_some() {
            return Err(BakeError::input(path, loc(), "sparse accessors are not supported"));
        }
        let Some(view) = acc.view() else {
            return Err(BakeError::input(path, loc(), format!("{} has no buffer view", what())));
        };
        if view.stride().is_some_and(|s| s < acc.size()) {
            return Err(BakeError::input(
                path,
                loc(),
                format!(
                    "buffer view {} has a stride of {} bytes, less than the {}-byte elements of {}",
                    view.index(),
                    view.stride().unwrap_or(0),
                    acc.size(),
                    what()
                ),
            ));
        }
        let stride = view.stride().unwrap_or(acc.size());
        // Checked: the counts come from the file.
        let need = match acc.count().checked_sub(1) {
            None => Some(0),
            Some(last) => stride
                .checked_mul(last)
                .and_then(|n| n.checked_add(acc.offset()))
                .and_then(|n| n.checked_add(acc.size())),
        };
        // (The declared length: a GLB's padding or a data URI's extra
        // bytes are not the buffer's.)
        let buf_len = buffers
            .get(view.buffer().index())
            .map_or(0, |b| b.len().min(view.buffer().length()));
        let view_end = view.offset().checked_add(view.length());
        if view_end.is_none_or(|end| end > buf_len) {
            return Err(BakeError::input(
                path,
                loc(),
                format!(
                    "buffer view {} (bytes {}..+{}) reaches past the end of buffer {} ({buf_len} bytes)",
                    view.index(),
                    view.offset(),
                    view.length(),
                    view.buffer().index()
                ),
            ));
        }
        if need.is_none_or(|need| need > view.length()) {
            return Err(BakeError::input(
                path,
                loc(),
                format!(
                    "accessor {} ({} elements of {} bytes) reaches past the end of its buffer view {} ({} bytes)",
                    acc.index(),
                    acc.count(),
                    acc.size(),
                    view.index(),
                    view.length()
                ),
            ));
        }
    }
    let reader = prim.reader(|b| buffers.get(b.index()).map(Vec::as_slice));
    let positions: Vec<[f32; 3]> = prim
        .get(&gltf::Semantic::Positions)
        .and_then(|acc| read_positions(&acc, buffers))
        .ok_or_else(|| BakeError::input(path, loc(), "missing or unreadable POSITION accessor"))?;
    let indices: Vec<u32> = match reader.read_indices() {
        Some(idx) => idx.into_u32().collect(),
        None => (0..positions.len() as u32).collect(),
    };
    if let Some(bad) = indices.iter().find(|&&i| i as usize >= positions.len()) {
        return Err(BakeError::input(
            path,
            loc(),
            format!("index {bad} out of range ({} vertices)", positions.len()),
        ));
    }
    let mut world_pos = Vec::with_capacity(positions.len());
    for (i, p) in positions.iter().enumerate() {
        let q = soup
            .convert(transform(world, *p))
            .map_err(|m| BakeError::input(path, loc(), format!("vertex {i} {p:?}: {m}")))?;
        world_pos.push(q);
    }
    let flip = det3(world) < 0.0;
    let base = soup.add_vertices(&world_pos)?;
    let mut emit = |a: u32, b: u32, c: u32| {
        let (a, b, c) = (base + a, base + b, base + c);
        soup.push(if flip { [a, c, b] } else { [a, b, c] }, walkable);
    };
    if mode == Mode::Triangles && !indices.len().is_multiple_of(3) {
        return Err(BakeError::input(
            path,
            loc(),
            format!(
                "TRIANGLES primitive with {} indices (not a multiple of 3)",
                indices.len()
            ),
        ));
    }
    match mode {
        Mode::Triangles => indices.chunks_exact(3).for_each(|t| emit(t[0], t[1], t[2])),
        Mode::TriangleStrip => {
            for i in 0..indices.len().saturating_sub(2) {
                let (a, b, c) = (indices[i], indices[i + 1], indices[i + 2]);
                if i % 2 == 0 { emit(a, b, c) } else { emit(b, a, c) }
            }
        }
        _ => {
            for i in 1..indices.len().saturating_sub(1) {
                emit(indices[0], indices[i], indices[i + 1]);
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- OBJ

fn read_obj(path: &Path, bytes: &[u8], soup: &mut Soup) -> Result<(), BakeError> {
    let text = obj_faces_only(bytes);
    let options = tobj::LoadOptions {
        triangulate: false,
        single_index: false,
        ignore_points: true,
        ignore_lines: true,
    };
    let mut reader = std::io::BufReader::new(text.as_slice());
    let (models, _materials) = tobj::load_obj_buf(&mut reader, &options, |_| {
        // Materials never change collision; a missing .mtl is fine.
        Ok(Default::default())
    })
    .map_err(|e| {
        let location = locate_obj_error(&text).unwrap_or(Location::File);
        BakeError::input(path, location, format!("invalid OBJ: {e}"))
    })?;
    // Faces so far over every model, in file order (for error lines).
    let mut faces_before = 0;
    for model in &models {
        let m = &model.mesh;
        // (An all-triangle mesh has no arities.)
        let arities: Vec<usize> = if m.face_arities.is_empty() {
            vec![3; m.indices.len() / 3]
        } else {
            m.face_arities.iter().map(|&n| n as usize).collect()
        };
        let first_face = faces_before;
        faces_before += arities.len();
        if soup.excluded.iter().any(|p| p.matches(&model.name)) {
            soup.report.excluded.push(format!("object \"{}\"", model.name));
            continue;
        }
        let loc = || Location::Primitive {
            node: model.name.clone(),
            primitive: 0,
        };
        let nverts = m.positions.len() / 3;
        let mut pos = Vec::with_capacity(nverts);
        for p in m.positions.chunks_exact(3) {
            let p = [p[0], p[1], p[2]];
            let q = soup
                .convert(p)
                .map_err(|m| BakeError::input(path, obj_vertex_line(&text, p).unwrap_or_else(loc), m))?;
            pos.push(q);
        }
        let base = soup.add_vertices(&pos)?;
        let mut at = 0;
        for (f, &n) in arities.iter().enumerate() {
            let face = m.indices.get(at..at + n).unwrap_or(&[]);
            at += n;
            let line = || obj_face_line(&text, first_face + f).unwrap_or_else(loc);
            if face.len() != n || face.iter().any(|&i| i as usize >= pos.len()) {
                return Err(BakeError::input(
                    path,
                    locate_obj_error(&text).unwrap_or_else(line),
                    "face index out of range",
                ));
            }
            let corners: Vec<[f64; 3]> = face.iter().map(|&i| pos[i as usize]).collect();
            let tris = triangulate_polygon(&corners).ok_or_else(|| {
                BakeError::input(
                    path,
                    line(),
                    format!("a face of {n} vertices that is not a simple polygon (it crosses itself)"),
                )
            })?;
            for t in tris {
                soup.push(t.map(|k| base + face[k]), true);
            }
        }
    }
    Ok(())
}

/// The OBJ text as tobj should see it: without a UTF-8 byte-order mark
/// (which would hide the first record) and with every line record (`l`,
/// polylines: no surface) blanked, so that line numbers stay.
fn obj_faces_only(bytes: &[u8]) -> Vec<u8> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut out = Vec::with_capacity(bytes.len());
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        let record = line.split(|b| b.is_ascii_whitespace()).find(|t| !t.is_empty());
        if record == Some(b"l") {
            out.extend(line.iter().filter(|&&b| b == b'\r' || b == b'\n'));
        } else {
            out.extend_from_slice(line);
        }
    }
    out
}

/// How far (relative to its size) a face's corners may lie off one plane
/// for it to be triangulated as a flat polygon.
const FLAT_FACE_REL: f64 = 1e-3;

/// Triangles of a polygon face (corner indices, each keeping the face's
/// winding), in the plane the face projects to best: a fan from its first
/// corner where none of the fan's triangles folds over (every convex face)
/// or the face is not flat, else by ear clipping. `None` for a flat face
/// that crosses itself.
fn triangulate_polygon(p: &[[f64; 3]]) -> Option<Vec<[usize; 3]>> {
    let n = p.len();
    if n < 3 {
        return Some(Vec::new());
    }
    let fan = || (1..n - 1).map(|i| [0, i, i + 1]).collect();
    if n == 3 {
        return Some(fan());
    }
    // Newell's normal; drop its largest axis.
    let mut nrm = [0.0f64; 3];
    for i in 0..n {
        let (a, b) = (p[i], p[(i + 1) % n]);
        nrm[0] += (a[1] - b[1]) * (a[2] + b[2]);
        nrm[1] += (a[2] - b[2]) * (a[0] + b[0]);
        nrm[2] += (a[0] - b[0]) * (a[1] + b[1]);
    }
    let axis = (0..3)
        .max_by(|&i, &j| nrm[i].abs().total_cmp(&nrm[j].abs()))
        .unwrap_or(2);
    if nrm[axis] == 0.0 {
        // No area (collinear corners): the fan's triangles are dropped as
        // degenerate.
        return Some(fan());
    }
    let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
    // Counter-clockwise in (u, v) when the normal points along +axis.
    let s = nrm[axis].signum();
    let q: Vec<[f64; 2]> = p.iter().map(|c| [c[u], c[v]]).collect();
    let turn = |a: usize, b: usize, c: usize| {
        s * ((q[b][0] - q[a][0]) * (q[c][1] - q[a][1]) - (q[b][1] - q[a][1]) * (q[c][0] - q[a][0]))
    };
    // Every fan triangle turning the face's way: the fan covers the face
    // without folding (true of every convex face). A face that is not flat
    // has no one right triangulation: the fan, as most readers make.
    if (1..n - 1).all(|i| turn(0, i, i + 1) >= 0.0) || !is_flat(p, nrm) {
        return Some(fan());
    }
    // A face crossing itself has no area-true triangulation.
    let cross = |a: [f64; 2], b: [f64; 2], c: [f64; 2]| (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
    for i in 0..n {
        for j in i + 2..n {
            if i == 0 && j == n - 1 {
                continue;
            }
            let (a, b, c, d) = (q[i], q[(i + 1) % n], q[j], q[(j + 1) % n]);
            let (d1, d2, d3, d4) = (cross(a, b, c), cross(a, b, d), cross(c, d, a), cross(c, d, b));
            if d1 * d2 < 0.0 && d3 * d4 < 0.0 {
                return None;
            }
        }
    }
    // Ear clipping: a convex corner whose triangle holds no other corner
    // (else a corner on the line of its neighbours: its triangle has no
    // area, and is dropped later as degenerate).
    let mut left: Vec<usize> = (0..n).collect();
    let mut out = Vec::with_capacity(n - 2);
    while left.len() > 3 {
        let m = left.len();
        let corner = |k: usize| (left[(k + m - 1) % m], left[k], left[(k + 1) % m]);
        let ear = (0..m).find(|&k| {
            let (a, b, c) = corner(k);
            turn(a, b, c) > 0.0
                && left.iter().all(|&x| {
                    x == a
                        || x == b
                        || x == c
                        || q[x] == q[a]
                        || q[x] == q[b]
                        || q[x] == q[c]
                        || !(turn(a, b, x) >= 0.0 && turn(b, c, x) >= 0.0 && turn(c, a, x) >= 0.0)
                })
        });
        let ear = ear.or_else(|| {
            (0..m).find(|&k| {
                let (a, b, c) = corner(k);
                turn(a, b, c) == 0.0
            })
        })?;
        let (a, b, c) = corner(ear);
        out.push([a, b, c]);
        left.remove(ear);
    }
    out.push([left[0], left[1], left[2]]);
    Some(out)
}

/// Whether a face's corners lie on one plane (normal `nrm`) within
/// [`FLAT_FACE_REL`] of its size.
fn is_flat(p: &[[f64; 3]], nrm: [f64; 3]) -> bool {
    let l = (nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]).sqrt();
    let m = p.len() as f64;
    let c = [0, 1, 2].map(|k| p.iter().map(|q| q[k]).sum::<f64>() / m);
    let size = (0..3)
        .map(|k| {
            p.iter().map(|q| q[k]).fold(f64::NEG_INFINITY, f64::max)
                - p.iter().map(|q| q[k]).fold(f64::INFINITY, f64::min)
        })
        .fold(0.0, f64::max);
    p.iter().all(|q| {
        ((q[0] - c[0]) * nrm[0] + (q[1] - c[1]) * nrm[1] + (q[2] - c[2]) * nrm[2]).abs() / l <= FLAT_FACE_REL * size
    })
}

/// The line of the `k`-th face record (from 0), for error messages.
fn obj_face_line(text: &[u8], k: usize) -> Option<Location> {
    String::from_utf8_lossy(text)
        .lines()
        .enumerate()
        .filter(|(_, l)| l.split_whitespace().next() == Some("f"))
        .nth(k)
        .map(|(n, _)| Location::Line { line: n + 1 })
}

/// The line of the first face that refers to a vertex that does not exist
/// (or does not parse), for error messages: tobj does not report lines.
fn locate_obj_error(bytes: &[u8]) -> Option<Location> {
    let text = String::from_utf8_lossy(bytes);
    let mut verts: i64 = 0;
    for (n, line) in text.lines().enumerate() {
        let mut it = line.split_whitespace();
        match it.next() {
            Some("v") => {
                verts += 1;
                if it.take(3).filter(|t| t.parse::<f64>().is_ok()).count() < 3 {
                    return Some(Location::Line { line: n + 1 });
                }
            }
            Some("f") => {
                let mut corners = 0;
                for tok in it {
                    corners += 1;
                    let first = tok.split('/').next().unwrap_or("");
                    match first.parse::<i64>() {
                        Ok(i) if (i > 0 && i <= verts) || (i < 0 && -i <= verts) => {}
                        _ => return Some(Location::Line { line: n + 1 }),
                    }
                }
                if corners < 3 {
                    return Some(Location::Line { line: n + 1 });
                }
            }
            _ => {}
        }
    }
    None
}

/// The line of the first `v` statement whose coordinates are `p` (NaN
/// matching NaN). Not found by index: tobj renumbers each model's vertices in
/// order of first use.
fn obj_vertex_line(bytes: &[u8], p: [f64; 3]) -> Option<Location> {
    let same = |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
    let text = String::from_utf8_lossy(bytes);
    text.lines().enumerate().find_map(|(n, line)| {
        let mut it = line.split_whitespace();
        if it.next() != Some("v") {
            return None;
        }
        let q: Vec<f64> = it.take(3).map(|t| t.parse().ok()).collect::<Option<_>>()?;
        (q.len() == 3 && (0..3).all(|k| same(q[k], p[k]))).then_some(Location::Line { line: n + 1 })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Against a reference by BTreeMap on the positions' bits: the first
    // use of a position numbers it; many duplicates, unused vertices, and
    // 0.0 / -0.0 (different bits, so different vertices, as before).
    #[test]
    fn weld_numbers_distinct_positions_in_order_of_first_use() {
        let mut rng = crate::geom::TestRng::new(7);
        for round in 0..60 {
            // The last rounds: many positions, most used several times.
            let n = if round < 50 {
                1 + rng.bits() as usize % 300
            } else {
                30_000
            };
            let vertices: Vec<[f64; 3]> = (0..n)
                .map(|_| {
                    [0, 1, 2].map(|_| match rng.bits() % 5 {
                        0 => 0.0,
                        1 => -0.0,
                        _ => (rng.bits() % 40) as f64 * 12.5,
                    })
                })
                .collect();
            let corners: Vec<u32> = (0..3 * (1 + rng.bits() as usize % (n + 200)))
                .map(|_| (rng.bits() as usize % n) as u32)
                .collect();
            let mut first = std::collections::BTreeMap::new();
            let mut expected_vertices = Vec::new();
            let expected: Vec<u32> = corners
                .iter()
                .map(|&c| {
                    let p = vertices[c as usize];
                    *first.entry(p.map(f64::to_bits)).or_insert_with(|| {
                        expected_vertices.push(p);
                        expected_vertices.len() as u32 - 1
                    })
                })
                .collect();
            let (welded, out) = weld(&vertices, &corners);
            assert_eq!(out, expected, "round {round}");
            let bits = |v: &[[f64; 3]]| v.iter().map(|p| p.map(f64::to_bits)).collect::<Vec<_>>();
            assert_eq!(bits(&welded), bits(&expected_vertices), "round {round}");
        }
    }

    /// Twice the signed area of a triangle in the XY plane.
    fn area_xy(a: [f64; 3], b: [f64; 3], c: [f64; 3]) -> f64 {
        (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
    }

    #[test]
    fn polygons_are_triangulated_keeping_their_area_and_facing() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut concave = 0;
        for case in 0..3000 {
            // A star-shaped polygon around the origin (simple, often
            // concave), counter-clockwise or not, in a tilted plane.
            // (One corner per sector of 2π/n: no gap reaches π, so the
            // origin sees every edge.)
            let n = 4 + (rnd() * 14.0) as usize;
            let sector = std::f64::consts::TAU / n as f64;
            let mut angles: Vec<f64> = (0..n).map(|i| (i as f64 + 0.9 * rnd()) * sector).collect();
            if case % 2 == 1 {
                angles.reverse();
            }
            let (sx, sy) = (rnd() - 0.5, rnd() - 0.5);
            let p: Vec<[f64; 3]> = angles
                .iter()
                .map(|&a| {
                    let r = 10.0 + 90.0 * rnd();
                    let (x, y) = (r * a.cos(), r * a.sin());
                    [x, y, sx * x + sy * y]
                })
                .collect();
            let shoelace: f64 = (0..n).map(|i| area_xy([0.0; 3], p[i], p[(i + 1) % n])).sum();
            let tris = triangulate_polygon(&p).unwrap_or_else(|| panic!("case {case}: {p:?}"));
            assert_eq!(tris.len(), n - 2);
            let areas: Vec<f64> = tris.iter().map(|t| area_xy(p[t[0]], p[t[1]], p[t[2]])).collect();
            // Same total, and no triangle turning against the face.
            let total: f64 = areas.iter().sum();
            assert!(
                (total - shoelace).abs() <= 1e-9 * shoelace.abs(),
                "case {case}: {total} vs {shoelace}"
            );
            assert!(
                areas.iter().all(|a| a * shoelace >= -1e-9 * shoelace.abs()),
                "case {case}: {areas:?}"
            );
            let fan_folds = (1..n - 1).any(|i| area_xy(p[0], p[i], p[i + 1]) * shoelace < 0.0);
            concave += usize::from(fan_folds);
        }
        assert!(concave > 500, "only {concave} polygons needed more than a fan");
        // A face crossing itself is refused; a twisted quad (not flat) is a fan.
        let bowtie = [
            [0.0, 0.0, 0.0],
            [10.0, 10.0, 0.0],
            [10.0, 0.0, 0.0],
            [0.0, 10.0, 0.0],
            [-5.0, 5.0, 0.0],
        ];
        assert_eq!(triangulate_polygon(&bowtie), None);
        let twisted = [
            [0.0, 0.0, 0.0],
            [100.0, 0.0, 0.0],
            [100.0, 100.0, 50.0],
            [0.0, 100.0, -50.0],
        ];
        assert_eq!(triangulate_polygon(&twisted), Some(vec![[0, 1, 2], [0, 2, 3]]));
    }
}
