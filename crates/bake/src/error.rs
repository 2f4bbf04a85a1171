//! Typed bake errors. Every variant names the input that caused it.

use std::path::PathBuf;

/// Where in the input a problem is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// The whole file.
    File,
    /// A glTF node and primitive.
    Primitive { node: String, primitive: usize },
    /// A glTF buffer.
    Buffer { index: usize },
    /// An OBJ line (1-based).
    Line { line: usize },
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::File => Ok(()),
            Location::Primitive { node, primitive } => {
                write!(f, ": node \"{node}\" primitive {primitive}")
            }
            Location::Buffer { index } => write!(f, ": buffer {index}"),
            Location::Line { line } => write!(f, ": line {line}"),
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BakeError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}{location}: {message}")]
    Input {
        path: PathBuf,
        location: Location,
        message: String,
    },
    #[error("invalid configuration: {0}")]
    Config(String),
    #[error("{path}: unsupported input format (expected .gltf, .glb or .obj)")]
    UnknownFormat { path: PathBuf },
    #[error("level too large: {0}")]
    TooLarge(String),
    #[error("tile ({tile_x}, {tile_y}): {message}")]
    Tile { tile_x: i32, tile_y: i32, message: String },
}

impl BakeError {
    pub(crate) fn input(path: &std::path::Path, location: Location, message: impl Into<String>) -> Self {
        BakeError::Input {
            path: path.to_path_buf(),
            location,
            message: message.into(),
        }
    }
}
