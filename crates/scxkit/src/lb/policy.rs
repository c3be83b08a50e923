//! What each level of the hierarchy tolerates before it moves load, and how much it moves.

/// The cost policy of one level: applied between the groups of that level that share a
/// parent (between the NUMA nodes of the machine, between the domains of one node).
#[derive(Debug, Clone, PartialEq)]
pub struct LevelPolicy {
    /// Name for reports and metrics labels, e.g. "node", "domain".
    pub name: &'static str,
    /// A pair of groups is balanced while their loads per unit of capacity differ by at most
    /// this fraction of their parent's average.
    pub imbalance_threshold: f64,
    /// Share of a pair's imbalance (its difference in load, capacity-weighted) to transfer;
    /// 0.5 moves what equalizes the two.
    pub transfer_share: f64,
    /// Most of its load a group may push away in one pass at this level (of its load when
    /// the level's attempt starts; a domain's load that left with its node's push counts
    /// against the node's, not the domain's).
    pub push_cap: f64,
}

/// Moving across NUMA nodes costs memory locality: the imbalance that justifies it is larger.
pub const NODE_IMBALANCE_THRESHOLD: f64 = 0.17;
/// Between the LLC domains of one node only cache warmth is lost.
pub const DOMAIN_IMBALANCE_THRESHOLD: f64 = 0.05;
pub const DEFAULT_TRANSFER_SHARE: f64 = 0.5;
pub const DEFAULT_PUSH_CAP: f64 = 0.5;

impl LevelPolicy {
    pub fn node() -> LevelPolicy {
        LevelPolicy::with_threshold("node", NODE_IMBALANCE_THRESHOLD)
    }

    pub fn domain() -> LevelPolicy {
        LevelPolicy::with_threshold("domain", DOMAIN_IMBALANCE_THRESHOLD)
    }

    pub fn with_threshold(name: &'static str, imbalance_threshold: f64) -> LevelPolicy {
        LevelPolicy { name, imbalance_threshold, transfer_share: DEFAULT_TRANSFER_SHARE, push_cap: DEFAULT_PUSH_CAP }
    }
}
