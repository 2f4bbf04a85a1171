//! The files a bake of a level reads: the level itself and, for glTF, the
//! external files its JSON names (buffers, and images, which a bake does
//! not read but a caller must not overwrite either); for OBJ, the material
//! libraries its `mtllib` lines name (not read either). A caller uses it to
//! refuse an output that would replace one of its inputs.

use crate::stage::ingest::{GLB_MAGIC, percent_decode};
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

/// GLB header: magic, version, length; then the first chunk's length and
/// type, which is JSON.
const GLB_JSON_CHUNK: &[u8; 4] = b"JSON";
const GLB_PREFIX_BYTES: usize = 20;

/// `path`, then every external file its glTF JSON names (relative URIs,
/// resolved next to `path` with `%XX` escapes decoded, as ingest does) or
/// its OBJ `mtllib` lines name (next to `path`), each once. Best effort,
/// never an error: a file that cannot be read or parsed contributes only
/// `path` (its bake will report why).
pub fn input_files(path: &Path) -> Vec<PathBuf> {
    let mut out = vec![path.to_path_buf()];
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .unwrap_or_default();
    let json = match ext.as_str() {
        "gltf" => std::fs::read(path).ok(),
        "glb" => glb_json(path),
        "obj" => {
            for lib in obj_material_libraries(path) {
                if !out.contains(&lib) {
                    out.push(lib);
                }
            }
            None
        }
        _ => None,
    };
    let Some(doc) = json.and_then(|j| serde_json::from_slice::<serde_json::Value>(&j).ok()) else {
        return out;
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    for key in ["buffers", "images"] {
        let uris = doc[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| b["uri"].as_str());
        for uri in uris.filter(|u| !u.starts_with("data:")) {
            let file = dir.join(percent_decode(uri));
            if !out.contains(&file) {
                out.push(file);
            }
        }
    }
    out
}

/// The files an OBJ's `mtllib` lines name, next to it: each
/// whitespace-separated name, and the whole rest of the line when it has
/// spaces (one name with spaces, as some exporters write it). Reads the file
/// line by line into one buffer; a line that is not UTF-8 names nothing.
fn obj_material_libraries(path: &Path) -> Vec<PathBuf> {
    let Ok(file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut libs = Vec::new();
    let mut reader = std::io::BufReader::new(file);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let Some(rest) = line.trim_ascii_start().strip_prefix(b"mtllib") else {
            continue;
        };
        let Ok(rest) = std::str::from_utf8(rest) else {
            continue;
        };
        if !rest.starts_with(char::is_whitespace) {
            continue;
        }
        let rest = rest.trim();
        let whole = rest.contains(char::is_whitespace).then_some(rest);
        libs.extend(rest.split_whitespace().chain(whole).map(|name| dir.join(name)));
    }
    libs
}

/// The JSON chunk of the GLB at `path`, reading no more of the file than
/// the chunk (the BIN chunk after it may be large).
fn glb_json(path: &Path) -> Option<Vec<u8>> {
    let mut f = std::fs::File::open(path).ok()?;
    let file_len = f.metadata().ok()?.len();
    let mut head = [0u8; GLB_PREFIX_BYTES];
    f.read_exact(&mut head).ok()?;
    if &head[0..4] != GLB_MAGIC || &head[16..20] != GLB_JSON_CHUNK {
        return None;
    }
    let len = u64::from(u32::from_le_bytes([head[12], head[13], head[14], head[15]]));
    if len > file_len {
        return None;
    }
    let mut json = Vec::new();
    f.take(len).read_to_end(&mut json).ok()?;
    Some(json)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("walksurf-input-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("mkdir");
        dir
    }

    // A .gltf names a buffer (escaped), an image and a data URI: the two
    // files are listed next to it, the data URI is not.
    #[test]
    fn gltf_lists_its_external_buffers_and_images() {
        let dir = temp_dir("gltf");
        let level = dir.join("level.gltf");
        let json = r#"{"asset":{"version":"2.0"},
            "buffers":[{"uri":"my%20mesh.bin","byteLength":4},{"uri":"data:application/octet-stream;base64,AAAA","byteLength":3}],
            "images":[{"uri":"tex.png"},{"uri":"my%20mesh.bin"}]}"#;
        std::fs::write(&level, json).expect("write");
        assert_eq!(
            input_files(&level),
            [level.clone(), dir.join("my mesh.bin"), dir.join("tex.png")]
        );
        std::fs::remove_dir_all(&dir).expect("rm");
    }

    // A GLB's JSON chunk is read; a truncated one, an OBJ without `mtllib`
    // or a missing file give the path alone.
    #[test]
    fn glb_json_chunk_and_best_effort() {
        let dir = temp_dir("glb");
        let json = br#"{"buffers":[{"uri":"extra.bin"}]}"#;
        let mut glb = Vec::new();
        glb.extend_from_slice(b"glTF");
        glb.extend_from_slice(&2u32.to_le_bytes());
        glb.extend_from_slice(&((20 + json.len()) as u32).to_le_bytes());
        glb.extend_from_slice(&(json.len() as u32).to_le_bytes());
        glb.extend_from_slice(b"JSON");
        glb.extend_from_slice(json);
        let level = dir.join("level.glb");
        std::fs::write(&level, &glb).expect("write");
        assert_eq!(input_files(&level), [level.clone(), dir.join("extra.bin")]);
        std::fs::write(&level, &glb[..glb.len() - 3]).expect("write");
        assert_eq!(input_files(&level), vec![level.clone()]);
        let obj = dir.join("level.obj");
        std::fs::write(&obj, "v 0 0 0\nusemtl x\n").expect("write");
        assert_eq!(input_files(&obj), vec![obj.clone()]);
        let missing = dir.join("missing.gltf");
        assert_eq!(input_files(&missing), vec![missing]);
        std::fs::remove_dir_all(&dir).expect("rm");
    }

    // An OBJ's material libraries: several on a line, a repeat listed once,
    // a name with spaces (also as its words), `mtllibx` not a keyword, a
    // line that is not UTF-8 skipped, a CRLF line's name without the CR.
    #[test]
    fn obj_lists_its_material_libraries() {
        let dir = temp_dir("obj");
        let obj = dir.join("level.obj");
        let text = b"# level\nmtllib a.mtl b.mtl\nv 0 0 0\n  mtllib a.mtl\nmtllibx c.mtl\nmtllib \xff.mtl\nmtllib my mats.mtl\r\n";
        std::fs::write(&obj, text).expect("write");
        assert_eq!(
            input_files(&obj),
            [
                obj.clone(),
                dir.join("a.mtl"),
                dir.join("b.mtl"),
                dir.join("a.mtl b.mtl"),
                dir.join("my"),
                dir.join("mats.mtl"),
                dir.join("my mats.mtl")
            ]
        );
        std::fs::remove_dir_all(&dir).expect("rm");
    }
}
