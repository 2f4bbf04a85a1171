//! Query inputs and outcomes.

/// A capsule agent: upright, centre `P`, radius `R`, half-height `H`
/// (`H ≥ R`; total height `2H`). Centimetres.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Agent {
    pub radius_cm: f64,
    pub half_height_cm: f64,
}

impl Agent {
    /// The common third-person character: `R = 42`, `H = 96`.
    pub const DEFAULT: Agent = Agent {
        radius_cm: 42.0,
        half_height_cm: 96.0,
    };

    pub(crate) fn is_valid(&self) -> bool {
        self.radius_cm.is_finite()
            && self.half_height_cm.is_finite()
            && self.radius_cm > 0.0
            && self.half_height_cm >= self.radius_cm
    }
}

impl Default for Agent {
    fn default() -> Self {
        Agent::DEFAULT
    }
}

/// How `find_floor` probes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FloorMode {
    /// Sweep the whole capsule down.
    #[default]
    Capsule,
    /// The vertical line under the capsule centre, window
    /// `[bottom − down, bottom + 2]` with `bottom = P.z − H`.
    LineTrace,
}

/// Default `down` distance: `MaxStepHeight 45 + MAX_FLOOR_DIST 2.4`.
pub const DEFAULT_FLOOR_DOWN_CM: f64 = 47.4;

/// A floor found by `find_floor`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FloorHit {
    /// How far the capsule (or its bottom, in line-trace mode) moves down to
    /// the contact; negative when the surface is above the bottom.
    pub floor_dist: f64,
    /// Capsule centre at rest: `P − floor_dist·ẑ`.
    pub location: [f64; 3],
    /// The contact point.
    pub impact_point: [f64; 3],
    /// Unit contact normal, pointing from the surface to the capsule.
    pub normal: [f64; 3],
    /// `normal.z ≥` the file's walkable normal z.
    pub walkable: bool,
}

/// Trust gate (the seed's `IsAuthoritativeFloor`): a walking capsule hovers
/// 1.9–2.4 cm above its floor (UE re-centres it to 2.15); a floor hit is
/// authoritative when its normal is clearly walkable and its distance lies
/// in that band.
pub const TRUST_MIN_FLOOR_DIST_CM: f64 = 1.8;
/// Upper end of the trusted floor distance band. [Units: cm]
pub const TRUST_MAX_FLOOR_DIST_CM: f64 = 2.5;
/// How far above the walkable threshold the normal's z must be.
pub const TRUST_NORMAL_Z_MARGIN: f64 = 0.02;

/// Whether `hit` may be taken as the agent's floor without further checks:
/// `normal.z ≥ walkable_z + 0.02` and `floor_dist ∈ [1.8, 2.5]` cm.
pub fn is_authoritative_floor(hit: &FloorHit, walkable_z: f64) -> bool {
    hit.normal[2] >= walkable_z + TRUST_NORMAL_Z_MARGIN
        && (TRUST_MIN_FLOOR_DIST_CM..=TRUST_MAX_FLOOR_DIST_CM).contains(&hit.floor_dist)
}

/// Why the runtime declined to answer: the caller runs its physics instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FallbackReason {
    /// The file lacks data the query needs (or that data is corrupt).
    MissingData,
    /// NaN/∞ position, non-positive radius, half-height below radius, …
    InvalidInput,
    /// The query reaches outside the area the file covers.
    OutsideCoverage,
    /// A near-vertical surface may be touched first.
    VerticalSurface,
    /// A surface the file does not represent exactly (a blocker) may be
    /// touched first.
    UncollectedSurface,
    NoGroundSupport,
    /// The agent overlaps geometry at its start.
    InitialOverlap,
    OuterBoundaryContact,
    /// The decision lies within the stored error bounds.
    PrecisionBudget,
    /// The query exceeds the bake's limits (agent size, sweep length) or a
    /// traversal budget.
    BudgetExceeded,
    /// Not implemented by this runtime version.
    Unsupported,
}

impl FallbackReason {
    /// Every reason, for counters and reports.
    pub const ALL: [FallbackReason; 11] = [
        FallbackReason::MissingData,
        FallbackReason::InvalidInput,
        FallbackReason::OutsideCoverage,
        FallbackReason::VerticalSurface,
        FallbackReason::UncollectedSurface,
        FallbackReason::NoGroundSupport,
        FallbackReason::InitialOverlap,
        FallbackReason::OuterBoundaryContact,
        FallbackReason::PrecisionBudget,
        FallbackReason::BudgetExceeded,
        FallbackReason::Unsupported,
    ];

    /// `snake_case` name, as the `query` CLI prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            FallbackReason::MissingData => "missing_data",
            FallbackReason::InvalidInput => "invalid_input",
            FallbackReason::OutsideCoverage => "outside_coverage",
            FallbackReason::VerticalSurface => "vertical_surface",
            FallbackReason::UncollectedSurface => "uncollected_surface",
            FallbackReason::NoGroundSupport => "no_ground_support",
            FallbackReason::InitialOverlap => "initial_overlap",
            FallbackReason::OuterBoundaryContact => "outer_boundary_contact",
            FallbackReason::PrecisionBudget => "precision_budget",
            FallbackReason::BudgetExceeded => "budget_exceeded",
            FallbackReason::Unsupported => "unsupported",
        }
    }
}

/// Outcome of `find_floor`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FloorOutcome {
    Floor(FloorHit),
    NoFloor,
    Fallback(FallbackReason),
}

/// A horizontal sweep's first contact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepHit {
    /// Fraction of the move done before contact, in `[0, 1]`.
    pub time: f64,
    pub distance: f64,
    pub location: [f64; 3],
    pub impact_point: [f64; 3],
    pub normal: [f64; 3],
    pub impact_normal: [f64; 3],
}

/// Outcome of `sweep_horizontal`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SweepOutcome {
    Clear,
    Hit(SweepHit),
    Fallback(FallbackReason),
}
