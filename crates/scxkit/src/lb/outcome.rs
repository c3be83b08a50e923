//! What balancing found, per level, counted as the kernel's load balancer counts it in its
//! schedstats (an attempt found the groups balanced, found no busier group, found no task to
//! move, or moved tasks). A level's cost says little without them: a cheap attempt that
//! finds nothing to move because its statistics are stale looks like a saving.

/// One level's outcomes since the balancer was made (or reset). An attempt balances the
/// children of one parent group: it finds them balanced, or no busier group, or no idler
/// group, or pairs to work, each of which then counts its moves or a no_task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LevelOutcomes {
    /// Attempts that found every group within the level's threshold of the average.
    pub balanced: u64,
    /// Attempts that found a group below the threshold, to pull, but none above it.
    pub no_busier_group: u64,
    /// Attempts that found a group above the threshold but none below it to take the load.
    pub no_idler_group: u64,
    /// Pairs (a pusher and a puller) worked that found no task whose move reduces their
    /// imbalance and that may run in the puller.
    pub no_task: u64,
    /// Tasks the level decided to move.
    pub moves: u64,
    /// Attempts cut short, or not started, because the pass reached its move cap.
    pub capped: u64,
}

impl LevelOutcomes {
    pub fn add(&mut self, other: &LevelOutcomes) {
        self.balanced += other.balanced;
        self.no_busier_group += other.no_busier_group;
        self.no_idler_group += other.no_idler_group;
        self.no_task += other.no_task;
        self.moves += other.moves;
        self.capped += other.capped;
    }
}
