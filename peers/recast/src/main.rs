//! `walksurf-peer-recast`: bakes a level with Recast (recastnavigation 1.6,
//! through `recastnavigation-sys`) the way RecastDemo's `Sample_TileMesh`
//! does, single-threaded, and prints the time and what was built.
//!
//! Input: the level read through walksurf's own ingest
//! (`walksurf_bake::stage::ingest`), so both bakers see exactly the same
//! welded triangles. walksurf's frame is Z up, cm; Recast's is Y up, so each
//! vertex goes `(x, y, z) → (x, z, −y)` (a proper rotation: windings and
//! thus Recast's one-sided slope test are kept; for glTF/OBJ input this is
//! the file's own frame, in cm). Recast works in the same cm units.
//!
//! Timed (from the f32 triangles in memory to every tile's Detour data
//! built): the triangles' assignment to tiles (RecastDemo does it once at
//! load time with its chunky mesh; here it is timed, like walksurf's
//! `group_tiles`), then per tile: heightfield, slope marking and
//! rasterisation, the three span filters, compact heightfield, erosion,
//! regions (watershed: distance field + `rcBuildRegions`, or monotone),
//! contours, poly mesh, detail mesh and `dtCreateNavMeshData`. Not timed:
//! reading the file, the conversion to f32, freeing the tile data.
//! `dtNavMesh::addTile` is a load-time step and not done.
//!
//! Unsafe: every Recast and Detour call is FFI. Objects are owned by
//! [`Owned`], which frees them with their Recast free function.

use anyhow::{Context, Result, bail};
use clap::{Parser, ValueEnum};
use recastnavigation_sys as rc;
use std::os::raw::c_int;
use std::path::PathBuf;
use std::time::Instant;
use walksurf_bake::{BakeConfig, UpAxis};

#[derive(Parser, Debug)]
#[command(version, about = "Bakes a level with Recast (single thread) and reports the time.")]
struct Args {
    /// The level (glTF, GLB or OBJ), read through walksurf's ingest.
    input: PathBuf,
    /// glTF scene index (as `walksurf bake --scene`).
    #[arg(long)]
    scene: Option<usize>,
    /// Node-name glob to drop (as `walksurf bake --exclude`).
    #[arg(long)]
    exclude: Vec<String>,
    /// Metres per input unit (as `walksurf bake --scale`).
    #[arg(long)]
    scale: Option<f64>,
    /// Input up axis, y or z (as `walksurf bake --up`).
    #[arg(long)]
    up: Option<String>,
    /// Agent radius (default: walksurf's `max_agent_radius_cm`). [Units: cm]
    #[arg(long)]
    radius_cm: Option<f64>,
    /// Agent half-height (default: walksurf's `max_agent_half_height_cm`). [Units: cm]
    #[arg(long)]
    half_height_cm: Option<f64>,
    /// Bakes in this process; the fastest counts.
    #[arg(long, default_value_t = 1)]
    runs: usize,
    /// Region partitioning.
    #[arg(long, value_enum, default_value_t = Partition::Watershed)]
    partition: Partition,
    /// One JSON object on stdout instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Partition {
    /// Distance field + watershed (`rcBuildRegions`), Recast's default.
    Watershed,
    /// `rcBuildRegionsMonotone`: faster, long thin polygons.
    Monotone,
}

/// Recast's settings, in cm (Recast's world unit here) or voxels.
#[derive(Clone, Debug)]
struct Settings {
    /// xz cell size. [Units: cm]
    cell_size_cm: f32,
    /// y cell size. [Units: cm]
    cell_height_cm: f32,
    /// Agent height: twice walksurf's default half-height (96 cm). [Units: cm]
    agent_height_cm: f32,
    /// walksurf's default agent radius. [Units: cm]
    agent_radius_cm: f32,
    /// Highest step the agent climbs. [Units: cm]
    agent_climb_cm: f32,
    /// Steepest walkable slope: acos(walksurf's `walkable_normal_z`). [Units: degrees]
    walkable_slope_deg: f32,
    /// Tile side. [Units: vx]
    tile_size_vx: c_int,
    /// Longest contour edge (RecastDemo: 12 m). [Units: cm]
    max_edge_len_cm: f32,
    /// Contour simplification error (RecastDemo's 1.3). [Units: vx]
    max_simplification_error_vx: f32,
    /// Regions smaller than this side² cells are removed (RecastDemo: 8). [Units: vx]
    region_min_size_vx: c_int,
    /// Regions smaller than this side² cells are merged (RecastDemo: 20). [Units: vx]
    region_merge_size_vx: c_int,
    /// Vertices per polygon (RecastDemo: 6, Detour's maximum).
    max_verts_per_poly: c_int,
    /// Detail mesh sample spacing (RecastDemo: 6 cells). [Units: cells]
    detail_sample_dist_cells: f32,
    /// Detail mesh height error (RecastDemo: 1 cell height). [Units: cell heights]
    detail_sample_max_error_ch: f32,
}

impl Settings {
    fn new(config: &BakeConfig) -> Settings {
        Settings {
            cell_size_cm: 20.0,
            cell_height_cm: 10.0,
            agent_height_cm: (2.0 * config.max_agent_half_height_cm) as f32,
            agent_radius_cm: config.max_agent_radius_cm as f32,
            agent_climb_cm: 45.0,
            walkable_slope_deg: config.walkable_normal_z.acos().to_degrees() as f32,
            tile_size_vx: 160,
            max_edge_len_cm: 1200.0,
            max_simplification_error_vx: 1.3,
            region_min_size_vx: 8,
            region_merge_size_vx: 20,
            max_verts_per_poly: 6,
            detail_sample_dist_cells: 6.0,
            detail_sample_max_error_ch: 1.0,
        }
    }

    /// `Sample_TileMesh`'s conversions to voxels.
    fn walkable_height_vx(&self) -> c_int {
        (self.agent_height_cm / self.cell_height_cm).ceil() as c_int
    }
    fn walkable_climb_vx(&self) -> c_int {
        (self.agent_climb_cm / self.cell_height_cm).floor() as c_int
    }
    fn walkable_radius_vx(&self) -> c_int {
        (self.agent_radius_cm / self.cell_size_cm).ceil() as c_int
    }
    fn border_vx(&self) -> c_int {
        self.walkable_radius_vx() + 3
    }
    fn max_edge_len_vx(&self) -> c_int {
        (self.max_edge_len_cm / self.cell_size_cm) as c_int
    }

    fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "cs_cm": self.cell_size_cm,
            "ch_cm": self.cell_height_cm,
            "tile_size_vx": self.tile_size_vx,
            "tile_size_cm": self.tile_size_vx as f32 * self.cell_size_cm,
            "border_vx": self.border_vx(),
            "walkable_height_vx": self.walkable_height_vx(),
            "walkable_climb_vx": self.walkable_climb_vx(),
            "walkable_radius_vx": self.walkable_radius_vx(),
            "walkable_slope_deg": self.walkable_slope_deg,
            "max_edge_len_vx": self.max_edge_len_vx(),
            "max_simplification_error_vx": self.max_simplification_error_vx,
            "min_region_area_vx2": self.region_min_size_vx * self.region_min_size_vx,
            "merge_region_area_vx2": self.region_merge_size_vx * self.region_merge_size_vx,
            "max_verts_per_poly": self.max_verts_per_poly,
            "detail_sample_dist_cm": self.detail_sample_dist_cells * self.cell_size_cm,
            "detail_sample_max_error_cm": self.detail_sample_max_error_ch * self.cell_height_cm,
        })
    }
}

/// The level in Recast's frame: Y up, cm.
struct Geometry {
    verts: Vec<f32>,
    tris: Vec<c_int>,
    /// `false`: the input forbids standing on it (walksurf's
    /// `walkable_allowed`); rasterised as an obstacle only.
    walkable_allowed: Vec<bool>,
    bmin: [f32; 3],
    bmax: [f32; 3],
}

impl Geometry {
    fn from_mesh(mesh: &walksurf_bake::Mesh) -> Result<Geometry> {
        let verts: Vec<f32> = mesh
            .vertices
            .iter()
            .flat_map(|&[x, y, z]| [x as f32, z as f32, -y as f32])
            .collect();
        let tris: Vec<c_int> = mesh.triangles.iter().flatten().map(|&i| i as c_int).collect();
        if verts.is_empty() || tris.is_empty() {
            bail!("no triangles");
        }
        let (mut bmin, mut bmax) = ([0.0; 3], [0.0; 3]);
        // SAFETY: `verts` holds `len / 3` vertices of 3 floats.
        unsafe {
            rc::rcCalcBounds(
                verts.as_ptr(),
                (verts.len() / 3) as c_int,
                bmin.as_mut_ptr(),
                bmax.as_mut_ptr(),
            )
        };
        Ok(Geometry {
            verts,
            tris,
            walkable_allowed: mesh.walkable_allowed.clone(),
            bmin,
            bmax,
        })
    }

    fn vertex_count(&self) -> c_int {
        (self.verts.len() / 3) as c_int
    }
}

/// A Recast object, freed on drop by its Recast free function.
struct Owned<T> {
    ptr: *mut T,
    free: unsafe extern "C" fn(*mut T),
}

impl<T> Owned<T> {
    fn new(ptr: *mut T, free: unsafe extern "C" fn(*mut T), what: &str) -> Result<Owned<T>> {
        if ptr.is_null() {
            bail!("out of memory allocating {what}");
        }
        Ok(Owned { ptr, free })
    }
}

impl<T> Drop for Owned<T> {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from the matching rcAlloc* and is freed once.
        unsafe { (self.free)(self.ptr) }
    }
}

/// One tile's Detour data, freed with `dtFree`.
struct TileData(*mut u8);

impl Drop for TileData {
    fn drop(&mut self) {
        // SAFETY: allocated by dtCreateNavMeshData (dtAlloc), freed once.
        unsafe { rc::dtFree(self.0.cast()) }
    }
}

/// Milliseconds per pipeline step, summed over tiles.
#[derive(Clone, Debug, Default)]
struct Phases {
    group_tiles: f64,
    rasterize: f64,
    filter: f64,
    compact: f64,
    erode: f64,
    regions: f64,
    contours: f64,
    poly_mesh: f64,
    detail_mesh: f64,
    navmesh_data: f64,
    /// The sanity numbers (polygon area): subtracted from the total.
    untimed: f64,
}

impl Phases {
    fn to_json(&self) -> serde_json::Value {
        serde_json::json!([
            ["group_tiles", self.group_tiles],
            ["rasterize", self.rasterize],
            ["filter", self.filter],
            ["compact", self.compact],
            ["erode", self.erode],
            ["regions", self.regions],
            ["contours", self.contours],
            ["poly_mesh", self.poly_mesh],
            ["detail_mesh", self.detail_mesh],
            ["navmesh_data", self.navmesh_data],
        ])
    }
}

/// What one bake built.
#[derive(Debug, Default)]
struct Built {
    ms: f64,
    phases: Phases,
    grid_tiles: usize,
    /// Tiles with at least one polygon.
    tiles: usize,
    polys: usize,
    poly_verts: usize,
    detail_tris: usize,
    navmesh_bytes: usize,
    /// Area of the polygons projected on the ground plane. [Units: m²]
    poly_area_m2: f64,
}

/// A stopwatch: `lap(&mut x)` adds the time since the previous lap to `x`.
struct Laps(Instant);

impl Laps {
    fn lap(&mut self, into: &mut f64) {
        let now = Instant::now();
        *into += (now - self.0).as_secs_f64() * 1e3;
        self.0 = now;
    }
}

/// Bakes every tile; the time covers everything but freeing the tile data.
fn bake(ctx: *mut rc::rcContext, geom: &Geometry, s: &Settings, partition: Partition) -> Result<Built> {
    let start = Instant::now();
    let mut laps = Laps(start);
    let mut built = Built::default();
    let (mut gw, mut gh) = (0, 0);
    // SAFETY: bounds are 3 floats each.
    unsafe { rc::rcCalcGridSize(geom.bmin.as_ptr(), geom.bmax.as_ptr(), s.cell_size_cm, &mut gw, &mut gh) };
    let ts = s.tile_size_vx;
    let (tw, th) = ((gw + ts - 1) / ts, (gh + ts - 1) / ts);
    let tile_cm = ts as f32 * s.cell_size_cm;
    let border_cm = s.border_vx() as f32 * s.cell_size_cm;

    // Triangles by tile (their xz box against the tile square plus border).
    let mut by_tile: Vec<TileTris> = (0..tw * th).map(|_| TileTris::default()).collect();
    let cell = |v: f32, lo: f32, n: c_int| (((v - lo) / tile_cm).floor() as c_int).clamp(0, n - 1);
    for (t, tri) in geom.tris.chunks_exact(3).enumerate() {
        let (mut lo, mut hi) = ([f32::MAX; 2], [f32::MIN; 2]);
        for &i in tri {
            let v = &geom.verts[3 * i as usize..];
            for (k, c) in [0, 2].into_iter().enumerate() {
                lo[k] = lo[k].min(v[c]);
                hi[k] = hi[k].max(v[c]);
            }
        }
        let x0 = cell(lo[0] - border_cm, geom.bmin[0], tw);
        let x1 = cell(hi[0] + border_cm, geom.bmin[0], tw);
        let z0 = cell(lo[1] - border_cm, geom.bmin[2], th);
        let z1 = cell(hi[1] + border_cm, geom.bmin[2], th);
        for z in z0..=z1 {
            for x in x0..=x1 {
                let list = &mut by_tile[(z * tw + x) as usize];
                list.tris.extend_from_slice(tri);
                list.ids.push(t as u32);
            }
        }
    }
    laps.lap(&mut built.phases.group_tiles);

    let mut data = Vec::new();
    let mut areas = Vec::new();
    for z in 0..th {
        for x in 0..tw {
            let tris = &by_tile[(z * tw + x) as usize];
            let bmin = [
                geom.bmin[0] + x as f32 * tile_cm,
                geom.bmin[1],
                geom.bmin[2] + z as f32 * tile_cm,
            ];
            let bmax = [
                geom.bmin[0] + (x + 1) as f32 * tile_cm,
                geom.bmax[1],
                geom.bmin[2] + (z + 1) as f32 * tile_cm,
            ];
            let tile = Tile { x, z, bmin, bmax, tris };
            if let Some(d) = build_tile(ctx, geom, s, partition, &tile, &mut areas, &mut laps, &mut built)
                .with_context(|| format!("tile ({x}, {z})"))?
            {
                data.push(d);
            }
        }
    }
    built.ms = start.elapsed().as_secs_f64() * 1e3 - built.phases.untimed;
    built.grid_tiles = (tw * th) as usize;
    drop(data);
    Ok(built)
}

struct Tile<'a> {
    x: c_int,
    z: c_int,
    /// The tile square (without border), y over the whole level. [Units: cm]
    bmin: [f32; 3],
    bmax: [f32; 3],
    /// The triangles that touch the tile and its border.
    tris: &'a TileTris,
}

/// A tile's triangles (RecastDemo's chunky mesh nodes hold the same: index
/// triples copied in tile order).
#[derive(Default)]
struct TileTris {
    /// Vertex index triples.
    tris: Vec<c_int>,
    /// Input triangle of each triple.
    ids: Vec<u32>,
}

/// `Sample_TileMesh::buildTileMesh`. `None` for a tile without polygons.
#[allow(clippy::too_many_arguments)]
fn build_tile(
    ctx: *mut rc::rcContext,
    geom: &Geometry,
    s: &Settings,
    partition: Partition,
    tile: &Tile<'_>,
    areas: &mut Vec<u8>,
    laps: &mut Laps,
    built: &mut Built,
) -> Result<Option<TileData>> {
    // Time between tiles counts in the total only.
    laps.lap(&mut 0.0);
    let p = &mut built.phases;
    let border = s.border_vx();
    let size = ts_with_border(s);
    let b = border as f32 * s.cell_size_cm;
    let bmin = [tile.bmin[0] - b, tile.bmin[1], tile.bmin[2] - b];
    let bmax = [tile.bmax[0] + b, tile.bmax[1], tile.bmax[2] + b];
    let (height, climb, radius) = (s.walkable_height_vx(), s.walkable_climb_vx(), s.walkable_radius_vx());
    let ntris = tile.tris.ids.len() as c_int;

    // SAFETY (whole block): every pointer is either a live Owned object or a
    // slice of the stated length; Recast reads `ntris * 3` indices below the
    // vertex count and writes `ntris` area ids.
    unsafe {
        let solid = Owned::new(rc::rcAllocHeightfield(), rc::rcFreeHeightField, "heightfield")?;
        if !rc::rcCreateHeightfield(
            ctx,
            solid.ptr,
            size,
            size,
            bmin.as_ptr(),
            bmax.as_ptr(),
            s.cell_size_cm,
            s.cell_height_cm,
        ) {
            bail!("rcCreateHeightfield failed");
        }
        areas.clear();
        areas.resize(ntris as usize, 0);
        rc::rcMarkWalkableTriangles(
            ctx,
            s.walkable_slope_deg,
            geom.verts.as_ptr(),
            geom.vertex_count(),
            tile.tris.tris.as_ptr(),
            ntris,
            areas.as_mut_ptr(),
        );
        // Triangles the input forbids standing on stay obstacles.
        for (area, &t) in areas.iter_mut().zip(&tile.tris.ids) {
            if !geom.walkable_allowed[t as usize] {
                *area = rc::RC_NULL_AREA;
            }
        }
        if !rc::rcRasterizeTriangles(
            ctx,
            geom.verts.as_ptr(),
            geom.vertex_count(),
            tile.tris.tris.as_ptr(),
            areas.as_ptr(),
            ntris,
            solid.ptr,
            climb,
        ) {
            bail!("rcRasterizeTriangles failed");
        }
        laps.lap(&mut p.rasterize);

        rc::rcFilterLowHangingWalkableObstacles(ctx, climb, solid.ptr);
        rc::rcFilterLedgeSpans(ctx, height, climb, solid.ptr);
        rc::rcFilterWalkableLowHeightSpans(ctx, height, solid.ptr);
        laps.lap(&mut p.filter);

        let chf = Owned::new(
            rc::rcAllocCompactHeightfield(),
            rc::rcFreeCompactHeightfield,
            "compact heightfield",
        )?;
        if !rc::rcBuildCompactHeightfield(ctx, height, climb, solid.ptr, chf.ptr) {
            bail!("rcBuildCompactHeightfield failed");
        }
        drop(solid);
        laps.lap(&mut p.compact);

        if !rc::rcErodeWalkableArea(ctx, radius, chf.ptr) {
            bail!("rcErodeWalkableArea failed");
        }
        laps.lap(&mut p.erode);

        let min_area = s.region_min_size_vx * s.region_min_size_vx;
        let merge_area = s.region_merge_size_vx * s.region_merge_size_vx;
        match partition {
            Partition::Watershed => {
                if !rc::rcBuildDistanceField(ctx, chf.ptr) {
                    bail!("rcBuildDistanceField failed");
                }
                if !rc::rcBuildRegions(ctx, chf.ptr, border, min_area, merge_area) {
                    bail!("rcBuildRegions failed");
                }
            }
            Partition::Monotone => {
                if !rc::rcBuildRegionsMonotone(ctx, chf.ptr, border, min_area, merge_area) {
                    bail!("rcBuildRegionsMonotone failed");
                }
            }
        }
        laps.lap(&mut p.regions);

        let cset = Owned::new(rc::rcAllocContourSet(), rc::rcFreeContourSet, "contour set")?;
        if !rc::rcBuildContours(
            ctx,
            chf.ptr,
            s.max_simplification_error_vx,
            s.max_edge_len_vx(),
            cset.ptr,
            rc::rcBuildContoursFlags_RC_CONTOUR_TESS_WALL_EDGES as c_int,
        ) {
            bail!("rcBuildContours failed");
        }
        laps.lap(&mut p.contours);
        if (*cset.ptr).nconts == 0 {
            return Ok(None);
        }

        let pmesh = Owned::new(rc::rcAllocPolyMesh(), rc::rcFreePolyMesh, "poly mesh")?;
        if !rc::rcBuildPolyMesh(ctx, cset.ptr, s.max_verts_per_poly, pmesh.ptr) {
            bail!("rcBuildPolyMesh failed");
        }
        laps.lap(&mut p.poly_mesh);

        let dmesh = Owned::new(rc::rcAllocPolyMeshDetail(), rc::rcFreePolyMeshDetail, "detail mesh")?;
        if !rc::rcBuildPolyMeshDetail(
            ctx,
            pmesh.ptr,
            chf.ptr,
            s.detail_sample_dist_cells * s.cell_size_cm,
            s.detail_sample_max_error_ch * s.cell_height_cm,
            dmesh.ptr,
        ) {
            bail!("rcBuildPolyMeshDetail failed");
        }
        drop(chf);
        drop(cset);
        laps.lap(&mut p.detail_mesh);

        let pm = &mut *pmesh.ptr;
        let dm = &*dmesh.ptr;
        if pm.npolys == 0 {
            return Ok(None);
        }
        if pm.nverts >= 0xffff {
            bail!("{} vertices: too many for one Detour tile", pm.nverts);
        }
        // Sample_TileMesh: walkable area → ground, flag "walk".
        for i in 0..pm.npolys as usize {
            if *pm.areas.add(i) == rc::RC_WALKABLE_AREA {
                *pm.areas.add(i) = 0;
                *pm.flags.add(i) = 1;
            }
        }
        // SAFETY: every field is a pointer, number or bool; zero is "none".
        let mut params: rc::dtNavMeshCreateParams = std::mem::zeroed();
        params.verts = pm.verts;
        params.vertCount = pm.nverts;
        params.polys = pm.polys;
        params.polyAreas = pm.areas;
        params.polyFlags = pm.flags;
        params.polyCount = pm.npolys;
        params.nvp = pm.nvp;
        params.detailMeshes = dm.meshes;
        params.detailVerts = dm.verts;
        params.detailVertsCount = dm.nverts;
        params.detailTris = dm.tris;
        params.detailTriCount = dm.ntris;
        params.walkableHeight = s.agent_height_cm;
        params.walkableRadius = s.agent_radius_cm;
        params.walkableClimb = s.agent_climb_cm;
        params.tileX = tile.x;
        params.tileY = tile.z;
        params.tileLayer = 0;
        params.bmin = pm.bmin;
        params.bmax = pm.bmax;
        params.cs = s.cell_size_cm;
        params.ch = s.cell_height_cm;
        params.buildBvTree = true;
        let mut out: *mut u8 = std::ptr::null_mut();
        let mut out_len: c_int = 0;
        if !rc::dtCreateNavMeshData(&mut params, &mut out, &mut out_len) {
            bail!("dtCreateNavMeshData failed");
        }
        let data = TileData(out);
        laps.lap(&mut p.navmesh_data);

        built.tiles += 1;
        built.polys += pm.npolys as usize;
        built.poly_verts += pm.nverts as usize;
        built.detail_tris += dm.ntris as usize;
        built.navmesh_bytes += out_len as usize;
        built.poly_area_m2 += poly_area_cm2(pm) / 1e4;
        laps.lap(&mut built.phases.untimed);
        Ok(Some(data))
    }
}

fn ts_with_border(s: &Settings) -> c_int {
    s.tile_size_vx + 2 * s.border_vx()
}

/// Sum of the polygons' xz areas. [Units: cm²]
///
/// # Safety
/// `pm` must be a built poly mesh.
unsafe fn poly_area_cm2(pm: &rc::rcPolyMesh) -> f64 {
    let nvp = pm.nvp as usize;
    let cs = pm.cs as f64;
    let mut sum = 0.0;
    for i in 0..pm.npolys as usize {
        // SAFETY: polys holds npolys * 2 * nvp indices; verts 3 per vertex.
        let poly = unsafe { std::slice::from_raw_parts(pm.polys.add(i * 2 * nvp), nvp) };
        let n = poly.iter().take_while(|&&v| v != rc::RC_MESH_NULL_IDX).count();
        let mut a = 0.0;
        for j in 0..n {
            let (p, q) = (poly[j] as usize, poly[(j + 1) % n] as usize);
            // SAFETY: vertex indices are below nverts.
            let (px, pz, qx, qz) = unsafe {
                (
                    *pm.verts.add(3 * p) as f64,
                    *pm.verts.add(3 * p + 2) as f64,
                    *pm.verts.add(3 * q) as f64,
                    *pm.verts.add(3 * q + 2) as f64,
                )
            };
            a += px * qz - qx * pz;
        }
        sum += a.abs() / 2.0 * cs * cs;
    }
    sum
}

fn main() -> Result<()> {
    let args = Args::parse();
    let mut config = BakeConfig {
        scene: args.scene,
        exclude: args.exclude.clone(),
        threads: 1,
        ..BakeConfig::default()
    };
    if let Some(r) = args.radius_cm {
        config.max_agent_radius_cm = r;
    }
    if let Some(h) = args.half_height_cm {
        config.max_agent_half_height_cm = h;
    }
    if let Some(s) = args.scale {
        config.metres_per_unit = s;
    }
    match args.up.as_deref() {
        None | Some("y") => {}
        Some("z") => config.up = UpAxis::Z,
        Some(other) => bail!("--up must be y or z (got {other})"),
    }
    if args.runs == 0 {
        bail!("--runs must be at least 1");
    }
    let t = Instant::now();
    let (mesh, _) = walksurf_bake::stage::ingest::ingest(&args.input, &config)
        .with_context(|| format!("reading {}", args.input.display()))?;
    let ingest_ms = t.elapsed().as_secs_f64() * 1e3;
    let geom = Geometry::from_mesh(&mesh)?;
    let settings = Settings::new(&config);

    // SAFETY: a plain rcContext (logging and timers are no-ops), deleted below.
    let ctx = unsafe { rc::CreateContext(false) };
    if ctx.is_null() {
        bail!("cannot create a Recast context");
    }
    let mut runs_ms = Vec::with_capacity(args.runs);
    let mut best: Option<Built> = None;
    let mut result = Ok(());
    for _ in 0..args.runs {
        match bake(ctx, &geom, &settings, args.partition) {
            Ok(b) => {
                runs_ms.push(b.ms);
                if best.as_ref().is_none_or(|x| b.ms < x.ms) {
                    best = Some(b);
                }
            }
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    // SAFETY: created above, no longer used.
    unsafe { rc::DeleteContext(ctx) };
    result.with_context(|| format!("baking {} with Recast", args.input.display()))?;
    let Some(b) = best else { bail!("no run") };
    if b.polys == 0 {
        // Reported, not an error: the comparison script flags it.
        eprintln!("warning: {}: Recast built no polygon", args.input.display());
    }

    if args.json {
        let v = serde_json::json!({
            "input_path": args.input.display().to_string(),
            "triangles": mesh.triangles.len(),
            "vertices": mesh.vertices.len(),
            "ingest_ms": ingest_ms,
            "partition": format!("{:?}", args.partition).to_lowercase(),
            "runs_ms": runs_ms,
            "ms": b.ms,
            "phases_ms": b.phases.to_json(),
            "grid_tiles": b.grid_tiles,
            "tiles": b.tiles,
            "polys": b.polys,
            "poly_verts": b.poly_verts,
            "detail_tris": b.detail_tris,
            "navmesh_bytes": b.navmesh_bytes,
            "poly_area_m2": b.poly_area_m2,
            "settings": settings.to_json(),
        });
        println!("{v}");
    } else {
        println!(
            "recast {}: {} triangles, {} of {} tiles, {} polys, {} detail tris, {} bytes of Detour data, \
             {:.0} m² of polygons; best of {} in {:.2} ms ({:?}, 1 thread; ingest {:.2} ms not counted)",
            args.input.display(),
            mesh.triangles.len(),
            b.tiles,
            b.grid_tiles,
            b.polys,
            b.detail_tris,
            b.navmesh_bytes,
            b.poly_area_m2,
            args.runs,
            b.ms,
            args.partition,
            ingest_ms,
        );
    }
    Ok(())
}
