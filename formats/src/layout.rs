//! Byte layouts and the constants that fix them.

use zerocopy::little_endian::{F32, F64, I32, U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// First four bytes of every walksurf file.
pub const MAGIC: [u8; 4] = *b"WSRF";
/// Major format version: a reader refuses any other major version.
pub const FORMAT_MAJOR: u16 = 2;
/// Minor format version: additions a reader of an older minor may ignore.
pub const FORMAT_MINOR: u16 = 2;
/// Layout version of the precision data. A file whose precision layout is
/// unknown still opens; queries that need a precision bound fall back.
pub const PRECISION_LAYOUT_VERSION: u16 = 2;
/// Every section starts on this boundary (one cache line).
pub const SECTION_ALIGN: usize = 64;

/// Tile edge length (32 m).
pub const TILE_SIZE_CM: f64 = 3200.0;
/// Grid cell edge length.
pub const CELL_SIZE_CM: f64 = 20.0;
/// Vertex fixed point: coordinates are stored as `i32` in units of
/// 1/`VERTEX_STEPS_PER_CM` cm relative to the tile origin.
pub const VERTEX_STEPS_PER_CM: f64 = 1024.0;
/// BVH boxes quantise X and Y to 1/`BVH_XY_STEPS_PER_CM` cm...
pub const BVH_XY_STEPS_PER_CM: f64 = 16.0;
/// ...relative to the tile origin minus this margin, so a `u16` spans
/// `[-BVH_XY_MARGIN_CM, TILE_SIZE_CM + BVH_XY_MARGIN_CM)`.
pub const BVH_XY_MARGIN_CM: f64 = 448.0;
/// Largest halo a bake may use (a tile's boxes must be able to express it).
pub const MAX_TILE_HALO_CM: f64 = BVH_XY_MARGIN_CM;
/// A tile's BVH z step is a power of two from this...
pub const MIN_Z_QUANT_CM: f32 = 1.0 / 64.0;
/// ...to this (65 000 steps then span the `i32` z origin's whole range).
pub const MAX_Z_QUANT_CM: f32 = 131_072.0;
/// `child` value of an unused BVH slot.
pub const BVH_EMPTY: i32 = i32::MIN;
/// Tile index entry of a grid position without a tile.
pub const NO_TILE: u32 = u32::MAX;
/// Most vertices a convex piece may have.
pub const MAX_PIECE_VERTICES: usize = 32;

/// Section kinds.
pub mod section {
    /// [`super::BakeParams`].
    pub const BAKE_PARAMS: u32 = 1;
    /// [`super::TileIndexHeader`] followed by one `u32` per grid position.
    pub const TILE_INDEX: u32 = 2;
    /// [`super::TileHot`] records.
    pub const TILE_HOT: u32 = 3;
    /// Concatenated tile blobs.
    pub const TILE_DATA: u32 = 4;
    /// UTF-8 JSON describing the bake (informative only).
    pub const METADATA: u32 = 5;
}

/// Coordinate conversion recorded in the header: the input's up axis.
pub mod up_axis {
    pub const Y: u8 = 1;
    pub const Z: u8 = 2;
}

/// The 64-byte file header.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Clone, Copy, Debug)]
#[repr(C)]
pub struct Header {
    pub magic: [u8; 4],
    pub format_major: U16,
    pub format_minor: U16,
    pub precision_layout: U16,
    pub flags: U16,
    pub section_count: U16,
    /// [`up_axis`] of the input.
    pub up_axis: u8,
    pub reserved0: u8,
    pub tile_size_cm: F32,
    pub cell_size_cm: F32,
    pub vertex_steps_per_cm: U32,
    /// Input units: metres per unit (the input was scaled by 100× this).
    pub metres_per_unit: F32,
    /// Increases on every bake; a runtime cache of another generation is stale.
    pub build_generation: U64,
    /// Hash of the triangles the bake read.
    pub input_hash: U64,
    /// Hash of the bake parameters.
    pub params_hash: U64,
    /// Low 32 bits of `hash64` of the section table.
    pub section_table_checksum: U32,
    /// Low 32 bits of `hash64` of the first 60 header bytes.
    pub header_checksum: U32,
}
const _: () = assert!(size_of::<Header>() == 64);

/// One entry of the section table, which follows the header.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Clone, Copy, Debug)]
#[repr(C)]
pub struct SectionEntry {
    pub kind: U32,
    pub version: U32,
    /// From the start of the file; a multiple of [`SECTION_ALIGN`].
    pub offset: U64,
    pub length: U64,
    /// `hash64` of the section's bytes.
    pub checksum: U64,
}
const _: () = assert!(size_of::<SectionEntry>() == 32);

/// The parameters the bake ran with, as the runtime needs them.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Clone, Copy, Debug)]
#[repr(C)]
pub struct BakeParams {
    /// Largest agent radius the data supports.
    pub max_agent_radius_cm: F32,
    /// Largest agent half-height the data supports.
    pub max_agent_half_height_cm: F32,
    /// A surface is walkable when its normal's z is at least this.
    pub walkable_normal_z: F32,
    /// Surfaces with |n.z| below this are blocking (walls).
    pub collected_normal_z: F32,
    /// Longest horizontal sweep the data supports.
    pub max_sweep_len_cm: F32,
    /// Every tile holds the geometry within this distance of its square.
    pub tile_halo_cm: F32,
    /// Flat groups: largest angle between triangle normals (the bake's
    /// fixed tolerance) and between a vertex and the group's plane.
    pub coplanar_angle_deg: F32,
    pub coplanar_dist_cm: F32,
    /// Number of input nodes/primitives excluded from collision.
    pub excluded_inputs: U32,
    pub reserved: [U32; 7],
}
const _: () = assert!(size_of::<BakeParams>() == 64);

/// Start of the tile index section: a dense grid of tile slots.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Clone, Copy, Debug)]
#[repr(C)]
pub struct TileIndexHeader {
    pub min_tile_x: I32,
    pub min_tile_y: I32,
    pub tiles_x: U32,
    pub tiles_y: U32,
}
const _: () = assert!(size_of::<TileIndexHeader>() == 16);

/// The 64-byte hot record of one tile: everything a query needs to reach the
/// tile's data in one cache line.
///
/// The tile's blob (inside the tile data section, 64-byte aligned) is laid out
/// as: piece BVH lines, piece records (`pieces_len` bytes), padding to 64,
/// blocker BVH lines, blocker records.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Clone, Copy, Debug)]
#[repr(C)]
pub struct TileHot {
    pub tile_x: I32,
    pub tile_y: I32,
    /// Z origin of the tile (whole cm): plane and BVH z are relative to it.
    pub z_origin_cm: I32,
    /// BVH z quantisation step (cm per `u16` step).
    pub z_quant_cm: F32,
    /// Offset of the blob from the start of the tile data section.
    pub blob_offset: U64,
    pub blob_len: U32,
    pub piece_lines: U32,
    pub piece_count: U32,
    pub pieces_len: U32,
    pub blocker_lines: U32,
    pub blocker_count: U32,
    /// Hash of everything this tile's bytes were derived from.
    pub input_hash: U64,
    pub patch_count: U32,
    pub flags: U32,
}
const _: () = assert!(size_of::<TileHot>() == 64);

/// A quantised box plus a child: four of these are one 64-byte BVH line.
///
/// `child >= 0`: index of the child line (always greater than the parent's).
/// `child == BVH_EMPTY`: unused slot. Otherwise a leaf with item `!child`
/// (pieces: offset of the record in 4-byte words; blockers: index).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Clone, Copy, Debug)]
#[repr(C)]
pub struct BvhNode {
    pub min: [U16; 3],
    pub max: [U16; 3],
    pub child: I32,
}
const _: () = assert!(size_of::<BvhNode>() == 16);

/// Four sibling nodes: one cache line.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Clone, Copy, Debug)]
#[repr(C)]
pub struct BvhLine {
    pub nodes: [BvhNode; 4],
}
const _: () = assert!(size_of::<BvhLine>() == 64);

/// Header of a convex piece record, followed by `vertex_count`
/// [`VertexFixed`] in counter-clockwise order.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Clone, Copy, Debug)]
#[repr(C)]
pub struct PieceHeader {
    /// Patch of the piece (index among the tile's patches).
    pub patch: U16,
    pub vertex_count: u8,
    /// [`piece_flags`].
    pub flags: u8,
    /// Plane `z = a·x + b·y + c`, x/y/z in cm relative to the tile origin
    /// (`tile_x·TILE_SIZE_CM`, `tile_y·TILE_SIZE_CM`, `z_origin_cm`).
    pub plane_a: F32,
    pub plane_b: F32,
    pub plane_c: F32,
    /// Bound on |plane z − true surface z| inside the piece.
    pub z_err_cm: F32,
    /// Bit i set: edge i (vertex i → i+1) is shared with another piece of the
    /// same surface, not a boundary of the walkable area.
    pub interior_edges: U32,
}
const _: () = assert!(size_of::<PieceHeader>() == 24);

/// Bits of [`PieceHeader::flags`].
pub mod piece_flags {
    /// Some vertex lies where the headroom cut crossed a true edge: the
    /// piece's boundary may lie up to [`super::MAX_PIECE_EDGE_DEV_CM`] from
    /// the true one (otherwise half a fixed-point step per axis).
    pub const CUT_CROSSINGS: u8 = 1;
}

/// A piece vertex in fixed point relative to the tile origin.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct VertexFixed {
    pub x: I32,
    pub y: I32,
}
const _: () = assert!(size_of::<VertexFixed>() == 8);

/// A triangle that is not part of any piece (a wall, a steep face, a
/// non-walkable surface), exactly: its three vertices in vertex fixed point
/// relative to the tile origin (x, y) and to `z_origin_cm` (z).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Clone, Copy, Debug)]
#[repr(C)]
pub struct Blocker {
    pub v: [[I32; 3]; 3],
    /// [`blocker_flags`].
    pub flags: U32,
}
const _: () = assert!(size_of::<Blocker>() == 40);

/// Bits of [`Blocker::flags`].
pub mod blocker_flags {
    /// A walkable triangle that could not be stored as a piece.
    pub const DEMOTED_WALKABLE: u32 = 1;
    /// Near-vertical (`|n.z|` below the collected threshold).
    pub const VERTICAL: u32 = 2;
    /// Hidden under the walkable surface: every point of the source
    /// triangle lies directly below (or on) a walkable triangle of the tile
    /// that is at most [`super::HIDDEN_RISE_CM`] above the triangle's
    /// highest vertex there. A capsule whose top sphere's centre is higher
    /// than that, moving down or sideways, has the surface point above any
    /// point of this triangle it reaches inside it already (met no later,
    /// or overlapped at the start), so it may skip this triangle. (Readers
    /// before format 2.1 ignore the bit, which only costs them time.)
    pub const HIDDEN: u32 = 4;
}

/// How far above a [`blocker_flags::HIDDEN`] triangle's highest vertex the
/// walkable surface hiding it may lie. [Units: cm]
pub const HIDDEN_RISE_CM: f64 = 50.0;

/// Edge of a certificate cell (a tile has `CERT_CELLS × CERT_CELLS`).
pub const CERT_CELL_CM: f64 = 40.0;
/// Certificate cells per tile edge.
pub const CERT_CELLS: usize = 80;

/// Bits of [`TileHot::flags`].
pub mod tile_flags {
    /// The blob ends with a certificate region (see [`super::Cert`]).
    pub const HAS_CERTS: u32 = 1;
    /// The blob ends with the patch table: `patch_count` [`super::PatchRecord`]s
    /// are its last bytes (after the certificate region, if any).
    pub const HAS_PATCHES: u32 = 2;
    /// The blob holds a certificate region whose cells name their lists
    /// (`first | count << 24`, [`super::cert_list`]), so that cells with
    /// equal lists share one (format 2.2). A region has this bit or
    /// [`HAS_CERTS`], not both.
    pub const HAS_CERT_LISTS: u32 = 4;
    /// With [`HAS_CERT_LISTS`]: the region holds one cell entry, which
    /// every cell of its rectangle uses (open flat ground).
    pub const CERT_LISTS_UNIFORM: u32 = 8;
}

/// A cell's entry in a [`tile_flags::HAS_CERT_LISTS`] region: the range of
/// the tile's [`Cert`] records it uses.
#[inline]
pub fn cert_list(entry: u32) -> std::ops::Range<usize> {
    let first = (entry & CERT_LIST_FIRST_MASK) as usize;
    first..first + (entry >> 24) as usize
}
/// The bits of a [`cert_list`] entry naming its first record.
pub const CERT_LIST_FIRST_MASK: u32 = (1 << 24) - 1;
/// Most records one cell's list may hold (a cell with more has none: the
/// queries there take the full path).
pub const MAX_CERT_LIST: usize = 255;

/// One patch of a tile: a region of one flat group's plane whose pieces
/// share a headroom state. The precision block of the patch and its pieces:
/// the exact plane the pieces' `f32` planes round, the bounds that make up a
/// piece's `z_err_cm` (which [`crate::piece_z_err_cm`] recomputes from
/// this record and the piece's vertices: the slow reference path) and how
/// far the patch's boundary may lie from the true one.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Clone, Copy, Debug)]
#[repr(C)]
pub struct PatchRecord {
    /// Least-squares plane `z = a·x + b·y + c` in the tile frame (x, y
    /// relative to the tile origin, z to `z_origin_cm`), before rounding to
    /// the pieces' `f32`.
    pub plane_a: F64,
    pub plane_b: F64,
    pub plane_c: F64,
    /// Plane-fit bound: |plane z − true surface z| over the patch.
    pub fit_err_cm: F32,
    /// Boundary deviation bound: how far (XY) any piece vertex on a true
    /// boundary edge may lie from that edge (quantisation and edge splits).
    pub edge_dev_cm: F32,
    /// Headroom-cut deviation bound: how far (XY) an edge made by the
    /// headroom cut may lie from where headroom truly ends (0: no cut edge).
    /// Always on the side of less walkable area.
    pub cut_dev_cm: F32,
    /// [`patch_flags`].
    pub flags: U32,
    pub reserved: [U32; 2],
}
const _: () = assert!(size_of::<PatchRecord>() == 48);

/// Bits of [`PatchRecord::flags`].
pub mod patch_flags {
    /// Geometry above leaves less than the bake's headroom somewhere over
    /// every cell this patch covers: a full-height agent cannot stand on it.
    /// Its pieces still take part in every contact (they are real floor).
    pub const HEADROOM_CUT: u32 = 1;
}

/// Largest XY distance of a piece vertex from the true boundary edge it
/// lies on: a source vertex rounded to the fixed-point grid (half a step
/// per axis), or a cell line's crossing of an edge rounded once, possibly
/// to one side (a step on one axis, on an edge itself off by the former).
/// The runtime's error bounds for piece edges use this. [Units: cm]
pub const MAX_PIECE_EDGE_DEV_CM: f64 = (1.0 + 0.5 * core::f64::consts::SQRT_2) / VERTEX_STEPS_PER_CM;

/// Slack added to a piece's z error bound for the runtime's own f64
/// evaluation of the stored `f32` plane. [Units: cm]
pub const PLANE_EVAL_SLACK_CM: f64 = 1e-5;

/// A piece's z error bound (its `z_err_cm` slot) from its patch's precision
/// block: the largest difference between the stored `f32` plane and the
/// exact plane over the piece's vertices, plus the plane-fit bound, plus
/// [`PLANE_EVAL_SLACK_CM`], rounded up to `f32`. The bake fills the slot
/// with this; the runtime's reference path recomputes it per query.
pub fn piece_z_err_cm(
    stored: [f32; 3],
    exact: [f64; 3],
    fit_err_cm: f32,
    vertices: impl IntoIterator<Item = [i32; 2]>,
) -> f32 {
    let mut quant: f64 = 0.0;
    for [fx, fy] in vertices {
        let (x, y) = (from_fixed(fx), from_fixed(fy));
        let s = stored[0] as f64 * x + stored[1] as f64 * y + stored[2] as f64;
        let e = exact[0] * x + exact[1] * y + exact[2];
        quant = quant.max((s - e).abs());
    }
    round_up_f32(quant + fit_err_cm as f64 + PLANE_EVAL_SLACK_CM)
}

/// The smallest `f32` not below `v` (for finite, non-negative `v`).
pub fn round_up_f32(v: f64) -> f32 {
    let r = v as f32;
    if (r as f64) < v { r.next_up() } else { r }
}

/// Start of a tile's certificate region: the rectangle of cells that hold
/// any certificate (`x0 + w ≤ CERT_CELLS`, `y0 + h ≤ CERT_CELLS`), followed
/// by `w·h` `u32` cell entries (row-major; one, used by every cell, with
/// [`tile_flags::CERT_LISTS_UNIFORM`]) and the record count, the
/// [`Cert`] records and the [`CertWall`]s. An entry is a [`cert_list`]
/// ([`tile_flags::HAS_CERT_LISTS`]) or, in files before 2.2
/// ([`tile_flags::HAS_CERTS`]), an offset: cell k's records are then
/// `entry[k]..entry[k+1]` (the count ends the prefix sums).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Clone, Copy, Debug)]
#[repr(C)]
pub struct CertIndexHeader {
    pub x0: U16,
    pub y0: U16,
    pub w: U16,
    pub h: U16,
}
const _: () = assert!(size_of::<CertIndexHeader>() == 8);

/// A flat-floor certificate of one cell: the plane `z = a·x + b·y + k`
/// (tile frame) is the walkable surface where a capsule centred in the
/// cell's covered sub-cells first meets it ([`Cert::cover`]), and over the
/// cell grown by the largest agent radius no other geometry reaches above
/// the plane below `clear_z` but the listed footprints. A query there
/// whose agent stays below `clear_z` and clear of the footprints touches
/// nothing but this plane.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Clone, Copy, Debug)]
#[repr(C)]
pub struct Cert {
    pub a: F32,
    pub b: F32,
    pub k: F32,
    pub z_err_cm: F32,
    /// Lowest z (tile frame) of any other geometry over the grown cell,
    /// besides the listed walls.
    pub clear_z: F32,
    /// Footprints over the grown cell that do not count in `clear_z`:
    /// `walls & 0xFFFF` is the first [`CertWall`] of the tile's list,
    /// `walls >> 16` the count ([`Cert::wall_range`]). A query checks each
    /// (see [`CertWall`]), or takes the full path.
    pub walls: U32,
    /// Where the plane holds: bit `2·j + i` covers quarter `(i, j)` of the
    /// cell (20 cm each, [`CERT_SUBCELLS`]): a capsule whose axis is in it
    /// first meets the plane where the plane's pieces are
    /// ([`Cert::covers_at`]). Other bits are ignored (bit 16 marked a
    /// plane covering the whole grown cell in files of pipeline 29 and
    /// before; no query needs it).
    pub cover: U32,
}

/// Sub-cells (quarters) per certificate cell edge ([`Cert::cover`]).
pub const CERT_SUBCELLS: usize = 2;
/// Every sub-cell bit of [`Cert::cover`].
pub const CERT_ALL_SUBCELLS: u32 = (1 << (CERT_SUBCELLS * CERT_SUBCELLS)) - 1;

impl Cert {
    /// The range of the tile's [`CertWall`]s this certificate lists.
    #[inline]
    pub fn wall_range(&self) -> std::ops::Range<usize> {
        let w = self.walls.get() as usize;
        let start = w & 0xFFFF;
        start..start + (w >> 16)
    }

    /// The plane's slope `|∇z|`.
    #[inline]
    pub fn slope(&self) -> f64 {
        let (a, b) = (self.a.get() as f64, self.b.get() as f64);
        (a * a + b * b).sqrt()
    }

    /// Whether a query whose axis is at `(u, v)` cm from the cell's low
    /// corner (each in `[0, CERT_CELL_CM)`) lies in a covered sub-cell.
    #[inline]
    pub fn covers_at(&self, u: f64, v: f64) -> bool {
        let k = CERT_SUBCELLS as f64 / CERT_CELL_CM;
        let last = CERT_SUBCELLS - 1;
        // (Saturating casts: a value just off the cell takes the edge's.)
        let (i, j) = (((u * k) as usize).min(last), ((v * k) as usize).min(last));
        self.cover.get() >> (CERT_SUBCELLS * j + i) & 1 != 0
    }
}

/// A footprint a certificate lists: an XY segment (tile frame, cm), how
/// far from it the primitive's footprint reaches (`err_cm`; near 0 for an
/// exactly vertical wall), and how far the primitive rises above the
/// certificate's plane at most (`rise_cm`, measured vertically; negative:
/// wholly below it).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Clone, Copy, Debug)]
#[repr(C)]
pub struct CertWall {
    pub x0: F32,
    pub y0: F32,
    pub x1: F32,
    pub y1: F32,
    pub err_cm: F32,
    pub rise_cm: F32,
}
const _: () = assert!(size_of::<CertWall>() == 24);

impl CertWall {
    /// Whether a vertical line (`r = 0`) or capsule (bottom sphere radius
    /// `r`) whose axis is at `p` (tile frame, cm), moving down onto the
    /// certificate's plane of slope `slope` (`|∇z|`), first touches the
    /// plane rather than this footprint, with `margin` cm to spare on every
    /// distance.
    ///
    /// A footprint farther from the axis than `r` is never touched. A
    /// nearer one is touched first only if it rises above the sphere's
    /// lower surface when the sphere rests on the plane: over a point `d`
    /// from the axis that surface lies at least `f(d) = r·√(1+s²) −
    /// √(r²−d²) − s·d` above the plane, which is 0 at the contact offset
    /// `d₀ = r·s/√(1+s²)` and grows beyond. So one whose points lie at least
    /// `D ≥ d₀` from the axis passes if it rises less than `f(D)`, and one
    /// wholly below the plane always does.
    #[inline]
    pub fn passes(&self, p: [f64; 2], r: f64, slope: f64, margin: f64) -> bool {
        self.passes_at(segment_xy_dist2(p, self.a(), self.b()), r, slope, margin)
    }

    /// [`CertWall::passes`] for every axis position on the segment `p0 p1`
    /// at once (a horizontal move): the test at the footprint's least
    /// distance from the segment holds wherever the axis is on it, as
    /// `f` only grows past the contact offset.
    #[inline]
    pub fn passes_along(&self, p0: [f64; 2], p1: [f64; 2], r: f64, slope: f64, margin: f64) -> bool {
        self.passes_at(segments_xy_dist2(p0, p1, self.a(), self.b()), r, slope, margin)
    }

    #[inline]
    fn a(&self) -> [f64; 2] {
        [self.x0.get() as f64, self.y0.get() as f64]
    }

    #[inline]
    fn b(&self) -> [f64; 2] {
        [self.x1.get() as f64, self.y1.get() as f64]
    }

    /// The test of [`CertWall::passes`] for an axis `dist2` (squared, cm²)
    /// from the footprint's segment.
    #[inline]
    fn passes_at(&self, dist2: f64, r: f64, slope: f64, margin: f64) -> bool {
        // A corrupt record (a NaN end point would shorten the footprint, a
        // negative error bound shrink it) passes nothing.
        let ends = [self.x0, self.y0, self.x1, self.y1];
        if !(ends.iter().all(|v| v.get().is_finite()) && self.err_cm.get() >= 0.0) {
            return false;
        }
        let err = self.err_cm.get() as f64 + margin;
        let need = r + err;
        if !need.is_finite() {
            return false;
        }
        if dist2 > need * need {
            return true;
        }
        let rise = self.rise_cm.get() as f64 + margin;
        if rise < 0.0 {
            return true; // (false for NaN)
        }
        // Nearest (cm) any of its points may be, past the contact offset.
        let near = dist2.sqrt() - err;
        let root = (1.0 + slope * slope).sqrt();
        if !(rise < r && near >= r * slope / root) {
            return false;
        }
        rise < r * root - (r * r - near * near).max(0.0).sqrt() - slope * near
    }
}
const _: () = assert!(size_of::<Cert>() == 28);

/// Squared distance from `p` to the segment `a b` (XY; a point segment is
/// its point). One definition for the bake, the file's checks and the
/// runtime.
#[inline]
pub fn segment_xy_dist2(p: [f64; 2], a: [f64; 2], b: [f64; 2]) -> f64 {
    let (ex, ey) = (b[0] - a[0], b[1] - a[1]);
    let (wx, wy) = (p[0] - a[0], p[1] - a[1]);
    let l2 = ex * ex + ey * ey;
    let s = if l2 > 0.0 {
        ((wx * ex + wy * ey) / l2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (dx, dy) = (wx - s * ex, wy - s * ey);
    dx * dx + dy * dy
}

/// Squared distance between the XY segments `p0 p1` and `q0 q1` (0 when
/// they cross).
#[inline]
pub fn segments_xy_dist2(p0: [f64; 2], p1: [f64; 2], q0: [f64; 2], q1: [f64; 2]) -> f64 {
    let orient = |a: [f64; 2], b: [f64; 2], c: [f64; 2]| (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
    let (d1, d2) = (orient(p0, p1, q0), orient(p0, p1, q1));
    let (d3, d4) = (orient(q0, q1, p0), orient(q0, q1, p1));
    if d1 * d2 <= 0.0 && d3 * d4 <= 0.0 {
        return 0.0;
    }
    segment_xy_dist2(p0, q0, q1)
        .min(segment_xy_dist2(p1, q0, q1))
        .min(segment_xy_dist2(q0, p0, p1))
        .min(segment_xy_dist2(q1, p0, p1))
}

/// Rounds `offset` up to the section alignment.
pub const fn align_up(offset: usize, align: usize) -> usize {
    offset.div_ceil(align) * align
}

/// Byte offsets of a tile blob's regions, derived from its hot record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlobLayout {
    pub piece_bvh: core::ops::Range<usize>,
    pub pieces: core::ops::Range<usize>,
    pub blocker_bvh: core::ops::Range<usize>,
    pub blockers: core::ops::Range<usize>,
}

impl BlobLayout {
    /// The regions for these counts, or `None` on arithmetic overflow.
    #[inline(always)]
    pub fn new(piece_lines: u32, pieces_len: u32, blocker_lines: u32, blocker_count: u32) -> Option<BlobLayout> {
        let piece_bvh_end = (piece_lines as usize).checked_mul(size_of::<BvhLine>())?;
        let pieces_end = piece_bvh_end.checked_add(pieces_len as usize)?;
        let blocker_bvh_start = align_up(pieces_end, SECTION_ALIGN);
        let blocker_bvh_end =
            blocker_bvh_start.checked_add((blocker_lines as usize).checked_mul(size_of::<BvhLine>())?)?;
        let blockers_end = blocker_bvh_end.checked_add((blocker_count as usize).checked_mul(size_of::<Blocker>())?)?;
        Some(BlobLayout {
            piece_bvh: 0..piece_bvh_end,
            pieces: piece_bvh_end..pieces_end,
            blocker_bvh: blocker_bvh_start..blocker_bvh_end,
            blockers: blocker_bvh_end..blockers_end,
        })
    }

    /// Total bytes of the blob.
    pub fn len(&self) -> usize {
        self.blockers.end
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Quantisation of one tile: converts between cm (relative to the tile
/// origin) and the fixed-point forms stored in the file.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TileQuant {
    pub z_origin_cm: f64,
    pub z_quant_cm: f64,
}

impl TileQuant {
    /// Outward-rounded `u16` box bounds for an X or Y interval.
    pub fn xy_bounds(lo_cm: f64, hi_cm: f64) -> (u16, u16) {
        let lo = ((lo_cm + BVH_XY_MARGIN_CM) * BVH_XY_STEPS_PER_CM).floor();
        let hi = ((hi_cm + BVH_XY_MARGIN_CM) * BVH_XY_STEPS_PER_CM).ceil();
        (clamp_u16(lo), clamp_u16(hi))
    }

    /// Outward-rounded `u16` box bounds for a Z interval (cm relative to the
    /// tile's z origin).
    pub fn z_bounds(&self, lo_cm: f64, hi_cm: f64) -> (u16, u16) {
        let lo = (lo_cm / self.z_quant_cm).floor();
        let hi = (hi_cm / self.z_quant_cm).ceil();
        (clamp_u16(lo), clamp_u16(hi))
    }

    /// The `u16` X/Y value whose box edge lies at or below `cm` (for
    /// quantising a query interval: use `floor` for mins and `ceil` for maxes).
    pub fn xy_query(cm: f64) -> f64 {
        (cm + BVH_XY_MARGIN_CM) * BVH_XY_STEPS_PER_CM
    }

    /// Query-side z in `u16` steps (unrounded).
    pub fn z_query(&self, cm: f64) -> f64 {
        cm / self.z_quant_cm
    }
}

fn clamp_u16(v: f64) -> u16 {
    if v.is_nan() || v <= 0.0 {
        0
    } else if v >= u16::MAX as f64 {
        u16::MAX
    } else {
        v as u16
    }
}

/// Converts cm relative to the tile origin to vertex fixed point (nearest).
pub fn to_fixed(cm: f64) -> i32 {
    let v = (cm * VERTEX_STEPS_PER_CM).round();
    v.clamp(i32::MIN as f64, i32::MAX as f64) as i32
}

/// [`to_fixed`], or `None` beyond the `i32` range (about ±2 097 152 cm).
pub fn to_fixed_checked(cm: f64) -> Option<i32> {
    let v = (cm * VERTEX_STEPS_PER_CM).round();
    (v >= i32::MIN as f64 && v <= i32::MAX as f64).then_some(v as i32)
}

/// Converts vertex fixed point back to cm relative to the tile origin.
pub fn from_fixed(v: i32) -> f64 {
    v as f64 / VERTEX_STEPS_PER_CM
}
