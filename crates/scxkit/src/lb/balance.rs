//! The one push/pull algorithm, applied at every level with that level's policy.
//!
//! For each parent group, each child's deviation is its load minus what the parent's average
//! load per unit of capacity gives its capacity. Children more than the level's threshold
//! above the average push, those more than it below pull (policy.rs). Pushers are taken most
//! loaded first, each against the pullers least loaded first; a pair transfers its share of
//! the smaller of the two deviations as they stand when its turn comes, and a pusher gives
//! up at most its push cap of its deviation at the start. Tasks move from the leaves below
//! the pusher to the least loaded leaf below the puller that each task may use. The victim
//! is the task whose load is closest to what would even out the pair (so that it leaves the
//! pair least imbalanced), among those that strictly reduce the pair's imbalance, may run in
//! the target and have not moved in this pass; the transfer only says when the pair stops.
//! A pair is worked until its transfer is done, the pusher reached its push cap, no task
//! fits, or the pass reached its move cap; then the next pair. A child without capacity
//! (every CPU of it offline) never pulls, and pushes all its load, thresholds aside, to any
//! sibling with capacity: it cannot run any of it.

use super::candidate::Candidate;
use super::hierarchy::GroupId;
use super::outcome::LevelOutcomes;
use super::policy::LevelPolicy;
use super::state::PassState;

/// A decided migration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Move {
    pub task: usize,
    pub from: usize,
    pub to: usize,
    /// The depth of the level that decided it (1: between nodes, 2: between domains).
    pub depth: usize,
}

/// The moves of one pass and the most it may hold.
pub(crate) struct Moves<'m> {
    pub list: &'m mut Vec<Move>,
    pub cap: usize,
}

impl Moves<'_> {
    pub fn full(&self) -> bool {
        self.list.len() >= self.cap
    }
}

/// Balances the children of `parent`, counting how the attempt ended in `outcomes`;
/// returns whether any task moved.
pub(crate) fn balance_children(
    state: &mut PassState,
    parent: GroupId,
    policy: &LevelPolicy,
    moves: &mut Moves,
    outcomes: &mut LevelOutcomes,
) -> bool {
    let children = state.h.groups[parent].children.clone();
    let capacity: u64 = children.iter().map(|&c| state.h.groups[c].capacity).sum();
    let average = state.group_load(parent) as f64 / capacity.max(1) as f64;
    if children.len() < 2 || average <= 0.0 {
        outcomes.balanced += 1;
        return false;
    }
    let margin = |c: GroupId| policy.imbalance_threshold * average * state.h.groups[c].capacity.max(1) as f64;
    // A group without capacity (every CPU offline) never receives, and gives up all it holds
    // to any group with capacity, thresholds aside: it cannot run it.
    let stranded = |state: &PassState, c: GroupId| state.h.groups[c].capacity == 0 && state.group_load(c) > 0;
    let below_margin = |state: &PassState, c: GroupId| -deviation(state, c, average) > margin(c);
    let mut pushers: Vec<GroupId> =
        children.iter().copied().filter(|&c| stranded(state, c) || deviation(state, c, average) > margin(c)).collect();
    pushers.sort_by(|&x, &y| state.normalized(y).total_cmp(&state.normalized(x)).then(x.cmp(&y)));
    let any_stranded = pushers.iter().any(|&c| stranded(state, c));
    let mut pullers: Vec<GroupId> = children
        .iter()
        .copied()
        .filter(|&c| state.h.groups[c].capacity > 0 && (any_stranded || below_margin(state, c)))
        .collect();
    pullers.sort_by(|&x, &y| state.normalized(x).total_cmp(&state.normalized(y)).then(x.cmp(&y)));
    match (pushers.is_empty(), pullers.is_empty()) {
        (true, true) => outcomes.balanced += 1,
        (true, false) => outcomes.no_busier_group += 1,
        (false, true) => outcomes.no_idler_group += 1,
        (false, false) => {}
    }
    let mut worked = false;
    for &a in &pushers {
        let all = stranded(state, a);
        let mut budget = if all { state.group_load(a) as f64 } else { policy.push_cap * deviation(state, a, average) };
        for &b in &pullers {
            if budget <= 0.0 {
                break;
            }
            if !all && !below_margin(state, b) {
                continue;
            }
            let transfer = if all {
                state.group_load(a) as f64
            } else {
                policy.transfer_share * deviation(state, a, average).min(-deviation(state, b, average))
            };
            if transfer <= 0.0 {
                continue;
            }
            let moved = work_pair(state, (a, b), transfer, &mut budget, moves);
            outcomes.moves += moved as u64;
            worked |= moved > 0;
            if moves.full() {
                outcomes.capped += 1;
                return worked;
            }
            if moved == 0 {
                outcomes.no_task += 1;
            }
        }
    }
    worked
}

/// Group `g`'s load above what the `average` load per capacity gives its capacity (negative
/// below it). A group without capacity counts as having one unit, as [`PassState::normalized`].
fn deviation(state: &PassState, g: GroupId, average: f64) -> f64 {
    state.group_load(g) as f64 - average * state.h.groups[g].capacity.max(1) as f64
}

/// The load that would equalize a and b per unit of capacity (negative when b is heavier).
fn equalizing_load(state: &PassState, a: GroupId, b: GroupId) -> f64 {
    let (la, lb) = (state.group_load(a) as f64, state.group_load(b) as f64);
    let (ca, cb) = (state.h.groups[a].capacity.max(1) as f64, state.h.groups[b].capacity.max(1) as f64);
    (la * cb - lb * ca) / (ca + cb)
}

/// Moves about `transfer` of load from a to b while the pusher's `budget` lasts; returns the
/// number of tasks moved. Each victim is the task closest to what would even out the pair
/// (the one that leaves it least imbalanced), not to what is left of the transfer: against
/// a transfer of half a busy task, any light task is closer, and a pair of a busy node and
/// an idle one moved light tasks pass after pass while its busy tasks stayed. Tasks come
/// whole: the last one may overshoot the transfer or the budget, as long as it reduces the
/// pair's imbalance (a group half a task above the average still gives up a task that
/// evens out its pair).
fn work_pair(state: &mut PassState, (a, b): (GroupId, GroupId), transfer: f64, budget: &mut f64, moves: &mut Moves) -> usize {
    let mut sent = 0.0;
    let mut moved = 0;
    while !moves.full() {
        let want = (transfer - sent).min(*budget);
        if want <= 0.0 {
            break;
        }
        let even = equalizing_load(state, a, b);
        let Some((task, to)) = find_victim(state, a, b, even, 2.0 * even) else { break };
        let load = state.tasks[task].load as f64;
        moves.list.push(Move { task, from: state.tasks[task].domain, to, depth: state.h.groups[a].depth });
        state.move_task(task, to);
        sent += load;
        *budget -= load;
        moved += 1;
    }
    moved
}

/// The unmoved task below `a` whose load is closest to `ideal_load`, strictly under `max_load`
/// (heavier would not reduce the imbalance), with the least loaded leaf below `b` it may run
/// in. On a tie within a domain the lighter task goes; between domains, the more loaded
/// domain's (it is scanned first).
fn find_victim(state: &mut PassState, a: GroupId, b: GroupId, ideal_load: f64, max_load: f64) -> Option<(usize, usize)> {
    let mut sources = state.h.leaves_under(a);
    sources.sort_by(|&x, &y| state.normalized(y).total_cmp(&state.normalized(x)).then(x.cmp(&y)));
    let mut targets = state.h.leaves_under(b);
    targets.retain(|&t| state.h.groups[t].capacity > 0);
    targets.sort_by(|&x, &y| state.normalized(x).total_cmp(&state.normalized(y)).then(x.cmp(&y)));
    let target_domains: Vec<usize> = targets.iter().map(|&t| state.h.groups[t].domain.unwrap()).collect();
    let source_domains: Vec<usize> = sources.iter().map(|&l| state.h.groups[l].domain.unwrap()).collect();
    for &d in &source_domains {
        state.sorted_members(d);
    }

    let state = &*state;
    let targets_room = TargetsRoom::of(state, &targets);
    let mut best: Option<(f64, usize, usize)> = None;
    for &domain in &source_domains {
        let source_leaf = state.h.leaf_of_domain[domain];
        // Heavier than this, a task would fit no target: the scans start below it instead
        // of skipping such tasks one by one.
        let limit = max_load.min(room_bound(state, source_leaf, &targets_room));
        let members = state.members(domain);
        let below = members.partition_point(|c| (c.load as f64) < ideal_load.min(limit));
        let above = members.partition_point(|c| (c.load as f64) < ideal_load);
        let fit = Fit { source: domain, targets: &target_domains, limit };
        let lighter = fit.first(state, members[..below].iter().rev());
        let heavier = fit.first(state, members[above..].iter());
        for (task, to) in [lighter, heavier].into_iter().flatten() {
            let distance = (state.tasks[task].load as f64 - ideal_load).abs();
            if best.is_none_or(|(d, _, _)| distance < d) {
                best = Some((distance, task, to));
            }
        }
    }
    best.map(|(_, task, to)| (task, to))
}

/// What bounds the load any of the targets can take from a source: the least load per
/// capacity among them and the largest capacity.
struct TargetsRoom {
    least_normalized: f64,
    largest_capacity: f64,
}

impl TargetsRoom {
    fn of(state: &PassState, targets: &[GroupId]) -> TargetsRoom {
        TargetsRoom {
            least_normalized: targets.iter().map(|&t| state.normalized(t)).fold(f64::INFINITY, f64::min),
            largest_capacity: targets.iter().map(|&t| state.h.groups[t].capacity as f64).fold(0.0, f64::max),
        }
    }
}

/// An upper bound of 2 x equalizing_load(source, t) over the targets t: the load a move
/// must stay under to reduce the imbalance with some target. x = Cs·Ct/(Cs+Ct) · (ns − nt)
/// grows with Ct and falls with nt, so the bound takes the largest Ct with the least nt
/// (exact when the targets' capacities are equal). Only a scan bound: each target is still
/// checked exactly.
fn room_bound(state: &PassState, source: GroupId, room: &TargetsRoom) -> f64 {
    let cs = state.h.groups[source].capacity.max(1) as f64;
    let ct = room.largest_capacity;
    if ct <= 0.0 {
        return 0.0;
    }
    (2.0 * cs * ct / (cs + ct) * (state.normalized(source) - room.least_normalized)).max(0.0)
}

/// Where a victim comes from, where it may go, and how heavy it may be.
struct Fit<'t> {
    source: usize,
    /// Candidate domains, least loaded first.
    targets: &'t [usize],
    /// Loads from this one up fit nowhere (exclusive).
    limit: f64,
}

impl Fit<'_> {
    /// The first task of `candidates` (walked away from the wanted load) that may move, with
    /// the first target it may run in whose imbalance with the source leaf the move also
    /// reduces: so the spread of the domains never grows.
    fn first<'a>(&self, state: &PassState, candidates: impl Iterator<Item = &'a Candidate>) -> Option<(usize, usize)> {
        let h = state.h;
        let source_leaf = h.leaf_of_domain[self.source];
        for c in candidates {
            let (t, load) = (c.index as usize, c.load as f64);
            if load >= self.limit {
                // Only the upward walk meets these, and every later task is heavier still.
                return None;
            }
            let fits = |&&d: &&usize| {
                (!c.restricted || state.tasks[t].may_run_in(d)) && load < 2.0 * equalizing_load(state, source_leaf, h.leaf_of_domain[d])
            };
            if let Some(&to) = self.targets.iter().find(fits) {
                return Some((t, to));
            }
        }
        None
    }
}
