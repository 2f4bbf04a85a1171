//! Query corpus (DESIGN §7): determinism, counts, ground queries hover free.

use walksurf_oracle::corpus::{CorpusConfig, QueryClass, Rng, generate};
use walksurf_oracle::{AgentShape, Oracle, OracleFloor, Vec3};

/// Flat 20 m × 20 m quad at z = 0.
fn flat_quad() -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let v = vec![
        [0.0, 0.0, 0.0],
        [2000.0, 0.0, 0.0],
        [2000.0, 2000.0, 0.0],
        [0.0, 2000.0, 0.0],
    ];
    (v, vec![[0, 1, 2], [0, 2, 3]])
}

fn cfg(seed: u64, ground: usize, abnormal: usize) -> CorpusConfig {
    CorpusConfig {
        seed,
        ground,
        abnormal,
        ..CorpusConfig::default()
    }
}

fn key(q: &walksurf_oracle::corpus::CorpusQuery) -> ([u64; 3], [u64; 2], QueryClass) {
    (q.pos.map(f64::to_bits), q.delta_xy.map(f64::to_bits), q.class)
}

#[test]
fn rng_is_deterministic_and_in_range() {
    let (mut a, mut b) = (Rng::new(42), Rng::new(42));
    for _ in 0..1000 {
        assert_eq!(a.next_u64(), b.next_u64());
        let x = a.next_f64();
        assert_eq!(x, b.next_f64());
        assert!((0.0..1.0).contains(&x));
    }
    assert_ne!(Rng::new(1).next_u64(), Rng::new(2).next_u64());
}

#[test]
fn same_seed_same_queries() {
    let (v, t) = flat_quad();
    let o = Oracle::new(&v, &t).expect("mesh");
    let a = generate(&o, &v, &t, &cfg(5, 50, 50));
    let b = generate(&o, &v, &t, &cfg(5, 50, 50));
    let c = generate(&o, &v, &t, &cfg(6, 50, 50));
    assert_eq!(
        a.iter().map(key).collect::<Vec<_>>(),
        b.iter().map(key).collect::<Vec<_>>()
    );
    assert_ne!(
        a.iter().map(key).collect::<Vec<_>>(),
        c.iter().map(key).collect::<Vec<_>>()
    );
}

/// On the flat quad every ground sample succeeds: exactly `ground` ground
/// queries (first), then `abnormal` abnormal ones. A ground capsule hovers
/// 2.15 cm above the floor (centre at H + 2.15), steps 16.67 cm, overlaps
/// nothing; abnormal positions lie in the bounds expanded by (R, R, H).
#[test]
fn counts_and_ground_queries_on_flat_quad() {
    let (v, t) = flat_quad();
    let o = Oracle::new(&v, &t).expect("mesh");
    let c = cfg(11, 200, 300);
    let q = generate(&o, &v, &t, &c);
    assert_eq!(q.len(), 500);
    let agent = c.agent;
    for (i, g) in q.iter().enumerate() {
        let ground = i < 200;
        assert_eq!(g.class == QueryClass::Ground, ground);
        let len = g.delta_xy[0].hypot(g.delta_xy[1]);
        if ground {
            assert!((g.pos[2] - (agent.half_height_cm + 2.15)).abs() < 1e-9, "{g:?}");
            assert!((len - 16.67).abs() < 1e-9);
            assert!(!o.overlaps(g.pos, agent));
            // The line trace confirms the hover height.
            match o.find_floor_line(g.pos, agent.half_height_cm, 10.0) {
                OracleFloor::Floor { floor_dist, .. } => assert!((floor_dist - 2.15).abs() < 1e-9),
                other => panic!("{other:?}"),
            }
        } else {
            assert!(len <= 256.0);
            let r = agent.radius_cm;
            assert!((-r..=2000.0 + r).contains(&g.pos[0]));
            assert!((-r..=2000.0 + r).contains(&g.pos[1]));
            let h = agent.half_height_cm;
            assert!((-h..=h).contains(&g.pos[2]));
        }
    }
}

/// A room: floor, four walls and a low box on the floor. Every ground query
/// is non-overlapping, some land on the box top, none inside walls.
#[test]
fn ground_queries_never_overlap_in_a_room() {
    let mut v: Vec<Vec3> = Vec::new();
    let mut t: Vec<[u32; 3]> = Vec::new();
    let mut quad = |p: [Vec3; 4]| {
        let i = v.len() as u32;
        v.extend(p);
        t.push([i, i + 1, i + 2]);
        t.push([i, i + 2, i + 3]);
    };
    let (s, h) = (1000.0, 300.0);
    quad([[0.0, 0.0, 0.0], [s, 0.0, 0.0], [s, s, 0.0], [0.0, s, 0.0]]);
    quad([[0.0, 0.0, 0.0], [0.0, 0.0, h], [s, 0.0, h], [s, 0.0, 0.0]]);
    quad([[0.0, s, 0.0], [s, s, 0.0], [s, s, h], [0.0, s, h]]);
    quad([[0.0, 0.0, 0.0], [0.0, s, 0.0], [0.0, s, h], [0.0, 0.0, h]]);
    quad([[s, 0.0, 0.0], [s, 0.0, h], [s, s, h], [s, s, 0.0]]);
    // Box 200 × 200 × 40 at (400..600)², top walkable, sides blocking.
    let (a, b, z) = (400.0, 600.0, 40.0);
    quad([[a, a, z], [b, a, z], [b, b, z], [a, b, z]]);
    quad([[a, a, 0.0], [b, a, 0.0], [b, a, z], [a, a, z]]);
    quad([[a, b, 0.0], [a, b, z], [b, b, z], [b, b, 0.0]]);
    quad([[a, a, 0.0], [a, a, z], [a, b, z], [a, b, 0.0]]);
    quad([[b, a, 0.0], [b, b, 0.0], [b, b, z], [b, a, z]]);
    let o = Oracle::new(&v, &t).expect("mesh");
    let c = cfg(3, 400, 0);
    let q = generate(&o, &v, &t, &c);
    assert!(q.len() > 300, "most samples should succeed: {}", q.len());
    let agent = AgentShape::default();
    let mut on_box = 0;
    for g in &q {
        assert_eq!(g.class, QueryClass::Ground);
        assert!(!o.overlaps(g.pos, agent));
        on_box += usize::from(g.pos[2] > agent.half_height_cm + 20.0);
    }
    assert!(on_box > 0);
}

/// Only vertical walls: no walkable triangle, so no ground queries (and no
/// hang), while abnormal queries are still produced.
#[test]
fn walls_only_gives_empty_ground_set() {
    let v = vec![
        [0.0, 0.0, 0.0],
        [500.0, 0.0, 0.0],
        [500.0, 0.0, 300.0],
        [0.0, 0.0, 300.0],
        [0.0, 500.0, 0.0],
        [0.0, 500.0, 300.0],
    ];
    let t = vec![[0, 1, 2], [0, 2, 3], [0, 3, 5], [0, 5, 4]];
    let o = Oracle::new(&v, &t).expect("mesh");
    let q = generate(&o, &v, &t, &cfg(1, 100, 10));
    assert_eq!(q.len(), 10);
    assert!(q.iter().all(|g| g.class == QueryClass::Abnormal));
}

/// Counts are caller data: the largest ones neither overflow nor allocate
/// up front. A wall has no walkable triangle, so `usize::MAX` ground
/// queries draw nothing and the call returns the one abnormal query asked
/// for (it overflowed `ground + abnormal` before).
#[test]
fn huge_counts_do_not_overflow() {
    let v = vec![[0.0, 0.0, 0.0], [100.0, 0.0, 0.0], [100.0, 0.0, 100.0]];
    let t = vec![[0, 1, 2]];
    let o = Oracle::new(&v, &t).expect("mesh");
    assert_eq!(generate(&o, &v, &t, &cfg(1, usize::MAX, 1)).len(), 1);
    assert!(generate(&o, &v, &t, &cfg(1, usize::MAX, 0)).is_empty());
    let mut rng = Rng::new(3);
    assert_eq!(rng.below(0), 0);
    assert!(rng.below(7) < 7);
}
