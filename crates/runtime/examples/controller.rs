//! A character controller loop on walksurf, with parry3d as the physics it
//! falls back to: the code a game programmer would copy from.
//!
//! Every frame (30 Hz, 600 cm/s) the agent walks toward its next waypoint:
//!
//! 1. **Move** horizontally by collide-and-slide (`../shared/seeds/001_*`):
//!    sweep the capsule by the wanted move; on a hit, stop just short of
//!    it, remove from what is left the part that goes into the surface
//!    (the hit normal projected on the horizontal plane) and sweep again,
//!    at most 4 times. A low obstacle (a stair riser, the foot of a ramp)
//!    is stepped up as `MoveAlongFloor` does (`004_*`): lift by the step
//!    height, sweep, then drop back onto the floor.
//! 2. **Floor**, as UE's FindFloor does it: `find_floor` in capsule mode
//!    under the new position; when the first thing the capsule meets is too
//!    steep to stand on (the foot of a steep slope, a ledge's rim), a
//!    line-trace `find_floor` under its centre decides. Walkable floor keeps
//!    the agent walking, re-centred 2.15 cm above it when out of the
//!    `[1.9, 2.4]` cm band; no walkable floor, and it falls (a falling agent
//!    uses the capsule `find_floor` as its downward sweep). The trust gate
//!    (`is_authoritative_floor`) is applied to the walking check as the
//!    seed does: a walksurf floor outside the steady band is asked of
//!    physics again (`--trust-exact` skips that: walksurf's answers are
//!    exact, so the redo only costs time).
//!
//! Every walksurf query goes through `find_floor_or` / `sweep_horizontal_or`
//! with a [`QueryCache`]: when walksurf returns `Fallback`, the closure runs
//! parry3d (an f32 capsule cast against a `TriMesh` of the same triangles)
//! and the cache's counters say how often each answered.
//!
//! ```sh
//! cargo run --release -p walksurf-runtime --example controller
//! cargo run --release -p walksurf-runtime --example controller -- LEVEL.wsurf LEVEL.glb
//! ```
//!
//! With no level, the bundled `testdata/dungeon.obj` is baked in-process.
//! With one, the source mesh is read with the settings recorded in the
//! `.wsurf` (scale, up axis, scene, excluded nodes), so parry collides with
//! exactly what was baked. The waypoints are standing spots from the
//! oracle's ground corpus (a game would use its own spawn points or
//! navmesh path).
//!
//! Flags: `--trust-exact` (take walksurf floors outside the steady band
//! without asking physics again), `--legs N` (waypoints to visit, default
//! 200), `--seed S` (waypoint seed, default 7).

use parry3d::math::{Isometry, Point, Vector};
use parry3d::query::{Ray, RayCast, ShapeCastHit, ShapeCastOptions};
use parry3d::shape::{Capsule, TriMesh};
use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use walksurf::{
    Agent, FallbackReason, FloorHit, FloorMode, FloorOutcome, QueryCache, QueryStats, Surface, SweepHit, SweepOutcome,
    is_authoritative_floor,
};
use walksurf_bake::{BakeConfig, Silent};
use walksurf_oracle::Oracle;
use walksurf_oracle::corpus::{CorpusConfig, QueryClass};

/// Simulation rate.
const DT: f64 = 1.0 / 30.0;
/// Walking speed. [Units: cm/s]
const SPEED: f64 = 600.0;
/// Falling acceleration. [Units: cm/s²]
const GRAVITY: f64 = 980.0;
/// UE's `MaxStepHeight`. [Units: cm]
const MAX_STEP: f64 = 45.0;
/// UE's `MIN_FLOOR_DIST` / `MAX_FLOOR_DIST`: a walking capsule hovers
/// between these above its floor; the floor probe looks `MAX_FLOOR_DIST`
/// below a step. [Units: cm]
const MIN_FLOOR_DIST: f64 = 1.9;
const MAX_FLOOR_DIST: f64 = 2.4;
/// Where a walking capsule hovers above its floor (UE re-centres to 2.15).
const HOVER: f64 = 2.15;
/// Collide-and-slide iterations per frame (001: "最多滑 4 次").
const MAX_SLIDES: usize = 4;
/// How far a move stops short of a contact, measured along the contact
/// normal, so that the next sweep does not start touching. [Units: cm]
const SKIN: f64 = 0.1;
/// Moves shorter than this are not worth a query. [Units: cm]
const MIN_MOVE: f64 = 0.01;
/// The line trace's window starts this far above the capsule bottom (as
/// walksurf's does). [Units: cm]
const LINE_ABOVE: f64 = 2.0;
/// A waypoint is reached within this horizontal distance (and half a
/// capsule height vertically). [Units: cm]
const REACHED: f64 = 25.0;
/// Standing spots drawn for the path, and the shortest leg. [Units: cm]
const SPOTS: usize = 2000;
const MIN_LEG: f64 = 150.0;
/// Below the level's lowest point by this much, a falling agent respawns.
const KILL_DEPTH: f64 = 2000.0;

/// The agent: UE's default third-person capsule (R 42, H 96).
const AGENT: Agent = Agent::DEFAULT;

// Lifting the capsule straight up by MAX_STEP sweeps exactly the union of
// the capsules before and after the lift as long as MAX_STEP is no longer
// than the capsule's straight part; so a raised capsule that overlaps
// nothing proves the lift was clear (see `try_step_up`).
const _: () = assert!(MAX_STEP <= 2.0 * (AGENT.half_height_cm - AGENT.radius_cm));

fn main() -> Result<(), Box<dyn Error>> {
    let args = Args::parse()?;
    let level = Level::load(&args)?;
    let physics = Physics::new(&level.vertices, &level.triangles, AGENT, level.walkable_z);
    let waypoints = level.waypoints(args.legs, args.seed);
    if waypoints.len() < 2 {
        return Err("the level has too few standing spots for a walk".into());
    }
    println!("{}", level.summary);
    println!(
        "path: {} waypoints from the oracle ground corpus (seed {}), agent R {} H {}, {} Hz, {} cm/s, trust gate {}",
        waypoints.len(),
        args.seed,
        AGENT.radius_cm,
        AGENT.half_height_cm,
        (1.0 / DT).round(),
        SPEED,
        if args.trust_exact {
            "off (--trust-exact)"
        } else {
            "on (non-authoritative floors redone by parry)"
        }
    );

    let mut agent = Controller::new(&level.surface, &physics, waypoints[0], !args.trust_exact);
    // Before the first queries: pull the tiles around the spawn into cache.
    level.surface.warmup(waypoints[0], 2.0 * walksurf_format::TILE_SIZE_CM);

    let mut walk = Walk::default();
    for &target in &waypoints[1..] {
        let start = agent.pos;
        // Twice the straight-line time, plus a second, then give up.
        let budget = (2.0 * dist_xy(start, target) / SPEED / DT) as usize + 30;
        let mut reached = false;
        for _ in 0..budget {
            let to_go = [target[0] - agent.pos[0], target[1] - agent.pos[1]];
            let d = len2(to_go);
            if d < REACHED && (target[2] - agent.pos[2]).abs() < AGENT.half_height_cm {
                reached = true;
                break;
            }
            let wish = match unit_xy(to_go) {
                Some(dir) => scale_xy(dir, (SPEED * DT).min(d)),
                None => [0.0, 0.0], // straight above or below
            };
            agent.frame(wish);
            walk.frames += 1;
            if agent.pos[2] < level.min_z - KILL_DEPTH {
                agent.respawn(target);
                walk.respawns += 1;
            }
        }
        if reached {
            walk.reached += 1;
        } else {
            walk.given_up += 1;
        }
    }
    agent.report(&walk);
    Ok(())
}

/// The character: where it is, how it moves, and what its queries cost.
struct Controller<'a> {
    surface: &'a Surface,
    physics: &'a Physics,
    /// Redo walking floors outside the trust band with physics (the seed).
    strict_gate: bool,
    walkable_z: f64,
    /// Capsule centre, world cm.
    pos: [f64; 3],
    mode: Mode,
    /// One cache per query kind, so that their counters stay apart.
    capsule_cache: QueryCache,
    line_cache: QueryCache,
    sweep_cache: QueryCache,
    count: Counters,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Walking,
    /// Vertical speed, cm/s (negative: down).
    Falling {
        vz: f64,
    },
}

/// What UE's FindFloor (`ComputeFloorDist`) makes of the ground below.
#[derive(Clone, Copy, Debug)]
enum Ground {
    /// Something to stand on.
    Walkable(Floor),
    /// The capsule first meets a face too steep to stand on, and there is
    /// no walkable floor under its centre either.
    Steep(FloorHit),
    /// Nothing within reach.
    Nothing,
}

#[derive(Clone, Copy, Debug)]
struct Floor {
    /// How far the capsule can move down before it touches anything.
    sweep_dist: f64,
    /// When the capsule meets a steep face first (the foot of a slope, a
    /// ledge's rim) and UE's line trace under the centre found walkable
    /// floor instead: that floor's distance below the capsule bottom.
    line_dist: Option<f64>,
}

impl Floor {
    /// UE's `AdjustFloorHeight`: how far to move up (negative: down) to
    /// hover `HOVER` above the floor, when out of `[1.9, 2.4]` cm.
    fn height_adjust(&self) -> f64 {
        let dist = match self.line_dist {
            None => self.sweep_dist,
            // Moving down to the line's floor would climb the steep face.
            Some(line) if self.sweep_dist < MIN_FLOOR_DIST && line >= MIN_FLOOR_DIST => return 0.0,
            Some(line) => line,
        };
        if (MIN_FLOOR_DIST..=MAX_FLOOR_DIST).contains(&dist) {
            0.0
        } else {
            // Never further down than the capsule can go.
            (HOVER - dist).max(-self.sweep_dist)
        }
    }
}

/// What the report prints besides the caches' counters.
#[derive(Default)]
struct Counters {
    /// Wall time inside walksurf calls (the physics closures excluded).
    walksurf: Duration,
    /// Wall time inside parry3d calls.
    parry: Duration,
    /// Parry casts: fallbacks plus gate redoes.
    parry_calls: u64,
    /// Walking floors walksurf answered, and how many the gate passed.
    gate_checked: u64,
    gate_passed: u64,
    step_ups: u64,
    landings: u64,
}

#[derive(Default)]
struct Walk {
    frames: u64,
    reached: u64,
    given_up: u64,
    respawns: u64,
}

impl<'a> Controller<'a> {
    fn new(surface: &'a Surface, physics: &'a Physics, spawn: [f64; 3], strict_gate: bool) -> Controller<'a> {
        Controller {
            surface,
            physics,
            strict_gate,
            walkable_z: surface.bake_params().walkable_normal_z.get() as f64,
            pos: spawn,
            mode: Mode::Walking,
            capsule_cache: QueryCache::new(),
            line_cache: QueryCache::new(),
            sweep_cache: QueryCache::new(),
            count: Counters::default(),
        }
    }

    fn respawn(&mut self, at: [f64; 3]) {
        self.pos = at;
        self.mode = Mode::Walking;
    }

    /// One simulation step with the wanted horizontal move.
    fn frame(&mut self, wish: [f64; 2]) {
        self.move_horizontal(wish);
        match self.mode {
            Mode::Walking => self.stay_on_floor(),
            Mode::Falling { vz } => self.fall(vz - GRAVITY * DT),
        }
    }

    // --- The queries: walksurf first, parry when it declines. ---

    /// `find_floor` looking `down` cm below the capsule; also says whether
    /// walksurf (not parry) answered.
    fn find_floor(&mut self, pos: [f64; 3], down: f64, mode: FloorMode) -> (FloorOutcome, bool) {
        let physics = self.physics;
        let cache = match mode {
            FloorMode::Capsule => &mut self.capsule_cache,
            FloorMode::LineTrace => &mut self.line_cache,
        };
        let mut parry_time = None;
        let start = Instant::now();
        let floor = self.surface.find_floor_or(cache, pos, down, AGENT, mode, |_reason| {
            timed(&mut parry_time, || physics.find_floor(pos, down, mode))
        });
        self.count_time(start.elapsed(), parry_time);
        (floor, parry_time.is_none())
    }

    /// `sweep_horizontal` by `delta`: `Clear` or the first `Hit`.
    fn sweep(&mut self, pos: [f64; 3], delta: [f64; 2]) -> SweepOutcome {
        let physics = self.physics;
        let mut parry_time = None;
        let start = Instant::now();
        let out = self
            .surface
            .sweep_horizontal_or(&mut self.sweep_cache, pos, delta, AGENT, |_reason| {
                timed(&mut parry_time, || physics.sweep(pos, delta))
            });
        self.count_time(start.elapsed(), parry_time);
        out
    }

    /// UE's FindFloor: the capsule swept down by `down`; if what it meets
    /// first is too steep to stand on, a line trace under its centre looks
    /// for walkable floor (UE's `ComputeFloorDist`). With `gate`, a capsule
    /// floor from walksurf that fails the trust gate is asked of physics.
    fn find_ground(&mut self, pos: [f64; 3], down: f64, gate: bool) -> Ground {
        let (mut floor, by_walksurf) = self.find_floor(pos, down, FloorMode::Capsule);
        if let (FloorOutcome::Floor(hit), true, true) = (floor, by_walksurf, gate) {
            self.count.gate_checked += 1;
            if is_authoritative_floor(&hit, self.walkable_z) {
                self.count.gate_passed += 1;
            } else if self.strict_gate {
                let physics = self.physics;
                let mut parry_time = None;
                floor = timed(&mut parry_time, || physics.find_floor(pos, down, FloorMode::Capsule));
                self.count_parry(parry_time);
            }
        }
        let hit = match floor {
            FloorOutcome::Floor(hit) => hit,
            _ => return Ground::Nothing,
        };
        if hit.walkable {
            return Ground::Walkable(Floor {
                sweep_dist: hit.floor_dist,
                line_dist: None,
            });
        }
        match self.find_floor(pos, down, FloorMode::LineTrace).0 {
            FloorOutcome::Floor(line) if line.walkable => Ground::Walkable(Floor {
                sweep_dist: hit.floor_dist,
                line_dist: Some(line.floor_dist),
            }),
            _ => Ground::Steep(hit),
        }
    }

    /// Splits a call's time between walksurf and the parry fallback in it.
    fn count_time(&mut self, total: Duration, parry: Option<Duration>) {
        self.count.walksurf += total.saturating_sub(parry.unwrap_or_default());
        self.count_parry(parry);
    }

    fn count_parry(&mut self, parry: Option<Duration>) {
        if let Some(took) = parry {
            self.count.parry += took;
            self.count.parry_calls += 1;
        }
    }

    // --- Movement. ---

    /// Collide-and-slide (001): move by `delta`, sliding along what is hit.
    fn move_horizontal(&mut self, delta: [f64; 2]) {
        let mut remaining = delta;
        for _ in 0..MAX_SLIDES {
            if len2(remaining) < MIN_MOVE {
                return;
            }
            let hit = match self.sweep(self.pos, remaining) {
                SweepOutcome::Hit(hit) => hit,
                SweepOutcome::Clear => {
                    self.pos = add_xy(self.pos, remaining);
                    return;
                }
                // `sweep_horizontal_or` only returns what the closure gave.
                SweepOutcome::Fallback(_) => return,
            };
            // Walk up to the contact; `left` is the part of the move not done.
            self.pos = pull_back(&hit, remaining);
            let left = scale_xy(remaining, 1.0 - hit.time);
            if self.mode == Mode::Walking && self.try_step_up(left, &hit) {
                return;
            }
            // 001's ProjectOnPlane with the hit normal made horizontal: take
            // away the part of the move that goes into the surface.
            let Some(n) = unit_xy([hit.normal[0], hit.normal[1]]) else {
                return; // a contact straight below or above: nowhere to slide
            };
            let into = dot_xy(left, n);
            remaining = if into < 0.0 {
                [left[0] - n[0] * into, left[1] - n[1] * into]
            } else {
                left
            };
        }
    }

    /// MoveAlongFloor's StepUp (004): when the contact is no higher than a
    /// step above the capsule bottom, lift by `MAX_STEP`, sweep `left`, and
    /// come down onto walkable floor. Returns whether the agent stepped.
    fn try_step_up(&mut self, left: [f64; 2], hit: &SweepHit) -> bool {
        let bottom = self.pos[2] - AGENT.half_height_cm;
        if hit.impact_point[2] - bottom > MAX_STEP || len2(left) < MIN_MOVE {
            return false;
        }
        let raised = [self.pos[0], self.pos[1], self.pos[2] + MAX_STEP];
        // Only a clear path over the obstacle is a step (a wall behind it,
        // or a wall that only looked low, is slid along instead).
        let Some(SweepOutcome::Clear) = self.raised_sweep(raised, left) else {
            return false;
        };
        let over = add_xy(raised, left);
        match self.find_ground(over, MAX_STEP + MAX_FLOOR_DIST, false) {
            Ground::Walkable(floor) => {
                self.pos = [over[0], over[1], over[2] - (floor.sweep_dist - HOVER).max(0.0)];
                self.count.step_ups += 1;
                true
            }
            _ => false,
        }
    }

    /// The step-up's sweep at the raised height, `None` when the lift is
    /// blocked. The lift is clear when the raised capsule overlaps nothing
    /// (see `MAX_STEP`). walksurf checks that before it answers, and its
    /// `InitialOverlap` is certain, so that Fallback needs no physics: this
    /// is `sweep_horizontal_or` spelled out, to look at the reason.
    fn raised_sweep(&mut self, raised: [f64; 3], left: [f64; 2]) -> Option<SweepOutcome> {
        let start = Instant::now();
        let out = self
            .surface
            .sweep_horizontal_cached(&mut self.sweep_cache, raised, left, AGENT);
        self.count.walksurf += start.elapsed();
        match out {
            SweepOutcome::Fallback(FallbackReason::InitialOverlap) => None,
            SweepOutcome::Fallback(_) => {
                self.sweep_cache.stats.physics_calls += 1;
                let physics = self.physics;
                let mut parry_time = None;
                let out = timed(&mut parry_time, || {
                    (!physics.overlaps(raised)).then(|| physics.sweep(raised, left))
                });
                self.count_parry(parry_time);
                out
            }
            answered => Some(answered),
        }
    }

    /// The walking floor check: stay on walkable floor, or start falling.
    fn stay_on_floor(&mut self) {
        match self.find_ground(self.pos, MAX_STEP + MAX_FLOOR_DIST, true) {
            Ground::Walkable(floor) => self.pos[2] += floor.height_adjust(),
            _ => self.mode = Mode::Falling { vz: 0.0 },
        }
    }

    /// Falling at `vz` this frame: the capsule `find_floor` over the fall
    /// distance is the downward sweep.
    fn fall(&mut self, vz: f64) {
        let drop = -vz * DT;
        match self.find_ground(self.pos, drop + MAX_FLOOR_DIST, false) {
            Ground::Nothing => {
                self.pos[2] -= drop;
                self.mode = Mode::Falling { vz };
            }
            Ground::Walkable(floor) => {
                self.pos[2] -= (floor.sweep_dist - HOVER).max(0.0);
                self.mode = Mode::Walking;
                self.count.landings += 1;
            }
            // Too steep to stand on: slide down it. Gravity along the face
            // moves the capsule n.z / |n.xy| cm sideways per cm of fall.
            Ground::Steep(hit) => {
                self.pos[2] -= (hit.floor_dist - HOVER).max(0.0);
                self.mode = Mode::Falling { vz };
                let n = [hit.normal[0], hit.normal[1]];
                if let Some(away) = unit_xy(n) {
                    let slide = (drop - hit.floor_dist).max(0.0) * hit.normal[2] / len2(n);
                    self.move_horizontal(scale_xy(away, slide));
                }
            }
        }
    }

    // --- The report. ---

    fn report(&self, walk: &Walk) {
        let kinds = [
            ("find_floor capsule", &self.capsule_cache.stats),
            ("find_floor line", &self.line_cache.stats),
            ("sweep_horizontal", &self.sweep_cache.stats),
        ];
        println!(
            "walk: {} frames ({:.1} s of game time), {} legs reached, {} given up, {} respawns; {} step-ups, {} landings",
            walk.frames,
            walk.frames as f64 * DT,
            walk.reached,
            walk.given_up,
            walk.respawns,
            self.count.step_ups,
            self.count.landings
        );
        let queries: u64 = kinds.iter().map(|k| k.1.calls).sum();
        println!("queries: {queries}");
        for (name, st) in kinds {
            println!(
                "  {name:<19} {:>7} calls, {:>6.2}% answered by walksurf, {:>5} by parry",
                st.calls,
                pct(st.answered, st.calls),
                st.physics_calls
            );
        }
        for (name, st) in kinds {
            println!("  fallbacks, {name:<19} {}", reasons(st));
        }
        println!(
            "  trust gate: {} of {} walking floors from walksurf authoritative ({:.2}%){}",
            self.count.gate_passed,
            self.count.gate_checked,
            pct(self.count.gate_passed, self.count.gate_checked),
            if self.strict_gate {
                ", the rest redone by parry"
            } else {
                ", the rest taken as exact"
            }
        );
        println!(
            "time: walksurf {:.3} ms ({:.0} ns/query), parry {:.3} ms ({} calls, {:.0} ns/call); \
             each includes ~{:.0} ns of clock reads",
            ms(self.count.walksurf),
            self.count.walksurf.as_nanos() as f64 / queries.max(1) as f64,
            ms(self.count.parry),
            self.count.parry_calls,
            self.count.parry.as_nanos() as f64 / self.count.parry_calls.max(1) as f64,
            clock_cost_ns()
        );
        println!(
            "final position: [{:.2}, {:.2}, {:.2}] cm, {}",
            self.pos[0],
            self.pos[1],
            self.pos[2],
            match self.mode {
                Mode::Walking => "walking".to_owned(),
                Mode::Falling { vz } => format!("falling at {:.0} cm/s", -vz),
            }
        );
    }
}

/// Where a hit leaves the capsule: at the contact, backed off along the
/// move so that it ends `SKIN` away from the surface along the normal (at
/// most back to where the move started). UE's `PullBackHitTime`, measured
/// across the surface rather than along the move so that a grazing hit
/// still leaves a gap.
fn pull_back(hit: &SweepHit, delta: [f64; 2]) -> [f64; 3] {
    let len = len2(delta);
    let dir = [delta[0] / len, delta[1] / len];
    let approach = -(dir[0] * hit.normal[0] + dir[1] * hit.normal[1]); // cos of the hit angle
    let back = (SKIN / approach.max(0.05)).min(hit.distance);
    [
        hit.location[0] - dir[0] * back,
        hit.location[1] - dir[1] * back,
        hit.location[2],
    ]
}

// --- The level. ---

struct Level {
    surface: Surface,
    /// The same triangles, for the physics fallback (Z up, cm).
    vertices: Vec<[f64; 3]>,
    triangles: Vec<[u32; 3]>,
    walkable_z: f64,
    min_z: f64,
    summary: String,
}

impl Level {
    fn load(args: &Args) -> Result<Level, Box<dyn Error>> {
        let t = Instant::now();
        let (surface, config, source, how) = match &args.level {
            // A file baked earlier (`walksurf bake`): map it and read its
            // source mesh with the settings it was baked with.
            Some((file, source)) => {
                let surface = Surface::open(file)?;
                let config = recorded_config(&surface)?;
                (surface, config, source.clone(), file.display().to_string())
            }
            // The bundled dungeon, baked in-process.
            None => {
                let source = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/dungeon.obj"));
                let config = BakeConfig::default();
                let baked = walksurf_bake::bake_file(&source, &config, 1, &Silent)?;
                let surface = Surface::from_bytes(&baked.bytes)?;
                (surface, config, source, "baked in-process".to_owned())
            }
        };
        let (mesh, _) = walksurf_bake::stage::ingest::ingest(&source, &config)?;
        let min_z = mesh.vertices.iter().map(|v| v[2]).fold(f64::INFINITY, f64::min);
        let summary = format!(
            "level: {} ({how}; {} triangles, {} tiles, {} KiB; loaded in {:.0} ms)",
            short(&source),
            mesh.triangles.len(),
            surface.tile_count(),
            surface.bytes().len() / 1024,
            t.elapsed().as_secs_f64() * 1e3
        );
        Ok(Level {
            walkable_z: surface.bake_params().walkable_normal_z.get() as f64,
            surface,
            vertices: mesh.vertices,
            triangles: mesh.triangles,
            min_z,
            summary,
        })
    }

    /// A walk of `legs` short legs over walkable ground: standing spots
    /// (capsule centres hovering over walkable ground) from the oracle's
    /// ground corpus, each next one the nearest not yet visited at least
    /// `MIN_LEG` away, height differences counting four times (stay on the
    /// same floor). Spots passed closer than that are dropped.
    fn waypoints(&self, legs: usize, seed: u64) -> Vec<[f64; 3]> {
        let Ok(oracle) = Oracle::new(&self.vertices, &self.triangles) else {
            return Vec::new();
        };
        let config = CorpusConfig {
            seed,
            ground: SPOTS,
            abnormal: 0,
            walkable_normal_z: self.walkable_z,
            ..CorpusConfig::default()
        };
        let mut spots: Vec<[f64; 3]> =
            walksurf_oracle::corpus::generate(&oracle, &self.vertices, &self.triangles, &config)
                .into_iter()
                .filter(|q| q.class == QueryClass::Ground)
                .map(|q| q.pos)
                .collect();
        let Some(mut at) = spots.pop() else {
            return Vec::new();
        };
        let mut path = vec![at];
        while path.len() <= legs {
            spots.retain(|p| dist_xy(*p, at) >= MIN_LEG);
            let cost = |p: &[f64; 3]| dist_xy(*p, at) + 4.0 * (p[2] - at[2]).abs();
            let Some(i) = (0..spots.len()).min_by(|&i, &j| cost(&spots[i]).total_cmp(&cost(&spots[j]))) else {
                break;
            };
            at = spots.swap_remove(i);
            path.push(at);
        }
        path
    }
}

/// The bake settings recorded in a `.wsurf` (its metadata), so that the
/// source mesh is read exactly as it was baked.
fn recorded_config(surface: &Surface) -> Result<BakeConfig, Box<dyn Error>> {
    let json = walksurf_format::FileView::new(surface.bytes(), surface.layout())
        .and_then(|v| v.metadata(surface.layout()))
        .ok_or("the file has no metadata: cannot tell how its source was read")?;
    let meta: serde_json::Value = serde_json::from_str(json)?;
    Ok(serde_json::from_value(meta["config"].clone())?)
}

// --- The physics fallback: parry3d, f32. ---

/// A parry3d `TriMesh` of the level, in f32 around the level's centre (f32
/// far from the origin would lose centimetres), and the agent's capsule.
struct Physics {
    mesh: TriMesh,
    origin: [f64; 3],
    capsule: Capsule,
    walkable_z: f64,
}

impl Physics {
    fn new(vertices: &[[f64; 3]], triangles: &[[u32; 3]], agent: Agent, walkable_z: f64) -> Physics {
        let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
        for v in vertices {
            for k in 0..3 {
                lo[k] = lo[k].min(v[k]);
                hi[k] = hi[k].max(v[k]);
            }
        }
        let origin = std::array::from_fn(|k| 0.5 * (lo[k] + hi[k]));
        let local = vertices
            .iter()
            .map(|v| {
                Point::new(
                    (v[0] - origin[0]) as f32,
                    (v[1] - origin[1]) as f32,
                    (v[2] - origin[2]) as f32,
                )
            })
            .collect();
        Physics {
            mesh: TriMesh::new(local, triangles.to_vec()),
            origin,
            capsule: Capsule::new_z((agent.half_height_cm - agent.radius_cm) as f32, agent.radius_cm as f32),
            walkable_z,
        }
    }

    /// Casts the capsule from `pos` along `vel` for times `[0, max]`.
    fn cast(&self, pos: [f64; 3], vel: [f64; 3], max: f64) -> Option<ShapeCastHit> {
        let p = self.to_local(pos);
        parry3d::query::cast_shapes(
            &Isometry::translation(p.x, p.y, p.z),
            &Vector::new(vel[0] as f32, vel[1] as f32, vel[2] as f32),
            &self.capsule,
            &Isometry::identity(),
            &Vector::zeros(),
            &self.mesh,
            ShapeCastOptions {
                max_time_of_impact: max as f32,
                // Moving out of a contact is free, as in UE.
                stop_at_penetration: false,
                compute_impact_geometry_on_penetration: true,
                ..ShapeCastOptions::default()
            },
        )
        .ok()
        .flatten()
    }

    fn overlaps(&self, pos: [f64; 3]) -> bool {
        let p = self.to_local(pos);
        let at = Isometry::translation(p.x, p.y, p.z);
        parry3d::query::intersection_test(&at, &self.capsule, &Isometry::identity(), &self.mesh).unwrap_or(true)
    }

    /// `find_floor` by parry: the capsule cast down, or (line trace) a ray
    /// down the window `[bottom − down, bottom + 2]` under the centre.
    fn find_floor(&self, pos: [f64; 3], down: f64, mode: FloorMode) -> FloorOutcome {
        let (floor_dist, impact, normal) = match mode {
            FloorMode::Capsule => {
                let Some(hit) = self.cast(pos, [0.0, 0.0, -1.0], down) else {
                    return FloorOutcome::NoFloor;
                };
                (
                    hit.time_of_impact as f64,
                    self.to_world(hit.witness2),
                    self.contact_normal(&hit),
                )
            }
            FloorMode::LineTrace => {
                let bottom = pos[2] - AGENT.half_height_cm;
                let origin = self.to_local([pos[0], pos[1], bottom + LINE_ABOVE]);
                let ray = Ray::new(origin, -Vector::z());
                let Some(hit) = self
                    .mesh
                    .cast_local_ray_and_get_normal(&ray, (down + LINE_ABOVE) as f32, true)
                else {
                    return FloorOutcome::NoFloor;
                };
                // A triangle is hit from either side: face the ray.
                let n = hit.normal * hit.normal.z.signum();
                let t = hit.time_of_impact as f64;
                let impact = [pos[0], pos[1], bottom + LINE_ABOVE - t];
                (t - LINE_ABOVE, impact, [n.x as f64, n.y as f64, n.z as f64])
            }
        };
        FloorOutcome::Floor(FloorHit {
            floor_dist,
            location: [pos[0], pos[1], pos[2] - floor_dist],
            impact_point: impact,
            normal,
            walkable: normal[2] >= self.walkable_z,
        })
    }

    /// `sweep_horizontal` by parry: the capsule cast by `(dx, dy, 0)`.
    fn sweep(&self, pos: [f64; 3], delta: [f64; 2]) -> SweepOutcome {
        let Some(hit) = self.cast(pos, [delta[0], delta[1], 0.0], 1.0) else {
            return SweepOutcome::Clear;
        };
        let t = hit.time_of_impact as f64;
        let normal = self.contact_normal(&hit);
        SweepOutcome::Hit(SweepHit {
            time: t,
            distance: t * len2(delta),
            location: [pos[0] + t * delta[0], pos[1] + t * delta[1], pos[2]],
            impact_point: self.to_world(hit.witness2),
            normal,
            impact_normal: normal,
        })
    }

    /// From the surface toward the capsule: the capsule's own outward
    /// normal at the contact, reversed (a triangle's is either side).
    fn contact_normal(&self, hit: &ShapeCastHit) -> [f64; 3] {
        let n = hit.normal1;
        [-n.x as f64, -n.y as f64, -n.z as f64]
    }

    fn to_local(&self, p: [f64; 3]) -> Point<f32> {
        Point::new(
            (p[0] - self.origin[0]) as f32,
            (p[1] - self.origin[1]) as f32,
            (p[2] - self.origin[2]) as f32,
        )
    }

    fn to_world(&self, p: Point<f32>) -> [f64; 3] {
        [
            p.x as f64 + self.origin[0],
            p.y as f64 + self.origin[1],
            p.z as f64 + self.origin[2],
        ]
    }
}

// --- Arguments and small helpers. ---

struct Args {
    /// A baked file and its source mesh; `None`: bake the dungeon.
    level: Option<(PathBuf, PathBuf)>,
    trust_exact: bool,
    legs: usize,
    seed: u64,
}

impl Args {
    fn parse() -> Result<Args, Box<dyn Error>> {
        let mut args = Args {
            level: None,
            trust_exact: false,
            legs: 200,
            seed: 7,
        };
        let mut paths = Vec::new();
        let mut it = std::env::args().skip(1);
        while let Some(a) = it.next() {
            match a.as_str() {
                "--trust-exact" => args.trust_exact = true,
                "--legs" => args.legs = it.next().ok_or("--legs N")?.parse()?,
                "--seed" => args.seed = it.next().ok_or("--seed S")?.parse()?,
                _ if a.starts_with("--") => return Err(format!("unknown flag {a}").into()),
                _ => paths.push(PathBuf::from(a)),
            }
        }
        args.level = match <[PathBuf; 2]>::try_from(paths) {
            Ok([file, source]) => Some((file, source)),
            Err(p) if p.is_empty() => None,
            Err(_) => {
                return Err("usage: controller [LEVEL.wsurf SOURCE_MESH] [--trust-exact] [--legs N] [--seed S]".into());
            }
        };
        Ok(args)
    }
}

/// Runs `f`, recording its wall time in `took`.
fn timed<T>(took: &mut Option<Duration>, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let out = f();
    *took = Some(t.elapsed());
    out
}

/// What one `Instant::now()` + `elapsed()` costs here, in ns.
fn clock_cost_ns() -> f64 {
    let n = 100_000;
    let t = Instant::now();
    let mut sink = Duration::ZERO;
    for _ in 0..n {
        sink += Instant::now().elapsed();
    }
    std::hint::black_box(sink);
    t.elapsed().as_nanos() as f64 / n as f64
}

fn reasons(st: &QueryStats) -> String {
    let list: Vec<String> = FallbackReason::ALL
        .iter()
        .filter(|&&r| st.fallbacks_for(r) > 0)
        .map(|&r| format!("{} {}", r.as_str(), st.fallbacks_for(r)))
        .collect();
    if list.is_empty() {
        "none".to_owned()
    } else {
        list.join(", ")
    }
}

fn short(p: &Path) -> String {
    let s = p.display().to_string();
    match s.find("testdata/") {
        Some(i) => s[i..].to_owned(),
        None => s,
    }
}

fn pct(a: u64, b: u64) -> f64 {
    100.0 * a as f64 / b.max(1) as f64
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn len2(v: [f64; 2]) -> f64 {
    (v[0] * v[0] + v[1] * v[1]).sqrt()
}

fn dist_xy(a: [f64; 3], b: [f64; 3]) -> f64 {
    len2([a[0] - b[0], a[1] - b[1]])
}

fn unit_xy(v: [f64; 2]) -> Option<[f64; 2]> {
    let l = len2(v);
    (l > 1e-6).then(|| [v[0] / l, v[1] / l])
}

fn dot_xy(a: [f64; 2], b: [f64; 2]) -> f64 {
    a[0] * b[0] + a[1] * b[1]
}

fn scale_xy(v: [f64; 2], s: f64) -> [f64; 2] {
    [v[0] * s, v[1] * s]
}

fn add_xy(p: [f64; 3], d: [f64; 2]) -> [f64; 3] {
    [p[0] + d[0], p[1] + d[1], p[2]]
}
