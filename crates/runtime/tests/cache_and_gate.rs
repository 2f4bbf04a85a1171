//! The per-agent cache, counters, trust gate and warmup.

mod common;

use common::{LevelBuilder, Winding};
use walksurf::{
    Agent, FallbackReason, FloorHit, FloorMode, FloorOutcome, QueryCache, Surface, SweepOutcome, is_authoritative_floor,
};
use walksurf_bake::{BakeConfig, Silent, bake_mesh};

/// Two flat floors: z = 0 over tiles (0,0) and (1,0), and a second file
/// generation with the floor at z = 100.
fn surface(z: f64, generation: u64) -> Surface {
    let mut b = LevelBuilder::new();
    b.floor([100.0, 6300.0], [100.0, 3000.0], z, Winding::Up);
    let out = bake_mesh(&b.build(), &BakeConfig::default(), generation, &Silent).expect("bake");
    Surface::from_bytes(&out.bytes).expect("open")
}

fn floor_z(o: FloorOutcome) -> Option<f64> {
    match o {
        FloorOutcome::Floor(h) => Some(h.impact_point[2]),
        _ => None,
    }
}

#[test]
fn cached_answers_equal_uncached_across_tiles() {
    let s = surface(0.0, 1);
    let mut cache = QueryCache::new();
    let agent = Agent::DEFAULT;
    let mut n = 0;
    // Walk across the tile border at x = 3200 and back.
    for i in 0..400 {
        let x = 200.0 + (i as f64 * 37.0) % 6000.0;
        let pos = [x, 1500.0, 96.0 + 2.15];
        for mode in [FloorMode::LineTrace, FloorMode::Capsule] {
            let plain = s.find_floor(pos, 47.4, agent, mode);
            let cached = s.find_floor_cached(&mut cache, pos, 47.4, agent, mode);
            assert_eq!(plain, cached, "at {pos:?} {mode:?}");
            n += 1;
        }
    }
    assert_eq!(cache.stats.calls, n);
    assert_eq!(cache.stats.answered + cache.stats.fallbacks.iter().sum::<u64>(), n);
    assert!(cache.stats.answered > n * 9 / 10, "{:?}", cache.stats);
}

#[test]
fn a_cache_from_another_generation_is_ignored() {
    let old = surface(0.0, 1);
    let new = surface(100.0, 2);
    let mut cache = QueryCache::new();
    let pos = [1000.0, 1000.0, 96.0 + 2.15];
    let probe = [1000.0, 1000.0, 196.0 + 2.15];
    assert_eq!(
        floor_z(old.find_floor_cached(&mut cache, pos, 47.4, Agent::DEFAULT, FloorMode::LineTrace)),
        Some(0.0)
    );
    // Same tile, new file: the answer must come from the new file.
    assert_eq!(
        floor_z(new.find_floor_cached(&mut cache, probe, 47.4, Agent::DEFAULT, FloorMode::LineTrace)),
        Some(100.0)
    );
    assert_eq!(
        floor_z(old.find_floor_cached(&mut cache, pos, 47.4, Agent::DEFAULT, FloorMode::Capsule)).map(|z| z.round()),
        Some(0.0)
    );
}

#[test]
fn counters_count_reasons_and_physics_calls() {
    let s = surface(0.0, 1);
    let mut cache = QueryCache::new();
    let bad = Agent {
        radius_cm: -1.0,
        half_height_cm: 10.0,
    };
    let o = s.find_floor_cached(&mut cache, [0.0, 0.0, 0.0], 47.4, bad, FloorMode::Capsule);
    assert_eq!(o, FloorOutcome::Fallback(FallbackReason::InvalidInput));
    let huge = Agent {
        radius_cm: 400.0,
        half_height_cm: 400.0,
    };
    let o = s.find_floor_cached(&mut cache, [1000.0, 1000.0, 500.0], 47.4, huge, FloorMode::Capsule);
    assert_eq!(o, FloorOutcome::Fallback(FallbackReason::BudgetExceeded));
    let mut asked = None;
    let o = s.sweep_horizontal_or(
        &mut cache,
        [1000.0, 1000.0, 98.15],
        [1000.0, 0.0],
        Agent::DEFAULT,
        |r| {
            asked = Some(r);
            SweepOutcome::Clear
        },
    );
    assert_eq!(o, SweepOutcome::Clear);
    assert_eq!(
        asked,
        Some(FallbackReason::BudgetExceeded),
        "1000 cm is beyond the 256 cm sweep limit"
    );
    assert_eq!(cache.stats.calls, 3);
    assert_eq!(cache.stats.answered, 0);
    assert_eq!(cache.stats.physics_calls, 1);
    assert_eq!(cache.stats.fallbacks_for(FallbackReason::InvalidInput), 1);
    assert_eq!(cache.stats.fallbacks_for(FallbackReason::BudgetExceeded), 2);
    let mut total = walksurf::QueryStats::default();
    total.merge(&cache.stats);
    total.merge(&cache.stats);
    assert_eq!(total.calls, 6);
}

fn hit(floor_dist: f64, nz: f64) -> FloorHit {
    let nx = (1.0 - nz * nz).sqrt();
    FloorHit {
        floor_dist,
        location: [0.0; 3],
        impact_point: [0.0; 3],
        normal: [nx, 0.0, nz],
        walkable: nz >= 0.71,
    }
}

#[test]
fn trust_gate_bounds() {
    // normal z ≥ 0.71 + 0.02 and floor_dist ∈ [1.8, 2.5].
    assert!(is_authoritative_floor(&hit(2.15, 1.0), 0.71));
    assert!(is_authoritative_floor(&hit(1.8, 0.73), 0.71));
    assert!(is_authoritative_floor(&hit(2.5, 0.9), 0.71));
    assert!(!is_authoritative_floor(&hit(1.79, 1.0), 0.71));
    assert!(!is_authoritative_floor(&hit(2.51, 1.0), 0.71));
    assert!(!is_authoritative_floor(&hit(2.15, 0.729), 0.71));
    assert!(!is_authoritative_floor(&hit(f64::NAN, 1.0), 0.71));
}

#[test]
fn warmup_touches_the_tiles_around_an_agent() {
    let s = surface(0.0, 1);
    // The floor spans tiles x = 0, 1 (plus halo neighbours that hold none).
    assert_eq!(s.warmup([3200.0, 1500.0, 0.0], 100.0), 2);
    assert_eq!(s.warmup([1000.0, 1000.0, 0.0], 10.0), 1);
    assert_eq!(s.warmup([1.0e7, 0.0, 0.0], 10.0), 0);
    assert_eq!(s.warmup([f64::NAN, 0.0, 0.0], 10.0), 0);
}
