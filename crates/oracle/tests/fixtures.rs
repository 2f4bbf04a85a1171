//! Hand-derived fixtures: every expected value below comes from a closed form
//! explained next to it (DESIGN §9), not from running the oracle.

use walksurf_oracle::{AgentShape, Oracle, OracleError, OracleFloor, OracleSweep, Vec3};

/// R = 42, H = 96: the bottom sphere centre is `pos.z - 54`, the top one `pos.z + 54`.
const AGENT: AgentShape = AgentShape {
    radius_cm: 42.0,
    half_height_cm: 96.0,
};
const R: f64 = 42.0;
const HMR: f64 = 54.0; // H - R

/// Triangle list builder: quads are split into two triangles along a diagonal.
#[derive(Default)]
struct Mesh {
    v: Vec<Vec3>,
    t: Vec<[u32; 3]>,
}

impl Mesh {
    fn tri(&mut self, a: Vec3, b: Vec3, c: Vec3) -> &mut Self {
        let i = self.v.len() as u32;
        self.v.extend([a, b, c]);
        self.t.push([i, i + 1, i + 2]);
        self
    }
    /// Quad a-b-c-d (in order around its boundary) as triangles (a,b,c), (a,c,d).
    fn quad(&mut self, a: Vec3, b: Vec3, c: Vec3, d: Vec3) -> &mut Self {
        self.tri(a, b, c).tri(a, c, d)
    }
    fn oracle(&self) -> Oracle {
        Oracle::new(&self.v, &self.t).expect("valid fixture")
    }
}

/// Horizontal square `[x0, x1] × [y0, y1]` at height z; `up` picks the winding
/// (counter-clockwise seen from above when true, i.e. normal +z).
fn floor(m: &mut Mesh, x0: f64, x1: f64, y0: f64, y1: f64, z: f64, up: bool) {
    let (a, b, c, d) = ([x0, y0, z], [x1, y0, z], [x1, y1, z], [x0, y1, z]);
    if up {
        m.quad(a, b, c, d);
    } else {
        m.quad(a, d, c, b);
    }
}

/// Vertical wall in the plane x = x, spanning y and z; `flip` reverses the winding.
fn wall_x(m: &mut Mesh, x: f64, y0: f64, y1: f64, z0: f64, z1: f64, flip: bool) {
    let (a, b, c, d) = ([x, y0, z0], [x, y1, z0], [x, y1, z1], [x, y0, z1]);
    if flip {
        m.quad(a, d, c, b);
    } else {
        m.quad(a, b, c, d);
    }
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

fn close3(a: Vec3, b: Vec3, tol: f64) -> bool {
    (0..3).all(|i| close(a[i], b[i], tol))
}

#[track_caller]
fn expect_floor(got: OracleFloor, dist: f64, loc: Vec3, imp: Vec3, n: Vec3, tol: f64) {
    match got {
        OracleFloor::Floor {
            floor_dist,
            location,
            impact_point,
            normal,
        } => {
            assert!(close(floor_dist, dist, tol), "floor_dist {floor_dist} != {dist}");
            assert!(close3(location, loc, tol), "location {location:?} != {loc:?}");
            assert!(close3(impact_point, imp, tol), "impact {impact_point:?} != {imp:?}");
            assert!(close3(normal, n, 1e-9), "normal {normal:?} != {n:?}");
        }
        other => panic!("expected a floor, got {other:?}"),
    }
}

#[track_caller]
fn expect_hit(got: OracleSweep, dist: f64, len: f64, n: Vec3, tol: f64) -> (Vec3, Vec3) {
    match got {
        OracleSweep::Hit {
            time,
            distance,
            location,
            impact_point,
            normal,
        } => {
            assert!(close(distance, dist, tol), "distance {distance} != {dist}");
            assert!(close(time, dist / len, tol / len), "time {time} != {}", dist / len);
            assert!(close3(normal, n, 1e-9), "normal {normal:?} != {n:?}");
            (location, impact_point)
        }
        other => panic!("expected a hit, got {other:?}"),
    }
}

#[test]
fn construction_errors() {
    assert_eq!(Oracle::new(&[], &[]).unwrap_err(), OracleError::EmptyMesh);
    let v = [[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
    assert_eq!(Oracle::new(&v, &[]).unwrap_err(), OracleError::EmptyMesh);
    assert_eq!(
        Oracle::new(&v, &[[0, 1, 2], [0, 1, 3]]).unwrap_err(),
        OracleError::BadIndex { triangle: 1 }
    );
    let bad = [[0.0; 3], [f64::NAN, 0.0, 0.0], [0.0, 1.0, 0.0]];
    assert_eq!(
        Oracle::new(&bad, &[[0, 1, 2]]).unwrap_err(),
        OracleError::NonFiniteVertex { vertex: 1 }
    );
}

/// Flat floor z = 0. Line: bottom = pos.z - 96 = 5 above the floor, so
/// floor_dist = 5 exactly. Capsule: the bottom sphere (centre 5 + 42 above the
/// floor) falls 5 and touches straight below its centre, normal +z.
#[test]
fn flat_floor_line_and_capsule() {
    for up in [true, false] {
        // `up == false`: the floor is wound facing down and must still be hit from above.
        let mut m = Mesh::default();
        floor(&mut m, -1000.0, 1000.0, -1000.0, 1000.0, 0.0, up);
        let o = m.oracle();
        let pos = [10.0, 20.0, 96.0 + 5.0];
        let (loc, imp) = ([10.0, 20.0, 96.0], [10.0, 20.0, 0.0]);
        expect_floor(
            o.find_floor_line(pos, 96.0, 10.0),
            5.0,
            loc,
            imp,
            [0.0, 0.0, 1.0],
            1e-12,
        );
        expect_floor(
            o.find_floor_capsule(pos, AGENT, 10.0),
            5.0,
            loc,
            imp,
            [0.0, 0.0, 1.0],
            1e-12,
        );
        // Contact exactly at the end of the window still counts.
        expect_floor(
            o.find_floor_capsule(pos, AGENT, 5.0),
            5.0,
            loc,
            imp,
            [0.0, 0.0, 1.0],
            1e-12,
        );
        // Window too short: 4.9 < 5.
        assert_eq!(o.find_floor_capsule(pos, AGENT, 4.9), OracleFloor::NoFloor);
        assert_eq!(o.find_floor_line(pos, 96.0, 4.9), OracleFloor::NoFloor);
        // Line window reaches 2 cm above the bottom: bottom 1 cm below the floor
        // gives floor_dist = -1, while the capsule starts overlapping.
        let low = [10.0, 20.0, 95.0];
        expect_floor(
            o.find_floor_line(low, 96.0, 10.0),
            -1.0,
            [10.0, 20.0, 96.0],
            imp,
            [0.0, 0.0, 1.0],
            1e-12,
        );
        assert_eq!(o.find_floor_capsule(low, AGENT, 10.0), OracleFloor::StartOverlap);
        // A floor 3 cm above the bottom is outside the line window (only +2).
        let sunk = [10.0, 20.0, 93.0];
        assert_eq!(o.find_floor_line(sunk, 96.0, 10.0), OracleFloor::NoFloor);
    }
}

/// The line trace takes the first surface from the top of its window; the
/// capsule lands on the upper of two stacked floors.
#[test]
fn stacked_floors_first_from_top() {
    let mut m = Mesh::default();
    floor(&mut m, -100.0, 100.0, -100.0, 100.0, 0.0, true);
    floor(&mut m, -100.0, 100.0, -100.0, 100.0, -50.0, false);
    let o = m.oracle();
    let pos = [0.0, 0.0, 96.0 + 20.0];
    expect_floor(
        o.find_floor_line(pos, 96.0, 100.0),
        20.0,
        [0.0, 0.0, 96.0],
        [0.0, 0.0, 0.0],
        [0.0, 0.0, 1.0],
        1e-12,
    );
    expect_floor(
        o.find_floor_capsule(pos, AGENT, 100.0),
        20.0,
        [0.0, 0.0, 96.0],
        [0.0, 0.0, 0.0],
        [0.0, 0.0, 1.0],
        1e-12,
    );
}

/// Plane z = tan30°·x (|N| = 1/cos30°, n̂ = (-sin30°, 0, cos30°)). The bottom
/// sphere centre c = (0, 0, 146) touches when c.z - t = R·|N|, so
/// t = 146 - R/cos30°; the capsule bottom then rests R(|N| - 1) above the plane
/// at the centre, and the contact point is c_rest - R·n̂.
#[test]
fn slope_30_degrees() {
    let (s, c) = (30f64.to_radians().sin(), 30f64.to_radians().cos());
    let a = s / c;
    for flip in [false, true] {
        let mut m = Mesh::default();
        let p = |x: f64, y: f64| [x, y, a * x];
        if flip {
            m.quad(p(-500.0, -500.0), p(-500.0, 500.0), p(500.0, 500.0), p(500.0, -500.0));
        } else {
            m.quad(p(-500.0, -500.0), p(500.0, -500.0), p(500.0, 500.0), p(-500.0, 500.0));
        }
        let o = m.oracle();
        let pos = [0.0, 0.0, 200.0];
        let t = 146.0 - R / c;
        let rest_c = [0.0, 0.0, 146.0 - t];
        let n = [-s, 0.0, c];
        let imp = [rest_c[0] - R * n[0], 0.0, rest_c[2] - R * n[2]];
        expect_floor(
            o.find_floor_capsule(pos, AGENT, 200.0),
            t,
            [0.0, 0.0, 200.0 - t],
            imp,
            n,
            1e-9,
        );
        // The bottom rests R(|N|-1) above the plane under the centre.
        assert!(close(200.0 - t - 96.0, R * (1.0 / c - 1.0), 1e-9));
        // Contact R(1 - cosθ) above the capsule bottom.
        assert!(close(imp[2] - (200.0 - t - 96.0), R * (1.0 - c), 1e-9));
        // Line: plane height under (10, 0) is 10·tan30°; bottom = 104.
        let z = 10.0 * a;
        expect_floor(
            o.find_floor_line([10.0, 0.0, 200.0], 96.0, 200.0),
            104.0 - z,
            [10.0, 0.0, 96.0 + z],
            [10.0, 0.0, z],
            n,
            1e-9,
        );
    }
}

/// Slab top z = 0 for x <= 0 with its vertical side at x = 0 and a lower floor
/// at z = -300. The bottom sphere, centre 20 cm past the edge line (x = 0,
/// z = 0) and 46 above it, rests on the edge: t = 46 - sqrt(R² - 20²); the
/// normal points from the edge point to the sphere centre.
#[test]
fn ledge_edge_contact() {
    let mut m = Mesh::default();
    floor(&mut m, -500.0, 0.0, -500.0, 500.0, 0.0, true);
    wall_x(&mut m, 0.0, -500.0, 500.0, -300.0, 0.0, false);
    floor(&mut m, -500.0, 500.0, -500.0, 500.0, -300.0, true);
    let o = m.oracle();
    let pos = [20.0, 7.0, 100.0];
    let root = (R * R - 400.0).sqrt();
    let t = 46.0 - root;
    expect_floor(
        o.find_floor_capsule(pos, AGENT, 100.0),
        t,
        [20.0, 7.0, 100.0 - t],
        [0.0, 7.0, 0.0],
        [20.0 / R, 0.0, root / R],
        1e-9,
    );
    // The line under the centre misses the slab and reaches the lower floor.
    expect_floor(
        o.find_floor_line(pos, 96.0, 400.0),
        304.0,
        [20.0, 7.0, -204.0],
        [20.0, 7.0, -300.0],
        [0.0, 0.0, 1.0],
        1e-9,
    );
}

/// Slab corner at the origin (slab x <= 0, y <= 0, top z = 0). Sphere centre
/// offset (12, 16) horizontally (distance 20) rests on the vertex:
/// t = 46 - sqrt(R² - 20²), normal (12, 16, sqrt(R² - 400))/R.
#[test]
fn ledge_vertex_contact() {
    let mut m = Mesh::default();
    floor(&mut m, -500.0, 0.0, -500.0, 0.0, 0.0, false);
    let o = m.oracle();
    let root = (R * R - 400.0).sqrt();
    let t = 46.0 - root;
    expect_floor(
        o.find_floor_capsule([12.0, 16.0, 100.0], AGENT, 100.0),
        t,
        [12.0, 16.0, 100.0 - t],
        [0.0, 0.0, 0.0],
        [12.0 / R, 16.0 / R, root / R],
        1e-9,
    );
}

/// Wall x = 100 (both windings, approached from both sides). Head-on: the
/// straight part of the capsule touches when its axis is R from the plane:
/// distance = 100 - R. At 45°: the x-gap closes at cos45° of the speed, so
/// distance = (100 - R)·√2.
#[test]
fn vertical_wall_sweeps() {
    for flip in [false, true] {
        let mut m = Mesh::default();
        wall_x(&mut m, 100.0, -500.0, 500.0, -500.0, 500.0, flip);
        let o = m.oracle();
        let (loc, imp) = expect_hit(
            o.sweep([0.0, 0.0, 0.0], [200.0, 0.0], AGENT),
            58.0,
            200.0,
            [-1.0, 0.0, 0.0],
            1e-12,
        );
        assert!(close3(loc, [58.0, 0.0, 0.0], 1e-12));
        assert!(close(imp[0], 100.0, 1e-12) && close(imp[1], 0.0, 1e-12));
        assert!((-HMR..=HMR).contains(&imp[2]), "contact on the straight part: {imp:?}");

        let d = 150.0;
        let len = d * 2f64.sqrt();
        let (loc, _) = expect_hit(
            o.sweep([0.0, 0.0, 0.0], [d, d], AGENT),
            58.0 * 2f64.sqrt(),
            len,
            [-1.0, 0.0, 0.0],
            1e-9,
        );
        assert!(close3(loc, [58.0, 58.0, 0.0], 1e-9));

        // From the other side.
        expect_hit(
            o.sweep([200.0, 5.0, 3.0], [-200.0, 0.0], AGENT),
            58.0,
            200.0,
            [1.0, 0.0, 0.0],
            1e-12,
        );
        // Stopping short is Clear; reaching exactly the contact is a Hit at time 1.
        assert_eq!(o.sweep([0.0, 0.0, 0.0], [57.0, 0.0], AGENT), OracleSweep::Clear);
        expect_hit(
            o.sweep([0.0, 0.0, 0.0], [58.0, 0.0], AGENT),
            58.0,
            58.0,
            [-1.0, 0.0, 0.0],
            1e-12,
        );
        // Moving away is Clear.
        assert_eq!(o.sweep([0.0, 0.0, 0.0], [-200.0, 0.0], AGENT), OracleSweep::Clear);
    }
}

/// A low wall (x = 100, top z = -60) under a capsule at z = 0: the axis ends at
/// z = -54, so the bottom sphere meets the top edge 6 cm below its centre:
/// distance = 100 - sqrt(R² - 36); normal = (-sqrt(R² - 36), 0, 6)/R.
#[test]
fn low_wall_top_edge() {
    let mut m = Mesh::default();
    wall_x(&mut m, 100.0, -500.0, 500.0, -500.0, -60.0, false);
    let o = m.oracle();
    let root = (R * R - 36.0).sqrt();
    let (_, imp) = expect_hit(
        o.sweep([0.0, 0.0, 0.0], [200.0, 0.0], AGENT),
        100.0 - root,
        200.0,
        [-root / R, 0.0, 6.0 / R],
        1e-9,
    );
    assert!(close3(imp, [100.0, 0.0, -60.0], 1e-9));
}

/// Sloped edge (x = 100, from (y, z) = (-50, -20) to (50, 20)) of a triangle
/// lying at x >= 100: the capsule's straight part reaches it first, where the
/// edge crosses y = 0 (z = 0): distance = 100 - R, normal -x.
#[test]
fn straight_part_against_edge() {
    let mut m = Mesh::default();
    m.tri([100.0, -50.0, -20.0], [100.0, 50.0, 20.0], [300.0, 0.0, 0.0]);
    let o = m.oracle();
    let (_, imp) = expect_hit(
        o.sweep([0.0, 0.0, 0.0], [200.0, 0.0], AGENT),
        58.0,
        200.0,
        [-1.0, 0.0, 0.0],
        1e-9,
    );
    assert!(close3(imp, [100.0, 0.0, 0.0], 1e-9));
}

/// Triangle with its apex q = (100, 20, 10) toward the capsule and the rest
/// further in x and y: the straight part meets the apex when the axis is R away
/// horizontally: (100 - s)² + 20² = R², s = 100 - sqrt(R² - 400).
#[test]
fn straight_part_against_vertex() {
    let mut m = Mesh::default();
    m.tri([100.0, 20.0, 10.0], [300.0, 200.0, 10.0], [300.0, 250.0, -10.0]);
    let o = m.oracle();
    let root = (R * R - 400.0).sqrt();
    let s = 100.0 - root;
    let (_, imp) = expect_hit(
        o.sweep([0.0, 0.0, 0.0], [200.0, 0.0], AGENT),
        s,
        200.0,
        [-root / R, -20.0 / R, 0.0],
        1e-9,
    );
    assert!(close3(imp, [100.0, 20.0, 10.0], 1e-12));
}

/// Sloped ceiling z = 150 - x/2 (both windings) hit from below by the top
/// sphere (centre z = 54): |54 + s/2 - 150| / |N| = R with |N| = sqrt(1.25),
/// so s = 2(96 - R·sqrt(1.25)); normal points down toward the capsule.
#[test]
fn sloped_ceiling_from_below() {
    let nn = 1.25f64.sqrt();
    for flip in [false, true] {
        let mut m = Mesh::default();
        let p = |x: f64, y: f64| [x, y, 150.0 - 0.5 * x];
        if flip {
            m.quad(p(-500.0, -500.0), p(-500.0, 500.0), p(500.0, 500.0), p(500.0, -500.0));
        } else {
            m.quad(p(-500.0, -500.0), p(500.0, -500.0), p(500.0, 500.0), p(-500.0, 500.0));
        }
        let o = m.oracle();
        let s = 2.0 * (96.0 - R * nn);
        expect_hit(
            o.sweep([0.0, 0.0, 0.0], [200.0, 0.0], AGENT),
            s,
            200.0,
            [-0.5 / nn, 0.0, -1.0 / nn],
            1e-9,
        );
        // Nothing below: the capsule can't find a floor going down.
        assert_eq!(
            o.find_floor_capsule([0.0, 0.0, 0.0], AGENT, 500.0),
            OracleFloor::NoFloor
        );
    }
}

/// Start overlap and zero delta, against the wall x = 100: axis at x = 60 is
/// 40 < R from it; at x = 58 it touches exactly (counts as overlap); at x = 50
/// it is clear.
#[test]
fn start_overlap_and_zero_delta() {
    let mut m = Mesh::default();
    wall_x(&mut m, 100.0, -500.0, 500.0, -500.0, 500.0, false);
    let o = m.oracle();
    for x in [60.0, 58.0] {
        let pos = [x, 0.0, 0.0];
        assert!(o.overlaps(pos, AGENT));
        assert_eq!(o.sweep(pos, [100.0, 0.0], AGENT), OracleSweep::StartOverlap);
        assert_eq!(o.sweep(pos, [-100.0, 0.0], AGENT), OracleSweep::StartOverlap);
        assert_eq!(o.sweep(pos, [0.0, 0.0], AGENT), OracleSweep::StartOverlap);
        assert_eq!(o.find_floor_capsule(pos, AGENT, 50.0), OracleFloor::StartOverlap);
    }
    let pos = [50.0, 0.0, 0.0];
    assert!(!o.overlaps(pos, AGENT));
    assert_eq!(o.sweep(pos, [0.0, 0.0], AGENT), OracleSweep::Clear);
    // Invalid agents are treated as blocked, never as clear.
    let bad = AgentShape {
        radius_cm: 50.0,
        half_height_cm: 40.0,
    };
    assert!(o.overlaps(pos, bad));
    assert_eq!(o.sweep(pos, [1.0, 0.0], bad), OracleSweep::StartOverlap);
    assert_eq!(
        o.sweep([f64::NAN, 0.0, 0.0], [1.0, 0.0], AGENT),
        OracleSweep::StartOverlap
    );
}

/// A floor with a hole under the query: nothing under the line or the
/// capsule's footprint -> NoFloor in both modes.
#[test]
fn miss_is_no_floor() {
    let mut m = Mesh::default();
    floor(&mut m, -1000.0, 1000.0, -1000.0, 1000.0, 0.0, true);
    let o = m.oracle();
    let outside = [2000.0, 0.0, 100.0];
    assert_eq!(o.find_floor_line(outside, 96.0, 500.0), OracleFloor::NoFloor);
    assert_eq!(o.find_floor_capsule(outside, AGENT, 500.0), OracleFloor::NoFloor);
    // Within R of the edge, the capsule still lands on the edge while the line misses.
    let near = [1030.0, 0.0, 100.0];
    assert_eq!(o.find_floor_line(near, 96.0, 500.0), OracleFloor::NoFloor);
    assert!(matches!(
        o.find_floor_capsule(near, AGENT, 500.0),
        OracleFloor::Floor { .. }
    ));
    // Above the floor: going down misses nothing, but the window is too short.
    assert_eq!(o.find_floor_line([0.0, 0.0, 200.0], 96.0, 50.0), OracleFloor::NoFloor);
}

/// A degenerate triangle (three collinear points on x = 100, z = 0) is a
/// segment: the line trace never hits it, but a capsule still collides with
/// it: the straight part (axis z in [-54, 54] covers z = 0) reaches it when the
/// axis is R away: distance = 100 - R, normal -x.
#[test]
fn degenerate_triangle_still_blocks() {
    let mut m = Mesh::default();
    m.tri([100.0, -50.0, 0.0], [100.0, 50.0, 0.0], [100.0, 0.0, 0.0]);
    let o = m.oracle();
    expect_hit(
        o.sweep([0.0, 0.0, 0.0], [200.0, 0.0], AGENT),
        58.0,
        200.0,
        [-1.0, 0.0, 0.0],
        1e-12,
    );
    assert_eq!(
        o.find_floor_line([100.0, 0.0, 100.0], 96.0, 200.0),
        OracleFloor::NoFloor
    );
    // Dropping onto it: the bottom sphere (centre z = 46 above) lands on the segment.
    expect_floor(
        o.find_floor_capsule([100.0, 10.0, 100.0], AGENT, 100.0),
        4.0,
        [100.0, 10.0, 96.0],
        [100.0, 10.0, 0.0],
        [0.0, 0.0, 1.0],
        1e-12,
    );
}

/// Far from the origin (x = 500000, y = -300000): a flat floor at
/// z = 12345.678 and a 30° slope are answered exactly (1e-6 cm).
#[test]
fn far_from_origin() {
    let (x0, y0, z0) = (500_000.0, -300_000.0, 12_345.678);
    let mut m = Mesh::default();
    floor(&mut m, x0 - 1000.0, x0 + 1000.0, y0 - 1000.0, y0 + 1000.0, z0, true);
    let (s, c) = (30f64.to_radians().sin(), 30f64.to_radians().cos());
    let a = s / c;
    let xs = x0 + 5000.0;
    let p = |x: f64, y: f64| [xs + x, y0 + y, z0 + a * x];
    m.quad(p(-500.0, -500.0), p(500.0, -500.0), p(500.0, 500.0), p(-500.0, 500.0));
    let o = m.oracle();

    let pos = [x0 + 12.345, y0 - 6.789, z0 + 96.0 + 7.25];
    let (loc, imp) = ([pos[0], pos[1], z0 + 96.0], [pos[0], pos[1], z0]);
    expect_floor(
        o.find_floor_line(pos, 96.0, 20.0),
        7.25,
        loc,
        imp,
        [0.0, 0.0, 1.0],
        1e-6,
    );
    expect_floor(
        o.find_floor_capsule(pos, AGENT, 20.0),
        7.25,
        loc,
        imp,
        [0.0, 0.0, 1.0],
        1e-6,
    );

    let pos = [xs, y0, z0 + 200.0];
    let t = 146.0 - R / c;
    let n = [-s, 0.0, c];
    let rest = z0 + 200.0 - t - HMR;
    let imp = [xs - R * n[0], y0, rest - R * n[2]];
    expect_floor(
        o.find_floor_capsule(pos, AGENT, 200.0),
        t,
        [xs, y0, z0 + 200.0 - t],
        imp,
        n,
        1e-6,
    );
}

/// The oracle is shared between threads by the validators.
#[test]
fn oracle_is_send_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Oracle>();
}
