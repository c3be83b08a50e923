//! What each level of the hierarchy tolerates before it moves load, and how much it moves.
//!
//! The rule is the one rusty's NUMA balancing was designed with: each group's load per unit
//! of capacity is compared with the average of its siblings (the groups that share its
//! parent). A group more than the level's threshold above that average pushes, one more than
//! the threshold below it pulls, and the others take no part. A pair moves half the smaller
//! of its two deviations, and a group pushes out at most half its own deviation in a pass:
//! load converges over a few passes instead of swinging, which matters most between nodes,
//! where a move costs the task its memory locality.

/// The policy of one level: applied between the groups of that level that share a parent
/// (between the NUMA nodes of the machine, between the domains of one node).
#[derive(Debug, Clone, PartialEq)]
pub struct LevelPolicy {
    /// Name for reports and metrics labels, e.g. "node", "domain".
    pub name: &'static str,
    /// A group takes part while its load per unit of capacity differs from its siblings'
    /// average by more than this fraction of that average.
    pub imbalance_threshold: f64,
    /// Share of the smaller of a pair's two deviations (the pusher's load above the average,
    /// the puller's below it) that the pair transfers.
    pub transfer_share: f64,
    /// Most of its deviation above the average a group may push away in one pass at this
    /// level (of its deviation when the level's attempt starts).
    pub push_cap: f64,
}

/// Moving across NUMA nodes costs memory locality: the imbalance that justifies it is larger
/// (percent of the average).
pub const NODE_IMBALANCE_PCT: f64 = 17.0;
/// Between the LLC domains of one node only cache warmth is lost (percent of the average).
pub const DOMAIN_IMBALANCE_PCT: f64 = 5.0;
pub const DEFAULT_TRANSFER_SHARE: f64 = 0.5;
pub const DEFAULT_PUSH_CAP: f64 = 0.5;

impl LevelPolicy {
    pub fn node() -> LevelPolicy {
        LevelPolicy::with_threshold("node", NODE_IMBALANCE_PCT / 100.0)
    }

    pub fn domain() -> LevelPolicy {
        LevelPolicy::with_threshold("domain", DOMAIN_IMBALANCE_PCT / 100.0)
    }

    pub fn with_threshold(name: &'static str, imbalance_threshold: f64) -> LevelPolicy {
        LevelPolicy { name, imbalance_threshold, transfer_share: DEFAULT_TRANSFER_SHARE, push_cap: DEFAULT_PUSH_CAP }
    }
}
