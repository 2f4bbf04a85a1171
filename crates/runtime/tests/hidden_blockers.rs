//! Capsule `find_floor` skips blockers hidden under the walkable surface (a
//! riser under its nosing, a curb under a shelf's edge) only where that
//! surface is below the capsule's top: answers checked against the oracle.

mod common;

use common::*;
use walksurf::{Agent, FloorMode, FloorOutcome};

/// A ball 40 cm tall (R 20): it fits between a curb and a shelf.
const SHORT: Agent = Agent {
    radius_cm: 20.0,
    half_height_cm: 20.0,
};

/// A floor at 0, a shelf at 50 cm over `[0, 100]²` and under the shelf's
/// edge `x = 100` a 5 cm curb (hidden: it lies directly below the shelf,
/// 45 cm above its top).
fn curb_under_shelf() -> walksurf_bake::Mesh {
    let mut b = LevelBuilder::new();
    b.floor([-200.0, 300.0], [-200.0, 300.0], 0.0, Winding::Up)
        .floor([0.0, 100.0], [0.0, 100.0], 50.0, Winding::Both)
        .wall([100.0, 0.0], [100.0, 100.0], [0.0, 0.0], [5.0, 5.0]);
    b.build()
}

#[test]
fn a_curb_under_a_shelf_is_met_by_a_capsule_below_the_shelf() {
    let (surface, oracle) = bake_generated("curb under shelf", &curb_under_shelf());
    // The ball's centre 10 cm outside the curb, 25 cm up: it comes down
    // onto the curb's top edge, at rest when the centre is √(20² − 10²)
    // above it. The shelf (50) is above the ball's top (45) and, 10 cm
    // from its centre, above the ball there (25 + √300 < 50): the curb
    // under the shelf is the first contact.
    let centre = [110.0, 50.0, 25.0];
    let pos = [centre[0], centre[1], centre[2] + SHORT.half_height_cm - SHORT.radius_cm];
    let q = FloorQuery {
        pos,
        down_cm: 30.0,
        agent: SHORT,
    };
    let truth = oracle.find_floor_capsule(pos, agent_shape(SHORT), q.down_cm);
    match truth {
        walksurf_oracle::OracleFloor::Floor { floor_dist, .. } => {
            let want = centre[2] - (5.0 + 300f64.sqrt());
            assert!((floor_dist - want).abs() < 1e-9, "oracle: {truth:?}, want {want}")
        }
        other => panic!("the oracle should meet the curb: {other:?}"),
    }
    let ours = surface.find_floor(pos, q.down_cm, SHORT, FloorMode::Capsule);
    assert!(matches!(ours, FloorOutcome::Floor(_)), "unanswered: {ours:?}");
    compare_capsule_floor(&q, ours, truth).unwrap_or_else(|e| panic!("{e}"));

    // And every column around the curb and the shelf's edge, for this
    // capsule and a tall one (whose top is above the shelf, so it may skip
    // the curb).
    let agents = [SHORT, Agent::DEFAULT];
    let queries = capsule_grid_queries(&oracle, [80.0, 40.0, -10.0], [125.0, 60.0, 100.0], 46, 3, &agents);
    let t = compare_capsule(&surface, &oracle, &queries);
    println!("curb under shelf: {}", t.summary());
    t.assert_no_errors("curb under shelf");
    assert!(t.answered > queries.len() / 2, "{}", t.summary());
}

#[test]
fn stairs_agree_with_the_oracle() {
    // Risers hidden under their nosings; the default agents and a short one.
    let mut b = LevelBuilder::new();
    b.floor([-100.0, 400.0], [-100.0, 200.0], 0.0, Winding::Up)
        .stairs(0.0, [0.0, 100.0], 0.0, 8, 28.0, 17.0);
    let (surface, oracle) = bake_generated("stairs", &b.build());
    let mut agents = CAPSULE_AGENTS.to_vec();
    agents.push(SHORT);
    let queries = capsule_grid_queries(&oracle, [-20.0, 10.0, -10.0], [250.0, 90.0, 200.0], 55, 3, &agents);
    let t = compare_capsule(&surface, &oracle, &queries);
    println!("stairs: {}", t.summary());
    t.assert_no_errors("stairs");
    assert!(t.answered > queries.len() / 2, "{}", t.summary());
}
