//! The bake configuration: every field with its unit and limits.

use serde::{Deserialize, Serialize};

/// Which input axis points up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum UpAxis {
    /// glTF convention: Y up, converted as `(x, y, z) → (x, −z, y)`.
    #[default]
    Y,
    /// Already Z up: no rotation.
    Z,
}

/// Most worker threads a bake starts: more only costs time spawning them
/// (the output is the same for any count).
pub const MAX_THREADS: usize = 1024;

/// Everything a bake depends on besides the triangles.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BakeConfig {
    /// Input units. [Limit: > 0] [Units: metres per input unit]
    pub metres_per_unit: f64,
    /// Input up axis.
    pub up: UpAxis,
    /// glTF scene to read; `None` = the default scene (or scene 0).
    pub scene: Option<usize>,
    /// Node-name globs whose nodes (and their children) do not collide.
    pub exclude: Vec<String>,
    /// Largest agent radius the file supports. [Limit: > 0] [Units: cm]
    pub max_agent_radius_cm: f64,
    /// Largest agent half-height the file supports. [Limit: >= radius] [Units: cm]
    pub max_agent_half_height_cm: f64,
    /// Walkable when |normal.z| is at least this. [Limit: (0, 1]]
    pub walkable_normal_z: f64,
    /// Collected (not a wall) when |normal.z| is at least this. [Limit: [0, walkable)]
    pub collected_normal_z: f64,
    /// Longest horizontal sweep supported. [Limit: > 0] [Units: cm]
    pub max_sweep_len_cm: f64,
    /// Flat groups: largest distance of a vertex from the group's plane. [Units: cm]
    pub coplanar_dist_cm: f64,
    /// Worker threads; 0 = one per core. [Limit: <= MAX_THREADS]
    pub threads: usize,
}

impl Default for BakeConfig {
    fn default() -> Self {
        BakeConfig {
            metres_per_unit: 1.0,
            up: UpAxis::Y,
            scene: None,
            exclude: Vec::new(),
            max_agent_radius_cm: 42.0,
            max_agent_half_height_cm: 96.0,
            walkable_normal_z: 0.71,
            collected_normal_z: 0.015,
            max_sweep_len_cm: 256.0,
            coplanar_dist_cm: 0.002,
            threads: 0,
        }
    }
}

impl BakeConfig {
    /// Each tile holds the geometry within this distance of its square.
    pub fn tile_halo_cm(&self) -> f64 {
        self.max_agent_radius_cm + crate::tolerance::HALO_SLACK_CM
    }

    /// Headroom a cell needs to be walkable: the largest agent's full
    /// height. [Units: cm]
    pub fn headroom_cm(&self) -> f64 {
        2.0 * self.max_agent_half_height_cm
    }

    /// Checks every limit; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        let positive = |v: f64, name: &str| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(format!("{name} must be a positive number (got {v})"))
            }
        };
        positive(self.metres_per_unit, "scale (metres_per_unit)")?;
        positive(self.max_agent_radius_cm, "max_agent_radius_cm")?;
        positive(self.max_agent_half_height_cm, "max_agent_half_height_cm")?;
        positive(self.max_sweep_len_cm, "max_sweep_len_cm")?;
        positive(self.coplanar_dist_cm, "coplanar_dist_cm")?;
        if self.max_agent_half_height_cm < self.max_agent_radius_cm {
            return Err("max_agent_half_height_cm must be at least max_agent_radius_cm".into());
        }
        if !(self.walkable_normal_z > 0.0 && self.walkable_normal_z <= 1.0) {
            return Err("walkable_normal_z must be in (0, 1]".into());
        }
        if !(self.collected_normal_z >= 0.0 && self.collected_normal_z < self.walkable_normal_z) {
            return Err("collected_normal_z must be in [0, walkable_normal_z)".into());
        }
        if self.threads > MAX_THREADS {
            return Err(format!("threads must be at most {MAX_THREADS} (got {})", self.threads));
        }
        if self.tile_halo_cm() > walksurf_format::MAX_TILE_HALO_CM {
            return Err(format!(
                "max_agent_radius_cm is too large: the tile halo may be at most {} cm",
                walksurf_format::MAX_TILE_HALO_CM
            ));
        }
        Ok(())
    }

    /// A canonical hash of every parameter that changes the baked bytes.
    pub fn params_hash(&self) -> u64 {
        let mut s = serde_json::to_string(&self.hashed_view()).unwrap_or_default();
        s.push_str(env!("CARGO_PKG_VERSION"));
        walksurf_format::hash64(s.as_bytes())
    }

    fn hashed_view(&self) -> BakeConfig {
        // Threads never change the bytes.
        BakeConfig {
            threads: 0,
            ..self.clone()
        }
    }
}
