//! The hierarchical load balancer: pure Rust, no BPF. A scheduler feeds it its tasks' loads
//! and domains every interval and applies the migrations it decides.
//!
//! The hierarchy ([`Hierarchy`]) has the machine at its root, then one level per grouping
//! (NUMA nodes, then the LLC domains of each node; a package or a die level fits the same
//! way). One algorithm ([`balance`]) runs at every level, top down, with that level's
//! [`LevelPolicy`]: a group takes part when its load per unit of capacity is more than the
//! level's threshold (17% between nodes, 5% between the domains of a node) above or below the
//! average of its siblings; a pair moves half the smaller of its two deviations, and a group
//! pushes out at most half its deviation. Loads are compared per unit of capacity, so groups
//! of different sizes or speeds balance correctly.
//!
//! Statistics flow bottom-up: each leaf's load is summed once per pass, each parent's is
//! derived from its children and kept, and a migration adjusts only the two leaves and their
//! ancestors ([`state`]). [`Mode::Rescan`] decides the same moves the slow way (every read
//! sums the tasks again), to measure what that saves; [`LevelCost`] records each level's
//! attempts and their durations, [`LevelOutcomes`] what they found. A pass stops at
//! [`Balancer::max_moves_per_pass`] moves and the next one goes on from there, so a pile-up
//! that needs thousands of moves costs a few bounded passes instead of one long one.
//!
//! # A worked example, per level
//!
//! Two nodes of two domains each, every domain 4 CPUs (capacity 4096), loads in units of a
//! busy nice-0 task (1024): node 0 holds domains with 6 and 4 tasks, node 1 with 1 and 1.
//!
//! - Pass 1, node level: node 0 carries 10 tasks on 8192, node 1 2 tasks on 8192; the
//!   average is 6 per 8192, so node 0 is 4 tasks above it (67%, over 17%) and node 1 4 below.
//!   The pair transfers half the smaller deviation, 2 tasks (node 0's push cap, half its
//!   deviation, is 2 too), each from the most loaded domain of node 0 to the least loaded
//!   domain of node 1: 6 4 | 1 1 becomes 4 4 | 2 2.
//! - Pass 1, domain level: both nodes' domains are even. Nothing moves.
//! - Pass 2: the nodes hold 8 and 4, 2 tasks (33%) from the average of 6: one task crosses,
//!   3 4 | 3 2. Each node's domains are now half a task (14%) from their average, over 5%,
//!   but moving a task would only swap which one is heavier: no task reduces their imbalance.
//! - Pass 3: 7 and 5 are one task (16.7%) from the average, within 17%: nothing moves. A
//!   rule that evened the pair out would move one more task across the nodes.
//!
//! (`tests::worked_example` checks exactly this.)

pub mod balance;
mod candidate;
pub mod cost;
pub mod hierarchy;
pub mod load;
pub mod metrics;
pub mod outcome;
pub mod policy;
pub mod state;

pub use balance::Move;
pub use cost::{CostSummary, LevelCost};
pub use hierarchy::{Group, GroupId, Hierarchy, LeafSpec};
pub use outcome::LevelOutcomes;
pub use policy::LevelPolicy;
pub use state::{Mode, Task};

use balance::Moves;
use state::{PassBuffers, PassState};
use std::time::Instant;

/// What one pass did, next to what it cost.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PassReport {
    pub moves: Vec<Move>,
    /// Tasks moved by each level (index: depth - 1).
    pub moved_per_level: Vec<usize>,
    /// What each level's attempts found in this pass (index: depth - 1).
    pub outcomes: Vec<LevelOutcomes>,
    /// The pass stopped at [`Balancer::max_moves_per_pass`]: what is left waits for the next.
    pub capped: bool,
    /// Spread of the domains' load per unit of capacity, (max - min) / average, before and
    /// after the pass.
    pub imbalance_before: f64,
    pub imbalance_after: f64,
    /// Every group's load before and after the pass, indexed by [`GroupId`] (the root, 0,
    /// included: it holds the machine's total, which a pass does not change).
    pub groups: Vec<GroupStat>,
}

impl PassReport {
    /// How far group `g`'s load per capacity was from its parent's average before the pass,
    /// as a signed fraction of that average ([`GroupStat::imbalance`]); 0 for the root.
    pub fn group_imbalance(&self, h: &Hierarchy, g: GroupId) -> f64 {
        match h.groups[g].parent {
            Some(parent) => self.groups[g].imbalance(self.groups[parent].per_capacity_before()),
            None => 0.0,
        }
    }
}

/// One group's figures in a pass.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GroupStat {
    pub load_before: u64,
    pub load_after: u64,
    /// Sum of its leaves' capacities (1024 per full-speed CPU).
    pub capacity: u64,
}

impl GroupStat {
    /// Load per unit of capacity before the pass; a group without capacity counts as having
    /// one unit, as the balancer does.
    pub fn per_capacity_before(&self) -> f64 {
        self.load_before as f64 / self.capacity.max(1) as f64
    }

    /// The load per capacity before the pass minus the parent's `average_per_capacity`, as a
    /// fraction of that average: positive when overloaded. 0 when the average is 0.
    pub fn imbalance(&self, average_per_capacity: f64) -> f64 {
        if average_per_capacity <= 0.0 {
            return 0.0;
        }
        (self.per_capacity_before() - average_per_capacity) / average_per_capacity
    }
}

/// Moves one pass may decide by default. At 1,024 CPUs and 100,000 tasks a pass that moves
/// anything costs about 2 ms, and each move about 2 us more (README, "The load balancer"):
/// 512 keeps a pile-up's passes near 3 ms. When the cap stops a pass, the levels below wait
/// for the next one; meanwhile the upper level's moves themselves take from the most loaded
/// domain below the pusher and give to the least loaded one below the puller.
pub const DEFAULT_MAX_MOVES_PER_PASS: usize = 512;

pub struct Balancer {
    pub hierarchy: Hierarchy,
    pub mode: Mode,
    /// A pass stops deciding once it holds this many moves; the next pass starts from
    /// where the tasks then are.
    pub max_moves_per_pass: usize,
    costs: Vec<LevelCost>,
    outcomes: Vec<LevelOutcomes>,
    buffers: PassBuffers,
}

impl Balancer {
    pub fn new(hierarchy: Hierarchy, mode: Mode) -> Balancer {
        let levels = hierarchy.policies.len();
        Balancer {
            hierarchy,
            mode,
            max_moves_per_pass: DEFAULT_MAX_MOVES_PER_PASS,
            costs: vec![LevelCost::default(); levels],
            outcomes: vec![LevelOutcomes::default(); levels],
            buffers: PassBuffers::default(),
        }
    }

    pub fn with_max_moves_per_pass(self, max_moves_per_pass: usize) -> Balancer {
        Balancer { max_moves_per_pass, ..self }
    }

    /// One pass, level by level from the top: moves tasks (their `domain` changes) and says
    /// which. Every task's domain must be a domain of the hierarchy.
    pub fn pass(&mut self, tasks: &mut [Task]) -> PassReport {
        let h = &self.hierarchy;
        let mut state = PassState::new(h, tasks, self.mode, std::mem::take(&mut self.buffers));
        let imbalance_before = domain_spread(&state);
        let loads_before = group_loads(&state);
        let mut list = Vec::new();
        let mut moves = Moves { list: &mut list, cap: self.max_moves_per_pass };
        let mut outcomes = vec![LevelOutcomes::default(); h.policies.len()];
        for depth in 1..=h.policies.len() {
            let (policy, found) = (&h.policies[depth - 1], &mut outcomes[depth - 1]);
            for parent in h.at_depth(depth - 1).collect::<Vec<_>>() {
                if moves.full() {
                    found.capped += 1;
                    continue;
                }
                let start = Instant::now();
                let worked = balance::balance_children(&mut state, parent, policy, &mut moves, found);
                self.costs[depth - 1].record(start.elapsed().as_nanos() as u64, worked);
            }
        }
        let capped = moves.full();
        let imbalance_after = domain_spread(&state);
        let groups = group_stats(h, &loads_before, &group_loads(&state));
        self.buffers = state.into_buffers();
        let moved_per_level = outcomes.iter().map(|o| o.moves as usize).collect();
        for (total, pass) in self.outcomes.iter_mut().zip(&outcomes) {
            total.add(pass);
        }
        PassReport { moves: list, moved_per_level, outcomes, capped, imbalance_before, imbalance_after, groups }
    }

    /// Each level's cost since the balancer was made (index: depth - 1).
    pub fn costs(&self) -> &[LevelCost] {
        &self.costs
    }

    /// Each level's outcomes since the balancer was made (index: depth - 1).
    pub fn outcomes(&self) -> &[LevelOutcomes] {
        &self.outcomes
    }

    pub fn reset_costs(&mut self) {
        self.costs.iter_mut().for_each(|c| *c = LevelCost::default());
        self.outcomes.iter_mut().for_each(|o| *o = LevelOutcomes::default());
    }
}

fn group_loads(state: &PassState) -> Vec<u64> {
    (0..state.h.groups.len()).map(|g| state.group_load(g)).collect()
}

fn group_stats(h: &Hierarchy, before: &[u64], after: &[u64]) -> Vec<GroupStat> {
    (0..h.groups.len())
        .map(|g| GroupStat { load_before: before[g], load_after: after[g], capacity: h.groups[g].capacity })
        .collect()
}

fn domain_spread(state: &PassState) -> f64 {
    let h = state.h;
    let leaves: Vec<GroupId> = h.leaf_of_domain.iter().copied().filter(|&l| h.groups[l].capacity > 0).collect();
    let norms: Vec<f64> = leaves.iter().map(|&l| state.normalized(l)).collect();
    let average = state.group_load(0) as f64 / h.groups[0].capacity.max(1) as f64;
    if norms.is_empty() || average <= 0.0 {
        return 0.0;
    }
    let max = norms.iter().copied().fold(f64::MIN, f64::max);
    let min = norms.iter().copied().fold(f64::MAX, f64::min);
    (max - min) / average
}

#[cfg(test)]
mod tests;
